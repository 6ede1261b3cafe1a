import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import Gateway
import HCITestSupport
import Testing

/// Issue 36's fleet test: three `bluejay-gateway` processes, each with its own controller
/// on one shared virtual link (one Bumble peer serving three host-facing controllers), and
/// six free-running sensors on that link, numbering their samples. Each sensor must be
/// connected by exactly one gateway; `kill -9` of one gateway must move its sensors to the
/// others (its last will marks it offline, which frees its leases); the samples lost on
/// the way are counted from the gaps in the numbers, and reported with the takeover time.
extension IntegrationTests {
    /// A sample number from a value topic's payload: Heart Rate Measurement, uint16 format
    /// (`01 LSB MSB`, as the peer's `--sensor-period-ms` sends it).
    static func sample(_ payload: [UInt8]) -> Int? {
        guard let bytes = Hex.decode(String(decoding: payload, as: UTF8.self)), bytes.count == 3, bytes[0] == 0x01
        else { return nil }
        return Int(bytes[1]) | Int(bytes[2]) << 8
    }

    @Test(.hangGuard) func fleetOfThreeSharesSixSensorsAndTakesOverFromAKilledGateway() async throws {
        let broker = try await MosquittoBroker()
        let period = 100  // ms between samples
        let peer = try await TestPeer(arguments: [
            "--hosts", "3", "--peripherals", "6", "--sensor-period-ms", "\(period)",
        ])
        defer { peer.stop() }
        #expect(peer.transports.count == 3 && peer.addresses.count == 6)
        let recorder = try await MQTTRecorder(broker: broker, filter: "bluejay/#")
        let rig = try GatewayFleetRig(broker: broker, peer: peer)
        defer { rig.stop() }

        let ids = ["gw1", "gw2", "gw3"]
        let metricsPorts = try ids.map { _ in try MosquittoBroker.freePort() }
        for (index, id) in ids.enumerated() {
            try rig.start(id, host: index, extra: "metrics: 127.0.0.1:\(metricsPorts[index])")
        }
        func logs() -> String { rig.logs() }

        /// Who streams each sensor now: the gateways whose retained availability of it says online.
        func streaming(_ address: String) async -> [String] {
            var holders: [String] = []
            for id in ids where await recorder.payloads("bluejay/\(id)/\(address)/status").last == "online" {
                holders.append(id)
            }
            return holders
        }
        func lease(_ address: String) async -> Lease? {
            await recorder.messages.last { $0.topic == "bluejay/lease/\(address)" }.flatMap {
                Lease(payload: $0.payload)
            }
        }
        /// Every sensor streamed by exactly one gateway, which holds its lease, and values coming.
        func settled(excluding dead: String? = nil) async -> Bool {
            for address in peer.addresses {
                // A killed gateway's availability of its sensors stays `online` (only its own
                // status has a will): consumers read it together with the gateway's status.
                let holders = await streaming(address).filter { $0 != dead }
                guard holders.count == 1, let lease = await lease(address),
                    lease.holder == holders[0], lease.state == .held
                else { return false }
            }
            return true
        }

        let steady = await eventually(within: .seconds(30)) { await settled() }
        #expect(steady, "each sensor streamed by one gateway holding its lease\n\(logs())")
        guard steady else { return }
        var holderOf: [String: String] = [:]
        for address in peer.addresses { holderOf[address] = await streaming(address).first }
        // The peer puts sensor p nearest host p mod 3 (-40 dBm, the others -50 and -60).
        let nearest = peer.addresses.enumerated().filter { holderOf[$0.element] == ids[$0.offset % 3] }.count
        print("fleet: holders \(peer.addresses.map { holderOf[$0]! }), \(nearest) of 6 at their nearest gateway")

        // Each gateway's Prometheus page counts the leases it holds: six in all.
        var leasesHeld = 0
        for (index, id) in ids.enumerated() {
            let holding = holderOf.values.filter { $0 == id }.count
            let url = try #require(URL(string: "http://127.0.0.1:\(metricsPorts[index])/metrics"))
            let page = await eventually {
                guard let (data, _) = try? await URLSession.shared.data(from: url) else { return false }
                return String(decoding: data, as: UTF8.self).contains(
                    "bluejay_gateway_leases{gateway=\"\(id)\"} \(holding)\n")
            }
            #expect(page, "\(id)'s /metrics says it holds \(holding) leases")
            if page { leasesHeld += holding }
        }
        #expect(leasesHeld == 6)

        // For two seconds every sensor's values come from its holder alone.
        let windowStart = await recorder.messages.count
        try await Task.sleep(for: .seconds(2))
        let window = await recorder.messages[windowStart...]
        for address in peer.addresses {
            let sources = Set(
                window.filter { $0.topic.hasSuffix("/\(address)/180D/2A37") }.map { $0.topic.split(separator: "/")[1] })
            #expect(sources == [Substring(holderOf[address]!)], "\(address) streamed by \(sources)")
        }

        // kill -9 the gateway holding the most sensors.
        let victim = ids.max { a, b in
            holderOf.values.filter { $0 == a }.count < holderOf.values.filter { $0 == b }.count
        }!
        let moved = peer.addresses.filter { holderOf[$0] == victim }
        let killedAt = ContinuousClock.now
        rig.sigkill(victim)
        #expect(
            await eventually { await recorder.payloads("bluejay/\(victim)/status").last == "offline" },
            "the last will says offline")
        let taken = await eventually(within: .seconds(15)) {
            for address in moved {
                let holders = await streaming(address).filter { $0 != victim }
                guard holders.count == 1, await lease(address)?.holder == holders[0] else { return false }
                let messages = await recorder.messages, arrivals = await recorder.arrivals
                guard
                    zip(messages, arrivals).contains(where: {
                        $0.topic == "bluejay/\(holders[0])/\(address)/180D/2A37" && $1 > killedAt
                    })
                else { return false }
            }
            return true
        }
        #expect(taken, "\(moved) taken over within 15 s\n\(logs())")
        guard taken else { return }

