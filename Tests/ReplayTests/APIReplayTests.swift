import ATT
import BluetoothCore
import DiscoveryCache
import Foundation
import GAP
import GATT
import HCI
import L2CAP
import Testing

/// The recorded sessions replayed through the library's public API (the layers a user
/// imports), with no controller: each test drives the same procedures the recorded
/// command did, checks what it got, and that the host sent every packet of the recording
/// and nothing else.
@Suite @BluetoothActor
struct APIReplayTests {
    static let peripheral = BluetoothAddress("F0:0D:B1:E7:00:01")!
    let quiet = HCIController.Configuration(logger: .silent)
    /// When set, the scenario replays its recording with this octet flipped and must stop
    /// with the mismatch at that record (see `CorruptedReplayTests`).
    var corruption: (record: Int, octet: Int)?

    /// The scenario noticed the flipped octet where it should: the outcome a corrupted
    /// replay is run for.
    struct NoticedMismatch: Error {}

    /// Brings the replayed controller up, runs `body`, and requires the replay to have
    /// ended exactly where the recording does.
    /// `rules`: the matching rules; none (exact octets) for recordings made with a seeded
    /// pairing, where even the random values must come out as recorded. (`T` is Sendable:
    /// Swift 6.0 takes a call of `body` as leaving the suite's actor.)
    func replaying<T: Sendable>(
        _ name: String, rules: [ReplayRule] = ReplayRule.standard,
        _ body: (HCIController, ControllerInfo) async throws -> T
    ) async throws -> T {
        var path = Repository.trace(name)
        if let corruption { path = try corruptedCopy(of: path, record: corruption.record, octet: corruption.octet) }
        defer { if corruption != nil { try? FileManager.default.removeItem(atPath: path) } }
        let replay = try ReplayTransport(path: path, rules: rules)
        let controller = HCIController(transport: replay, configuration: quiet)
        defer { controller.close() }
        let outcome: Result<T, any Error>
        do {
            let info = try await controller.start()
            outcome = .success(try await body(controller, info))
        } catch {
            outcome = .failure(error)
        }
        if let corruption {
            // Whatever the scenario made of it, the replay must have stopped at that record.
            guard let mismatch = replay.mismatch else {
                Issue.record(
                    "\(name): record \(corruption.record) broken, yet the replay \(replay.isFinished ? "finished" : "stopped without a mismatch")"
                )
                throw NoticedMismatch()
            }
            #expect(mismatch.recordNumber == corruption.record, "\(name): \(mismatch)")
            throw NoticedMismatch()
        }
        if case let .failure(error) = outcome, let mismatch = replay.mismatch {
            Issue.record("\(mismatch)"); throw error
        }
        let result = try outcome.get()
        #expect(replay.verdict == nil, "\(replay.verdict.map(String.init(describing:)) ?? "")")
        #expect(replay.isFinished)
        return result
    }

    /// What `PeripheralOptions.withClient` of the tool does: connect, exchange MTUs, run
    /// `body` with a GATT client, disconnect.
    func withClient<T: Sendable>(
        _ name: String, mtu: UInt16 = 517, cache: Bool = false,
        _ body: (GATTClient, ConnectionManager, LEConnection) async throws -> T
    ) async throws -> T {
        try await replaying(name) { controller, _ in
            let manager = ConnectionManager(controller: controller, logger: .silent)
            let channels = L2CAPChannels(controller: controller, logger: .silent)
            let bearers = ATTBearers(
                controller: controller, channels: channels, preferredMTU: mtu, logger: .silent)
            bearers.server = LocalGATTServer()
            defer {
                bearers.close()
                channels.close()
                manager.close()
            }
            let store = NSTemporaryDirectory() + "bluejay-api-replay-\(UUID().uuidString)"
            defer { try? FileManager.default.removeItem(atPath: store) }
            let connection = try await manager.connect(to: Self.peripheral, type: .random)
            let discoveryCache = DiscoveryCache(store: StoreDirectory(path: store), enabled: cache, logger: .silent)
            let client = GATTClient(bearer: try bearers.bearer(for: connection.handle))
            defer { discoveryCache.finish(client) }
            try await client.exchangeMTU()
            _ = try await discoveryCache.prepare(client, identity: DiscoveryCache.identity(Self.peripheral, .random))
            let result = try await body(client, manager, connection)
            _ = try? await manager.disconnect(connection.handle)
            return result
        }
    }

