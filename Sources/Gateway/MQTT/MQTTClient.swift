import BluetoothCore
import Foundation
import Logging

/// The gateway's MQTT 3.1.1 client: it connects and, when the connection is lost or refused,
/// connects again after a backoff that doubles up to a limit; values go through a bounded
/// ``Outbox`` and are sent again after a reconnection until the broker acknowledges them
/// (QoS 1); retained messages (the availability, Home Assistant's configuration) are
/// published again on every connection, so a broker that lost them has them back; the last
/// will marks the gateway offline.
///
/// It runs on the stack's event loop, as the stack's actor (``BluetoothActor``): a value the
/// stack decoded is queued, encoded and, with the rest of the turn's, written in one `send`
/// (``MQTTConnection``), with no thread switch and no lock; the broker's acknowledgements
/// come in one `recv` per turn.
///
/// Two failures are named, not just retried: connections the broker keeps closing right
/// after accepting them (another client with our client id, ``Options/duplicateID``), and a
/// TLS handshake the server hangs up on (`mqtts://` to a plain port).
@BluetoothActor
public final class MQTTClient {
    /// Where the connection stands.
    enum State {
        /// Not started.
        case idle
        /// Attempt `session`: the broker's host is being looked up.
        case resolving(session: Int)
        /// Attempt `session`: connecting, securing, or waiting for CONNACK.
        case connecting(session: Int, MQTTConnection)
        /// Session `session` is up.
        case connected(session: Int, MQTTConnection)
        /// Waiting before the next attempt.
        case waiting
        /// ``close()`` ran.
        case closed
    }

    let options: Options
    let logger: Logger
    var state = State.idle
    var outbox: Outbox
    var session = 0
    /// The next packet identifier (1…65535; 0 is not one).
    private var nextID: UInt16 = 1
    /// Failed attempts in a row (the backoff's exponent).
    var failures = 0
    var everConnected = false
    /// When the current connection came up.
    var connectedAt: ContinuousClock.Instant?
    /// Connections in a row that ended within ``takeoverWindow`` of coming up.
    var shortConnections = 0
    /// Two clients with one client id take the session from each other: the broker closes
    /// the older connection as the newer comes, at once, and each reconnects at once. MQTT
    /// 3.1.1 says only that the socket closed; so this many connections in a row, each ended
    /// within the window, are taken as a takeover, and backed off.
    static let takeoverStreak = 3
    /// See ``takeoverStreak``.
    static let takeoverWindow: Duration = .seconds(2)
    var counters = MQTTCounters()
    /// QoS 1 values in flight at most (MQTT 3.1.1 sets no bound). Twenty a round trip held
    /// the gateway to about 10,000 values/s on a loaded machine, the broker's
    /// acknowledgements the limit; more only means more sent again (QoS 1's duplicates)
    /// after a lost connection.
    nonisolated static let window = 256
    /// Subscriptions made again on every connection.
    var filters: [String] = []
    /// SUBSCRIBE packets not yet acknowledged, by identifier: their filters.
    var subscribing: [UInt16: [String]] = [:]
    /// Retained messages published again on every connection, by topic.
    var retained: [String: [UInt8]] = [:]
    var retainedOrder: [String] = []
    /// Identifiers of retained publications not yet acknowledged, and who waits for them all.
    var retainedInFlight: Set<UInt16> = []
    var retainedWaiters: [CheckedContinuation<Void, Never>] = []
    /// The keepalive's view at its last look (``keepAliveTick(_:)``).
    var keepAlive = KeepAliveMark()
    let messageSink: AsyncStream<MQTTMessage>.Continuation

    /// The messages of our subscriptions, in the order they came.
    public nonisolated let messages: AsyncStream<MQTTMessage>

    /// A client; ``start()`` connects it.
    public nonisolated init(options: Options, logger: Logger) {
        self.options = options
        self.logger = logger
        outbox = Outbox(limit: options.queueLimit, window: Self.window)
        (messages, messageSink) = AsyncStream.makeStream()
    }

    /// Starts connecting (and keeps connecting until ``close()``).
    public func start() {
        guard case .idle = state else { return }
        attempt()
    }

    /// Queues a value for the broker (QoS 1 unless `qos` says 0; never retained).
    public func publish(_ topic: String, _ payload: [UInt8], qos: Int32 = 1) {
        guard !isClosed, Self.fits(topic, logger: logger) else { return }
        outbox.append(Outbox.Message(topic: topic, payload: payload, qos: min(max(qos, 0), 1)))
        pump()
    }

