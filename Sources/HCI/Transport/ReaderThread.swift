import BluetoothCore
#if canImport(Glibc)
    import Glibc
#endif
import CBluejaySystem

/// A dedicated POSIX thread that delivers packets from outside the event loop (a replay, a
/// `mock:` virtual controller), joined on close so none is left behind.
package final class ReaderThread: Sendable {
    private final class Body: @unchecked Sendable {
        let name: String
        let run: @Sendable () -> Void
        init(name: String, _ run: @escaping @Sendable () -> Void) { (self.name, self.run) = (name, run) }
    }

    private let thread: pthread_t

    /// The name a replay's delivery thread carries (visible in /proc/PID/task/*/comm, gdb,
    /// top -H).
    package static let replayThreadName = "bluejay-replay"
    /// The name of a `mock:` virtual controller's delivery thread.
    package static let virtualControllerThreadName = "bluejay-mock"

    /// Starts a thread called `name` (at most 15 characters, Linux's limit) running `run`.
    package init(name: String, _ run: @escaping @Sendable () -> Void) throws(TransportError) {
        let body = Unmanaged.passRetained(Body(name: name, run)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(
            &thread, nil,
            { argument in
                let body = Unmanaged<Body>.fromOpaque(argument!).takeRetainedValue()
                pthread_setname_np(pthread_self(), body.name)
                body.run()
                return nil
            }, body)
        guard result == 0 else {
            Unmanaged<Body>.fromOpaque(body).release()
            throw .openFailed(what: "reader thread", errno: result)
        }
        self.thread = thread
    }

    /// Whether the caller is this thread (a delivery handler closing its own transport).
    var isCurrent: Bool { pthread_equal(pthread_self(), thread) != 0 }

    /// Waits for the thread to end, or detaches it when called from the thread itself.
    package func join() {
        if isCurrent { pthread_detach(thread) } else { pthread_join(thread, nil) }
    }
}