    @Test func bringUp() async throws {
        let info = try await replaying("bumble-bringup") { _, info in info }
        #expect(info.address == BluetoothAddress("B1:E7:00:00:00:0A"))
        #expect(info.aclBuffers.count == 64 && info.aclBuffers.length == 27)
        #expect(info.maximumDataLength?.supportedMaxTxOctets == 251)
    }

    @Test func scan() async throws {
        let found = try await replaying("scan") { controller, _ in
            let scanner = Scanner(controller: controller, logger: .silent)
            let first = BluetoothCore.Expectation<Discovery>()
            try await scanner.start(ScanOptions(active: true)) { first.fulfill($0) }
            let discovery = await first.value()
            try await scanner.stop()
            return discovery
        }
        #expect(found.address == Self.peripheral && found.addressType == .random)
        #expect(found.advertisement.localName == "Bluejay HRM")
        #expect(found.rssi == -50)
    }

    @Test func connectAndDisconnect() async throws {
        let (link, reason) = try await replaying("connect") { controller, _ in
            let manager = ConnectionManager(controller: controller, logger: .silent)
            defer { manager.close() }
            let link = try await manager.connect(to: Self.peripheral, type: .random)
            _ = try? await manager.readRSSI(link.handle)
            let current = manager.connections[link.handle] ?? link
            return (current, try await manager.disconnect(link.handle))
        }
        #expect(link.handle == 0x0001 && link.role == 0)
        #expect(link.maxTxOctets == 251 && link.txPHY == 2)
        #expect(reason == .remoteUserTerminatedConnection)
    }

    @Test func fullDiscovery() async throws {
        let (database, values) = try await withClient("gatt-discovery", cache: true) {
            client, _, _ -> (GATTDatabase, [AttributeHandle: [UInt8]]) in
            let database = try await client.discoverAll()
            var values: [AttributeHandle: [UInt8]] = [:]
            for service in database.services {
                for characteristic in database.characteristics[service.handle] ?? []
                where characteristic.properties.contains(.read) {
                    do {
                        values[characteristic.valueHandle] = try await client.readLong(characteristic.valueHandle)
                    } catch let error as GATTError {
                        // A refusal (0x0F on the encrypted characteristic) is part of the session.
                        guard case .att(.errorResponse) = error else { throw error }
                    }
                }
            }
            return (database, values)
        }
        // Seven primary services and the secondary one the last of them includes.
        #expect(database.services.count == 8)
        let secondary: [AttributeHandle] = database.services.filter { (service: Service) -> Bool in !service.isPrimary }
            .map(\.handle)
        #expect(secondary == [0x002F])
        #expect(database.services.contains { (service: Service) in service.uuid == BluetoothUUID(UInt16(0x180D)) })
        let longValue: [UInt8] = (0..<512).map { (index: Int) -> UInt8 in UInt8(index % 256) }
        #expect(values[0x001F] == longValue)
        #expect(values[0x0031] == Array("Bluejay included".utf8))
        #expect(values[0x0024] == nil)  // 0x0F insufficientEncryption
        #expect(values.count == 13)  // every readable characteristic but the encrypted one
    }

    @Test func readByUUIDWithTheCache() async throws {
        let value = try await withClient("read", cache: true) { client, _, _ in
            let found = try await client.characteristic(
                BluetoothUUID(UInt16(0x2A29)), in: BluetoothUUID(UInt16(0x180A)))
            return try await client.readLong(found.valueHandle)
        }
        #expect(value == Array("Bluejay".utf8))
    }

    @Test func readLongAtMTU100() async throws {
        let (value, mtu) = try await withClient("read-long", mtu: 100) { client, _, _ -> ([UInt8], Int) in
            let value: [UInt8] = try await client.readLong(0x001F)
            return (value, client.bearer.mtu)
        }
        #expect(mtu == 100)
        let expected: [UInt8] = (0..<512).map { (index: Int) -> UInt8 in UInt8(index % 256) }
        #expect(value == expected)
    }

