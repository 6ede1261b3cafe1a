/// A one-shot result that may arrive before anyone waits for it.
///
/// Register it *before* sending the command whose outcome it carries: the controller's
/// Command Status and the event that follows can come in one read, and the event is then
/// handled before the sender resumes.
@BluetoothActor
public final class Expectation<Value: Sendable> {
    private var result: Value?
    private var continuation: CheckedContinuation<Value, Never>?

    /// An expectation nothing has fulfilled yet.
    public init() {}

    /// Whether a value has been delivered.
    public var isFulfilled: Bool { result != nil }

    /// The value, if it has come (without waiting).
    public var delivered: Value? { result }

    /// Delivers the value; later calls are ignored (the first outcome wins).
    public func fulfill(_ value: Value) {
        guard result == nil else { return }
        result = value
        continuation?.resume(returning: value)
        continuation = nil
    }

    /// The value, waiting for it if it has not come yet.
    public func value() async -> Value {
        if let result { return result }
        return await withCheckedContinuation { continuation = $0 }
    }
}
