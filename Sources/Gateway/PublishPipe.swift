import CMosquitto
import Synchronization

/// The values' way to libmosquitto and the broker's acknowledgements back, under one lock:
/// a publisher hands a message over from its own thread (the gateway's, on the Bluetooth
/// actor), and libmosquitto's network thread takes each PUBACK and hands the next waiting
/// message over itself. Before, each value was a hop onto ``MQTTClient``'s actor and each
/// PUBACK an event through a stream and another hop: the largest part of the gateway's CPU
/// per value, and of its latency under load.
///
/// ``MQTTClient``'s actor still owns the connection: it attaches the handle once the broker
/// accepted the connection and detaches it when the connection ends, before it stops
/// libmosquitto's thread (it never holds the lock while it joins that thread, whose callbacks
/// take the lock). libmosquitto allows `mosquitto_publish` from its callbacks and from other
/// threads, and calls `on_publish` holding no lock `mosquitto_publish` takes, so the lock held
/// around it makes no cycle.
final class PublishPipe: Sendable {
    /// A libmosquitto handle as the lock holds it: its functions may be called from any
    /// thread (they lock inside), and the client's actor frees it only after ``detach()``.
    private struct Handle: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    private struct State {
        var outbox: Outbox
        /// The connected handle; nil while there is no connection (messages wait).
        var handle: Handle?
        /// The connection attempt `handle` belongs to.
        var session = 0
        /// Publications of the outbox the broker acknowledged.
        var acknowledged = 0
        var closed = false
    }

    private let state: Mutex<State>

    /// A pipe holding at most `limit` messages, `window` of them in flight (``Outbox``).
    init(limit: Int, window: Int) {
        state = Mutex(State(outbox: Outbox(limit: limit, window: window)))
    }

    /// Queues `message`, and hands it to libmosquitto at once if connected and the window
    /// has room.
    func publish(_ message: Outbox.Message) {
        state.withLock { state in
            guard !state.closed else { return }
            state.outbox.append(message)
            Self.drain(&state)
        }
    }

    /// The broker accepted connection `session` on `handle`: what waits goes out.
    func attach(_ pointer: OpaquePointer, session: Int) {
        let handle = Handle(pointer: pointer)
        state.withLock { state in
            guard !state.closed else { return }
            state.handle = handle
            state.session = session
            Self.drain(&state)
        }
    }

    /// The connection ended: nothing goes to its handle any more, and what was in flight
    /// waits again, in front, in order.
    func detach() {
        state.withLock { state in
            state.handle = nil
            state.outbox.connectionLost()
        }
    }

    /// The client closed: nothing is queued or sent any more.
    func close() {
        state.withLock { state in
            state.closed = true
            state.handle = nil
        }
    }

    /// libmosquitto's thread: the broker acknowledged `id` on connection `session` (for QoS
    /// 0, libmosquitto wrote it). True when it was the outbox's (the window moves on and the
    /// next message goes out); false for anyone else's (a retained message, the client's
    /// actor's to count) or a connection already ended.
    func acknowledged(id: Int32, session: Int) -> Bool {
        state.withLock { state in
            guard state.handle != nil, state.session == session, state.outbox.acknowledged(id: id) else { return false }
            state.acknowledged += 1
            Self.drain(&state)
            return true
        }
    }

    /// Messages held (waiting and in flight), dropped for want of room, acknowledged.
    var counts: (depth: Int, dropped: Int, acknowledged: Int) {
        state.withLock { ($0.outbox.depth, $0.outbox.dropped, $0.acknowledged) }
    }

    /// Hands waiting messages to libmosquitto while the window has room.
    private static func drain(_ state: inout State) {
        guard let handle = state.handle?.pointer else { return }
        while let message = state.outbox.next {
            var id: Int32 = 0
            let rc = message.payload.withUnsafeBytes { bytes in
                mosquitto_publish(handle, &id, message.topic, Int32(bytes.count), bytes.baseAddress, message.qos, false)
            }
            // Not sent (the connection is going): it stays in front; the disconnection that
            // follows brings the next attempt.
            guard rc == MOSQ_ERR_SUCCESS.rawValue else { return }
            state.outbox.sent(id: id)
        }
    }
}