    @Test func write() async throws {
        try await withClient("write") { client, _, _ in try await client.write(0x0013, [0x02]) }
    }

    @Test func longWriteAtMTU23() async throws {
        try await withClient("write-long", mtu: 23) { client, _, _ in
            #expect(client.bearer.mtu == 23)
            try await client.writeLong(0x001F, Array(0..<48))
        }
    }

    @Test func reliableWrite() async throws {
        try await withClient("write-reliable", mtu: 23) { client, _, _ in
            try await client.reliableWrite([HandleValue(handle: 0x001F, value: Array(1...31))])
        }
    }

    /// `listen --handle H --count N --write CP=VALUE...`: CCCD found after H, subscribe,
    /// write the control point, take N values, unsubscribe.
    func listen(_ name: String, handle: AttributeHandle, mode: ClientConfiguration, count: Int, writes: [[UInt8]])
        async throws -> (values: [[UInt8]], indications: Int)
    {
        try await withClient(name) { client, manager, connection in
            let cccd = try #require(try await client.clientConfigurationDescriptor(after: handle))
            var values: [[UInt8]] = []
            var indications = 0
            let done = BluetoothCore.Expectation<Result<Void, GATTError>>()
            client.onValue = { valueHandle, value, indication in
                guard valueHandle == handle else { return }
                values.append(Array(value))
                if indication { indications += 1 }
                if values.count >= count { done.fulfill(.success(())) }
            }
            manager.onDisconnection = { link, reason in
                if link.handle == connection.handle { done.fulfill(.failure(.att(.disconnected(reason)))) }
            }
            try await client.configure(cccd, mode)
            for value in writes { try await client.write(0x0029, value) }
            try await done.value().get()
            try? await client.configure(cccd, .none)
            return (values, indications)
        }
    }

    @Test func notifications() async throws {
        let (values, indications) = try await listen(
            "notifications", handle: 0x002B, mode: .notify, count: 5, writes: [[0x01, 5, 0, 0, 0, 8, 0]])
        let expected: [[UInt8]] = (0..<5).map { (index: Int) -> [UInt8] in
            [UInt8(index)] + [UInt8](repeating: 0, count: 7)
        }
        #expect(values == expected)
        #expect(indications == 0)
    }

    @Test func indications() async throws {
        let (values, indications) = try await listen(
            "indications", handle: 0x0021, mode: .indicate, count: 2, writes: [[0x04, 0xAA], [0x04, 0xBB, 0xCC]])
        #expect(values == [[0xAA], [0xBB, 0xCC]])
        #expect(indications == 2)
    }

    @Test func disconnectionByThePeer() async throws {
        do {
            _ = try await listen("disconnect-by-peer", handle: 0x002B, mode: .notify, count: 1, writes: [[0x02, 0x08]])
            Issue.record("the peer's disconnection should end the listen")
        } catch let error as GATTError {
            #expect(error == .att(.disconnected(.connectionTimeout)), "\(error)")
        }
    }

    @Test func connectionParameterUpdateRequestedByThePeer() async throws {
        let (values, _) = try await listen(
            "connection-update", handle: 0x002B, mode: .notify, count: 1,
            writes: [[0x03, 0x18, 0x00, 0x28, 0x00, 0x00, 0x00, 0xF4, 0x01], [0x01, 1, 0, 0, 0, 4, 0]])
        #expect(values == [[0, 0, 0, 0]])
        // The recording holds the host's answer and its LE Connection Update; replay
        // matched both, so the host accepted 40 × 1.25 ms, latency 0, 5 s as asked.
        let file = try BTSnoopFile(path: Repository.trace("connection-update"))
        let update = file.records.contains { record in
            guard record.direction == .sent, case let .packet(.command, body) = record.content else { return false }
            return Array(body.prefix(2)) == [0x13, 0x20]
        }
        #expect(update)
    }
}

