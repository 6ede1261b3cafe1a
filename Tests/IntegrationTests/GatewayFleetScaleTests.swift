import Foundation
import Gateway
import HCITestSupport
import Testing

/// Issue 52 item 9, the fleet's load spread at scale: four `bluejay-gateway` processes on
/// one peer (`--hosts 4`: four host-facing controllers on one link) and 24 sensors that
/// number their samples, each gateway allowed `max_links: 12`. The peer puts sensor p
/// nearest host p mod 4, so three gateways alone would not share by RSSI (the fourth's
/// sensors all go to one of them) and the spread must even them out.
extension IntegrationTests {
    @Test(.hangGuard) func fleetOfFourSpreadsTwentyFourSensorsAndRehomesAfterTwoKills() async throws {
        let broker = try await MosquittoBroker()
        let period = 1000  // ms between samples: a handover may lose one of them
        let peer = try await TestPeer(arguments: [
            "--hosts", "4", "--peripherals", "24", "--sensor-period-ms", "\(period)",
        ])
        defer { peer.stop() }
        #expect(peer.transports.count == 4 && peer.addresses.count == 24)
        let recorder = try await MQTTRecorder(broker: broker, filter: "bluejay/#")
        let rig = try GatewayFleetRig(broker: broker, peer: peer)
        defer { rig.stop() }
        let maxLinks = 12  // two survivors can carry all 24 only at their limit
        var view = FleetView(sensors: peer.addresses)
        /// Polls the view every 100 ms (reading each message once) until `condition` holds.
        func until(within limit: Duration = hangGuardWait, _ condition: (FleetView) -> Bool) async -> Bool {
            await eventually(within: limit) {
                await view.update(recorder)
                if condition(view) { return true }
                try? await Task.sleep(for: .milliseconds(100))
                return false
            }
        }

        // Three first: the fourth host's sensors go to one of them by RSSI, then spread.
        var live = ["gw1", "gw2", "gw3"]
        for (host, id) in live.enumerated() { try rig.start(id, host: host, extra: "max_links: \(maxLinks)") }
        let three = await until { $0.balanced(live) }
        #expect(three, "three gateways carry 8 ± 1 each: \(view.loads(live))\n\(rig.logs())")
        guard three else { return }
        print("fleet scale: three gateways carry \(view.loads(live).sorted { $0.key < $1.key })")

        // The fourth joins later and takes its share from the others.
        try rig.start("gw4", host: 3, extra: "max_links: \(maxLinks)")
        live.append("gw4")
        let four = await until { $0.balanced(live) }
        #expect(four, "four gateways carry 6 ± 1 each: \(view.loads(live))\n\(rig.logs())")
        guard four else { return }
        print("fleet scale: four gateways carry \(view.loads(live).sorted { $0.key < $1.key })")
        // Each move of the spread loses at most one sample period.
        let spread = view.lossesAndMoves()
        for (sensor, figures) in spread.sorted(by: { $0.key < $1.key }) {
            #expect(figures.lost <= figures.moves, "\(sensor) lost \(figures.lost) samples in \(figures.moves) move(s)")
        }
        print(
            "fleet scale: spread moves \(spread.values.map(\.moves).reduce(0, +)), samples lost \(spread.values.map(\.lost).reduce(0, +))"
        )

        // kill -9 two of them (no clean MQTT disconnect: the broker publishes their wills).
        let killed = ["gw1", "gw2"]
        let killedAt = ContinuousClock.now
        view.setMark(killedAt)
        for id in killed { rig.sigkill(id) }
        live.removeAll { killed.contains($0) }
        // Every sensor carried again: one live gateway streams it, holds its lease, and a
        // value of it came from that gateway since the kill.
        let rehomed = await until(within: .seconds(15)) { view in
            view.settled(live)
                && view.sensors.allSatisfy { sensor in
                    view.holders(of: sensor, among: live).allSatisfy { view.sinceMark[sensor]?.contains($0) == true }
                }
        }
        let rehome = ContinuousClock.now - killedAt
        #expect(rehomed, "every sensor carried again within 15 s: \(view.loads(live))\n\(rig.logs())")
        guard rehomed else { return }
        print("fleet scale: every sensor carried again \(rehome) after killing \(killed)")

        let two = await until { $0.balanced(live) }
        #expect(two, "two gateways carry 12 ± 1 each: \(view.loads(live))\n\(rig.logs())")
        print("fleet scale: two gateways carry \(view.loads(live).sorted { $0.key < $1.key })")
        print(
            "fleet scale: the most sensors each gateway streamed at once \(view.mostStreamed.sorted { $0.key < $1.key })"
        )
        for (id, most) in view.mostStreamed.sorted(by: { $0.key < $1.key }) {
            #expect(most <= maxLinks, "\(id) streamed \(most) sensors at once, max_links \(maxLinks)")
        }
        await recorder.close()
    }
}
