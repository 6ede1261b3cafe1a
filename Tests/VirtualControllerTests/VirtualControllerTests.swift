import ATT
import Bluejay
import BluetoothCore
import Foundation
import GAP
import GATT
import HCI
import Testing
@testable import VirtualController

/// The virtual controller and a virtual peripheral built by hand (no recording), driven by
/// the whole stack: bring-up, scan, connect, discovery, reads, writes, the recorded
/// reactions, indications, refusals and encryption.
@Suite struct VirtualControllerTests {
    static let address = BluetoothAddress("C0:FF:EE:00:00:42")!

    /// A heart-rate sensor as a recording might show it: the measurement notifies, the
    /// sensor location reads and writes, a control point starts the measurements (two
    /// notifications and an indication follow `05 01`), and a vendor value the peer refused
    /// before encryption.
    static func heartRate() -> RecordedPeripheral {
        func declaration(_ handle: UInt16, _ properties: UInt8, _ value: UInt16, _ uuid: UInt16) -> RecordedAttribute {
            RecordedAttribute(
                handle: AttributeHandle(rawValue: handle), type: .characteristic,
                value: CharacteristicDeclaration(
                    properties: CharacteristicProperties(rawValue: properties),
                    valueHandle: AttributeHandle(rawValue: value), uuid: BluetoothUUID(uuid)
                ).value)
        }
        return RecordedPeripheral(
            address: address, addressType: .random, name: "Recorded HRM",
            attributes: [
                RecordedAttribute(handle: 0x0010, type: .primaryService, value: [0x0D, 0x18], groupEndHandle: 0x001F),
                declaration(0x0011, 0x12, 0x0012, 0x2A37),
                RecordedAttribute(handle: 0x0012, type: BluetoothUUID(UInt16(0x2A37)), value: [0x00, 59]),
                RecordedAttribute(handle: 0x0013, type: .clientCharacteristicConfiguration),
                declaration(0x0014, 0x0A, 0x0015, 0x2A38),
                RecordedAttribute(handle: 0x0015, type: BluetoothUUID(UInt16(0x2A38)), value: [0x01]),
                declaration(0x0016, 0x28, 0x0017, 0x2A39),
                RecordedAttribute(handle: 0x0017, type: BluetoothUUID(UInt16(0x2A39))),
                RecordedAttribute(handle: 0x0018, type: .clientCharacteristicConfiguration),
                declaration(0x0019, 0x02, 0x001A, 0xFFF1),
                RecordedAttribute(
                    handle: 0x001A, type: BluetoothUUID(UInt16(0xFFF1)), value: [0xAB], requiresEncryption: true),
                RecordedAttribute(handle: 0x0040, type: nil, value: [0x42]),
            ],
            mtu: 185,
            errors: [
                RecordedError(
                    request: .readRequest, handle: 0x001A, code: .insufficientAuthentication, encrypted: false)
            ],
            reactions: [
                RecordedReaction(
                    trigger: .subscription(handle: 0x0012),
                    notifications: [.init(handle: 0x0012, value: [0x00, 60], isIndication: false)]),
                RecordedReaction(
                    trigger: .write(handle: 0x0017, value: [0x05, 0x01]),
                    notifications: [
                        .init(handle: 0x0012, value: [0x00, 61], isIndication: false),
                        .init(handle: 0x0017, value: [0x05, 0x01, 0x01], isIndication: true),
                        .init(handle: 0x0012, value: [0x00, 62], isIndication: false),
                    ]),
            ])
    }

    @BluetoothActor
    static func host(_ peripherals: [RecordedPeripheral]) async throws -> BluetoothHost {
        let store = StoreDirectory(path: NSTemporaryDirectory() + "bluejay-virtual-\(UUID().uuidString)")
        return try await BluetoothHost(
            transport: try VirtualController(peripherals: peripherals), store: store, cacheEnabled: false,
            logger: .silent)
    }

    @Test @BluetoothActor func scanFindsTheRecordedAdvertisement() async throws {
        let host = try await Self.host([Self.heartRate()])
        defer { host.close() }
        let found = BluetoothCore.Expectation<Discovery>()
        try await host.scanner.start(ScanOptions(active: true)) { found.fulfill($0) }
        let discovery = await found.value()
        try await host.scanner.stop()
        #expect(discovery.address == Self.address && discovery.addressType == .random && discovery.connectable)
        // No advertising data recorded: Flags and the name the recording gives.
        #expect(discovery.advertisement.localName == "Recorded HRM")
    }

