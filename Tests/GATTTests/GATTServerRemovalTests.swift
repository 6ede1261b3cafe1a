import ATT
import BluetoothCore
import GATT
import HCI
import Testing

/// A service taken out of the server's database: its handles answer nothing more, a
/// client's CCCDs for them go, Service Changed subscribers are told the range, and a
/// service another still includes stays.
@Suite @BluetoothActor
struct GATTServerRemovalTests {
    let rig = GATTServerTests()

    @Test func aRemovedServiceIsGoneAndServiceChangedSubscribersAreTold() async throws {
        let (server, served) = try rig.makeServer()
        let (_, client) = rig.makeLink(server)
        let heard = try await rig.watchServiceChanged(client)
        _ = try await client.discoverAll()
        let notifying = served.characteristics[2]
        try await client.write(try #require(notifying.cccdHandle), [0x01, 0x00])
        #expect(server.subscribers(of: notifying.valueHandle).count == 1)
        let hash = server.base.databaseHashValue

        try server.remove(served)
        await heard.told.value()
        #expect(
            heard.services.contains { $0.handle == served.service.handle },
            "the removed service was not invalidated: \(heard.services)")
        #expect(server.base.databaseHashValue != hash)
        #expect(server.services.isEmpty)
        #expect(server.subscribers(of: notifying.valueHandle).isEmpty)
        #expect(server.attributes.attribute(at: served.characteristics[0].valueHandle) == nil)
        await #expect(throws: GATTError.self) { _ = try await client.read(served.characteristics[0].valueHandle) }
        #expect(throws: GATTServerError.serviceNotFound(served.service.uuid)) { try server.remove(served) }

        // A later service goes after the last attribute left, and serves.
        let again = try server.add(
            ServiceDefinition(
                uuid: BluetoothUUID(UInt16(0x180F)),
                characteristics: [
                    CharacteristicDefinition(uuid: BluetoothUUID(UInt16(0x2A19)), properties: [.read], value: [87])
                ]))
        #expect(try await client.read(again.characteristics[0].valueHandle) == [87])
    }

    @Test func aServiceStillIncludedStays() throws {
        let server = GATTServer(deviceName: "Bluejay peripheral")
        let battery = try server.add(
            ServiceDefinition(
                uuid: BluetoothUUID(UInt16(0x180F)), isPrimary: false,
                characteristics: [
                    CharacteristicDefinition(uuid: BluetoothUUID(UInt16(0x2A19)), properties: [.read], value: [87])
                ]))
        let including = try server.add(
            ServiceDefinition(uuid: BluetoothUUID(UInt16(0x180D)), includedServices: [BluetoothUUID(UInt16(0x180F))]))
        #expect(
            throws: GATTServerError.serviceIncluded(BluetoothUUID(UInt16(0x180F)), by: BluetoothUUID(UInt16(0x180D)))
        ) {
            try server.remove(battery)
        }
        #expect(server.services.count == 2)
        try server.remove(including)
        try server.remove(battery)
        #expect(server.services.isEmpty)
    }
}
