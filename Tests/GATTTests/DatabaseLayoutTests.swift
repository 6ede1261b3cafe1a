import ATT
import BluetoothCore
import GATT
import Testing

/// Services that say where they go: a client discovers them at exactly those handles, with
/// their includes, Extended Properties descriptor and hand-declared CCCD; ours make way.
@Suite @BluetoothActor
struct DatabaseLayoutTests {
    let wiring = GATTServerTests()

    static func definitions(_ json: String) throws -> [ServiceDefinition] {
        try DatabaseFile(json: Array(json.utf8)).services.map(\.definition)
    }

    @Test func aClientFindsEveryAttributeWhereTheFilePutIt() async throws {
        let server = GATTServer(deviceName: "Bluejay")
        let served = try server.add(services: try Self.definitions(DatabaseFileTests.placed))
        // The file has its own GAP: ours is gone, and our GATT service takes the first room.
        #expect(server.base.genericAccessHandle == nil && server.base.genericAttributeHandle == 0x0004)
        let (_, client) = wiring.makeLink(server)
        let primary = try await client.discoverPrimaryServices()
        #expect(
            primary.map(\.uuid) == [
                .genericAccess, .genericAttribute, BluetoothUUID("B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A00")!,
            ])
        #expect(
            primary.map(\.handle) == [0x0001, 0x0004, 0x0010]
                && primary.map(\.endGroupHandle) == [0x0003, 0x000B, 0x001F],
            "end_handle reserves the rest of the group")
        let battery = Service(
            uuid: BluetoothUUID(UInt16(0x180F)), handle: 0x0020, endGroupHandle: 0x0022, isPrimary: false)
        #expect(try await client.discoverSecondaryServices() == [battery])
        let included = try await client.findIncludedServices(in: primary[2])
        #expect(included.map(\.declarationHandle) == [0x0011] && included.map(\.service.handles) == [battery.handles])
        #expect(included.map(\.service.uuid) == [battery.uuid], "a 16-bit UUID is in the include declaration")
        let characteristics = try await client.discoverCharacteristics(in: primary[2])
        #expect(
            characteristics.map(\.declarationHandle) == [0x0012, 0x0017]
                && characteristics.map(\.valueHandle) == [0x0014, 0x0018])
        #expect(characteristics[0].properties.contains([.authenticatedSignedWrites, .extendedProperties]))
        let setPoint = try await client.discoverDescriptors(of: characteristics[0])
        #expect(
            setPoint.map(\.handle) == [0x0015, 0x0016]
                && setPoint.map(\.uuid) == [.characteristicExtendedProperties, BluetoothUUID(UInt16(0x2901))])
        #expect(try await client.read(0x0015) == [0x03, 0x00], "Reliable Write and Writable Auxiliaries")
        try await client.write(0x0016, Array("lower".utf8))
        #expect(
            server.value(of: 0x0016) == Array("lower".utf8), "Writable Auxiliaries: the user description is written")
        let notifying = try await client.discoverDescriptors(of: characteristics[1])
        #expect(notifying.map(\.handle) == [0x001A, 0x001B], "no CCCD of ours, only the file's")
        #expect(served[2].characteristics[1].cccdHandle == 0x001A)
        try await client.configure(0x001A, .indicate)
        #expect(server.subscribers(of: 0x0018).map(\.indications) == [true], "the hand-declared CCCD subscribes")
        try await client.write(0x001B, [0x06, 0x00])
        #expect(server.value(of: 0x001B) == [0x06, 0x00], "a descriptor's permissions are the file's")
        let hash = try #require(server.base.databaseHashValueHandle)
        let read = try await client.read(hash)
        #expect(hash == 0x000B && read == server.base.databaseHashValue)
    }

    @Test func oursGoAfterADatabaseThatLeavesThemNoRoom() throws {
        let server = GATTServer()
        _ = try server.add(
            services: try Self.definitions(
                """
                {"services": [{"uuid": "180D", "handle": 1, "characteristics": [{"uuid": "2A37", "properties": ["read"]}]},
                              {"uuid": "180F", "handle": 5, "end_handle": 9, "characteristics": []}]}
                """))
        #expect(server.base.genericAccessHandle == 0x000A && server.base.genericAttributeHandle == 0x000F)
        #expect(server.base.serviceChangedValueHandle == 0x0011 && server.base.serviceChangedCCCD == 0x0012)
        #expect(server.attributes.attribute(at: 0x0004) == nil, "0x0004 is left free: ours need five in a row")
    }

    @Test func aFilesOwnGATTServiceReplacesOursWholly() async throws {
        let server = GATTServer()
        _ = try server.add(
            services: try Self.definitions(
                #"{"services": [{"uuid": "1801", "characteristics": [{"uuid": "2A05", "properties": ["indicate"]}]}]}"#)
        )
        #expect(
            server.base.genericAttributeHandle == nil && server.base.serviceChangedValueHandle == nil
                && server.base.databaseHashValue.isEmpty)
        #expect(
            server.base.genericAccessHandle == 0x0005,
            "our GAP goes after the file's GATT, which took the first handles")
        let (_, client) = wiring.makeLink(server)
        let services = try await client.discoverPrimaryServices()
        #expect(
            services.map(\.uuid) == [.genericAttribute, .genericAccess] && services.map(\.handle) == [0x0001, 0x0005])
        // No Service Changed of ours to indicate: adding more is served all the same.
        let later = try server.add(ServiceDefinition(uuid: BluetoothUUID(UInt16(0x180F))))
        #expect(later.service.handle == 0x000A)
    }

    @Test func anIncludeCarriesTheUUIDOnlyWhenItIs16Bit() throws {
        let server = GATTServer()
        let vendor = BluetoothUUID("B1E70002-9D3B-4C7A-8A5E-6F2D0C1B0A00")!
        let served = try server.add(services: [
            ServiceDefinition(
                uuid: BluetoothUUID(UInt16(0x180D)),
                includes: [IncludeDefinition(uuid: vendor), IncludeDefinition(uuid: BluetoothUUID(UInt16(0x180F)))]),
            ServiceDefinition(uuid: vendor, isPrimary: false),
            ServiceDefinition(uuid: BluetoothUUID(UInt16(0x180F)), isPrimary: false),
        ])
        // Both included services come after the one including them: an include may name one added with it.
        #expect(served.map(\.service.handle) == [0x000E, 0x0011, 0x0012])
        #expect(
            server.attributes.attribute(at: 0x000F)?.value == [0x11, 0x00, 0x11, 0x00],
            "Part G 3.2: no 128-bit UUID in the declaration")
        #expect(server.attributes.attribute(at: 0x0010)?.value == [0x12, 0x00, 0x12, 0x00, 0x0F, 0x18])
    }

    @Test func aDatabaseThatDoesNotFitChangesNothing() throws {
        let server = GATTServer()
        let before = server.attributes.attributes
        #expect(throws: GATTServerError.self) {
            try server.add(services: [
                ServiceDefinition(uuid: .genericAttribute, handle: 0x0001),
                ServiceDefinition(uuid: BluetoothUUID(UInt16(0x180F)), handle: 0x0001),
            ])
        }
        #expect(
            server.attributes.attributes == before && server.base.genericAccessHandle == 0x0001
                && server.services.isEmpty)
    }

    /// A database that reserves every handle but declares neither GAP nor GATT leaves ours
    /// nowhere to go: refused by name, ours kept where they were, rather than served without.
    @Test func aDatabaseLeavingOursNoRoomIsRefused() throws {
        let server = GATTServer()
        let before = server.attributes.attributes
        #expect {
            try server.add(services: [
                ServiceDefinition(uuid: BluetoothUUID(UInt16(0x180F)), handle: 0x0001, endHandle: 0xFFFF)
            ])
        } throws: { error in
            "\(error)".contains("no handles are left for our GAP (0x1800) service")
        }
        #expect(
            server.attributes.attributes == before && server.base.genericAccessHandle == 0x0001
                && server.services.isEmpty)
    }

    @Test func servicesWithoutHandlesGoAfterOursAsBefore() throws {
        let server = GATTServer()
        let first = try server.add(
            ServiceDefinition(
                uuid: BluetoothUUID(UInt16(0x180F)),
                characteristics: [
                    CharacteristicDefinition(uuid: BluetoothUUID(UInt16(0x2A19)), properties: [.read, .notify])
                ]))
        #expect(first.service.handle == 0x000E && first.characteristics[0].cccdHandle == 0x0011)
        #expect(server.base.genericAccessHandle == 0x0001 && server.base.genericAttributeHandle == 0x0006)
        // Later, ours stay: a service given a taken handle is refused.
        do {
            try server.add(ServiceDefinition(uuid: BluetoothUUID(UInt16(0x180D)), handle: 0x0003))
            Issue.record("a taken handle was accepted")
        } catch {
            #expect(error.description == "services[0]: handle 0x0003 is taken by an attribute already served")
        }
        let later = try server.add(ServiceDefinition(uuid: BluetoothUUID(UInt16(0x180D)), handle: 0x0100))
        #expect(later.service.handles == 0x0100...0x0100)
        #expect(try server.add(ServiceDefinition(uuid: BluetoothUUID(UInt16(0x1810)))).service.handle == 0x0101)
    }

    /// Reliable Writes (Part G, 4.9.5) use Prepare and Execute Write, as Write Long
    /// Characteristic Values (4.9.4) does: the server cannot tell them apart, so a value
    /// that may be written takes both (GATTServerTests), and Reliable Write alone makes it
    /// writable. A value that announces neither is Write Not Permitted (Part F, 3.4.6.1).
    @Test func reliableWriteAloneLetsTheValueBePreparedAndExecuted() async throws {
        let server = GATTServer()
        let served = try server.add(
            ServiceDefinition(
                uuid: BluetoothUUID(UInt16(0x180D)),
                characteristics: [
                    CharacteristicDefinition(
                        uuid: BluetoothUUID(UInt16(0xFF01)), properties: [.read], extendedProperties: [.reliableWrite]),
                    CharacteristicDefinition(uuid: BluetoothUUID(UInt16(0xFF02)), properties: [.read]),
                ]))
        let (reliable, readOnly) = (served.characteristics[0].valueHandle, served.characteristics[1].valueHandle)
        #expect(served.characteristics[0].properties == [.read, .extendedProperties])
        let (_, client) = wiring.makeLink(server)
        try await client.reliableWrite([HandleValue(handle: reliable, value: [5])])
        #expect(server.value(of: reliable) == [5])
        do {
            try await client.reliableWrite([HandleValue(handle: readOnly, value: [5])])
            Issue.record("a read-only value took a Prepare Write")
        } catch {
            #expect(error.code == .writeNotPermitted)
        }
        #expect(server.value(of: readOnly) == [])
    }
}
