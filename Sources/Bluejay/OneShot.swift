import Synchronization

/// A value delivered once, from any actor, awaited by any number of waiters on any actor
/// (operations on the stack's actor wait for the host that the main actor's `start`
/// brings up).
final class OneShot<Value: Sendable>: Sendable {
    private struct State {
        var value: Value?
        var waiters: [CheckedContinuation<Value, Never>] = []
    }

    private let state = Mutex(State())

    init() {}

    /// Delivers the value; later calls are ignored.
    func fulfill(_ value: Value) {
        let waiters = state.withLock { state -> [CheckedContinuation<Value, Never>] in
            guard state.value == nil else { return [] }
            state.value = value
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: value) }
    }

    /// The value, waiting for it if needed.
    func value() async -> Value {
        await withCheckedContinuation { (waiter: CheckedContinuation<Value, Never>) in
            let ready = state.withLock { state -> Value? in
                if let value = state.value { return value }
                state.waiters.append(waiter)
                return nil
            }
            if let ready { waiter.resume(returning: ready) }
        }
    }
}
