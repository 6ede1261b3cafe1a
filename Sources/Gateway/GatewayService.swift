import Bluejay
import Foundation
import HCI
import Logging

/// The gateway: one ``Central`` on the configured controller, one ``MQTTClient`` on the
/// broker, and between them the configured peripherals. Each peripheral is connected under
/// its policy (and tried again after a pause when the policy gives up), its subscribed
/// characteristics stream to their topics, its polled ones are read on their period, and
/// `/set` messages are written to it. docs/Gateway.md has the topics and the file.
@BluetoothActor
public final class GatewayService {
    /// The configuration it runs.
    public let configuration: GatewayConfiguration
    /// Its topics.
    public let topics: Topics
    /// Its broker connection.
    public let mqtt: MQTTClient
    let logger: Logger
    private let store: StoreDirectory
    private let hciLogger: HCILogger
    /// The peripherals found so far, by address as the topics spell it.
    var bound: [String: Bound] = [:]
    /// Name and service rules not matched yet.
    var unmatched: [Int] = []
    /// What the gateway started, cancelled on shutting down.
    var tasks: [Task<Void, Never>] = []
    var lastAdvertisement: [String: ContinuousClock.Instant] = [:]
    var counters = Counters()
    /// `decode:`: which decoded advertisements are published.
    var throttle: AdvertisementThrottle
    /// The decoding error last logged per device (each is logged once, not per packet).
    var decodeProblems: [String: String] = [:]
    /// Central's peripherals wait this long after giving up before the next round.
    private let pauseAfterGivingUp: Duration = Peripheral.maximumReconnectDelay
    /// In a fleet (`fleet: on`): the lease protocol, which alone decides what we connect.
    var leases: FleetLeases?
    /// `metrics:`: the Prometheus page, made every second.
    private var metricsEndpoint: MetricsEndpoint?
    /// How often the fleet's deadlines are looked at.
    private let leaseTick: Duration = .milliseconds(50)
    /// Home Assistant's discovery (`homeassistant:`), nil when off.
    let discovery: HomeAssistantDiscovery?
    /// Which of an earlier run's discovery configurations to delete, nil when discovery is off.
    let staleDiscovery: StaleDiscovery?
    /// The decoded values Home Assistant has been told of, per device (address as the topics
    /// spell it): a sensor's entities are announced as its values first appear.
    var announcedValues: [String: Set<String>] = [:]
    /// `presence:` / `irks:`: the tracked devices' presence, nil when none is tracked.
    var presence: PresenceTracker?

    /// A configured peripheral with its address known.
    final class Bound {
        let rule: PeripheralRule
        let peripheral: Peripheral
        let address: BluetoothAddress
        /// The streams and polls of the current round (cancelled when the policy gives up).
        var work: [Task<Void, Never>] = []
        var connected = false

        init(rule: PeripheralRule, peripheral: Peripheral, address: BluetoothAddress) {
            (self.rule, self.peripheral, self.address) = (rule, peripheral, address)
        }
    }

    /// The gateway's own counts (the MQTT client keeps the broker's).
    struct Counters {
        var values = 0
        /// Values a subscription's stream dropped, oldest first, while publishing fell
        /// behind by more than its capacity.
        var valuesDropped = 0
        var reads = 0
        var readFailures = 0
        var writes = 0
        var setErrors = 0
        var peripheralReconnects = 0
        var advertisements = 0
        /// Advertisements decoded, and of those: published to `…/values`, dropped as
        /// repeats of the last packet, dropped by `rate_limit:`.
        var decoded = 0
        var decodedPublished = 0
        var decodedDuplicates = 0
        var decodedRateLimited = 0
        /// Advertisements a known format could not decode (no key, a wrong one, broken).
        var decodeErrors = 0
    }

