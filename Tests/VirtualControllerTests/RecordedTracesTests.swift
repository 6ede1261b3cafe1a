import ATT
import Bluejay
import BluetoothCore
import Foundation
import GATT
import HCI
import HCITestSupport
import Testing
import TraceDecoding
import TraceTestSupport
import TestTraits
@testable import VirtualController

/// Real recordings as test peers: for every peer of a recording with a discovery in it,
/// `bluejay gatt` against `mock:` finds exactly the recorded database (handles, UUIDs,
/// properties, descriptors), reads give the recorded values, and subscribing and repeating
/// the recording host's writes brings back the recorded notifications, in order.
///
/// `make test` runs the traces the repository ships and our own demo recording;
/// ``MockCorpusTests`` (`make test-corpus`) the whole shared corpus.
@Suite struct RecordedTracesTests {
    static let bluejay = BuiltProducts.url("bluejay")

    static var shipped: [String] {
        RealTraces.names(in: RealTraces.shipped).map { RealTraces.shipped + "/" + $0 }
            + [RealTraces.root + "/Fixtures/traces/bluejay-api-demo.btsnoop"]
    }

    @Test(arguments: shipped) func gattReproducesTheRecordedDatabase(path: String) async throws {
        try await Self.checkDatabases(path)
    }

    @Test(arguments: shipped) func subscriptionsReplayTheRecordedNotifications(path: String) async throws {
        try await Self.checkReactions(path)
    }

