import Synchronization

/// The values of one listen on their way from the stack to the app's callback: counted from
/// arrival until the callback has run, and bounded (``StartOptions/listenBufferLimit``). A
/// peer that notifies faster than the app takes values cannot grow it past the limit; the
/// value that would is the listen's end instead (`BluejayError.listenOverflow(_:limit:)`).
final class ListenBacklog: Sendable {
    /// What became of an arriving value.
    enum Arrival: Equatable {
        /// Queued for the callback.
        case accepted
        /// The first value over the limit: the listen overflows.
        case overflowed
        /// A value after the overflow, while the subscription is being turned off.
        case dropped
    }

    private enum State {
        /// Values are taken in; `pending` of them wait for the callback.
        case accepting(pending: Int)
        /// The limit was passed: the listen is ending and takes nothing more.
        case overflowed
    }

    /// Values allowed to wait for the callback.
    let limit: Int
    private let state = Mutex(State.accepting(pending: 0))

    init(limit: Int) { self.limit = limit }

    /// Values waiting for the callback now (none once overflowed: what is left is delivered
    /// but no longer counted).
    var pending: Int { state.withLock { if case let .accepting(pending) = $0 { pending } else { 0 } } }

    /// A value arrived from the peer.
    func arrived() -> Arrival {
        state.withLock { state in
            guard case let .accepting(pending) = state else { return .dropped }
            guard pending < limit else {
                state = .overflowed
                return .overflowed
            }
            state = .accepting(pending: pending + 1)
            return .accepted
        }
    }

    /// The callback took a value.
    func taken() {
        state.withLock { state in
            if case let .accepting(pending) = state { state = .accepting(pending: max(0, pending - 1)) }
        }
    }
}
