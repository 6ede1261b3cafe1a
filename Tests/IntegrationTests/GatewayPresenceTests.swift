import Bluejay
import Foundation
import Gateway
import HCITestSupport
import SMP
import Testing

/// Issue 52's presence, end to end: the Bumble peer's phones (`--phone-irk`, see
/// Fixtures/peer/README.md, "Phones") advertise from resolvable private addresses that
/// rotate; the gateway hears them over the real transport, resolves the configured phone's
/// with its IRK from `irks:` and publishes its presence on a real mosquitto under the
/// identity address, `home` while it is heard and `not_home` once it has left.
extension IntegrationTests {
    /// The phone's identity address and IRK as its `irks:` entry writes them (the IRK most
    /// significant octet first, as the Core Specification prints keys).
    static let phoneIdentity = "C0:FF:EE:00:00:01"
    static let phoneIRK = "00112233445566778899AABBCCDDEEFF"
    /// Another phone's IRK, not in the configuration: its addresses must stay strangers.
    static let strangerIRK = "0F1E2D3C4B5A69788796A5B4C3D2E1F0"

    /// The addresses the gateway heard (its `…/ADDRESS/adv` topics) that resolve with `irk`
    /// (as the configuration writes it), in the order first heard, with the index of the
    /// message that first named each.
    static func heard(_ messages: [MQTTMessage], resolvingWith irk: String) -> [(address: String, index: Int)] {
        // On the air the IRK is used least significant octet first (Vol 3, Part H, 2.2.2 with
        // the SMP's octet order): the configuration's order reversed.
        let wire = Array(Hex.decode(irk)!.reversed())
        var seen: [(address: String, index: Int)] = []
        for (index, message) in messages.enumerated() where message.topic.hasSuffix("/adv") {
            let levels = message.topic.split(separator: "/")
            guard levels.count == 4, let address = BluetoothAddress(String(levels[2])),
                ResolvablePrivateAddress.resolves(address, with: wire),
                !seen.contains(where: { $0.address == levels[2] })
            else { continue }
            seen.append((String(levels[2]), index))
        }
        return seen
    }

    /// The addresses the peer's phone `number` (from 1) took, from its log (`phone K: ADDRESS`).
    static func phoneAddresses(_ peer: TestPeer, _ number: Int) -> Set<String> {
        Set(
            peer.log.split(separator: "\n").compactMap { line in
                guard let range = line.range(of: "phone \(number): ") else { return nil }
                let rest = String(line[range.upperBound...])
                return BluetoothAddress(rest) == nil ? nil : rest
            })
    }