    /// The Bluejay demo (scan, connect, read, a control point write, listen, a background
    /// task, listen again, disconnect) against the peer rebuilt from its own recording
    /// prints what it printed when recorded.
    @Test func theDemoRunsAgainstItsOwnRecording() async throws {
        let directory = RealTraces.root + "/Fixtures/traces"
        let recording = directory + "/bluejay-api-demo.btsnoop"
        let expected = try String(contentsOfFile: directory + "/bluejay-api-demo.out", encoding: .utf8)
        let beats = expected.components(separatedBy: "\n").filter { $0.contains("bpm") }.count / 2
        let result = try await run(Self.bluejay, ["demo", "--transport", "mock:\(recording)", "--beats", "\(beats)"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.replacingOccurrences(of: "mock:\(recording)", with: "TRANSPORT") == expected)
    }

    // MARK: - The checks, shared with MockCorpusTests

    /// The peers of `path` that have a database.
    static func peers(_ path: String) throws -> [RecordedPeripheral] {
        try TraceReconstruction(path: path).peripherals.filter { $0.attributes.contains { $0.type == .primaryService } }
    }

    static func typed(_ peer: RecordedPeripheral) -> String {
        "\(peer.address)/\(peer.addressType == .public || peer.addressType == .publicIdentity ? "public" : "random")"
    }

    /// What the value of `attribute` must read as from the virtual peer.
    static func servedValue(_ attribute: RecordedAttribute) -> [UInt8]? { attribute.initialValue ?? attribute.value }

    static func checkDatabases(_ path: String) async throws {
        let name = URL(fileURLWithPath: path).lastPathComponent
        let peers = try peers(path)
        try #require(!peers.isEmpty, "\(name): a recording with a discovery in it")
        for peer in peers {
            let result = try await run(
                bluejay, ["gatt", typed(peer), "--json", "--transport", "mock:\(path),peer=\(peer.address)"])
            try #require(result.status == 0, "\(name) \(peer.address): \(result.stderr)")
            let tree = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            let services = try #require(tree["services"] as? [[String: Any]])

            // The recorded declarations, read from the model's flat attributes.
            let attributes = peer.attributes.sorted { $0.handle < $1.handle }
            let recordedServices = attributes.filter { $0.type == .primaryService }.map { service in
                "\(BluetoothUUID(littleEndianBytes: service.value ?? [])?.description ?? "?") \(service.handle.rawValue)-\(service.groupEndHandle?.rawValue ?? 0)"
            }
            let foundServices = services.map {
                "\($0["uuid"] as? String ?? "?") \($0["start_handle"] as? Int ?? 0)-\($0["end_handle"] as? Int ?? 0)"
            }
            #expect(foundServices == recordedServices, "\(name) \(peer.address): services")

            var recordedCharacteristics: [String] = []
            var recordedDescriptors: [String] = []
            var expectedValues: [Int: [UInt8]] = [:]
            for (index, declaration) in attributes.enumerated() where declaration.type == .characteristic {
                guard let value = declaration.value, value.count >= 5 else { continue }
                let properties = CharacteristicProperties(rawValue: value[0])
                let valueHandle = Int(value[1]) | Int(value[2]) << 8
                guard let uuid = BluetoothUUID(littleEndianBytes: value[3...]) else { continue }
                recordedCharacteristics.append(
                    "\(declaration.handle.rawValue)/\(valueHandle) \(uuid) \(properties.names)")
                // Descriptors: what follows the value up to the next declaration.
                for attribute in attributes[(index + 1)...] {
                    if let type = attribute.type,
                        [.primaryService, .secondaryService, .include, .characteristic].contains(type)
                    {
                        break
                    }
                    guard let type = attribute.type, attribute.handle.rawValue > valueHandle else { continue }
                    recordedDescriptors.append("\(valueHandle): \(attribute.handle.rawValue) \(type)")
                }
                let served = attributes.first { $0.handle.rawValue == valueHandle }
                if properties.contains(.read), let served, !served.requiresEncryption, let bytes = servedValue(served) {
                    expectedValues[valueHandle] = bytes
                }
            }
            let characteristics = services.flatMap { $0["characteristics"] as? [[String: Any]] ?? [] }
            let foundCharacteristics = characteristics.map {
                "\($0["declaration_handle"] as? Int ?? 0)/\($0["value_handle"] as? Int ?? 0) \($0["uuid"] as? String ?? "?") \($0["properties"] as? [String] ?? [])"
            }
            #expect(foundCharacteristics == recordedCharacteristics, "\(name) \(peer.address): characteristics")
            let foundDescriptors = characteristics.flatMap { characteristic in
                (characteristic["descriptors"] as? [[String: Any]] ?? []).map {
                    "\(characteristic["value_handle"] as? Int ?? 0): \($0["handle"] as? Int ?? 0) \($0["uuid"] as? String ?? "?")"
                }
            }
            #expect(foundDescriptors == recordedDescriptors, "\(name) \(peer.address): descriptors")

            // Every readable value the recording saw reads back as recorded (cut to what one
            // Read Response holds at the MTU, when gatt reads it whole the rest follows).
            for characteristic in characteristics {
                guard let handle = characteristic["value_handle"] as? Int, let expected = expectedValues[handle] else {
                    continue
                }
                let read = characteristic["value"] as? String
                #expect(
                    read == expected.hexString(),
                    "\(name) \(peer.address): value of \(handle), error \(characteristic["error"] ?? "none")")
            }
        }
    }

