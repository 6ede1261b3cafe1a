import CMosquitto
import Synchronization

/// The values' way to libmosquitto and the broker's acknowledgements back, under one lock:
/// a publisher queues a message from its own thread (the gateway's, on the Bluetooth actor)
/// and wakes the connection's network thread (``MQTTLoop``) at most once per turn of it;
/// that thread takes each PUBACK and hands what waits over to libmosquitto in batches, as
/// many as the window has room for, written to the socket together. Before, every value was
/// a `mosquitto_publish` on the publisher's thread (a wake-up of libmosquitto's thread, and
/// a write of its own to the socket): most of the gateway's CPU per value.
///
/// ``MQTTClient``'s actor still owns the connection: it attaches the handle once the broker
/// accepted the connection and detaches it when the connection ends, before it stops the
/// network thread (it never holds the lock while it joins that thread, whose callbacks take
/// the lock). `mosquitto_publish` runs outside the lock: the batch counts as in flight
/// meanwhile, so a connection lost in between puts it back in front like the rest.
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
        /// Wakes the network thread of `handle`'s connection.
        var loop: MQTTLoop?
        /// The connection attempt `handle` belongs to.
        var session = 0
        /// The network thread was woken, or needs no waking (the window is full: the next
        /// acknowledgement brings it round): a publisher does not wake it again.
        var woken = false
        /// Publications of the outbox the broker acknowledged.
        var acknowledged = 0
        var closed = false
    }

    private let state: Mutex<State>

    /// A pipe holding at most `limit` messages, `window` of them in flight (``Outbox``).
    init(limit: Int, window: Int) {
        state = Mutex(State(outbox: Outbox(limit: limit, window: window)))
    }

    /// Queues `message`; the network thread hands it to libmosquitto.
    func publish(_ message: Outbox.Message) {
        state.withLock { state in
            guard !state.closed else { return }
            state.outbox.append(message)
            Self.wake(&state)
        }
    }

    /// The broker accepted connection `session` on `handle`, whose network thread is
    /// `loop`: what waits goes out.
    func attach(_ pointer: OpaquePointer, loop: MQTTLoop, session: Int) {
        let handle = Handle(pointer: pointer)
        state.withLock { state in
            guard !state.closed else { return }
            state.handle = handle
            state.loop = loop
            state.session = session
            state.woken = false
            Self.wake(&state)
        }
    }

    /// The connection ended: nothing goes to its handle any more, and what was in flight
    /// waits again, in front, in order.
    func detach() {
        state.withLock { state in
            state.handle = nil
            state.loop = nil
            state.outbox.connectionLost()
        }
    }

    /// The client closed: nothing is queued or sent any more.
    func close() {
        state.withLock { state in
            state.closed = true
            state.handle = nil
            state.loop = nil
        }
    }

    /// The network thread: the broker acknowledged `id` on connection `session` (for QoS
    /// 0, libmosquitto wrote it). True when it was the outbox's; false for anyone else's
    /// (a retained message, the client's actor's to count) or a connection already ended.
    func acknowledged(id: Int32, session: Int) -> Bool {
        state.withLock { state in
            guard state.handle != nil, state.session == session, state.outbox.acknowledged(id: id) else { return false }
            state.acknowledged += 1
            return true
        }
    }

    /// The network thread of connection `session`, once per turn: hands what waits to
    /// libmosquitto while the window has room. The number handed over.
    @discardableResult
    func handOver(session: Int) -> Int {
        let taken = state.withLock { state -> (Handle, [Outbox.Message])? in
            guard let handle = state.handle, state.session == session else { return nil }
            let batch = state.outbox.take()
            // A full window waits for acknowledgements, which come on this thread: a
            // publisher's wake-up would find nothing to do.
            state.woken = state.outbox.inFlightCount >= state.outbox.window
            return (handle, batch)
        }
        guard let (handle, batch) = taken, !batch.isEmpty else { return 0 }
        var ids: [Int32] = []
        ids.reserveCapacity(batch.count)
        for message in batch {
            var id: Int32 = 0
            let rc = message.payload.withUnsafeBytes { bytes in
                let count = Int32(bytes.count)
                return mosquitto_publish(
                    handle.pointer, &id, message.topic, count, bytes.baseAddress,
                    message.qos, false)
            }
            // Not taken (the connection is going): it and the rest wait again in front; the
            // disconnection that follows brings the next attempt.
            guard rc == MOSQ_ERR_SUCCESS.rawValue else { break }
            ids.append(id)
        }
        state.withLock { state in
            // Lost meanwhile: ``detach()`` put the batch back already.
            guard state.handle != nil, state.session == session else { return }
            state.outbox.numbered(ids)
        }
        return ids.count
    }

    /// Messages held (waiting and in flight), dropped for want of room, acknowledged.
    var counts: (depth: Int, dropped: Int, acknowledged: Int) {
        state.withLock { ($0.outbox.depth, $0.outbox.dropped, $0.acknowledged) }
    }

    /// Wakes the network thread, unless it is awake already (it was woken, or it is in its
    /// turn: it looks at the outbox before it sleeps again).
    private static func wake(_ state: inout State) {
        guard !state.woken, let loop = state.loop else { return }
        state.woken = true
        loop.wake()
    }
}
