import CMosquitto
import Foundation

/// A message the broker delivered to one of our subscriptions.
public struct MQTTMessage: Sendable, Equatable {
    /// Its topic.
    public var topic: String
    /// Its payload.
    public var payload: [UInt8]
    /// Whether the broker kept it (a retained message replayed on subscribe).
    public var retained: Bool
}

/// What the MQTT client has done so far (the gateway's counters publish these).
public struct MQTTCounters: Sendable, Equatable {
    /// Values waiting for the broker or in flight (the broker queue depth).
    public var queueDepth = 0
    /// Values dropped because the queue was full.
    public var dropped = 0
    /// Publications the broker acknowledged.
    public var acknowledged = 0
    /// Connections established after the first.
    public var reconnects = 0
    /// Connections the broker refused (CONNACK with a code).
    public var refusals = 0
    /// The broker's last refusal, by name (`Connection Refused: not authorised.`).
    public var lastRefusal: String?
    /// Connected now.
    public var connected = false
    /// Connections the broker ended right after accepting them, several in a row: another
    /// client connecting with our client id takes the session over (``MQTTClient``).
    public var takeovers = 0
}

/// What libmosquitto's network thread reports, tagged with the session (one libmosquitto
/// handle per connection attempt) it came from.
enum MQTTEvent: Sendable {
    case connected(session: Int, code: Int32)
    case disconnected(session: Int, code: Int32)
    case published(session: Int, id: Int32)
    case message(session: Int, MQTTMessage)
    /// An error libmosquitto logged (an OpenSSL error of the TLS handshake among them).
    case libraryError(session: Int, text: String)
}

/// All a libmosquitto callback touches: the stream into the client's actor, and the pipe
/// the outbox's acknowledgements go to. The callbacks run on the connection's network
/// thread (``MQTTLoop``); they copy what they were given and yield it, and the client
/// handles it in order on its actor. Immutable, hence Sendable.
final class CallbackSink: Sendable {
    let session: Int
    let events: AsyncStream<MQTTEvent>.Continuation
    /// Where the outbox's acknowledgements go, on the network thread (``PublishPipe``).
    let pipe: PublishPipe

    init(session: Int, events: AsyncStream<MQTTEvent>.Continuation, pipe: PublishPipe) {
        (self.session, self.events, self.pipe) = (session, events, pipe)
    }

    static func from(_ pointer: UnsafeMutableRawPointer?) -> CallbackSink? {
        pointer.map { Unmanaged<CallbackSink>.fromOpaque($0).takeUnretainedValue() }
    }
}

/// One libmosquitto handle, its network thread and the sink its callbacks hold: stopped and
/// freed together, when the client tears the attempt down or is itself freed.
final class MosquittoHandle {
    let pointer: OpaquePointer
    /// The network thread (``MQTTLoop``), started once the connection is under way.
    let loop: MQTTLoop
    private let sink: Unmanaged<CallbackSink>
    private var stopped = false

    init(pointer: OpaquePointer, sink: Unmanaged<CallbackSink>) {
        self.pointer = pointer
        self.sink = sink
        let callbacks = sink.takeUnretainedValue()
        loop = MQTTLoop(pointer, pipe: callbacks.pipe, session: callbacks.session)
    }

    /// A packet the client's actor queued (a subscription, a retained message) goes out.
    func wake() { loop.wake() }

    /// Ends the network thread and joins it, so no callback runs after this. The DISCONNECT
    /// queued first goes out in its last turn (the broker then keeps the will to itself).
    func stop() {
        guard !stopped else { return }
        stopped = true
        mosquitto_disconnect(pointer)
        loop.stop()
    }

    /// How the server ended the TCP connection: 0 when it closed its side, ECONNRESET or
    /// ECONNREFUSED; nil while it is open. Looked at with MSG_PEEK, which reads nothing, so
    /// the network thread loses no byte. During a TLS handshake libmosquitto takes a
    /// reset for "try again" (SSL_ERROR_SYSCALL) and says nothing until the attempt times out.
    func serverEnded() -> Int32? {
        let fd = mosquitto_socket(pointer)
        guard !stopped, fd >= 0 else { return nil }
        var byte: UInt8 = 0
        let count = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        if count == 0 { return 0 }
        guard count < 0, errno == ECONNRESET || errno == ECONNREFUSED else { return nil }
        return errno
    }

    deinit {
        stop()
        mosquitto_destroy(pointer)
        sink.release()
    }
}