extension APIReplayTests {
    /// A replay that stops while the host waits on its peer (here for an indication) ends
    /// the link at once: the host's layers hear Disconnection Complete (Unspecified Error)
    /// from the failed controller, so nothing waits for a peer that can no longer answer.
    @Test func aMismatchEndsTheLinkSoNothingWaitsForever() async throws {
        let path = Repository.trace("indications")
        // The host's Handle Value Confirmation of the first indication, broken.
        let confirmation = try #require(
            try BTSnoopFile(path: path).records.first { record in
                guard record.direction == .sent, case let .packet(.acl, body) = record.content, body.count == 9 else {
                    return false
                }
                return body[body.startIndex + 8] == 0x1E
            })
        let corrupt = try corruptedCopy(of: path, record: confirmation.number, octet: 9)
        defer { try? FileManager.default.removeItem(atPath: corrupt) }
        let replay = try ReplayTransport(path: corrupt)
        let controller = HCIController(transport: replay, configuration: quiet)
        defer { controller.close() }
        try await controller.start()
        let manager = ConnectionManager(controller: controller, logger: .silent)
        let channels = L2CAPChannels(controller: controller, logger: .silent)
        let bearers = ATTBearers(controller: controller, channels: channels, logger: .silent)
        bearers.server = LocalGATTServer()
        defer {
            bearers.close()
            channels.close()
            manager.close()
        }
        let link = try await manager.connect(to: Self.peripheral, type: .random)
        let client = GATTClient(bearer: try bearers.bearer(for: link.handle))
        try await client.exchangeMTU()
        let cccd = try #require(try await client.clientConfigurationDescriptor(after: 0x0021))
        var ended: HCIStatus?
        manager.onDisconnection = { _, reason in ended = reason }
        try await client.configure(cccd, .indicate)
        try await client.write(0x0029, [0x04, 0xAA])
        await #expect(throws: GATTError.self) { try await client.write(0x0029, [0x04, 0xBB, 0xCC]) }
        #expect(replay.mismatch?.recordNumber == confirmation.number)
        #expect(ended == .unspecifiedError)
        #expect(manager.connections.isEmpty)
        #expect(!client.bearer.isOpen)
    }
}

/// The checker is not vacuous, packet by packet: for every recording, each of its
/// host→controller packets in turn gets one octet flipped, and the scenario that replays it
/// through the API must stop with the mismatch at exactly that record — promptly, whatever
/// it was waiting for (a response, a notification, a disconnection).
@Suite @BluetoothActor
struct CorruptedReplayTests {
    static let scenarios: [String: (APIReplayTests) async throws -> Void] = [
        "bumble-bringup": { try await $0.bringUp() },
        "scan": { try await $0.scan() },
        "connect": { try await $0.connectAndDisconnect() },
        "gatt-discovery": { try await $0.fullDiscovery() },
        "read": { try await $0.readByUUIDWithTheCache() },
        "read-long": { try await $0.readLongAtMTU100() },
        "write": { try await $0.write() },
        "write-long": { try await $0.longWriteAtMTU23() },
        "write-reliable": { try await $0.reliableWrite() },
        "notifications": { try await $0.notifications() },
        "indications": { try await $0.indications() },
        "disconnect-by-peer": { try await $0.disconnectionByThePeer() },
        "connection-update": { try await $0.connectionParameterUpdateRequestedByThePeer() },
        "pairing": { try await $0.pairing() },
        "pairing-on-demand": { try await $0.pairingOnDemand() },
    ]

    /// Every recording but the Bluejay API demo, which `BluejayReplayTests` breaks, and the
    /// bonded read, played through the Bluejay API by `BondedReplayTests` (its store holds a
    /// bond these layer-by-layer scenarios do not load).
    nonisolated static let names = Session.all.map(\.name).filter { $0 != "bluejay-api-demo" && $0 != "read-bonded" }

    @Test func everyRecordingHasAScenario() {
        #expect(Set(Self.scenarios.keys) == Set(Self.names))
    }

    @Test(arguments: names)
    func everyHostPacketIsChecked(_ name: String) async throws {
        let scenario = try #require(Self.scenarios[name])
        for record in try hostRecords(Repository.trace(name)) {
            var corrupted = APIReplayTests()
            corrupted.corruption = (record.number, record.length - 1)
            do {
                try await scenario(corrupted)
                Issue.record("\(name): record \(record.number) broken, yet the scenario succeeded")
            } catch is APIReplayTests.NoticedMismatch {
            } catch {
                Issue.record("\(name): record \(record.number): \(error)")
            }
        }
    }
}
