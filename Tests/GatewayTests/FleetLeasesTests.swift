import Foundation
import Gateway
import Testing

/// The fleet's lease protocol as a value: events in, actions out. Several gateways are
/// simulated here by passing each one's published leases to all of them in one order, as a
/// broker does (the integration test runs three real gateways on mosquitto).
struct FleetLeasesTests {
    static let start = ContinuousClock.now
    static let sensor = "F0:0D:B1:E7:00:01"

    static func at(_ milliseconds: Int) -> FleetLeases.Now {
        FleetLeases.Now(
            instant: start + .milliseconds(milliseconds), epochMilliseconds: 1_764_300_000_000 + Int64(milliseconds))
    }

    /// A broker in miniature: it retains the last lease and delivers each publication to
    /// every gateway in the order published; runs the clock in 50 ms steps.
    struct Fleet {
        var gateways: [String: FleetLeases]
        var retained: Lease?
        var connected: [String] = []
        var disconnected: [String] = []
        var now = 0
        /// The broker gets the gateways' publications of one instant in the other order.
        var reverseTicks = false

        init(_ ids: [String]) {
            gateways = Dictionary(
                uniqueKeysWithValues: ids.map { ($0, FleetLeases(gateway: $0, started: FleetLeasesTests.start)) })
            for id in ids { for other in ids { gateways[id]?.status(of: other, online: true) } }
        }

        mutating func deliver(_ actions: [(String, FleetLeases.Action)]) {
            var queue = actions
            while !queue.isEmpty {
                let (from, action) = queue.removeFirst()
                let lease: Lease?
                switch action {
                case .publish(_, let published): lease = published
                case .clear: lease = nil
                case .connect: connected.append(from); continue
                case .disconnect: disconnected.append(from); continue
                }
                retained = lease
                for id in gateways.keys.sorted() {
                    let more = gateways[id]!.received(
                        FleetLeasesTests.sensor, lease: lease, now: FleetLeasesTests.at(now))
                    queue += more.map { (id, $0) }
                }
            }
        }

        mutating func run(until end: Int) {
            while now < end {
                now += 50
                var actions: [(String, FleetLeases.Action)] = []
                for id in gateways.keys.sorted() {
                    actions += gateways[id]!.tick(now: FleetLeasesTests.at(now)).map { (id, $0) }
                }
                deliver(reverseTicks ? actions.reversed() : actions)
            }
        }

        mutating func sight(_ id: String, rssi: Int) {
            _ = gateways[id]!.sighted(FleetLeasesTests.sensor, rssi: rssi, now: FleetLeasesTests.at(now))
        }
    }

    @Test func theNearestGatewayClaimsConfirmsOnItsEchoAndConnects() {
        var fleet = Fleet(["gw1", "gw2", "gw3"])
        fleet.sight("gw1", rssi: -70)
        fleet.sight("gw2", rssi: -45)
        fleet.sight("gw3", rssi: -60)
        fleet.run(until: 3000)
        #expect(fleet.connected == ["gw2"])
        #expect(fleet.retained == Lease(holder: "gw2", rssi: -45, time: fleet.retained?.time ?? 0, state: .held))
        #expect(fleet.gateways["gw2"]!.held == [Self.sensor])
        #expect(fleet.gateways["gw1"]!.held.isEmpty && fleet.gateways["gw3"]!.held.isEmpty)
    }

    @Test func noClaimWithoutTheBrokersEcho() {
        var gateway = FleetLeases(gateway: "gw1", started: Self.start)
        _ = gateway.sighted(Self.sensor, rssi: -40, now: Self.at(0))
        let claim = gateway.tick(now: Self.at(1500))
        guard case .publish(_, let lease)? = claim.first else { Issue.record("no claim: \(claim)"); return }
        #expect(lease.state == .claimed && lease.holder == "gw1" && lease.rssi == -40)
        // No echo: however long, never held, never connected.
        #expect(gateway.tick(now: Self.at(10_000)).isEmpty)
        #expect(gateway.held.isEmpty)
        // The echo, then the settle: held and connected.
        #expect(gateway.received(Self.sensor, lease: lease, now: Self.at(10_050)).isEmpty)
        #expect(gateway.tick(now: Self.at(10_200)).isEmpty, "still settling")
        let actions = gateway.tick(now: Self.at(10_400))
        #expect(actions.count == 2 && actions.last == .connect(address: Self.sensor))
        if case .publish(_, let held)? = actions.first {
            #expect(held.state == .held && held.rssi == -40)
        } else {
            Issue.record("\(actions)")
        }
    }

    /// Two claims at once (the same RSSI, the same instant): whichever the broker orders
    /// first, the smaller id wins, the other withdraws, and only one connects.
    @Test(arguments: [false, true]) func simultaneousClaimsTieBreakOnTheSmallerId(reversed: Bool) {
        var fleet = Fleet(["gw1", "gw2"])
        fleet.reverseTicks = reversed
        fleet.sight("gw1", rssi: -50)
        fleet.sight("gw2", rssi: -50)
        fleet.run(until: 4000)
        #expect(fleet.connected == ["gw1"])
        #expect(fleet.retained?.holder == "gw1" && fleet.retained?.state == .held)
        #expect(fleet.gateways["gw2"]!.held.isEmpty)
    }

