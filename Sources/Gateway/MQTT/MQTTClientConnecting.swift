import BluetoothCore
import Foundation
import Logging

/// ``MQTTClient``'s connection attempts: the look-up, the connection, CONNECT and CONNACK,
/// the keepalive, and the backoff after a failure.
extension MQTTClient {
    /// The keepalive's view of the connection at its last look.
    struct KeepAliveMark {
        var sent = 0
        var received = 0
        /// A PINGREQ went at the last look and nothing came since.
        var pinging = false
    }

    /// One connection attempt: the host's addresses looked up off the loop, then a connection.
    func attempt() {
        guard !isClosed else { return }
        session += 1
        let session = session
        state = .resolving(session: session)
        let broker = options.broker
        logger.debug("connecting to \(broker) as \(options.clientID) (attempt \(session))")
        Task.detached {
            let addresses = SocketAddress.resolve(broker.host, port: broker.port)
            await self.resolved(addresses, session: session)
        }
        // A connection that neither comes up nor fails (a broker that accepts TCP and stays
        // silent) is given up after the keepalive.
        let limit = options.keepAlive
        Task { @BluetoothActor [weak self] in
            try? await Task.sleep(for: limit)
            self?.attemptTimedOut(session)
        }
    }

    private func resolved(_ addresses: Result<[SocketAddress], SocketAddress.AddressError>, session: Int) {
        guard case .resolving(let current) = state, current == session else { return }
        let broker = options.broker
        switch addresses {
        case .failure(let error): failed("cannot reach the broker \(broker): \(error.description)")
        case .success(let addresses):
            var tls: TLSSession?
            if broker.tls {
                do throws(TLSSession.Failure) { tls = try TLSSession(host: broker.host, caFile: options.caFile) } catch
                {
                    return failed(error.description)
                }
            }
            let connection = MQTTConnection(addresses: addresses, tls: tls) { [weak self] event in
                self?.handle(event, session: session)
            }
            state = .connecting(session: session, connection)
        }
    }

    private func attemptTimedOut(_ session: Int) {
        switch state {
        case .resolving(let current), .connecting(let current, _):
            guard current == session else { return }
            failed("the broker \(options.broker) did not answer the connection in \(options.keepAlive)")
        default: return
        }
    }

    // MARK: What the connection says

    private func handle(_ event: MQTTConnection.Event, session: Int) {
        guard session == self.session else { return }
        switch (event, state) {
        case (.opened, .connecting(_, let connection)):
            var will: MQTTPacket.Will?
            if let (topic, payload) = options.will {
                will = .init(topic: topic, payload: Array(payload.utf8), qos: 1, retain: true)
            }
            connection.send(
                .connect(
                    .init(
                        clientID: options.clientID, cleanSession: options.cleanSession,
                        keepAlive: UInt16(clamping: max(5, options.keepAlive.components.seconds)), will: will,
                        username: options.username, password: options.username == nil ? nil : options.password)))
        case (.packet(let packet), .connecting(_, let connection)):
            guard case .connack(_, let code) = packet else {
                return failed("the broker \(options.broker) sent a packet before CONNACK: \(packet)")
            }
            accepted(code: code, on: connection, session: session)
        case (.packet(let packet), .connected(_, let connection)): received(packet, on: connection)
        case (.ended(let ending), .connecting):
            switch ending {
            case .unreachable(let code): failed("cannot reach the broker \(options.broker): \(errorName(code))")
            case .closedByServer(securing: true): tlsFailed("the server closed the connection", plainPort: true)
            case .failed(let code, securing: true) where code == ECONNRESET:
                tlsFailed("the server reset the connection", plainPort: true)
            case .failed(let code, securing: true): tlsFailed(errorName(code), plainPort: false)
            case .tls(let failure): tlsFailed(failure.description, plainPort: !failure.certificate)
            default: failed("the connection to \(options.broker) ended before CONNACK: \(ending)")
            }
        case (.ended(let ending), .connected): failed("the connection to \(options.broker) ended: \(ending)")
        default: return
        }
    }

