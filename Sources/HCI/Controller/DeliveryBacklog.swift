import BluetoothCore
import Dispatch
import Synchronization

/// Bounds how far the transport's thread may read ahead of the controller.
///
/// Without a bound, a peer that floods faster than the stack (or the app behind it)
/// consumes grows the queue between the reader thread and the controller without limit:
/// a minute of a fast notification flood took gigabytes. With it, the reader thread waits
/// once `limit` deliveries are queued, so the operating system's own flow control (socket
/// buffers, TCP windows, UART RTS/CTS) pushes back on the sender; nothing is dropped here.
final class DeliveryBacklog: Sendable {
    private struct State {
        var queued = 0
        var waiters = 0
        var isOpen = false
    }

    private let limit: Int
    private let state = Mutex(State())
    /// Wakes a waiting reader; starts at zero, so it is never destroyed "in use".
    private let wake = DispatchSemaphore(value: 0)

    init(limit: Int) { self.limit = limit }

    /// Called by the transport's thread before it queues a delivery: waits while `limit`
    /// deliveries are queued (not once the backlog is opened for shutdown, and never when
    /// `waiting` is false: on the loop thread, which is the one that drains the queue).
    func enter(waiting: Bool = true) {
        while true {
            let mustWait = state.withLock { state -> Bool in
                if state.isOpen || state.queued < limit || !waiting {
                    state.queued += 1
                    return false
                }
                state.waiters += 1
                return true
            }
            guard mustWait else { return }
            wake.wait()
        }
    }

    /// Called by the controller once it took a delivery off the queue.
    func leave() {
        let waiters = state.withLock { state -> Int in
            state.queued = max(0, state.queued - 1)
            defer { state.waiters = 0 }
            return state.waiters
        }
        for _ in 0..<waiters { wake.signal() }
    }

    /// Lets every reader through from now on: the controller is closing, and closing the
    /// transport joins its thread, which must not be waiting here.
    func open() {
        let waiters = state.withLock { state -> Int in
            state.isOpen = true
            defer { state.waiters = 0 }
            return state.waiters
        }
        for _ in 0..<waiters { wake.signal() }
    }
}