    @Test func aBetterClaimWinsOverAnEarlierWeakerOne() {
        var fleet = Fleet(["gw1", "gw2"])
        fleet.sight("gw1", rssi: -80)
        fleet.run(until: 1500)  // gw1's bid at -80 dBm is due at 1.6 s
        fleet.sight("gw2", rssi: -35)
        fleet.run(until: 4000)
        #expect(fleet.connected == ["gw2"], "the nearer one, though it heard it later")
        #expect(fleet.retained?.holder == "gw2")
    }

    @Test func aHeldLeaseOfAnOnlineHolderIsNotChallenged() {
        var gateway = FleetLeases(gateway: "gw2", started: Self.start)
        gateway.status(of: "gw1", online: true)
        let held = Lease(holder: "gw1", rssi: -90, time: 1, state: .held)
        #expect(gateway.received(Self.sensor, lease: held, now: Self.at(0)).isEmpty)
        _ = gateway.sighted(Self.sensor, rssi: -30, now: Self.at(2000))
        #expect(gateway.tick(now: Self.at(5000)).isEmpty)
    }

    /// The holder's last will says offline: its lease is free, the next sighting bids, and
    /// the new holder's lease replaces it.
    @Test func anOfflineHoldersLeaseIsTakenOver() {
        var gateway = FleetLeases(gateway: "gw2", started: Self.start)
        gateway.status(of: "gw1", online: true)
        let old = Lease(holder: "gw1", rssi: -40, time: 1, state: .held)
        _ = gateway.received(Self.sensor, lease: old, now: Self.at(0))
        gateway.status(of: "gw1", online: false)
        _ = gateway.sighted(Self.sensor, rssi: -60, now: Self.at(5000))
        let actions = gateway.tick(now: Self.at(5400))
        guard case .publish(_, let claim)? = actions.first else { Issue.record("\(actions)"); return }
        #expect(claim.holder == "gw2" && claim.state == .claimed)
        // The old holder's lease re-delivered (a retained replay) does not stop the claim.
        #expect(
            gateway.received(Self.sensor, lease: old, now: Self.at(5450)) == [.publish(address: Self.sensor, claim)])
        _ = gateway.received(Self.sensor, lease: claim, now: Self.at(5500))
        #expect(gateway.tick(now: Self.at(5850)).last == .connect(address: Self.sensor))
    }

    @Test func anUnknownHolderCountsAsOnlineOnlyDuringTheGrace() {
        var gateway = FleetLeases(gateway: "gw2", started: Self.start)
        _ = gateway.received(
            Self.sensor, lease: Lease(holder: "gone", rssi: -40, time: 1, state: .held), now: Self.at(0))
        _ = gateway.sighted(Self.sensor, rssi: -50, now: Self.at(100))
        #expect(gateway.tick(now: Self.at(1500)).isEmpty, "within the grace the holder may be online")
        _ = gateway.sighted(Self.sensor, rssi: -50, now: Self.at(3500))
        #expect(gateway.tick(now: Self.at(4000)).count == 1, "after it, no status means no holder")
    }

    @Test func aStaleLeaseOfOursIsClearedAndGivingUpReleases() {
        var gateway = FleetLeases(gateway: "gw1", started: Self.start)
        let stale = Lease(holder: "gw1", rssi: -40, time: 1, state: .held)
        #expect(gateway.received(Self.sensor, lease: stale, now: Self.at(0)) == [.clear(address: Self.sensor)])
        _ = gateway.sighted(Self.sensor, rssi: -40, now: Self.at(100))
        guard case .publish(_, let claim)? = gateway.tick(now: Self.at(1500)).first else {
            Issue.record("no claim"); return
        }
        _ = gateway.received(Self.sensor, lease: claim, now: Self.at(1550))
        _ = gateway.tick(now: Self.at(2000))
        #expect(gateway.held == [Self.sensor])
        #expect(gateway.gaveUp(Self.sensor, now: Self.at(3000)) == [.clear(address: Self.sensor)])
        #expect(gateway.held.isEmpty)
        _ = gateway.sighted(Self.sensor, rssi: -40, now: Self.at(4000))
        #expect(gateway.tick(now: Self.at(8000)).isEmpty, "out of the bidding a while after giving up")
    }

    @Test func leasePayloadRoundTripsAndOddOnesAreIgnored() {
        let lease = Lease(holder: "gw2", rssi: -48, time: 1_764_300_000_123, state: .held)
        #expect(
            String(decoding: lease.payload, as: UTF8.self)
                == #"{"holder":"gw2","leases":0,"rssi":-48,"state":"held","time":1764300000123}"#)
        #expect(Lease(payload: lease.payload) == lease)
        #expect(Lease(payload: []) == nil)
        #expect(Lease(payload: Array("online".utf8)) == nil)
        #expect(Lease(payload: Array(#"{"holder":"gw2","rssi":-48,"state":"mine"}"#.utf8)) == nil)
        #expect(Lease(payload: Array(#"{"holder":"gw2","rssi":-48,"state":"claimed","extra":1}"#.utf8))?.time == 0)
    }
}
