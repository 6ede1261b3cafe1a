import ATT
import BluetoothCore
import Foundation
import HCI
import Testing
import TraceDecoding

/// The discovery cache of a bonded peer (issue #25): trusted without the Database Hash when
/// the client subscribed to Service Changed on a bonded link, and kept right by the peer's
/// Service Changed indications.
extension IntegrationTests {
    static let addedService = "B1E70300-9D3B-4C7A-8A5E-6F2D0C1B0A00"
    static let addedCharacteristic = "B1E70301-9D3B-4C7A-8A5E-6F2D0C1B0A00"

    /// The ATT requests the host sent before the Read Response carrying `value` (each waits
    /// for its response: one round trip).
    private func requestsBeforeValue(_ value: [UInt8], in path: String) throws -> [CapturedATT] {
        let traffic = try CapturedATT.all(in: path)
        let end = try #require(
            traffic.firstIndex { !$0.sent && $0.opcode == .readResponse && Array($0.pdu.dropFirst()) == value },
            "no Read Response with the value in \(path)")
        let requests: Set<UInt8> = [0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E, 0x10, 0x12, 0x16, 0x18, 0x20]
        return traffic[..<end].filter { $0.sent && requests.contains($0.opcode.rawValue) }
    }

    /// Issue #25 item 3: a bonded peer whose Service Changed indications the client
    /// subscribed to on a bonded link is trusted without the Database Hash: the reconnection
    /// reads its value in 2 ATT round trips (Exchange MTU, the read). The same peer, not
    /// bonded (another store), keeps the hash check: 3.
    @Test func bondedReconnectTrustsTheCacheWithoutTheHash() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let bonded = try CacheTestStore(), unbonded = try CacheTestStore()
        defer { bonded.remove(); unbonded.remove() }
        let target = peer.address + "/random"
        let read = [
            "read", "--hex", target, Self.customService, Self.readOnlyCharacteristic, "--transport", peer.transport,
        ]
        let value = Array("Bluejay read-only".utf8)

        let paired = try await bonded.bluejay(["pair", target, "--transport", peer.transport])
        #expect(paired.status == 0, "stderr: \(paired.stderr)")
        // The first bonded read validates by the hash, then subscribes to Service Changed.
        let first = try await bonded.bluejay(read + ["--capture", bonded.file("first.btsnoop")])
        #expect(first.status == 0, "stderr: \(first.stderr)")
        #expect(first.stdout == value.hexString() + "\n")
        let firstRequests = try CapturedATT.requests(in: bonded.file("first.btsnoop"))
        #expect(firstRequests.contains { $0.readByTypeUUID == .databaseHash })
        #expect(
            firstRequests.contains { $0.opcode == .writeRequest && $0.pdu == [0x12, 0x09, 0x00, 0x02, 0x00] },
            "Service Changed's CCCD (0x0009) set to indicate: \(firstRequests)")
        #expect(try bonded.entry(target).serviceChangedBonded)

        for run in 1...3 {
            let capture = bonded.file("trusted-\(run).btsnoop")
            let again = try await bonded.bluejay(read + ["--capture", capture])
            #expect(again.status == 0, "stderr: \(again.stderr)")
            #expect(again.stdout == value.hexString() + "\n")
            let requests = try requestsBeforeValue(value, in: capture)
            #expect(
                requests.map(\.opcode) == [.exchangeMTURequest, .readRequest], "2 round trips to the value: \(requests)"
            )
            let all = try CapturedATT.requests(in: capture)
            #expect(!all.contains { $0.readByTypeUUID == .databaseHash }, "no hash read")
            #expect(!all.contains { $0.opcode == .writeRequest }, "the peer kept the subscription: no CCCD write")
            #expect(
                TraceSummary(file: try BTSnoopFile(path: capture)).commands.keys.contains {
                    $0.contains("LE_Enable_Encryption")
                })
        }
        #expect(try bonded.entry(target).serviceChangedBonded, "still subscribed after trusted runs")
        let listed = try await bonded.bluejay(["cache", "list", "--json"])
        #expect(listed.stdout.contains("\"service_changed_bonded\": true"), "\(listed.stdout)")

        // Not bonded: the hash is read every time, and nothing is taken as subscribed.
        for run in 1...2 {
            let capture = unbonded.file("unbonded-\(run).btsnoop")
            let plain = try await unbonded.bluejay(read + ["--capture", capture])
            #expect(plain.status == 0, "stderr: \(plain.stderr)")
            let requests = try requestsBeforeValue(value, in: capture)
            if run == 2 {
                #expect(
                    requests.map(\.opcode) == [.exchangeMTURequest, .readByTypeRequest, .readRequest],
                    "3 round trips: \(requests)")
                #expect(requests.dropFirst().first?.readByTypeUUID == .databaseHash)
            }
            #expect(
                !(try CapturedATT.requests(in: capture)).contains { $0.pdu.starts(with: [0x12, 0x09, 0x00]) },
                "no Service Changed subscription")
        }
        #expect(try unbonded.entry(target).serviceChangedBonded == false)
    }

    /// The trusted cache stays right: the peer's database changes while the client is away
    /// (control point 0x0B adds a service when the link ends), the peer indicates Service
    /// Changed when the bonded client reconnects and encrypts, and the client drops the
    /// range and rediscovers it: the new service, absent from the complete cached tree, is
    /// found and read, and the file keeps it for the next trusted reconnection.
    @Test func bondedReconnectRediscoversWhatServiceChangedIndicates() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let store = try CacheTestStore()
        defer { store.remove() }
        let target = peer.address + "/random"
        let transport = ["--transport", peer.transport]
        let added = Array("Bluejay added".utf8)

        #expect(try await store.bluejay(["pair", target] + transport).status == 0)
        // The whole tree, so the cache knows the database is complete (a service it lacks
        // is then not looked for without a Service Changed), and the subscription.
        let tree = try await store.bluejay(["gatt", target] + transport)
        #expect(tree.status == 0, "stderr: \(tree.stderr)")
        let before = try store.entry(target)
        #expect(before.serviceChangedBonded && before.database.isComplete)
        #expect(before.database.service(BluetoothUUID(Self.addedService)!) == nil)

        let change = try await store.bluejay(["write", target, "--handle", "0x0029", "0B"] + transport)
        #expect(change.status == 0, "stderr: \(change.stderr)")

        let capture = store.file("changed.btsnoop")
        let read = try await store.bluejay(
            ["read", "--hex", target, Self.addedService, Self.addedCharacteristic, "--capture", capture] + transport)
        #expect(read.status == 0, "stderr: \(read.stderr)")
        #expect(read.stdout == added.hexString() + "\n")
        let traffic = try CapturedATT.all(in: capture)
        let indication = try #require(
            traffic.firstIndex {
                !$0.sent && $0.opcode == ATTOpcode(rawValue: 0x1D) && $0.pdu.starts(with: [0x1D, 0x08, 0x00])
            },
            "Service Changed indicated on reconnection: \(traffic)")
        #expect(traffic[indication...].contains { $0.sent && $0.pdu == [0x1E] }, "and confirmed")
        let discovery = try #require(
            traffic.firstIndex { $0.sent && $0.isDiscovery }, "the changed range is rediscovered")
        #expect(indication < discovery)
        #expect(!traffic.contains { $0.sent && $0.readByTypeUUID == .databaseHash }, "trusted: no hash read")

        let after = try store.entry(target)
        let service = try #require(
            after.database.service(BluetoothUUID(Self.addedService)!), "the new service is cached")
        #expect(after.serviceChangedBonded)
        #expect(
            after.database.service(BluetoothUUID(Self.customService)!) != nil, "what the change did not cover is kept")

        // The next bonded reconnection: trusted, and the new value in 2 round trips.
        let next = store.file("next.btsnoop")
        let again = try await store.bluejay(
            ["read", "--hex", target, Self.addedService, Self.addedCharacteristic, "--capture", next] + transport)
        #expect(again.status == 0, "stderr: \(again.stderr)")
        #expect(try requestsBeforeValue(added, in: next).map(\.opcode) == [.exchangeMTURequest, .readRequest])
        #expect(
            !(try CapturedATT.all(in: next)).contains { !$0.sent && $0.opcode == ATTOpcode(rawValue: 0x1D) },
            "the peer indicated the change once")
        _ = service
    }
}
