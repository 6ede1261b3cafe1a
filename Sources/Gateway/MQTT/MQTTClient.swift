import CMosquitto
import Foundation
import Logging

/// An MQTT client on libmosquitto (Eclipse's, Debian's `libmosquitto-dev`) for the gateway:
/// it connects and, when the connection is lost or refused, connects again after a backoff
/// that doubles up to a limit; values go through a bounded ``Outbox`` (in a ``PublishPipe``,
/// which the connection's network thread, ``MQTTLoop``, drains as the broker acknowledges)
/// and are sent again after a reconnection until the broker acknowledges them (QoS 1);
/// retained messages (the availability, Home Assistant's configuration) are published again
/// on every connection, so a broker that lost them has them back; the last will marks the
/// gateway offline.
///
/// Each connection attempt gets its own libmosquitto handle, torn down when it ends: the
/// library's own reconnection and resending never run, so every message has one owner (the
/// outbox) and nothing is sent twice by two parties.
///
/// Two failures are named, not just retried: connections the broker keeps closing right
/// after accepting them (another client with our client id, ``Options/duplicateID``), and a
/// TLS handshake the server hangs up on (`mqtts://` to a plain port).
public actor MQTTClient {
    /// Where the connection stands.
    private enum State {
        /// Not started.
        case idle
        /// Attempt `session` under way.
        case connecting(session: Int)
        /// Session `session` is up.
        case connected(session: Int)
        /// Waiting before the next attempt.
        case waiting
        /// ``close()`` ran.
        case closed
    }

    private let options: Options
    private let logger: Logger
    private var state = State.idle
    /// The values' outbox and their way to libmosquitto, shared with its thread.
    private let pipe: PublishPipe
    /// The current attempt's libmosquitto handle.
    private var connection: MosquittoHandle?
    private var handle: OpaquePointer? { connection?.pointer }
    private var session = 0
    /// Failed attempts in a row (the backoff's exponent).
    private var failures = 0
    private var everConnected = false
    /// When the current connection came up.
    private var connectedAt: ContinuousClock.Instant?
    /// Connections in a row that ended within ``takeoverWindow`` of coming up.
    private var shortConnections = 0
    /// Two clients with one client id take the session from each other: the broker closes
    /// the older connection as the newer comes, at once, and each reconnects at once. MQTT
    /// 3.1.1 says only that the socket closed (v5 would say 0x8E, "Session taken over", but
    /// its CONNACK codes differ from the refusals we name and a kept session needs CONNECT
    /// properties libmosquitto's asynchronous connect cannot send); so this many connections
    /// in a row, each ended within the window, are taken as a takeover, and backed off.
    static let takeoverStreak = 3
    /// See ``takeoverStreak``.
    static let takeoverWindow: Duration = .seconds(2)
    private var counters = MQTTCounters()
    /// QoS 1 values in flight at most (MQTT 3.1.1 sets no bound; libmosquitto's default is
    /// 20). Twenty a round trip held the gateway to about 10,000 values/s on a loaded machine,
    /// the broker's acknowledgements the limit; more only means more sent again (QoS 1's
    /// duplicates) after a lost connection.
    static let window = 256
    /// Subscriptions made again on every connection.
    private var filters: [String] = []
    /// Retained messages published again on every connection, by topic.
    private var retained: [String: [UInt8]] = [:]
    private var retainedOrder: [String] = []
    /// Ids of retained publications not yet acknowledged, and who waits for them all.
    private var retainedInFlight: Set<Int32> = []
    private var retainedWaiters: [CheckedContinuation<Void, Never>] = []
    private let events: AsyncStream<MQTTEvent>
    private let eventSink: AsyncStream<MQTTEvent>.Continuation
    private let messageSink: AsyncStream<MQTTMessage>.Continuation
    private var eventTask: Task<Void, Never>?

    /// The messages of our subscriptions, in the order they came.
    public nonisolated let messages: AsyncStream<MQTTMessage>

    /// A client; ``start()`` connects it.
    public init(options: Options, logger: Logger) {
        Self.libraryReady()
        self.options = options
        self.logger = logger
        pipe = PublishPipe(limit: options.queueLimit, window: Self.window)
        (events, eventSink) = AsyncStream.makeStream()
        (messages, messageSink) = AsyncStream.makeStream()
    }

    /// `mosquitto_lib_init` once per process.
    private static let initialized: Bool = { mosquitto_lib_init() == MOSQ_ERR_SUCCESS.rawValue }()
    private nonisolated static func libraryReady() { _ = initialized }

    /// Starts connecting (and keeps connecting until ``close()``).
    public func start() {
        guard case .idle = state else { return }
        let events = events
        eventTask = Task { [weak self] in
            for await event in events {
                guard let self else { return }
                await self.handle(event)
            }
        }
        attempt()
    }

    /// Queues a value for the broker (QoS 1 unless `qos` says 0; never retained).
    public func publish(_ topic: String, _ payload: [UInt8], qos: Int32 = 1) {
        send(topic, payload, qos: qos)
    }

    /// ``publish(_:_:qos:)`` from any thread, without waiting for the actor: the gateway's
    /// values (one hop onto the actor per value cost more than the rest of its way). Values
    /// sent from one thread go out in the order sent.
    public nonisolated func send(_ topic: String, _ payload: [UInt8], qos: Int32 = 1) {
        pipe.publish(Outbox.Message(topic: topic, payload: payload, qos: qos))
    }

    /// Publishes a retained message now (if connected) and again on every connection.
    public func setRetained(_ topic: String, _ payload: [UInt8]) {
        guard !isClosed else { return }
        if retained.updateValue(payload, forKey: topic) == nil { retainedOrder.append(topic) }
        if case .connected = state { publishRetained(topic, payload) }
    }

    /// Deletes the broker's retained message at `topic` (an empty retained message, now if
    /// connected) and no longer publishes one there on connecting.
    public func clearRetained(_ topic: String) {
        guard !isClosed else { return }
        if retained.removeValue(forKey: topic) != nil { retainedOrder.removeAll { $0 == topic } }
        if case .connected = state { publishRetained(topic, []) }
    }

    /// Subscribes to `filter` (QoS 1) now and on every connection.
    public func subscribe(_ filter: String) {
        guard !filters.contains(filter) else { return }
        filters.append(filter)
        if case .connected = state, let handle {
            _ = mosquitto_subscribe(handle, nil, filter, 1)
            connection?.wake()
        }
    }

    /// The counters now.
    public func snapshot() -> MQTTCounters {
        var result = counters
        (result.queueDepth, result.dropped, result.acknowledged) = pipe.counts
        return result
    }

    /// Waits (at most `limit`) until every retained message published so far is acknowledged;
    /// false if the limit came first or the client is not connected.
    public func flushRetained(within limit: Duration) async -> Bool {
        guard case .connected = state else { return false }
        if retainedInFlight.isEmpty { return true }
        let timer = Task { [weak self] in
            try? await Task.sleep(for: limit)
            await self?.releaseRetainedWaiters()
        }
        await withCheckedContinuation { retainedWaiters.append($0) }
        timer.cancel()
        return retainedInFlight.isEmpty
    }

    /// Disconnects cleanly (the broker does not publish the will) and stops for good.
    public func close() {
        guard !isClosed else { return }
        state = .closed
        pipe.close()
        tearDown()
        releaseRetainedWaiters()
        eventSink.finish()
        messageSink.finish()
    }

    private var isClosed: Bool { if case .closed = state { true } else { false } }

    // MARK: - Connecting

    /// One connection attempt on a new handle.
    private func attempt() {
        guard !isClosed else { return }
        session += 1
        let session = session
        let sink = Unmanaged.passRetained(CallbackSink(session: session, events: eventSink, pipe: pipe))
        guard let handle = mosquitto_new(options.clientID, options.cleanSession, sink.toOpaque()) else {
            sink.release()
            failed("libmosquitto could not make a client (\(String(cString: strerror(errno))))")
            return
        }
        connection = MosquittoHandle(pointer: handle, sink: sink)
        state = .connecting(session: session)
        mosquitto_connect_callback_set(handle) { _, pointer, code in
            guard let sink = CallbackSink.from(pointer) else { return }
            sink.events.yield(.connected(session: sink.session, code: code))
        }
        mosquitto_disconnect_callback_set(handle) { _, pointer, code in
            guard let sink = CallbackSink.from(pointer) else { return }
            sink.events.yield(.disconnected(session: sink.session, code: code))
        }
        mosquitto_publish_callback_set(handle) { _, pointer, id in
            // The outbox's own go no further than the pipe, here on the network thread.
            guard let sink = CallbackSink.from(pointer), !sink.pipe.acknowledged(id: id, session: sink.session) else {
                return
            }
            sink.events.yield(.published(session: sink.session, id: id))
        }
        mosquitto_log_callback_set(handle) { _, pointer, level, text in
            // MOSQ_LOG_ERR (1 << 3, a macro Swift does not import).
            guard level == 8, let sink = CallbackSink.from(pointer), let text else { return }
            sink.events.yield(.libraryError(session: sink.session, text: String(cString: text)))
        }
        mosquitto_message_callback_set(handle) { _, pointer, message in
            guard let sink = CallbackSink.from(pointer), let message else { return }
            let payload =
                message.pointee.payload.map {
                    Array(UnsafeRawBufferPointer(start: $0, count: Int(message.pointee.payloadlen)))
                } ?? []
            sink.events.yield(
                .message(
                    session: sink.session,
                    MQTTMessage(
                        topic: String(cString: message.pointee.topic), payload: payload,
                        retained: message.pointee.retain)))
        }
        // libmosquitto's own reconnection (its loop_forever) never runs: the network thread
        // (``MQTTLoop``) ends with the connection, and the handle is torn down.
        // libmosquitto holds back what is past its own limit: the outbox's window is the one.
        mosquitto_int_option(handle, MOSQ_OPT_SEND_MAXIMUM, Int32(Self.window))
        // A turn's packets leave together by the cork (``MQTTLoop``); past it Nagle would only
        // hold the last of them back until the broker's acknowledgement of the ones before.
        mosquitto_int_option(handle, MOSQ_OPT_TCP_NODELAY, 1)
        if let username = options.username { mosquitto_username_pw_set(handle, username, options.password) }
        if let will = options.will {
            let bytes = Array(will.payload.utf8)
            mosquitto_will_set(handle, will.topic, Int32(bytes.count), bytes, 1, true)
        }
        if options.broker.tls {
            let rc = mosquitto_tls_set(handle, nil, "/etc/ssl/certs", nil, nil, nil)
            guard rc == MOSQ_ERR_SUCCESS.rawValue else {
                failed("TLS set-up failed: \(String(cString: mosquitto_strerror(rc)))")
                return
            }
        }
        let keepAlive = Int32(max(5, options.keepAlive.components.seconds))
        logger.debug("connecting to \(options.broker) as \(options.clientID) (attempt \(session))")
        let rc = mosquitto_connect_async(handle, options.broker.host, Int32(options.broker.port), keepAlive)
        guard rc == MOSQ_ERR_SUCCESS.rawValue else {
            let reason =
                rc == MOSQ_ERR_ERRNO.rawValue
                ? String(cString: strerror(errno)) : String(cString: mosquitto_strerror(rc))
            failed("cannot reach the broker \(options.broker): \(reason)")
            return
        }
        guard connection?.loop.start() == true else {
            failed("could not start a network thread for the broker connection")
            return
        }
        // A connection that neither comes up nor fails (a broker that accepts TCP and stays
        // silent) is given up after the keepalive.
        let limit = options.keepAlive
        Task { [weak self] in
            try? await Task.sleep(for: limit)
            await self?.attemptTimedOut(session)
        }
        if options.broker.tls {
            // A plain MQTT port answers a TLS ClientHello by closing or resetting the
            // connection, which libmosquitto keeps retrying in silence: looked for here.
            Task { [weak self] in
                while let self, await self.handshakeGoesOn(session) { try? await Task.sleep(for: .milliseconds(100)) }
            }
        }
    }

    /// While attempt `session` waits for its TLS handshake and CONNACK: true, unless the
    /// server ended the connection, which fails the attempt.
    private func handshakeGoesOn(_ session: Int) -> Bool {
        guard case .connecting(let current) = state, current == session else { return false }
        guard let ended = connection?.serverEnded() else { return true }
        switch ended {
        case ECONNREFUSED: failed("cannot reach the broker \(options.broker): \(String(cString: strerror(ended)))")
        case 0: tlsFailed("the server closed the connection", plainPort: true)
        default: tlsFailed("the server reset the connection", plainPort: true)
        }
        return false
    }

    /// The TLS handshake failed, said with the likely cause when it is a plain MQTT port
    /// (which takes the ClientHello for a malformed CONNECT and hangs up).
    private func tlsFailed(_ detail: String, plainPort: Bool) {
        let broker = options.broker
        let host = broker.host.contains(":") ? "[\(broker.host)]" : broker.host
        failed(
            "TLS handshake with \(host):\(broker.port) failed (\(detail))"
                + (plainPort ? ": is it a plain MQTT port? (mqtt:// for plain)" : ""))
    }

    private func attemptTimedOut(_ session: Int) {
        guard case .connecting(let current) = state, current == session else { return }
        failed("the broker \(options.broker) did not answer the connection in \(options.keepAlive)")
    }

    /// The attempt or the connection ended: tear its handle down and try again after the backoff.
    private func failed(_ reason: String) {
        guard !isClosed else { return }
        let wasConnected = if case .connected = state { true } else { false }
        counters.connected = false
        tearDown()
        retainedInFlight = []
        if !wasConnected { failures += 1 }
        if wasConnected, let connectedAt {
            shortConnections = ContinuousClock.now - connectedAt < Self.takeoverWindow ? shortConnections + 1 : 0
        }
        connectedAt = nil
        let takenOver = wasConnected && shortConnections >= Self.takeoverStreak
        let delay = takenOver ? backoff(after: shortConnections - Self.takeoverStreak + 1) : backoff(after: failures)
        if takenOver {
            counters.takeovers += 1
            let cause = options.duplicateID ?? "another client uses the client id '\(options.clientID)' on this broker"
            let text =
                "the broker \(options.broker) closed our connection \(shortConnections) times in a row within \(Self.takeoverWindow) of "
                + "accepting it: \(cause) (MQTT client id '\(options.clientID)': one connection per id, the newer one closes the older); "
                + "connecting again in \(delay)"
            logger.error("\(text)")
        } else if wasConnected {
            logger.warning("\(reason); connecting again in \(delay)")
        } else {
            logger.error("\(reason); connecting again in \(delay)")
        }
        state = .waiting
        Task { [weak self] in
            try? await Task.sleep(for: delay)
            await self?.attemptAfterWait()
        }
    }

    private func attemptAfterWait() {
        guard case .waiting = state else { return }
        attempt()
    }

    /// The wait after `failures` failed attempts in a row: none after a lost connection's
    /// first, then the backoff doubling up to its limit.
    private func backoff(after failures: Int) -> Duration {
        guard failures > 0 else { return .milliseconds(100) }
        var delay = options.backoff
        for _ in 1..<min(failures, 32) where delay < options.backoffLimit { delay *= 2 }
        return min(delay, options.backoffLimit)
    }

    /// Stops the network thread and frees the handle; what was in flight waits again.
    private func tearDown() {
        // Detached first: the thread's callbacks take the pipe's lock, so it is not held
        // while the thread is joined, and nothing is handed to a handle being freed.
        pipe.detach()
        connection?.stop()
        connection = nil
    }

    // MARK: - Events

    private func handle(_ event: MQTTEvent) {
        switch event {
        case .connected(let session, let code):
            guard case .connecting(let current) = state, current == session else { return }
            guard code == 0 else {
                counters.refusals += 1
                let name = String(cString: mosquitto_connack_string(code))
                counters.lastRefusal = "\(name) (\(code))"
                failed("the broker \(options.broker) refused the connection: \(name) (CONNACK code \(code))")
                return
            }
            state = .connected(session: session)
            // Its lines cost a formatted string each (several per value sent); the attempt's
            // errors were what it was for.
            mosquitto_log_callback_set(handle, nil)
            connectedAt = .now
            failures = 0
            counters.connected = true
            if everConnected { counters.reconnects += 1 }
            everConnected = true
            logger.info("connected to \(options.broker) as \(options.clientID)")
            for filter in filters {
                logger.debug("subscribing to \(filter)")
                _ = mosquitto_subscribe(handle, nil, filter, 1)
            }
            for topic in retainedOrder { if let payload = retained[topic] { publishRetained(topic, payload) } }
            // Attached, the pipe wakes the network thread: the above goes out with what waits.
            if let connection { pipe.attach(connection.pointer, loop: connection.loop, session: session) }
        case .disconnected(let session, let code):
            guard session == self.session else { return }
            switch state {
            case .connected, .connecting:
                failed("the connection to \(options.broker) ended: \(String(cString: mosquitto_strerror(code)))")
            default: return
            }
        case .published(let session, let id):
            // The outbox's went to the pipe: a retained message's.
            guard session == self.session else { return }
            if retainedInFlight.remove(id) != nil, retainedInFlight.isEmpty {
                releaseRetainedWaiters()
            }
        case .message(let session, let message):
            guard session == self.session else { return }
            messageSink.yield(message)
        case .libraryError(let session, let text):
            guard session == self.session else { return }
            logger.debug("libmosquitto: \(text)")
            // OpenSSL's reasons (a certificate not trusted, a plain port's reply) end the
            // attempt as they come; libmosquitto's thread has stopped by then.
            guard case .connecting(let current) = state, current == session, options.broker.tls,
                text.hasPrefix("OpenSSL")
            else { return }
            tlsFailed(text, plainPort: !text.contains("certificate"))
        }
    }

    private func releaseRetainedWaiters() {
        let waiters = retainedWaiters
        retainedWaiters = []
        for waiter in waiters { waiter.resume() }
    }

    private func publishRetained(_ topic: String, _ payload: [UInt8]) {
        guard let handle else { return }
        var id: Int32 = 0
        let rc = payload.withUnsafeBytes { bytes in
            mosquitto_publish(handle, &id, topic, Int32(bytes.count), bytes.baseAddress, 1, true)
        }
        if rc == MOSQ_ERR_SUCCESS.rawValue { retainedInFlight.insert(id) }
        connection?.wake()
    }
}
