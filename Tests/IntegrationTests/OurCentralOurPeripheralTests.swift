import Bluejay
import BluetoothCore
import Foundation
import GATT
import HCI
import HCITestSupport
import SMP
import Testing

extension IntegrationTests {
    /// Our central against our peripheral: two of our hosts in one test process, each on
    /// its own emulated controller of one link (`peer.py --two-hosts`). The central finds
    /// the peripheral's advertisement, connects, discovers, reads (from the peripheral's
    /// handler), writes, receives notifications in order, pairs with Passkey Entry (the
    /// peripheral shows the passkey, the central's user types it) when a value needs
    /// encryption, and on its next link encrypts with the bond both sides kept.
    @Test(.hangGuard) func ourCentralUsesOurPeripheral() async throws {
        let peer = try await TestPeer(arguments: ["--two-hosts"])
        defer { peer.stop() }
        let stores = (0..<2).map {
            StoreDirectory(path: NSTemporaryDirectory() + "bluejay-twin-\($0)-\(UUID().uuidString)")
        }
        defer { for store in stores { try? FileManager.default.removeItem(atPath: store.path) } }

        let manager = try await PeripheralManager(
            transport: peer.transport, name: "Bluejay Twin", store: stores[0], logger: .silent)
        defer { manager.close() }
        let shown = PairingUser(), typing = PairingUser()
        manager.pairingPolicy = PairingPolicy(ioCapability: .displayOnly)
        manager.pairingDelegate = shown
        try manager.add(
            MutableService(
                uuid: Self.periphService,
                characteristics: [
                    MutableCharacteristic(uuid: Self.periphReadable, properties: [.read], value: Array("stored".utf8)),
                    MutableCharacteristic(uuid: Self.periphWritable, properties: [.read, .write], value: [0]),
                    MutableCharacteristic(uuid: Self.periphStream, properties: [.notify]),
                    MutableCharacteristic(
                        uuid: Self.periphSecret, properties: [.read], permissions: [.read, .readAuthenticated],
                        value: Array("secret".utf8)),
                ]))
        try manager.onRead(Self.periphReadable) { _ in .success(Array("from our peripheral".utf8)) }
        try await manager.startAdvertising("Bluejay Twin", uuids: [Self.periphService])

        let central = try await Central(transport: try #require(peer.transport2), store: stores[1], logger: .silent)
        defer { central.close() }
        central.host.security.policy = PairingPolicy(ioCapability: .keyboardOnly)
        central.host.security.delegate = typing
        var found: PeripheralIdentifier?
        for try await discovery in central.startScanning(forServiceUUIDs: [Self.periphService]) {
            found = discovery.peripheralIdentifier
            break
        }
        await central.stopScanning()
        let peripheral = central.peripheral(try #require(found))
        try await peripheral.connect(connectionTimeout: .seconds(10))

        let service = ServiceIdentifier(uuid: Self.periphService)
        func characteristic(_ uuid: BluetoothUUID) -> CharacteristicIdentifier {
            CharacteristicIdentifier(uuid: uuid, service: service)
        }
        #expect(
            Set(try await peripheral.discoverAllCharacteristics(of: service).map(\.uuid))
                == [Self.periphReadable, Self.periphWritable, Self.periphStream, Self.periphSecret])
        #expect(
            try await peripheral.read(from: characteristic(Self.periphReadable)) == Array("from our peripheral".utf8))
        try await peripheral.write(to: characteristic(Self.periphWritable), bytes: [0x0A, 0x0B])
        #expect(try manager.value(of: Self.periphWritable) == [0x0A, 0x0B])

        let values = try await peripheral.values(of: characteristic(Self.periphStream))
        #expect(await eventually { (try? manager.subscribers(of: Self.periphStream).count) == 1 })
        for index in 0..<500 {
            try await manager.updateValue([UInt8(index & 0xFF), UInt8(index >> 8)], for: Self.periphStream)
        }
        var received: [[UInt8]] = []
        for try await value in values {
            received.append(value)
            if received.count == 500 { break }
        }
        let expected: [[UInt8]] = (0..<500).map { (index: Int) -> [UInt8] in [UInt8(index & 0xFF), UInt8(index >> 8)] }
        #expect(received == expected)

        // The secret needs an authenticated link: the central pairs on the ATT error; the
        // peripheral shows the passkey, the central's user types it.
        Task {
            if let passkey = await shown.next() { typing.typed.yield(passkey) }
        }
        #expect(try await peripheral.read(from: characteristic(Self.periphSecret)) == Array("secret".utf8))
        let link = try #require(manager.host.connections.connections.keys.first)
        #expect(manager.host.security.isAuthenticated(link))
        #expect(manager.host.security.bonds.all().count == 1 && central.host.security.bonds.all().count == 1)

        // The next link: encrypted with the bond, no pairing, no passkey.
        await peripheral.disconnect()
        #expect(await eventually { manager.host.connections.connections.isEmpty })
        try await peripheral.connect(connectionTimeout: .seconds(10))
        #expect(try await peripheral.read(from: characteristic(Self.periphSecret)) == Array("secret".utf8))
        let relink = try #require(manager.host.connections.connections.keys.first)
        #expect(
            manager.host.security.isEncryptedWithStoredBond(relink) && manager.host.security.isAuthenticated(relink))
    }
}