    /// Subscribes to every value the peer sent unprompted whose subscription the recording
    /// does not show, then makes each write the recording's host made, in order; what comes
    /// back must be what the recording shows following each, value for value, as the
    /// client's CCCDs let it through.
    @BluetoothActor
    static func checkReactions(_ path: String) async throws {
        let name = URL(fileURLWithPath: path).lastPathComponent
        for peer in try peers(path) where peer.reactions.contains(where: { !$0.notifications.isEmpty }) {
            let server = RecordedServer(peer)
            let store = StoreDirectory(path: NSTemporaryDirectory() + "bluejay-mock-\(UUID().uuidString)")
            let host = try await BluetoothHost(
                transport: try VirtualController(peripherals: [peer]), store: store, cacheEnabled: false,
                logger: .silent)
            defer { host.close() }
            let link = try await host.connections.connect(
                to: peer.address, type: peer.addressType, timeout: .seconds(5))
            let client = try await host.client(for: link.handle, identity: peer.address.description)
            let mtu = try await client.exchangeMTU()

            // The expectation, written from the recording: the same rules the virtual peer
            // follows, applied to the writes this test makes.
            var model = ReactionModel(peer)
            var writes: [(handle: AttributeHandle, value: [UInt8])] = []
            for valueHandle in model.unpromptedWithoutRecordedSubscription() {
                guard let cccd = model.cccd(of: valueHandle) else { continue }
                writes.append((cccd, model.bits(forValuesOf: valueHandle)))
            }
            for reaction in peer.reactions {
                // A value longer than one Write Command holds at this MTU cannot be sent
                // without a response; a Write Request that long goes as a long write.
                guard case let .write(handle, value) = reaction.trigger,
                    server.acceptsWriteRequest(handle) || value.count <= mtu - 3
                else { continue }
                writes.append((handle, value))
            }
            var expected: [AttributeHandle: [[UInt8]]] = [:]
            for write in writes {
                for sent in model.write(write.handle, write.value) {
                    expected[sent.handle, default: []].append(Array(sent.value.prefix(mtu - 3)))
                }
            }
            let total = expected.values.reduce(0) { $0 + $1.count }
            try #require(total > 0, "\(name) \(peer.address): the recording's notifications come back for its writes")

            var received: [AttributeHandle: [[UInt8]]] = [:]
            var count = 0
            let done = BluetoothCore.Expectation<Void>()
            for handle in expected.keys {
                _ = client.addValueListener(handle) { value in
                    received[handle, default: []].append(Array(value))
                    count += 1
                    if count == total { done.fulfill(()) }
                }
            }
            var unconfirmed = 0
            for write in writes {
                if server.acceptsWriteRequest(write.handle), write.value.count > mtu - 3 {
                    try await client.writeLong(write.handle, write.value)
                } else if server.acceptsWriteRequest(write.handle) {
                    try await client.write(write.handle, write.value)
                } else {
                    try client.writeWithoutResponse(write.handle, write.value)
                    // As an app does, now and then wait for what was sent to have gone: a
                    // request queued behind thousands of commands would run out its 30 s.
                    unconfirmed += 1
                    if unconfirmed == 32 {
                        unconfirmed = 0
                        _ = try? await client.read(uuid: .deviceName)
                    }
                }
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await done.value() }
                group.addTask {
                    try await Task.sleep(for: .seconds(60))
                    throw CancellationError()
                }
                try await group.next()
                group.cancelAll()
            }
            // Nothing more than recorded: one more round trip, and the count stands.
            _ = try? await client.read(uuid: .deviceName)
            #expect(count == total, "\(name) \(peer.address): \(count) values for \(total) recorded")
            for handle in expected.keys {
                #expect(received[handle] == expected[handle], "\(name) \(peer.address): values of \(handle)")
            }
        }
    }
}

/// The whole shared corpus (`../shared/traces`) as test peers: `make test-corpus`.
@Suite struct MockCorpusTests {
    static var corpus: [String] { RealTraces.names(in: RealTraces.corpus).map { RealTraces.corpus + "/" + $0 } }

    @Test func theCorpusIsThere() {
        #expect(Self.corpus.count == 7, "the seven shared traces in \(RealTraces.corpus)")
    }

    @Test(arguments: corpus) func gattReproducesTheRecordedDatabase(path: String) async throws {
        try await RecordedTracesTests.checkDatabases(path)
    }

    @Test(arguments: corpus) func subscriptionsReplayTheRecordedNotifications(path: String) async throws {
        try await RecordedTracesTests.checkReactions(path)
    }
}

