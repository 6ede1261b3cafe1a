import Bluejay
import Foundation
import Gateway
import HCITestSupport
import Testing

/// Issue 52's decoded advertisements: the Bumble peer's sensors that only advertise
/// (`--advertisers`: BTHome v2, the pvvx firmware's custom format and Ruuvi's format 5, see
/// Fixtures/peer/broadcasters.py) heard by the gateway, decoded and published at
/// `PREFIX/GATEWAY/ADDRESS/values` on a real mosquitto; each reading once (its repeats
/// dropped by their packet counter), none lost, passive and active scanning, the rate limit,
/// and hundreds of advertisers at once.
extension IntegrationTests {
    /// The peer's advertiser `index` (Fixtures/peer/broadcasters.py): F1:AD:00:00:00:01 + index.
    static func advertiserAddress(_ index: Int) -> String {
        let value = 0xF1AD_0000_0001 + index
        return stride(from: 40, through: 0, by: -8).map { String(format: "%02X", (value >> $0) & 0xFF) }.joined(
            separator: ":")
    }

    /// The formats of the peer's advertisers in turn, as the decoders name them.
    static let advertiserFormats = ["bthome-v2", "pvvx", "ruuvi-v5"]

    /// Every `…/values` payload, parsed, by address, in order.
    static func decodedValues(_ recorder: MQTTRecorder) async -> [String: [[String: Any]]] {
        var result: [String: [[String: Any]]] = [:]
        for message in await recorder.messages where message.topic.hasSuffix("/values") {
            let levels = message.topic.split(separator: "/")
            guard levels.count == 4,
                let object = try? JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any]
            else { continue }
            result[String(levels[2]), default: []].append(object)
        }
        return result
    }

    /// What is wrong with advertiser `index`'s values, or nil: each reading as the peer made
    /// it (temperature 20 + index % 10 + (count % 20) / 10 °C, humidity 40 + count % 30 %),
    /// their packet counters one apart (each reading once, none lost) unless `gaps` allows.
    static func advertiserProblem(_ index: Int, _ values: [[String: Any]], gaps: Bool = false) -> String? {
        let format = advertiserFormats[index % 3]
        var previous: Int?
        for object in values {
            guard object["format"] as? String == format, let count = object["packet_counter"] as? Int,
                let temperature = object["temperature"] as? Double, let humidity = object["humidity"] as? Double
            else {
                return "not a \(format) reading: \(object)"
            }
            let expected = (20 + Double(index % 10) + Double(count % 20) / 10, 40 + Double(count % 30))
            guard abs(temperature - expected.0) < 1e-6, abs(humidity - expected.1) < 1e-6 else {
                return "reading \(count) is \(object), not \(expected)"
            }
            if format == "ruuvi-v5", object["pressure"] as? Double != 1000 || object["acceleration_z"] as? Double != 1 {
                return "Ruuvi's pressure or acceleration: \(object)"
            }
            if format != "ruuvi-v5", object["battery"] as? Int != 90 { return "battery: \(object)" }
            if format != "bthome-v2", object["voltage"] as? Double != 3 { return "voltage: \(object)" }
            if let previous, gaps ? count <= previous : count != previous + 1 {
                return "counters \(previous) then \(count)"
            }
            previous = count
        }
        return nil
    }

    /// A gateway on `peer` and `broker` with `keys` (YAML lines), its one peripheral the
    /// peer's first.
    static func startAdvertisementGateway(_ peer: TestPeer, _ broker: MosquittoBroker, _ keys: String) throws -> (
        GatewayService, Task<Void, any Error>
    ) {
        try startGateway(
            """
            gateway: gw1
            transport: \(peer.transport)
            broker: \(broker.url)
            stats_every: 1s
            \(keys)
            peripherals:
              - address: \(peer.address)/random
            """)
    }

    /// The problems of the first `count` advertisers' values (``advertiserProblem(_:_:gaps:)``), by address.
    static func advertiserProblems(_ values: [String: [[String: Any]]], count: Int, gaps: Bool = false) -> [String] {
        (0..<count).compactMap { index in
            let address = advertiserAddress(index)
            return advertiserProblem(index, values[address] ?? [], gaps: gaps).map { "\(address): \($0)" }
        }
    }

    /// A broker, the peer with two peripherals (the second unconfigured, so it goes on
    /// advertising) and three advertisers (readings every `period` ms, each sent every
    /// `interval` ms), a recorder of `bluejay/#`, and a gateway with `keys`.
    static func advertisementRig(period: Int, interval: Int, _ keys: String) async throws
        -> (
            broker: MosquittoBroker, peer: TestPeer, recorder: MQTTRecorder, gateway: GatewayService,
            run: Task<Void, any Error>
        )
    {
        let broker = try await MosquittoBroker()
        let peer = try await TestPeer(arguments: [
            "--peripherals", "2", "--advertisers", "3", "--advertiser-period-ms", "\(period)",
            "--advertiser-interval-ms", "\(interval)",
        ])
        let recorder = try await MQTTRecorder(broker: broker, filter: "bluejay/#")
        let (gateway, run) = try startAdvertisementGateway(peer, broker, keys)
        return (broker, peer, recorder, gateway, run)
    }

    /// The gateway's counters, from its last `stats`.
    static func lastStats(_ recorder: MQTTRecorder, _ topics: Topics) async -> [String: Int] {
        guard let text = await recorder.payloads(topics.stats).last,
            let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Int]
        else { return [:] }
        return object
    }

    /// Passive scanning, no rate limit: every reading of each kind of sensor comes out once,
    /// decoded, in order; a scan response is never asked for (the second HRM's `/adv` has no name).
    @Test(.hangGuard) func gatewayPublishesEachReadingOfEachFormatOncePassively() async throws {
        let (broker, peer, recorder, gateway, run) = try await Self.advertisementRig(
            period: 200, interval: 40,
            "scan: passive\nrate_limit: off\nadvertisements: all")
        defer { peer.stop() }
        #expect(
            await eventually { await Self.decodedValues(recorder).filter { $0.value.count >= 5 }.count == 3 },
            "five readings of each")
        let problems = Self.advertiserProblems(await Self.decodedValues(recorder), count: 3)
        #expect(problems.isEmpty, "\(problems)")
        let other = "bluejay/gw1/\(peer.addresses[1])/adv"
        #expect(await eventually { await recorder.payloads(other).count >= 2 })
        #expect(await recorder.payloads(other).allSatisfy { !$0.contains("\"name\"") }, "passive: no scan response")
        #expect(
            await eventually {
                let stats = await Self.lastStats(recorder, gateway.topics)
                return stats["decoded_duplicates", default: 0] > 0 && stats["decoded_devices"] == 3
                    && stats["decode_errors"] == 0
            }, "repeats dropped, counted")
        run.cancel()
        _ = await run.result
        await recorder.close()
        withExtendedLifetime(broker) {}  // the broker runs until here
    }

    /// Active scanning (the default) hears scan responses; the rate limit lets a device out at
    /// most once per period, and the newest reading still comes out.
    @Test(.hangGuard) func activeScanningAndTheRateLimit() async throws {
        let (broker, peer, recorder, gateway, run) = try await Self.advertisementRig(
            period: 100, interval: 20, "rate_limit: 500ms\nadvertisements: all")
        defer { peer.stop() }
        let other = "bluejay/gw1/\(peer.addresses[1])/adv"
        #expect(
            await eventually { await recorder.payloads(other).contains { $0.contains(#""name":"Bluejay HRM 2""#) } },
            "active: the scan response's name")
        #expect(await eventually { await Self.decodedValues(recorder).filter { $0.value.count >= 3 }.count == 3 })
        let problems = Self.advertiserProblems(await Self.decodedValues(recorder), count: 3, gaps: true)
        #expect(problems.isEmpty, "\(problems)")
        #expect(
            await eventually { await Self.lastStats(recorder, gateway.topics)["decoded_rate_limited", default: 0] > 0 },
            "readings held back")
        run.cancel()
        _ = await run.result
        await recorder.close()
        withExtendedLifetime(broker) {}  // the broker runs until here
    }

    /// An encrypted BTHome sensor is decoded with its key from `keys:`; one whose key is not
    /// given publishes nothing, and is counted.
    @Test(.hangGuard) func encryptedSensorsAreDecodedWithTheirKeys() async throws {
        let broker = try await MosquittoBroker()
        let peer = try await TestPeer(arguments: [
            "--advertisers", "2", "--advertiser-kinds", "bthome-encrypted", "--advertiser-period-ms", "200",
            "--advertiser-interval-ms", "50",
        ])
        defer { peer.stop() }
        let recorder = try await MQTTRecorder(broker: broker, filter: "bluejay/#")
        let keyed = Self.advertiserAddress(0), unkeyed = Self.advertiserAddress(1)
        // bthome.io's example key, which the peer encrypts with (Fixtures/peer/broadcasters.py).
        let (gateway, run) = try Self.startAdvertisementGateway(
            peer, broker, "scan: passive\nrate_limit: off\nkeys:\n  \(keyed): 231d39c1d7cc1ab1aee224cd096db932")
        #expect(await eventually { await Self.decodedValues(recorder)[keyed, default: []].count >= 3 })
        let values = await Self.decodedValues(recorder)[keyed, default: []]
        #expect(Self.advertiserProblem(0, values) == nil, "\(Self.advertiserProblem(0, values) ?? "")")
        #expect(values.allSatisfy { ($0["extra"] as? [String: Any])?["encrypted"] as? Bool == true }, "\(values)")
        #expect(
            await eventually { await Self.lastStats(recorder, gateway.topics)["decode_errors", default: 0] > 0 },
            "the other, counted")
        #expect(await Self.decodedValues(recorder)[unkeyed] == nil, "no values without its key")
        run.cancel()
        _ = await run.result
        await recorder.close()
        withExtendedLifetime(broker) {}  // the broker runs until here
    }

    /// Three hundred advertisers at once, each reading sent four times: every reading of
    /// every one comes out once, none lost to the gateway's queues. Prints the rate.
    @Test(.hangGuard) func hundredsOfAdvertisersLoseNothing() async throws {
        let count = 300
        let broker = try await MosquittoBroker()
        let peer = try await TestPeer(arguments: [
            "--advertisers", "\(count)", "--advertiser-period-ms", "1000", "--advertiser-interval-ms", "250",
        ])
        defer { peer.stop() }
        let recorder = try await MQTTRecorder(broker: broker, filter: "bluejay/#")
        let (gateway, run) = try Self.startAdvertisementGateway(
            peer, broker, "scan: passive\nrate_limit: off\nhomeassistant: off")
        let started = ContinuousClock.now
        // Counted by topic, not parsed: the suite runs on the stack's thread, which the
        // polling would take from the gateway. Waited for while readings keep coming: a
        // ThreadSanitizer build on a loaded machine takes minutes for all of them.
        let threeEach = await eventually(progress: { await recorder.count }) {
            await recorder.countByTopic.filter { $0.key.hasSuffix("/values") && $0.value >= 3 }.count == count
        }
        #expect(threeEach, "three readings of each")
        let elapsed = ContinuousClock.now - started
        let values = await Self.decodedValues(recorder)
        let problems = Self.advertiserProblems(values, count: count)
        let problemCount = problems.count
        #expect(problemCount == 0, "\(problems.prefix(3))")
        let queue = gateway.mqtt.snapshot()
        #expect(queue.dropped == 0, "nothing dropped by the queue")
        // Counters that include every reading seen here (the periodic ones may be older).
        let published = values.values.map(\.count).reduce(0, +)
        await gateway.publishStats()
        #expect(
            await eventually {
                await Self.lastStats(recorder, gateway.topics)["decoded_published", default: 0] >= published
            })
        let stats = await Self.lastStats(recorder, gateway.topics)
        #expect(stats["decode_errors"] == 0 && stats["values_dropped"] == 0 && stats["decoded_devices"] == count)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print(
            "hundredsOfAdvertisersLoseNothing: \(count) advertisers, \(stats["decoded", default: 0]) advertisements decoded "
                + "(\(stats["decoded_published", default: 0]) readings published, \(stats["decoded_duplicates", default: 0]) repeats dropped) "
                + "in \(String(format: "%.1f", seconds)) s")
        run.cancel()
        _ = await run.result
        await recorder.close()
        withExtendedLifetime(broker) {}  // the broker runs until here
    }
}