    @Test @BluetoothActor func servesTheRecordedDatabaseAndReactions() async throws {
        let host = try await Self.host([Self.heartRate()])
        defer { host.close() }
        let link = try await host.connections.connect(to: Self.address, type: .random, timeout: .seconds(5))
        let client = try await host.client(for: link.handle, identity: Self.address.description)
        #expect(try await client.exchangeMTU() == 185)

        let database = try await client.discoverAll()
        let heartRate: [BluetoothUUID] = [BluetoothUUID(UInt16(0x180D))]
        #expect(database.services.map(\.uuid) == heartRate)
        #expect(
            database.services.first?.endGroupHandle == 0x001F, "the recorded End Group Handle, not the last attribute's"
        )
        let characteristics = try #require(database.characteristics[0x0010])
        let valueHandles: [AttributeHandle] = [0x0012, 0x0015, 0x0017, 0x001A]
        #expect(characteristics.map(\.valueHandle) == valueHandles)
        let descriptorHandles: [AttributeHandle] = [0x0013]
        #expect(database.descriptors[0x0012]?.map(\.handle) == descriptorHandles)
        // The handle seen only in use is served by handle, never discovered.
        let usedOnly: AttributeHandle = 0x0040
        #expect(
            !(database.descriptors.values.joined().contains { (descriptor: Descriptor) -> Bool in
                descriptor.handle == usedOnly
            }))
        #expect(try await client.read(0x0040) == [0x42])

        // Recorded values; a value never seen is an honest gap.
        #expect(try await client.read(0x0015) == [0x01])
        await #expect(throws: GATTError.self) { try await client.read(0x0017) }
        try await client.write(0x0015, [0x02])
        #expect(try await client.read(0x0015) == [0x02])

        // Refused for want of security until the link is encrypted, with the recorded code.
        do {
            _ = try await client.read(0x001A)
            Issue.record("read before encryption succeeded")
        } catch {
            #expect(error.code == .insufficientAuthentication, "\(error)")
        }

        // Subscribing replays what the peer sent unprompted; the control point write
        // replays its reaction, the indication confirmed before the next notification.
        var values: [[UInt8]] = []
        let done = BluetoothCore.Expectation<Void>()
        _ = client.addValueListener(0x0012) { value in
            values.append(Array(value))
            if values.count == 3 { done.fulfill(()) }
        }
        var indications: [[UInt8]] = []
        _ = client.addValueListener(0x0017) { indications.append(Array($0)) }
        try await client.configure(0x0013, .notify)
        try await client.configure(0x0018, .indicate)
        try await client.write(0x0017, [0x05, 0x01])
        _ = await done.value()
        let notified: [[UInt8]] = [[0x00, 60], [0x00, 61], [0x00, 62]]
        #expect(values == notified)
        let indicated: [[UInt8]] = [[0x05, 0x01, 0x01]]
        #expect(indications == indicated)

        // Encryption with any key (the controller takes it as the command arrives): the
        // refused value reads now.
        try await host.controller.send(
            LEEnableEncryption(handle: link.handle, longTermKey: [UInt8](repeating: 7, count: 16)))
        #expect(try await client.read(0x001A) == [0xAB])
        try await host.connections.disconnect(link.handle)
    }

    @Test @BluetoothActor func aPeerNotInRangeIsNotConnected() async throws {
        let host = try await Self.host([Self.heartRate()])
        defer { host.close() }
        await #expect(throws: (any Error).self) {
            try await host.connections.connect(
                to: BluetoothAddress("C0:FF:EE:00:00:99")!, type: .random, timeout: .milliseconds(300))
        }
    }

    @Test func legacyAdvertisingKeepsWholeStructuresThatFit() {
        let long: [UInt8] =
            [0x02, 0x01, 0x06] + [0x1C, 0x09] + [UInt8](repeating: 0x41, count: 27) + [0x03, 0x03, 0x0D, 0x18]
        #expect(VirtualController.legacyData(long) == [0x02, 0x01, 0x06, 0x03, 0x03, 0x0D, 0x18])
        #expect(VirtualController.legacyData([0x05, 0x09, 0x41]) == [], "a structure running past the data is dropped")
    }
}
