import Foundation
import Gateway
import Testing

/// The fleet's load spread (issue 52 item 9) on the lease protocol as a value: `max_links`
/// bounds the bidding, ties go to the gateway carrying fewer, and a gateway with room takes
/// peripherals over from one carrying two more, the giver disconnecting only once the
/// taker's lease is held. A broker in miniature delivers every publication to every gateway
/// in the order published; the integration test (GatewayFleetScaleTests) runs the processes.
struct FleetLoadSpreadTests {
    static let start = ContinuousClock.now

    static func at(_ milliseconds: Int) -> FleetLeases.Now {
        FleetLeases.Now(
            instant: start + .milliseconds(milliseconds), epochMilliseconds: 1_764_300_000_000 + Int64(milliseconds))
    }

    static func sensor(_ index: Int) -> String { String(format: "F0:0D:B1:E7:00:%02X", index + 1) }

    /// Many sensors, many gateways, retained leases and statuses, a 50 ms clock.
    struct Broker {
        var gateways: [String: FleetLeases] = [:]
        var retained: [String: Lease] = [:]
        /// Who is connected to each sensor now, as the gateways' actions say.
        var connectedBy: [String: Set<String>] = [:]
        /// Every action of every gateway, in order, for checking the handovers' order.
        var log: [(String, FleetLeases.Action)] = []
        var now = 0

        /// Gateway `id` starts now (statuses exchanged, retained leases delivered), able to
        /// carry `sensors`, at most `maxLinks`.
        mutating func start(_ id: String, sensors: [String], maxLinks: Int = .max) {
            var gateway = FleetLeases(
                gateway: id, maxLinks: maxLinks, started: FleetLoadSpreadTests.start + .milliseconds(now))
            for sensor in sensors { gateway.mayCarry(sensor) }
            for other in gateways.keys {
                gateway.status(of: other, online: true); gateways[other]!.status(of: id, online: true)
            }
            gateway.status(of: id, online: true)
            gateways[id] = gateway
            var actions: [(String, FleetLeases.Action)] = []
            for (address, lease) in retained.sorted(by: { $0.key < $1.key }) {
                actions += gateways[id]!.received(address, lease: lease, now: FleetLoadSpreadTests.at(now)).map {
                    (id, $0)
                }
            }
            deliver(actions)
        }

        /// Gateway `id` dies: its will marks it offline; its links drop.
        mutating func kill(_ id: String) {
            gateways[id] = nil
            for other in gateways.keys { gateways[other]!.status(of: id, online: false) }
            for sensor in connectedBy.keys { connectedBy[sensor]?.remove(id) }
        }

        mutating func deliver(_ actions: [(String, FleetLeases.Action)]) {
            var queue = actions
            while !queue.isEmpty {
                let (from, action) = queue.removeFirst()
                guard gateways[from] != nil else { continue }
                log.append((from, action))
                let address: String, lease: Lease?
                switch action {
                case .publish(let to, let published): (address, lease) = (to, published)
                case .clear(let to): (address, lease) = (to, nil)
                case .connect(let to): connectedBy[to, default: []].insert(from); continue
                case .disconnect(let to): connectedBy[to]?.remove(from); continue
                }
                retained[address] = lease
                for id in gateways.keys.sorted() {
                    queue += gateways[id]!.received(address, lease: lease, now: FleetLoadSpreadTests.at(now)).map {
                        (id, $0)
                    }
                }
            }
        }

        /// Sensors not connected advertise: every gateway hears each at `rssi(gateway, sensor)`.
        mutating func run(until end: Int, sensors: [String], rssi: (String, String) -> Int) {
            while now < end {
                now += 50
                for sensor in sensors where connectedBy[sensor, default: []].isEmpty {
                    for id in gateways.keys.sorted() {
                        _ = gateways[id]!.sighted(sensor, rssi: rssi(id, sensor), now: FleetLoadSpreadTests.at(now))
                    }
                }
                var actions: [(String, FleetLeases.Action)] = []
                for id in gateways.keys.sorted() {
                    actions += gateways[id]!.tick(now: FleetLoadSpreadTests.at(now)).map { (id, $0) }
                }
                deliver(actions)
            }
        }