    /// A gateway for `configuration`; ``run()`` starts it. `store` keeps bonds and the GATT
    /// cache; `hciLogger` is the stack's log.
    public init(
        configuration: GatewayConfiguration, logger: Logger, store: StoreDirectory = .standard,
        hciLogger: HCILogger = .standardError
    ) {
        self.configuration = configuration
        self.topics = Topics(prefix: configuration.prefix, gateway: configuration.gateway)
        self.logger = logger
        self.store = store
        self.hciLogger = hciLogger
        throttle = AdvertisementThrottle(rateLimit: configuration.decoding.rateLimit)
        discovery = configuration.homeAssistantPrefix.map {
            HomeAssistantDiscovery(
                prefix: $0, gateway: configuration.gateway,
                topics: Topics(prefix: configuration.prefix, gateway: configuration.gateway))
        }
        staleDiscovery = discovery.map { StaleDiscovery($0, configuration: configuration) }
        var options = MQTTClient.Options(
            broker: configuration.broker, clientID: "bluejay-\(configuration.gateway)",
            username: configuration.username,
            password: configuration.password, keepAlive: configuration.keepAlive,
            will: (Topics(prefix: configuration.prefix, gateway: configuration.gateway).status, "offline"),
            backoff: configuration.brokerBackoff, backoffLimit: configuration.brokerBackoffLimit,
            queueLimit: configuration.queueLimit)
        options.caFile = configuration.caFile
        options.duplicateID = "another gateway uses the id '\(configuration.gateway)' on this broker"
        mqtt = MQTTClient(options: options, logger: logger)
    }

