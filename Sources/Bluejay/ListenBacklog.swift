import Synchronization

/// The values of one listen on their way from the stack to the app's callback: counted from
/// arrival until the callback has run, and bounded (``StartOptions/listenBufferLimit``). A
/// peer that notifies faster than the app takes values cannot grow it past the limit; the
/// value that would is the listen's end instead (``BluejayError/listenOverflow(_:limit:)``).
final class ListenBacklog: Sendable {
    /// What the stream to the app carries.
    enum Item: Sendable {
        /// A value, in arrival order.
        case value([UInt8])
        /// The app fell behind by more than the limit: the listen ends here.
        case overflow
    }

    /// What became of an arriving value.
    enum Arrival: Equatable {
        /// Queued for the callback.
        case accepted
        /// The first value over the limit: the listen overflows.
        case overflowed
        /// A value after the overflow, while the subscription is being turned off.
        case dropped
    }

    private struct State {
        var pending = 0
        var overflowed = false
    }

    /// Values allowed to wait for the callback.
    let limit: Int
    private let state = Mutex(State())

    init(limit: Int) { self.limit = limit }

    /// Values waiting for the callback now.
    var pending: Int { state.withLock { $0.pending } }

    /// A value arrived from the peer.
    func arrived() -> Arrival {
        state.withLock { state in
            if state.overflowed { return .dropped }
            guard state.pending < limit else {
                state.overflowed = true
                return .overflowed
            }
            state.pending += 1
            return .accepted
        }
    }

    /// The callback took a value.
    func taken() {
        state.withLock { $0.pending = max(0, $0.pending - 1) }
    }
}
