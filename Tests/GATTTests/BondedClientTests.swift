import ATT
import BluetoothCore
import GATT
import HCI
import Testing

/// What the server keeps of a bonded client between its links (Part G, 3.3.3.3 and 7.1).
extension GATTServerTests {
    /// A bonded client's CCCDs, written before and after it bonded, come back on its next
    /// link (each restored one told as a subscription change), and Service Changed tells it
    /// of a service added while it was away; an unbonded client's go with its link, and a
    /// forgotten client's are gone.
    @Test func aBondedClientsSubscriptionsOutliveItsLink() async throws {
        let (server, served) = try makeServer()
        let notifying = served.characteristics[2], indicating = served.characteristics[3]
        var events: [GATTSubscription] = []
        server.onSubscriptionChanged = { events.append($0) }
        let (firstLink, first) = makeLink(server, connection: 1)
        try await first.configure(try #require(notifying.cccdHandle), .notify)
        try await first.configure(LocalGATTServer.serviceChangedCCCDHandle, .indicate)
        server.bind(firstLink.server, toBondedClient: "F0:0D:B1:E7:00:01")
        try await first.configure(try #require(indicating.cccdHandle), .indicate)
        let (_, stranger) = makeLink(server, connection: 2)
        try await stranger.configure(try #require(notifying.cccdHandle), .notify)
        server.linkEnded(1)
        server.linkEnded(2)
        #expect(server.subscribers(of: notifying.valueHandle).isEmpty)

        let added = try server.add(
            ServiceDefinition(
                uuid: BluetoothUUID(UInt16(0x180F)),
                characteristics: [
                    CharacteristicDefinition(uuid: BluetoothUUID(UInt16(0x2A19)), properties: [.read], value: [100])
                ]))
        let (link, again) = makeLink(server, connection: 3)
        var changed: [[UInt8]] = []
        let told = BluetoothCore.Expectation<Void>()
        _ = again.addValueListener(LocalGATTServer.serviceChangedHandle) { value in
            changed.append(Array(value))
            told.fulfill(())
        }
        events = []
        let restored = server.restoreBondedClient("F0:0D:B1:E7:00:01", on: link.server)
        let restoredHandles: Set<AttributeHandle> = Set(restored.map(\.handle))
        let subscribedHandles: Set<AttributeHandle> = [
            LocalGATTServer.serviceChangedHandle, notifying.valueHandle, indicating.valueHandle,
        ]
        #expect(restoredHandles == subscribedHandles)
        #expect(events.count == 3)
        #expect(try await again.read(try #require(notifying.cccdHandle)) == [0x01, 0x00])
        #expect(server.subscribers(of: notifying.valueHandle).map(\.connection) == [3])
        await told.value()
        let start: UInt16 = added.service.handle.rawValue, end: UInt16 = added.service.endGroupHandle.rawValue
        let range: [UInt8] = [UInt8(start & 0xFF), UInt8(start >> 8), UInt8(end & 0xFF), UInt8(end >> 8)]
        #expect(changed == [range])

        // Forgotten (its bond removed): its next link starts afresh.
        server.linkEnded(3)
        server.forgetBondedClient("F0:0D:B1:E7:00:01")
        let (fourth, _) = makeLink(server, connection: 4)
        #expect(
            server.restoreBondedClient("F0:0D:B1:E7:00:01", on: fourth.server).isEmpty,
            "a forgotten client starts afresh")
    }
}

extension GATTServerTests {
    /// What the server hands out to store of a bonded client brings its subscriptions back
    /// in a new server (a new process): with the same database, silently; with a database
    /// whose hash differs, with Service Changed over the whole range; a CCCD whose handle
    /// now configures another characteristic is not applied. Forgetting the client tells the
    /// store to drop it.
    @Test func aStoredBondedClientComesBackInANewServer() async throws {
        let client = "F0:0D:B1:E7:00:01"
        let (server, served) = try makeServer()
        let notifying = served.characteristics[2]
        var stored: [String: BondedClientRecord] = [:]
        server.onBondedClientChanged = { name, record in stored[name] = record }
        let (firstLink, first) = makeLink(server, connection: 1)
        server.bind(firstLink.server, toBondedClient: client)
        try await first.configure(try #require(notifying.cccdHandle), .notify)
        try await first.configure(LocalGATTServer.serviceChangedCCCDHandle, .indicate)
        let record = try #require(stored[client])
        #expect(record.databaseHash == server.base.databaseHashValue.hexString())
        // Required first: Swift 6.0's #expect evaluates the right side of == in an
        // autoclosure that cannot throw.
        let notifyingCCCD = try #require(notifying.cccdHandle)
        #expect(
            record.cccds == [
                BondedClientRecord.CCCD(
                    handle: LocalGATTServer.serviceChangedCCCDHandle.rawValue,
                    characteristic: BluetoothUUID.serviceChanged.description, value: 2),
                BondedClientRecord.CCCD(
                    handle: notifyingCCCD.rawValue, characteristic: Self.notifying.description, value: 1),
            ])

        // The same database in a new server: restored, nothing indicated.
        let (same, _) = try makeServer()
        let (link, again) = makeLink(same, connection: 7)
        var changed: [[UInt8]] = []
        _ = again.addValueListener(LocalGATTServer.serviceChangedHandle) { changed.append(Array($0)) }
        let restored = same.restoreBondedClient(client, on: link.server, stored: record)
        #expect(Set(restored.map(\.handle)) == [LocalGATTServer.serviceChangedHandle, notifying.valueHandle])
        #expect(same.subscribers(of: notifying.valueHandle).map(\.connection) == [7])
        #expect(try await again.read(try #require(notifying.cccdHandle)) == [0x01, 0x00])
        #expect(changed.isEmpty)

        // Another database (a service before ours): Service Changed, 0x0001-0xFFFF; the old
        // CCCD handle is now another attribute's, so it is not applied.
        let other = GATTServer(deviceName: "Bluejay peripheral")
        try other.add(
            ServiceDefinition(
                uuid: BluetoothUUID(UInt16(0x180F)),
                characteristics: [
                    CharacteristicDefinition(
                        uuid: BluetoothUUID(UInt16(0x2A19)), properties: [.read, .notify], value: [100])
                ]))
        let moved = try other.add(
            ServiceDefinition(
                uuid: Self.service,
                characteristics: [
                    CharacteristicDefinition(uuid: Self.notifying, properties: [.notify])
                ]))
        var saved: [BondedClientRecord?] = []
        other.onBondedClientChanged = { _, record in saved.append(record) }
        let (otherLink, otherClient) = makeLink(other, connection: 8)
        let told = BluetoothCore.Expectation<[UInt8]>()
        _ = otherClient.addValueListener(LocalGATTServer.serviceChangedHandle) { told.fulfill(Array($0)) }
        let reapplied = other.restoreBondedClient(client, on: otherLink.server, stored: record)
        #expect(reapplied.map(\.handle) == [LocalGATTServer.serviceChangedHandle])
        #expect(other.subscribers(of: moved.characteristics[0].valueHandle).isEmpty)
        #expect(await told.value() == [0x01, 0x00, 0xFF, 0xFF])
        #expect(saved.last??.databaseHash == other.base.databaseHashValue.hexString(), "it has now seen this database")

        other.forgetBondedClient(client)
        #expect(saved.count == 2 && saved.last! == nil, "the store is told to drop it")
    }
}