/// The reaction rules of a recorded peer, written out for the test's expectation.
struct ReactionModel {
    let peer: RecordedPeripheral
    private var cccdOfValue: [AttributeHandle: AttributeHandle] = [:]
    private var valueOfCCCD: [AttributeHandle: AttributeHandle] = [:]
    /// CCCDs the recording writes: only they hold values back.
    private var guarding: Set<AttributeHandle> = []
    private var cccdBits: [AttributeHandle: UInt16] = [:]
    private var turns: [String: Int] = [:]
    /// The reactions by what set them off, in recorded order.
    private var byKey: [String: [Int]] = [:]

    init(_ peer: RecordedPeripheral) {
        self.peer = peer
        var current: AttributeHandle?
        for attribute in peer.attributes.sorted(by: { $0.handle < $1.handle }) {
            if let type = attribute.type,
                [.primaryService, .secondaryService, .include, .characteristic].contains(type)
            {
                current = nil
                if type == .characteristic {
                    current = attribute.value.flatMap(CharacteristicDeclaration.init(value:))?.valueHandle
                }
            } else if attribute.type == .clientCharacteristicConfiguration, let value = current,
                attribute.handle > value
            {
                cccdOfValue[value] = attribute.handle
                valueOfCCCD[attribute.handle] = value
            }
        }
        for (index, reaction) in peer.reactions.enumerated() {
            switch reaction.trigger {
            case let .write(handle, value):
                if valueOfCCCD[handle] != nil { guarding.insert(handle) }
                byKey["exact \(handle) \(value)", default: []].append(index)
                byKey["handle \(handle)", default: []].append(index)
            case let .subscription(handle):
                byKey["subscription \(handle)", default: []].append(index)
            }
        }
    }

    func cccd(of valueHandle: AttributeHandle) -> AttributeHandle? { cccdOfValue[valueHandle] }

    /// Values the peer sent before any write whose CCCD the recording never writes.
    func unpromptedWithoutRecordedSubscription() -> [AttributeHandle] {
        let written = Set(
            peer.reactions.compactMap { if case let .write(handle, _) = $0.trigger { handle } else { nil } })
        var handles: [AttributeHandle] = []
        for reaction in peer.reactions {
            guard case let .subscription(handle) = reaction.trigger, !handles.contains(handle),
                let cccd = cccdOfValue[handle], !written.contains(cccd)
            else { continue }
            handles.append(handle)
        }
        return handles
    }

    /// The CCCD value that lets through what the recording shows of `valueHandle`.
    func bits(forValuesOf valueHandle: AttributeHandle) -> [UInt8] {
        let sent = peer.reactions.flatMap(\.notifications).filter { $0.handle == valueHandle }
        var bits: UInt8 = 0
        if sent.contains(where: { !$0.isIndication }) { bits |= 0x01 }
        if sent.contains(where: \.isIndication) { bits |= 0x02 }
        return [bits == 0 ? 0x01 : bits, 0x00]
    }

    /// What the peer sends after the client writes `value` to `handle`.
    mutating func write(_ handle: AttributeHandle, _ value: [UInt8]) -> [RecordedNotification] {
        if valueOfCCCD[handle] != nil, value.count == 2 { cccdBits[handle] = UInt16(value[0]) | UInt16(value[1]) << 8 }
        var chosen: [RecordedNotification] = []
        let exact = "exact \(handle) \(value)"
        chosen += take(byKey[exact] != nil ? exact : "handle \(handle)")
        if let valueHandle = valueOfCCCD[handle], value.contains(where: { $0 != 0 }) {
            chosen += take("subscription \(valueHandle)")
        }
        return chosen.filter { notification in
            guard let cccd = cccdOfValue[notification.handle], guarding.contains(cccd) else { return true }
            return (cccdBits[cccd] ?? 0) & 0x0003 != 0
        }
    }

    private mutating func take(_ key: String) -> [RecordedNotification] {
        guard let candidates = byKey[key], !candidates.isEmpty else { return [] }
        let turn = turns[key, default: 0]
        turns[key] = turn + 1
        return peer.reactions[candidates[turn % candidates.count]].notifications
    }
}