    /// Connects to the broker and the controller and serves until the task is cancelled;
    /// then marks everything offline, disconnects and returns. Throws when the controller
    /// cannot be opened. `ready` runs once both are started (systemd's READY=1).
    public func run(ready: @Sendable () -> Void = {}) async throws(BluejayError) {
        logger.debug("\(configuration)")
        mqtt.subscribe(topics.setFilter)
        // A run killed outright left its peripherals `online` (retained; the will covers only
        // the gateway's status): configured addresses start `offline`, other leftovers are
        // answered as they arrive (``staleStatus(_:_:)``).
        mqtt.subscribe(topics.peripheralStatusFilter)
        for rule in configuration.peripherals {
            if case .address(let identifier) = rule.match {
                mqtt.setRetained(topics.status(identifier.address), Array("offline".utf8))
            }
        }
        // Home Assistant configurations this file no longer announces are found the same
        // way and deleted (GatewayLeftovers.swift).
        if let staleDiscovery { mqtt.subscribe(staleDiscovery.filter) }
        if configuration.fleet {
            leases = FleetLeases(
                gateway: configuration.gateway, maxLinks: configuration.maxLinks ?? .max, started: .now)
            mqtt.subscribe(topics.leaseFilter)
            mqtt.subscribe(topics.gatewayStatusFilter)
        }
        mqtt.start()
        logger.debug("opening the controller \(configuration.transport)")
        let central: Central
        do { central = try await Central(transport: configuration.transport, store: store, logger: hciLogger) } catch {
            mqtt.setRetained(topics.status, Array("offline".utf8))
            _ = await mqtt.flushRetained(within: .seconds(2))
            mqtt.close()
            throw error
        }
        mqtt.setRetained(topics.status, Array("online".utf8))
        if let discovery {
            mqtt.setRetained(discovery.gatewayStatus.topic, Array(discovery.gatewayStatus.payload.utf8))
        }
        logger.info("gateway \(configuration.gateway) on \(configuration.transport), broker \(configuration.broker)")
        for (index, rule) in configuration.peripherals.enumerated() {
            if case .address(let identifier) = rule.match {
                await bind(rule, to: central.peripheral(identifier))
            } else {
                unmatched.append(index)
            }
        }
        if !configuration.presence.tracked.isEmpty { tasks.append(await startPresence()) }
        if needsScan { tasks.append(Task { await self.scan(central) }) }
        let messages = mqtt.messages
        tasks.append(Task { for await message in messages { await self.handleMessage(message) } })
        if leases != nil {
            tasks.append(
                Task {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: self.leaseTick)
                        await self.fleetTick()
                    }
                })
        }
        tasks.append(
            Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: self.configuration.statsInterval)
                    await self.publishStats()
                }
            })
        if let address = configuration.metrics {
            do {
                let endpoint = try MetricsEndpoint(host: address.host, port: address.port)
                metricsEndpoint = endpoint
                logger.info("metrics at http://\(address.host):\(endpoint.port)/metrics")
                tasks.append(
                    Task {
                        while !Task.isCancelled {
                            endpoint.update(
                                MetricsEndpoint.exposition(
                                    await self.statsFields(), gateway: self.configuration.gateway))
                            try? await Task.sleep(for: .seconds(1))
                        }
                    })
            } catch {
                logger.error("no metrics endpoint: \(error)")
            }
        }
        ready()
        // Serve until cancelled (the sleep ends at once then).
        while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
        await shutDown(central)
    }

    private func shutDown(_ central: Central) async {
        for task in tasks { task.cancel() }
        if var leases {
            let actions = leases.releaseAll()
            self.leases = leases
            for case .clear(let address) in actions { mqtt.clearRetained(topics.lease(address)) }
        }
        await central.stopScanning()
        for bound in bound.values {
            for task in bound.work { task.cancel() }
            mqtt.setRetained(topics.status(bound.address), Array("offline".utf8))
            await bound.peripheral.disconnect()
        }
        await publishStats()
        metricsEndpoint?.stop()
        mqtt.setRetained(topics.status, Array("offline".utf8))
        _ = await mqtt.flushRetained(within: .seconds(2))
        mqtt.close()
        central.close()
    }

    // MARK: - Peripherals

    /// Starts serving `peripheral` under `rule`: its availability, Home Assistant's
    /// configuration, its connection rounds.
    func bind(_ rule: PeripheralRule, to peripheral: Peripheral) async {
        let address = peripheral.identifier.address
        let key = address.description.uppercased()
        guard bound[key] == nil else { return }
        let entry = Bound(rule: rule, peripheral: peripheral, address: address)
        bound[key] = entry
        leases?.mayCarry(key)
        logger.debug("\(address): \(rule.match), connecting under its policy")
        mqtt.setRetained(topics.status(address), Array("offline".utf8))
        await announceToHomeAssistant(entry)
        let events = peripheral.connectionEvents()
        tasks.append(Task { for await event in events { await self.handle(event, of: entry) } })
        // In a fleet, only a lease connects it (``carryOut(_:)``).
        if leases == nil { tasks.append(Task { await self.connect(entry) }) }
    }

    func connect(_ entry: Bound) async {
        let policy = entry.rule.policy
        do {
            try await entry.peripheral.connect(
                timeoutRetries: policy.retries, disconnectRetries: policy.retries,
                connectionTimeout: policy.connectionTimeout, reconnectDelay: policy.backoff)
        } catch {
            // The events say so (gave up), and the next round is scheduled there.
            logger.warning("\(entry.address): \(error)")
            if Self.refusedForRoom(error), leases != nil {
                // The controller's own limit (no HCI command tells it beforehand): we carry
                // no more than we have now, and bid for no more (Lease.swift, maxLinks).
                let links = bound.values.filter(\.connected).count
                leases?.controllerRefused(carrying: links)
                logger.warning("the controller holds no more than \(links) link(s): bidding for at most that many")
            }
        }
    }

    private func handle(_ event: PeripheralEvent, of entry: Bound) async {
        let address = entry.address
        switch event {
        case .connected:
            logger.info("\(address) connected")
            entry.connected = true
            mqtt.setRetained(topics.status(address), Array("online".utf8))
            if entry.work.isEmpty { entry.work = startWork(entry) }
        case .disconnected(let reason):
            logger.warning("\(address) disconnected: \(reason)")
            entry.connected = false
            mqtt.setRetained(topics.status(address), Array("offline".utf8))
        case .reconnecting(let attempt, let delay):
            counters.peripheralReconnects += 1
            logger.info("\(address) reconnecting (attempt \(attempt)) in \(delay)")
        case .connectionTimedOut(let attempt):
            logger.info("\(address) connection attempt \(attempt) timed out")
        case .forcedDisconnect:
            entry.connected = false
        case .gaveUp(let reason):
            entry.connected = false
            for task in entry.work { task.cancel() }
            entry.work = []
            mqtt.setRetained(topics.status(address), Array("offline".utf8))
            if var leases {
                // In a fleet the lease goes, for a gateway that hears it better.
                logger.warning("\(address) gave up: \(reason); releasing its lease")
                let actions = leases.gaveUp(address.description.uppercased(), now: .current)
                self.leases = leases
                await carryOut(actions)
                return
            }
            logger.warning("\(address) gave up: \(reason); trying again in \(pauseAfterGivingUp)")
            let pause = pauseAfterGivingUp
            tasks.append(
                Task {
                    try? await Task.sleep(for: pause)
                    guard !Task.isCancelled else { return }
                    await self.connect(entry)
                })
        }
    }

    /// The streams and polls of one round: listens survive reconnections (Central restores
    /// them), so they start once per round.
    private func startWork(_ entry: Bound) -> [Task<Void, Never>] {
        var work: [Task<Void, Never>] = []
        for rule in entry.rule.subscribe {
            let route = ValueRoute(rule, at: entry.address, topics: topics)
            work.append(
                Task {
                    do {
                        // At most PeripheralValues.defaultCapacity values wait for the broker's
                        // queue (itself bounded by `queue`); past that the oldest go, counted in
                        // `values_dropped` and logged.
                        let values = try await entry.peripheral.values(of: rule.characteristic)
                        var reported = 0
                        for try await value in values {
                            let dropped = values.droppedCount
                            if dropped > reported {
                                self.counters.valuesDropped += dropped - reported
                                self.logger.warning(
                                    "\(entry.address) \(rule.topicPath): \(dropped - reported) value(s) dropped, publishing fell behind"
                                )
                                reported = dropped
                            }
                            self.publishValue(value, of: rule, at: entry.address, to: route)
                        }
                    } catch {
                        if !Task.isCancelled { self.logger.warning("\(entry.address) \(rule.topicPath): \(error)") }
                    }
                })
        }
        for rule in entry.rule.poll {
            let route = ValueRoute(rule, at: entry.address, topics: topics)
            work.append(
                Task {
                    while !Task.isCancelled {
                        if entry.connected {
                            do {
                                let value = try await entry.peripheral.read(from: rule.characteristic)
                                self.counters.reads += 1
                                self.publishValue(value, of: rule, at: entry.address, to: route)
                            } catch {
                                self.counters.readFailures += 1
                                self.logger.warning("\(entry.address) read \(rule.topicPath): \(error)")
                            }
                        }
                        try? await Task.sleep(for: rule.every ?? .seconds(60))
                    }
                })
        }
        return work
    }

    /// A value to its topic (hex) and, for a known characteristic, decoded to `/json`;
    /// handed to the MQTT client without a hop onto its actor (``MQTTClient/send(_:_:qos:)``).
    private func publishValue(
        _ value: [UInt8], of rule: CharacteristicRule, at address: BluetoothAddress, to route: ValueRoute
    ) {
        counters.values += 1
        let hex = Hex.bytes(value)
        logger.debug("\(address) \(rule.topicPath): \(String(decoding: hex, as: UTF8.self))")
        mqtt.send(route.topic, hex)
        if let json = route.json, let text = json.characteristic.json(value) { mqtt.send(json.topic, text) }
    }

    // MARK: - Home Assistant and counters

    /// Home Assistant's configuration of `entry`'s sensors and writable characteristics (retained).
    private func announceToHomeAssistant(_ entry: Bound) async {
        guard let discovery else { return }
        for message in discovery.sensors(of: entry.rule, at: entry.address)
            + discovery.texts(of: entry.rule, at: entry.address)
        {
            mqtt.setRetained(message.topic, Array(message.payload.utf8))
        }
    }

    /// The counters at `PREFIX/GATEWAY/stats` (retained).
    public func publishStats() async {
        mqtt.setRetained(topics.stats, Array(JSONText.encode(await statsFields()).utf8))
    }

    /// The counters, by their names in `PREFIX/GATEWAY/stats`.
    private func statsFields() async -> [String: Int] {
        let broker = mqtt.snapshot()
        let links = bound.values.filter(\.connected).count
        var fields: [String: Int] = [
            "values": counters.values, "values_dropped": counters.valuesDropped, "reads": counters.reads,
            "read_failures": counters.readFailures, "writes": counters.writes,
            "set_errors": counters.setErrors, "peripheral_reconnects": counters.peripheralReconnects,
            "advertisements": counters.advertisements,
            "decoded": counters.decoded, "decoded_published": counters.decodedPublished,
            "decoded_duplicates": counters.decodedDuplicates,
            "decoded_rate_limited": counters.decodedRateLimited, "decode_errors": counters.decodeErrors,
            "decoded_devices": throttle.devices,
            "links": links, "peripherals": bound.count,
            "queue_depth": broker.queueDepth, "dropped": broker.dropped, "acknowledged": broker.acknowledged,
            "broker_reconnects": broker.reconnects, "broker_refusals": broker.refusals,
        ]
        if let leases { fields["leases"] = leases.held.count }
        return fields
    }
}