        func carried(_ id: String) -> Int { connectedBy.values.filter { $0.contains(id) }.count }
        /// Every sensor connected by exactly one live gateway, which holds its lease.
        func settled(_ sensors: [String]) -> Bool {
            sensors.allSatisfy { sensor in
                guard let holders = connectedBy[sensor], holders.count == 1, let holder = holders.first else {
                    return false
                }
                return retained[sensor]?.holder == holder && retained[sensor]?.state == .held
                    && gateways[holder]?.held.contains(sensor) == true
            }
        }
    }

    @Test func maxLinksBoundsTheBiddingAndTheRestGoElsewhere() {
        let sensors = (0..<6).map(Self.sensor)
        var broker = Broker()
        broker.start("gw1", sensors: sensors, maxLinks: 2)
        broker.start("gw2", sensors: sensors)
        broker.start("gw3", sensors: sensors)
        // gw1 hears every sensor best: without its limit it would take all six.
        broker.run(until: 20_000, sensors: sensors) { id, _ in id == "gw1" ? -40 : id == "gw2" ? -60 : -70 }
        #expect(broker.settled(sensors), "\(broker.connectedBy)")
        #expect(broker.carried("gw1") == 2)
        let rest: [Int] = [broker.carried("gw2"), broker.carried("gw3")]
        #expect(rest == [2, 2], "the rest spread: \(broker.connectedBy)")
        #expect(broker.gateways["gw1"]!.load <= 2)
    }

    @Test func tiesOfRSSIGoToTheGatewayCarryingFewerThenTheSmallerId() {
        let busy = Lease(holder: "gw1", rssi: -50, time: 1, state: .claimed, leases: 3)
        let idle = Lease(holder: "gw2", rssi: -50, time: 1, state: .claimed, leases: 1)
        #expect(idle.beats(busy) && !busy.beats(idle))
        let twin = Lease(holder: "gw3", rssi: -50, time: 1, state: .claimed, leases: 1)
        #expect(idle.beats(twin), "the same load: the smaller id")
        #expect(Lease(holder: "gw9", rssi: -49, time: 1, state: .claimed, leases: 9).beats(idle), "RSSI first")
        #expect(Lease(holder: "gw9", rssi: -90, time: 1, state: .held, leases: 9).beats(idle), "held first of all")
    }

    /// Two gateways hear every sensor alike: each sensor's contention is decided by load, so
    /// the bidding alone spreads them (then the smaller id breaks the last tie).
    @Test func equalHearingSpreadsByLoad() {
        let sensors = (0..<8).map(Self.sensor)
        var broker = Broker()
        broker.start("gw1", sensors: sensors)
        broker.start("gw2", sensors: sensors)
        broker.run(until: 20_000, sensors: sensors) { _, _ in -50 }
        #expect(broker.settled(sensors))
        #expect(abs(broker.carried("gw1") - broker.carried("gw2")) <= 1, "\(broker.connectedBy)")
    }

    /// gw1 hears all nine best and carries them; gw2 then gw3 start later and take sensors
    /// over until each carries three. Each giver disconnects a sensor only after its taker's
    /// held lease (so at most one reconnection is lost).
    @Test func gatewaysJoiningLaterTakeTheirShareOneHandoverAtATime() {
        let sensors = (0..<9).map(Self.sensor)
        var broker = Broker()
        let rssi: (String, String) -> Int = { id, _ in id == "gw1" ? -40 : -60 }
        broker.start("gw1", sensors: sensors)
        broker.run(until: 10_000, sensors: sensors, rssi: rssi)
        #expect(broker.settled(sensors) && broker.carried("gw1") == 9)
        broker.start("gw2", sensors: sensors)
        broker.run(until: 30_000, sensors: sensors, rssi: rssi)
        #expect(broker.settled(sensors))
        #expect(
            broker.carried("gw1") - broker.carried("gw2") <= 1 && broker.carried("gw1") >= broker.carried("gw2"),
            "\(broker.connectedBy)")
        broker.start("gw3", sensors: sensors)
        broker.run(until: 60_000, sensors: sensors, rssi: rssi)
        #expect(broker.settled(sensors))
        let loads: [Int] = ["gw1", "gw2", "gw3"].map { broker.carried($0) }
        #expect(loads == [3, 3, 3], "\(broker.connectedBy)")

