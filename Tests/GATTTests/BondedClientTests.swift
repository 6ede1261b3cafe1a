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
        let (_, first) = makeLink(server, connection: 1)
        try await first.configure(try #require(notifying.cccdHandle), .notify)
        try await first.configure(LocalGATTServer.serviceChangedCCCDHandle, .indicate)
        server.bind(1, toBondedClient: "F0:0D:B1:E7:00:01")
        try await first.configure(try #require(indicating.cccdHandle), .indicate)
        let (_, stranger) = makeLink(server, connection: 2)
        try await stranger.configure(try #require(notifying.cccdHandle), .notify)
        server.linkEnded(1)
        server.linkEnded(2)
        #expect(server.subscribers(of: notifying.valueHandle).isEmpty)

        let added = try server.add(MutableService(uuid: BluetoothUUID(UInt16(0x180F)), characteristics: [
            MutableCharacteristic(uuid: BluetoothUUID(UInt16(0x2A19)), properties: [.read], value: [100]),
        ]))
        let (link, again) = makeLink(server, connection: 3)
        var changed: [[UInt8]] = []
        let told = Expectation<Void>()
        _ = again.addValueListener(LocalGATTServer.serviceChangedHandle) { value in
            changed.append(Array(value))
            told.fulfill(())
        }
        events = []
        let restored = server.restoreBondedClient("F0:0D:B1:E7:00:01", on: link.server)
        #expect(Set(restored.map(\.handle)) == [LocalGATTServer.serviceChangedHandle, notifying.valueHandle, indicating.valueHandle])
        #expect(events.count == 3)
        #expect(try await again.read(try #require(notifying.cccdHandle)) == [0x01, 0x00])
        #expect(server.subscribers(of: notifying.valueHandle).map(\.connection) == [3])
        await told.value()
        let start = added.service.handle.rawValue, end = added.service.endGroupHandle.rawValue
        #expect(changed == [[UInt8(start & 0xFF), UInt8(start >> 8), UInt8(end & 0xFF), UInt8(end >> 8)]])

        // Forgotten (its bond removed): its next link starts afresh.
        server.linkEnded(3)
        server.forgetBondedClient("F0:0D:B1:E7:00:01")
        let (fourth, _) = makeLink(server, connection: 4)
        #expect(server.restoreBondedClient("F0:0D:B1:E7:00:01", on: fourth.server).isEmpty, "a forgotten client starts afresh")
    }
}
