import CMosquitto
import Glibc
import HCI
import Synchronization

/// One connection's network thread, in place of libmosquitto's own (`mosquitto_loop_start`):
/// it waits on the socket and an eventfd, reads what the broker sent (the acknowledgements
/// move the ``PublishPipe``'s window), hands the waiting values over in one batch, and writes
/// them corked, so a turn's packets leave in as few segments as fit.
///
/// libmosquitto's own loop wakes per message (each `mosquitto_publish` writes a byte to its
/// socketpair, and each turn reads one back) and writes each packet to the socket by itself:
/// at several thousand values a second that was most of the gateway's CPU per value, and a
/// wake-up of the broker per packet. Its socketpair is left unread here: once full, the byte
/// each publication writes is refused at once (both ends are non-blocking).
final class MQTTLoop: Sendable {
    private let handle: Handle
    private let pipe: PublishPipe
    private let session: Int
    /// Wakes the thread: a value to hand over, a packet the client's actor queued, the stop.
    private let wakeFD: Int32
    private let stopping = Atomic<Bool>(false)
    private let thread = Mutex<ReaderThread?>(nil)

    /// libmosquitto's handle: its functions lock inside (`mosquitto_threaded_set`), and
    /// ``MosquittoHandle`` frees it only after joining this thread.
    private struct Handle: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    /// The thread's name, as libmosquitto's was (top -H, perf).
    static let threadName = "mosquitto loop"

    /// A loop for `pointer` (whose callbacks report on attempt `session`), not yet started.
    init(_ pointer: OpaquePointer, pipe: PublishPipe, session: Int) {
        handle = Handle(pointer: pointer)
        self.pipe = pipe
        self.session = session
        wakeFD = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        // libmosquitto takes its locks and leaves the writing to this thread.
        mosquitto_threaded_set(pointer, true)
    }

    deinit { if wakeFD >= 0 { Glibc.close(wakeFD) } }

    /// Starts the thread; false when it could not be (the attempt fails then).
    func start() -> Bool {
        guard wakeFD >= 0, let started = try? ReaderThread(name: Self.threadName, { self.run() }) else { return false }
        thread.withLock { $0 = started }
        return true
    }

    /// Wakes the thread for a turn (from any thread).
    func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    /// Ends the thread after one more write (the DISCONNECT `mosquitto_disconnect` queued)
    /// and joins it: no callback runs after this.
    func stop() {
        stopping.store(true, ordering: .releasing)
        wake()
        let running = thread.withLock { thread in
            defer { thread = nil }
            return thread
        }
        running?.join()
    }

    /// Turns until the connection is gone or the loop stops. A connection libmosquitto
    /// finds ended has been reported by then (its disconnect callback); the client's actor
    /// tears it down.
    private func run() {
        let pointer = handle.pointer
        while true {
            let socket = mosquitto_socket(pointer)
            guard socket >= 0 else { return }
            let stop = stopping.load(ordering: .acquiring)
            let events = Int16(POLLIN) | (mosquitto_want_write(pointer) ? Int16(POLLOUT) : 0)
            var fds = [
                pollfd(fd: socket, events: events, revents: 0),
                pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0),
            ]
            // A second at most, for the keepalive (libmosquitto's own loop waits as long).
            if !stop, poll(&fds, 2, 1000) < 0, errno != EINTR {
                // No more waiting on the socket (no memory): ended the way libmosquitto reports
                // an end (its disconnect callback, once the DISCONNECT is written), not in silence.
                mosquitto_disconnect(pointer)
                _ = mosquitto_loop_write(pointer, 1)
                return
            }
            if fds[1].revents != 0 {
                var count: UInt64 = 0
                _ = read(wakeFD, &count, 8)
            }
            if fds[0].revents != 0 {
                let rc = mosquitto_loop_read(pointer, 1)
                guard rc == MOSQ_ERR_SUCCESS.rawValue, mosquitto_socket(pointer) >= 0 else { return }
            }
            let handed = pipe.handOver(session: session)
            if mosquitto_want_write(pointer) {
                // Corked while more than one packet goes, so they leave together.
                let cork = handed > 1
                if cork { setCork(socket, true) }
                let rc = mosquitto_loop_write(pointer, 1)
                if cork, mosquitto_socket(pointer) == socket { setCork(socket, false) }
                guard rc == MOSQ_ERR_SUCCESS.rawValue else { return }
            }
            if stop { return }
            guard mosquitto_loop_misc(pointer) == MOSQ_ERR_SUCCESS.rawValue else { return }
        }
    }

    private func setCork(_ socket: Int32, _ on: Bool) {
        var value: Int32 = on ? 1 : 0
        _ = setsockopt(socket, Int32(IPPROTO_TCP), TCP_CORK, &value, socklen_t(MemoryLayout<Int32>.size))
    }
}