    /// ``publish(_:_:qos:)`` from any thread: at once on the stack's loop (the gateway's
    /// values), else queued to it. Values sent from one thread go out in the order sent.
    public nonisolated func send(_ topic: String, _ payload: [UInt8], qos: Int32 = 1) {
        if EventLoop.stack.isCurrent {
            BluetoothActor.assumeIsolated { publish(topic, payload, qos: qos) }
        } else {
            EventLoop.stack.execute { BluetoothActor.assumeIsolated { self.publish(topic, payload, qos: qos) } }
        }
    }

    /// Publishes a retained message now (if connected) and again on every connection.
    public func setRetained(_ topic: String, _ payload: [UInt8]) {
        guard !isClosed, Self.fits(topic, logger: logger) else { return }
        if retained.updateValue(payload, forKey: topic) == nil { retainedOrder.append(topic) }
        if case .connected(_, let connection) = state { publishRetained(topic, payload, on: connection) }
    }

    /// Deletes the broker's retained message at `topic` (an empty retained message, now if
    /// connected) and no longer publishes one there on connecting.
    public func clearRetained(_ topic: String) {
        guard !isClosed else { return }
        if retained.removeValue(forKey: topic) != nil { retainedOrder.removeAll { $0 == topic } }
        if case .connected(_, let connection) = state { publishRetained(topic, [], on: connection) }
    }

    /// Subscribes to `filter` (QoS 1) now and on every connection.
    public func subscribe(_ filter: String) {
        guard !filters.contains(filter), Self.fits(filter, logger: logger) else { return }
        filters.append(filter)
        if case .connected(_, let connection) = state { subscribe([filter], on: connection) }
    }

    /// The counters now.
    public func snapshot() -> MQTTCounters {
        var result = counters
        (result.queueDepth, result.dropped) = (outbox.depth, outbox.dropped)
        return result
    }

    /// Waits (at most `limit`) until every retained message published so far is acknowledged;
    /// false if the limit came first or the client is not connected.
    public func flushRetained(within limit: Duration) async -> Bool {
        guard case .connected = state else { return false }
        if retainedInFlight.isEmpty { return true }
        let timer = Task { @BluetoothActor [weak self] in
            try? await Task.sleep(for: limit)
            self?.releaseRetainedWaiters()
        }
        await withCheckedContinuation { retainedWaiters.append($0) }
        timer.cancel()
        // A connection lost meanwhile forgot what was in flight: not acknowledged.
        guard case .connected = state else { return false }
        return retainedInFlight.isEmpty
    }

    /// Disconnects cleanly (the broker does not publish the will) and stops for good.
    public func close() {
        guard !isClosed else { return }
        connection?.close(disconnect: true)
        state = .closed
        releaseRetainedWaiters()
        messageSink.finish()
    }

    var isClosed: Bool { if case .closed = state { true } else { false } }

    var connection: MQTTConnection? {
        switch state {
        case .connecting(_, let connection), .connected(_, let connection): connection
        default: nil
        }
    }

    /// A topic or filter longer than a UTF-8 string's 65,535 bytes (MQTT 3.1.1, 1.5.3)
    /// cannot be sent: said, and dropped.
    private static func fits(_ topic: String, logger: Logger) -> Bool {
        guard topic.utf8.count > 65_535 || topic.isEmpty else { return true }
        logger.error("MQTT topic of \(topic.utf8.count) bytes not sent (1 to 65,535 bytes)")
        return false
    }

    // MARK: Sending

    /// Sends what waits while the window has room.
    func pump() {
        guard case .connected(_, let connection) = state else { return }
        while let (message, id) = outbox.next(numbered: { Int32(takeID()) }) {
            let packetID = id.map { UInt16($0) }
            connection.send(
                .publish(
                    .init(
                        topic: message.topic, payload: message.payload, qos: packetID == nil ? 0 : 1, retain: false,
                        id: packetID)))
            if packetID == nil { counters.acknowledged += 1 }
        }
    }

    func takeID() -> UInt16 {
        defer { nextID = nextID == .max ? 1 : nextID + 1 }
        return nextID
    }

    func publishRetained(_ topic: String, _ payload: [UInt8], on connection: MQTTConnection) {
        let id = takeID()
        retainedInFlight.insert(id)
        connection.send(.publish(.init(topic: topic, payload: payload, qos: 1, retain: true, id: id)))
    }

    func subscribe(_ filters: [String], on connection: MQTTConnection) {
        let id = takeID()
        subscribing[id] = filters
        for filter in filters { logger.debug("subscribing to \(filter)") }
        connection.send(.subscribe(id: id, filters: filters.map { .init(filter: $0, qos: 1) }))
    }

    func releaseRetainedWaiters() {
        let waiters = retainedWaiters
        retainedWaiters = []
        for waiter in waiters { waiter.resume() }
    }
}