        // Takeover time: from the kill to each moved sensor's first value from its new gateway.
        let messages = await recorder.messages, arrivals = await recorder.arrivals
        var takeovers: [Duration] = []
        for address in moved {
            if let first = zip(messages, arrivals).first(where: {
                $0.topic.hasSuffix("/\(address)/180D/2A37") && !$0.topic.hasPrefix("bluejay/\(victim)/")
                    && $1 > killedAt
            }) {
                takeovers.append(first.1 - killedAt)
            }
        }
        #expect(
            await eventually { await settled(excluding: victim) }, "all six streamed again, none by the dead gateway")

        // Lost samples: the gaps in each sensor's numbers, across whichever gateways published them.
        try await Task.sleep(for: .seconds(1))
        var lost: [String: Int] = [:]
        for address in peer.addresses {
            let samples = Set(
                await recorder.messages.filter { $0.topic.hasSuffix("/\(address)/180D/2A37") }.compactMap {
                    Self.sample($0.payload)
                }
            ).sorted()
            guard let first = samples.first, let last = samples.last else { continue }
            lost[address] = (last - first + 1) - samples.count
        }
        let worst = takeovers.max() ?? .zero
        // Which gateways each sensor's values came from, in turn: a move shows as a change.
        let streamers = await recorder.messages.reduce(into: [String: [Substring]]()) { result, message in
            let levels = message.topic.split(separator: "/")
            guard levels.count == 5, levels[4] == "2A37", result[String(levels[2])]?.last != levels[1] else { return }
            result[String(levels[2]), default: []].append(levels[1])
        }
        print("fleet: streamed by \(peer.addresses.map { streamers[$0] ?? [] })")
        print(
            "fleet: killed \(victim) holding \(moved.count) sensors; takeover \(takeovers.map { "\($0.components.seconds * 1000 + $0.components.attoseconds / 1_000_000_000_000_000) ms" }) "
                + "(worst \(worst)); samples lost per sensor at \(period) ms: \(peer.addresses.map { lost[$0] ?? -1 })")
        for address in peer.addresses where !moved.contains(address) {
            #expect(lost[address] == 0, "\(address) stayed with its gateway and lost nothing")
        }
        #expect(moved.allSatisfy { lost[$0] != nil }, "the moved sensors' losses are counted")
        await recorder.close()
    }
}
