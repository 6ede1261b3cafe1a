import BluetoothCore

/// What a server keeps outside its attribute table for one request: the attributes whose
/// value an app's handler gives and whose writes an app's handler decides, and what those
/// handlers answered so far.
///
/// The table applies every rule of the protocol (ranges, permissions, grouping, truncation
/// to ATT_MTU, prepare queues) in one place. When a request reaches an attribute whose
/// value or write decision lives outside, ``AttributeServer/answer(to:connection:mtu:outside:client:)``
/// stops and names it (``TableAnswer``); the owner asks its handler, adds the answer here,
/// and asks the table again. Handlers are asked only for the attributes the response
/// reaches, in handle order, each once per request.
public struct OutsideAnswers: Sendable {
    /// What a write handler decided.
    public enum WriteDecision: Sendable, Equatable {
        /// The value is written.
        case accepted
        /// The client gets this error code (a command gets nothing).
        case refused(ATTErrorCode)
    }

    /// Attributes whose value a handler gives (every read of them asks it).
    public var readHandled: Set<AttributeHandle>
    /// Attributes whose writes a handler accepts or refuses.
    public var writeHandled: Set<AttributeHandle>
    /// What the read handlers answered for this request: the whole value, or a refusal.
    public var reads: [AttributeHandle: Result<[UInt8], ATTErrorCode>] = [:]
    /// What the write handlers decided for this request.
    public var writes: [AttributeHandle: WriteDecision] = [:]

    /// Nothing outside: the table answers every request from what it holds.
    public static let none = OutsideAnswers(readHandled: [], writeHandled: [])

    /// Handlers for the values at `readHandled` and the writes at `writeHandled`, not asked yet.
    public init(readHandled: Set<AttributeHandle>, writeHandled: Set<AttributeHandle>) {
        (self.readHandled, self.writeHandled) = (readHandled, writeHandled)
    }
}

/// The table's answer to a request, given what is outside it.
public enum TableAnswer: Equatable, Sendable {
    /// The response PDU to send (nil: none, for a command or a PDU that is not a request).
    case response([UInt8]?)
    /// The answer needs the value of the attribute at `handle`, read from `offset` (Read
    /// Blob; 0 otherwise): ask its handler, put the answer in ``OutsideAnswers/reads``, and
    /// ask again.
    case needsRead(AttributeHandle, offset: Int)
    /// The answer needs a decision on writing `value` (whole) to the attribute at `handle`:
    /// ask its handler, put the decision in ``OutsideAnswers/writes``, and ask again.
    case needsWriteDecision(AttributeHandle, value: [UInt8], withResponse: Bool)
}