    /// A phone whose private address rotates every second is one device, `home`, under its
    /// identity address; another phone's addresses are not taken for it; once the phone goes
    /// quiet (SIGUSR1 to the peer) it is `not_home` after `away_after`, while the other phone
    /// is still heard; Home Assistant has a `device_tracker` for it, retained.
    @Test(.hangGuard) func aPhoneBehindRotatingAddressesIsTrackedByItsIRK() async throws {
        let broker = try await MosquittoBroker()
        let peer = try await TestPeer(arguments: [
            "--phone-irk", Self.phoneIRK, "--phone-irk", Self.strangerIRK, "--rotate-every", "1",
        ])
        defer { peer.stop() }
        let recorder = try await MQTTRecorder(broker: broker, filter: "#")
        // advertisements: all: each address the gateway hears shows as its `/adv`, so the test
        // sees which private addresses reached it.
        let (gateway, run) = try Self.startAdvertisementGateway(
            peer, broker,
            """
            advertisements: all
            away_after: 2s
            irks:
              \(Self.phoneIdentity): \(Self.phoneIRK)
            """)
        let presence = gateway.topics.presence(BluetoothAddress(Self.phoneIdentity)!)
        #expect(presence == "bluejay/gw1/\(Self.phoneIdentity)/presence")

        // Home, and three of the phone's addresses and one of the other's heard.
        let home = await eventually {
            let messages = await recorder.messages
            return await recorder.payloads(presence).contains("home")
                && Self.heard(messages, resolvingWith: Self.phoneIRK).count >= 3
                && !Self.heard(messages, resolvingWith: Self.strangerIRK).isEmpty
        }
        let topics = Set(await recorder.messages.map(\.topic))
        #expect(home, "\(topics.sorted()); the peer's log: \(peer.log.suffix(1500))")
        let phone = Self.heard(await recorder.messages, resolvingWith: Self.phoneIRK).map(\.address)
        let logged = Self.phoneAddresses(peer, 1)
        #expect(Set(phone).isSubset(of: logged), "the peer's own, rotated: \(phone) of \(logged)")

        // Home Assistant's tracker, retained: a subscriber that comes later gets it.
        let late = try await MQTTRecorder(broker: broker, filter: "homeassistant/device_tracker/#")
        let trackerTopic = "homeassistant/device_tracker/bluejay_gw1_C0FFEE000001_presence/config"
        #expect(await eventually { await late.messages.contains { $0.topic == trackerTopic && $0.retained } })
        #expect(await late.messages.map(\.topic) == [trackerTopic], "one tracker, for the identity only")
        let tracker = try #require(
            await late.messages.first.flatMap {
                try? JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: Any]
            })
        #expect(tracker["state_topic"] as? String == presence)
        #expect(tracker["payload_home"] as? String == "home" && tracker["payload_not_home"] as? String == "not_home")
        #expect(
            tracker["unique_id"] as? String == "bluejay_gw1_C0FFEE000001_presence"
                && tracker["source_type"] as? String == "bluetooth_le")
        let device = tracker["device"] as? [String: Any]
        #expect(device?["identifiers"] as? [String] == ["bluejay_C0FFEE000001"] && device?["name"] != nil, "\(tracker)")
        await late.close()

        // The phone leaves; the other phone goes on advertising.
        let left = await recorder.messages.count
        kill(peer.process.processIdentifier, SIGUSR1)
        #expect(
            await eventually {
                await recorder.messages.dropFirst(left).contains {
                    $0.topic == presence && $0.payload == Array("not_home".utf8)
                }
            },
            "not_home after away_after")
        let gone = await recorder.messages.count
        // Two more of the other phone's addresses heard since: it was heard, and not taken for
        // this one, which would have made it home again (at once, not a rotation later).
        let strangerBefore = Self.heard(Array(await recorder.messages.prefix(gone)), resolvingWith: Self.strangerIRK)
            .count
        #expect(
            await eventually {
                Self.heard(await recorder.messages, resolvingWith: Self.strangerIRK).count > strangerBefore + 1
            })
        let messages = await recorder.messages
        let states = messages.filter { $0.topic == presence }.map { String(decoding: $0.payload, as: UTF8.self) }
        // A not_home before the first home is a slow start (away_after passed before the scan).
        #expect(
            Array(states.drop { $0 != "home" }) == ["home", "not_home"],
            "home across its rotations until it left: \(states)")

        // Presence for the identity only; nothing under any private address but `/adv`.
        let presenceTopics = Set(messages.map(\.topic).filter { $0.hasSuffix("/presence") })
        #expect(presenceTopics == [presence], "\(presenceTopics)")
        let privateTopics = messages.map(\.topic).filter { topic in
            let levels = topic.split(separator: "/")
            return levels.count >= 3 && BluetoothAddress(String(levels[2]))?.randomKind == .resolvablePrivate
                && !topic.hasSuffix("/adv")
        }
        #expect(privateTopics.isEmpty, "\(privateTopics)")
        #expect(!messages.contains { $0.topic.hasSuffix("/values") }, "a phone has no values")
        run.cancel()
        _ = await run.result
        await recorder.close()
        withExtendedLifetime(broker) {}  // the broker runs until here
    }
}