    /// CONNACK: `code` 0 is a session; anything else a refusal, named.
    private func accepted(code: UInt8, on connection: MQTTConnection, session: Int) {
        guard code == 0 else {
            counters.refusals += 1
            let name = Self.refusalName(code)
            counters.lastRefusal = "\(name) (\(code))"
            connection.close(disconnect: false)
            return failed("the broker \(options.broker) refused the connection: \(name) (CONNACK code \(code))")
        }
        state = .connected(session: session, connection)
        connectedAt = .now
        failures = 0
        counters.connected = true
        if everConnected { counters.reconnects += 1 }
        everConnected = true
        logger.info("connected to \(options.broker) as \(options.clientID)")
        if !filters.isEmpty { subscribe(filters, on: connection) }
        for topic in retainedOrder {
            if let payload = retained[topic] { publishRetained(topic, payload, on: connection) }
        }
        pump()
        keepAlive = KeepAliveMark(sent: connection.packetsSent, received: connection.packetsReceived)
        let interval = max(options.keepAlive, .seconds(5)) / 2
        Task { @BluetoothActor [weak self] in
            while true {
                try? await Task.sleep(for: interval)
                guard let self, self.keepAliveTick(session) else { return }
            }
        }
    }

    /// A packet of the session.
    private func received(_ packet: MQTTPacket, on connection: MQTTConnection) {
        switch packet {
        case .puback(let id):
            if outbox.acknowledged(id: Int32(id)) {
                counters.acknowledged += 1
                pump()
            } else if retainedInFlight.remove(id) != nil, retainedInFlight.isEmpty {
                releaseRetainedWaiters()
            }
        case .publish(let publish):
            messageSink.yield(MQTTMessage(topic: publish.topic, payload: publish.payload, retained: publish.retain))
            if let id = publish.id { connection.send(.puback(id: id)) }
        case .suback(let id, let codes):
            for (filter, code) in zip(subscribing.removeValue(forKey: id) ?? [], codes) where code == 0x80 {
                logger.error("the broker \(options.broker) refused the subscription to \(filter) (SUBACK 0x80)")
            }
        case .pingresp, .unsuback: return
        default:
            logger.warning("the broker \(options.broker) sent an unexpected \(packet); ignored")
        }
    }

    /// The keepalive's look, every half keepalive: a PINGREQ when nothing went or came since
    /// the last look (MQTT 3.1.1, 3.1.2.10: the client must send within the keepalive), and
    /// the connection given up when a PINGREQ had no answer by the next look. False once
    /// session `session` is over.
    private func keepAliveTick(_ session: Int) -> Bool {
        guard case .connected(let current, let connection) = state, current == session else { return false }
        let sent = connection.packetsSent, received = connection.packetsReceived
        if keepAlive.pinging, received == keepAlive.received {
            failed(
                "the broker \(options.broker) did not answer a PINGREQ within \(max(options.keepAlive, .seconds(5)) / 2)"
            )
            return false
        }
        let ping = sent == keepAlive.sent || received == keepAlive.received
        if ping { connection.send(.pingreq) }
        keepAlive = KeepAliveMark(sent: connection.packetsSent, received: received, pinging: ping)
        return true
    }

    /// CONNACK's return codes (MQTT 3.1.1, table 3.1), as libmosquitto and mosquitto name them.
    static func refusalName(_ code: UInt8) -> String {
        switch code {
        case 1: "Connection Refused: unacceptable protocol version."
        case 2: "Connection Refused: identifier rejected."
        case 3: "Connection Refused: broker unavailable."
        case 4: "Connection Refused: bad user name or password."
        case 5: "Connection Refused: not authorised."
        default: "Connection Refused: unknown reason."
        }
    }

    // MARK: Failing

    /// The TLS handshake failed, said with the likely cause when it is a plain MQTT port
    /// (which takes the ClientHello for a malformed CONNECT and hangs up).
    private func tlsFailed(_ detail: String, plainPort: Bool) {
        let broker = options.broker
        let host = broker.host.contains(":") ? "[\(broker.host)]" : broker.host
        failed(
            "TLS handshake with \(host):\(broker.port) failed (\(detail))"
                + (plainPort ? ": is it a plain MQTT port? (mqtt:// for plain)" : ""))
    }

    /// The attempt or the connection ended: close it and try again after the backoff.
    func failed(_ reason: String) {
        guard !isClosed else { return }
        let wasConnected = if case .connected = state { true } else { false }
        counters.connected = false
        connection?.close(disconnect: false)
        outbox.connectionLost()
        retainedInFlight = []
        subscribing = [:]
        releaseRetainedWaiters()
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
        Task { @BluetoothActor [weak self] in
            try? await Task.sleep(for: delay)
            guard let self, case .waiting = self.state else { return }
            self.attempt()
        }
    }

    /// The wait after `failures` failed attempts in a row: none after a lost connection's
    /// first, then the backoff doubling up to its limit.
    private func backoff(after failures: Int) -> Duration {
        guard failures > 0 else { return .milliseconds(100) }
        var delay = options.backoff
        for _ in 1..<min(failures, 32) where delay < options.backoffLimit { delay *= 2 }
        return min(delay, options.backoffLimit)
    }
}