        // The order of each handover: the taker's held lease, then the giver's disconnection.
        var heldBy: [String: String] = [:]
        var moves = 0
        for (from, action) in broker.log {
            switch action {
            case .publish(let address, let lease) where lease.state == .held: heldBy[address] = lease.holder
            case .disconnect(let address):
                moves += 1
                #expect(
                    heldBy[address] != nil && heldBy[address] != from,
                    "\(from) let \(address) go before its taker held it")
            default: break
            }
        }
        // gw2 took four (9/0 to 5/4), gw3 then one from gw1 twice and one from gw2 (4/4/1,
        // 3/4/2, 3/3/3): no move more than evening the fleet asks.
        #expect(moves == 7)
    }

    /// After two of four die, the survivors take every sensor (bounded by `max_links`) and
    /// even out.
    @Test func survivorsOfTwoDeathsCarryEverythingEvenly() {
        let sensors = (0..<24).map(Self.sensor)
        let ids = ["gw1", "gw2", "gw3", "gw4"]
        var broker = Broker()
        for id in ids { broker.start(id, sensors: sensors, maxLinks: 13) }
        // As the peer places them: sensor p nearest gateway p mod 4, 10 dB per step away.
        let rssi: (String, String) -> Int = { id, sensor in
            let p = sensors.firstIndex(of: sensor)!, h = ids.firstIndex(of: id)!
            return -40 - 10 * ((p - h + 4) % 4)
        }
        broker.run(until: 20_000, sensors: sensors, rssi: rssi)
        #expect(broker.settled(sensors))
        let loads: [Int] = ids.map { broker.carried($0) }
        #expect(loads == [6, 6, 6, 6])
        broker.kill("gw1")
        broker.kill("gw2")
        broker.run(until: 60_000, sensors: sensors, rssi: rssi)
        #expect(broker.settled(sensors), "\(broker.connectedBy)")
        let survivors: [Int] = ["gw3", "gw4"].map { broker.carried($0) }
        #expect(survivors == [12, 12], "\(broker.connectedBy)")
    }

    /// Issue 36's fleet: three gateways, six sensors, one killed; its two sensors go to the
    /// same survivor by RSSI, and the spread then moves one of those two again rather than
    /// one that survivor carried all along (whose stream would be cut for nothing).
    @Test func theSpreadMovesASensorAlreadyMovedRatherThanASettledOne() {
        let sensors = (0..<6).map(Self.sensor)
        let ids = ["gw1", "gw2", "gw3"]
        var broker = Broker()
        for id in ids { broker.start(id, sensors: sensors) }
        let rssi: (String, String) -> Int = { id, sensor in
            let p = sensors.firstIndex(of: sensor)!, h = ids.firstIndex(of: id)!
            return -40 - 10 * ((p - h + 3) % 3)
        }
        broker.run(until: 10_000, sensors: sensors, rssi: rssi)
        let before = broker.connectedBy
        broker.kill("gw1")
        broker.run(until: 30_000, sensors: sensors, rssi: rssi)
        #expect(broker.settled(sensors))
        let loads: [Int] = ["gw2", "gw3"].map { broker.carried($0) }
        #expect(loads == [3, 3], "\(broker.connectedBy)")
        for (index, sensor) in sensors.enumerated() where index % 3 != 0 {
            #expect(broker.connectedBy[sensor] == before[sensor], "\(sensor) stayed where it was")
        }
    }

    /// No `max_links:`: the controller's refusal for want of room sets the limit to the
    /// links held then, and no bid goes past it.
    @Test func theControllersRefusalSetsTheLimit() {
        let sensors = (0..<4).map(Self.sensor)
        var broker = Broker()
        broker.start("gw1", sensors: sensors)
        // Alone, gw1 takes the first two; then its controller refuses a third.
        broker.run(until: 5_000, sensors: [sensors[0], sensors[1]]) { _, _ in -40 }
        #expect(broker.carried("gw1") == 2)
        broker.gateways["gw1"]!.controllerRefused(carrying: 2)
        #expect(broker.gateways["gw1"]!.maxLinks == 2)
        // gw1 hears the other two best, but may not bid: gw2 takes them.
        broker.start("gw2", sensors: sensors)
        broker.run(until: 20_000, sensors: sensors) { id, _ in id == "gw1" ? -40 : -60 }
        #expect(broker.settled(sensors))
        #expect(broker.carried("gw1") == 2 && broker.carried("gw2") == 2, "\(broker.connectedBy)")
        broker.gateways["gw1"]!.controllerRefused(carrying: 5)
        #expect(broker.gateways["gw1"]!.maxLinks == 2, "a later refusal never raises it")
    }

    /// A handover claim the holder does not agree to (it carries fewer than two more than
    /// the taker says it does): the holder says its lease again, the taker withdraws.
    @Test func aHandoverTheHolderDoesNotOweIsRefused() {
        var holder = FleetLeases(gateway: "gw1", started: Self.start)
        holder.status(of: "gw2", online: true)
        let sensor = Self.sensor(0)
        _ = holder.sighted(sensor, rssi: -40, now: Self.at(0))
        guard case .publish(_, let claim)? = holder.tick(now: Self.at(1500)).first else {
            Issue.record("no claim"); return
        }
        _ = holder.received(sensor, lease: claim, now: Self.at(1550))
        let actions = holder.tick(now: Self.at(2000))
        guard case .publish(_, let held)? = actions.first else { Issue.record("\(actions)"); return }
        _ = holder.received(sensor, lease: held, now: Self.at(2050))
        // gw2 carries 0, gw1 carries 1: not two more.
        let ask = Lease(holder: "gw2", rssi: -50, time: 3, state: .claimed, leases: 0, from: "gw1")
        #expect(holder.received(sensor, lease: ask, now: Self.at(4000)) == [.publish(address: sensor, held)])
        #expect(holder.held == [sensor])
    }

    /// A taker that agreed-to handover never completes (it died): past the timeout the
    /// giver says its lease again and keeps the sensor.
    @Test func anUncompletedHandoverIsCalledOff() {
        var giver = FleetLeases(gateway: "gw1", started: Self.start)
        giver.status(of: "gw2", online: true)
        let sensors = (0..<3).map(Self.sensor)
        var held: [String: Lease] = [:]
        for sensor in sensors { _ = giver.sighted(sensor, rssi: -40, now: Self.at(0)) }
        for case .publish(let address, let claim) in giver.tick(now: Self.at(1500)) {
            _ = giver.received(address, lease: claim, now: Self.at(1550))
        }
        for case .publish(let address, let lease) in giver.tick(now: Self.at(2000)) {
            held[address] = lease; _ = giver.received(address, lease: lease, now: Self.at(2050))
        }
        #expect(giver.held.count == 3)
        let ask = Lease(holder: "gw2", rssi: -50, time: 3, state: .claimed, leases: 0, from: "gw1")
        #expect(giver.received(sensors[0], lease: ask, now: Self.at(4000)).isEmpty, "agreed: silence")
        #expect(giver.held.count == 3, "still streaming while handing over")
        // Another agreed to, then lost by the giver's policy: the broker has the taker's claim, left alone.
        #expect(giver.received(sensors[1], lease: ask, now: Self.at(4100)).isEmpty)
        #expect(giver.gaveUp(sensors[1], now: Self.at(4200)).isEmpty)
        giver.status(of: "gw2", online: false)
        #expect(giver.tick(now: Self.at(8000)).isEmpty, "within the timeout")
        #expect(
            giver.tick(now: Self.at(9100)) == [.publish(address: sensors[0], held[sensors[0]]!)],
            "called off: said again")
    }

    @Test func thePayloadCarriesTheLoadAndTheHandover() {
        let ask = Lease(holder: "gw3", rssi: -60, time: 1_764_300_000_123, state: .claimed, leases: 4, from: "gw1")
        #expect(
            String(decoding: ask.payload, as: UTF8.self)
                == #"{"from":"gw1","holder":"gw3","leases":4,"rssi":-60,"state":"claimed","time":1764300000123}"#)
        #expect(Lease(payload: ask.payload) == ask)
        // A gateway from before the load spread: no `leases`, no `from`.
        #expect(
            Lease(payload: Array(#"{"holder":"gw2","rssi":-48,"state":"held","time":5}"#.utf8))
                == Lease(holder: "gw2", rssi: -48, time: 5, state: .held))
    }
}
