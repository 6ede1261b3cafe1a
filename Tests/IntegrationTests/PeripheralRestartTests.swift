import Bluejay
import BluetoothCore
import Foundation
import GATT
import HCI
import HCITestSupport
import Testing

extension IntegrationTests {
    /// A bonded central's subscriptions outlive our process (Part G, 3.3.3.3): it
    /// subscribes and bonds; our manager stops (its controller is reset, the link ends);
    /// a new manager on the same store serves the same database; the central comes back,
    /// encrypts with the bond and writes no CCCD, and our next notification reaches it.
    /// After one more restart with a service added, it is told by Service Changed that
    /// the whole range may have changed (7.1: we cannot know what it cached). Unpairing
    /// forgets the kept subscriptions with the bond.
    @Test(.hangGuard) func aBondedCentralsSubscriptionsOutliveOurProcess() async throws {
        let rig = try await PeripheralRig(name: "Bluejay Restart")
        defer { rig.close() }
        let central = rig.central
        let database = MutableService(
            uuid: Self.periphService,
            characteristics: [
                MutableCharacteristic(uuid: Self.periphStream, properties: [.notify])
            ])
        let serviceChanged = Int(LocalGATTServer.serviceChangedHandle.rawValue)

        /// `manager` serving `services`, advertising; the central connects to it. Returns the
        /// manager, its events and the central's link.
        func serve(_ manager: PeripheralManager, _ services: [MutableService]) async throws -> (
            PeripheralManager, AsyncStream<PeripheralManagerEvent>.Iterator, ConnectionHandle, BluetoothAddress
        )? {
            var events = manager.events().makeAsyncIterator()
            for service in services { try manager.add(service) }
            try await manager.startAdvertising("Bluejay Restart", uuids: [Self.periphService])
            try await central.connect(toAdvertised: "Bluejay Restart")
            guard case let .connected(link, address)? = await events.next() else { return nil }
            return (manager, events, link, address)
        }

        // First run: subscribe, bond.
        guard let (first, _, _, centralAddress) = try await serve(rig.manager, [database]) else {
            Issue.record("no connection event"); return
        }
        let stream = Int(try first.characteristic(Self.periphStream).valueHandle.rawValue)
        try await central.send(["op": "discover"])
        try await central.send(["op": "subscribe", "handle": stream])
        try await central.send(["op": "subscribe", "handle": serviceChanged, "indicate": true])
        #expect(try await central.send(["op": "pair"])["encrypted"] as? Bool == true)
        // The central is done once it has sent its last key; we store the bond when that key
        // has reached us, a moment later.
        #expect(await eventually { !first.host.security.bonds.all().isEmpty })
        let identity = try #require(first.host.security.bonds.all().first?.address)
        #expect(await eventually { first.bondedCentrals.record(for: identity)?.cccds.count == 2 })
        let file = first.bondedCentrals.directory.path + "/" + identity.filter { $0 != ":" } + ".json"
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int)
        #expect(mode == 0o600)
        first.close()
        try await central.send(["op": "wait_disconnection"])

        // Second run, same database: the central writes no CCCD and is notified.
        guard let (second, _, relink, _) = try await serve(rig.restart(), [database]) else {
            Issue.record("no reconnection event"); return
        }
        #expect(
            try second.subscribers(of: Self.periphStream).isEmpty,
            "nothing applies before the link is encrypted with the bond")
        try await central.send(["op": "listen", "handle": stream])
        try await central.send(["op": "listen", "handle": serviceChanged, "indicate": true])
        #expect(try await central.send(["op": "encrypt"])["encrypted"] as? Bool == true)
        #expect(await eventually { (try? second.subscribers(of: Self.periphStream).map(\.connection)) == [relink] })
        for value: UInt8 in 1...3 { try await second.updateValue([value], for: Self.periphStream) }
        #expect(
            (try await central.send(["op": "values", "handle": stream, "count": 3])["values"] as? [String]) == [
                "01", "02", "03",
            ])
        second.close()
        try await central.send(["op": "wait_disconnection"])

        // Third run, a service added: Service Changed tells the central the whole range.
        let extra = MutableService(
            uuid: Self.periphIndicated,
            characteristics: [
                MutableCharacteristic(uuid: Self.periphReadable, properties: [.read], value: [1])
            ])
        guard let (third, _, again, _) = try await serve(rig.restart(), [database, extra]) else {
            Issue.record("no third connection event"); return
        }
        try await central.send(["op": "listen", "handle": stream])
        try await central.send(["op": "listen", "handle": serviceChanged, "indicate": true])
        #expect(try await central.send(["op": "encrypt"])["encrypted"] as? Bool == true)
        let changed = try await central.send(["op": "values", "handle": serviceChanged, "count": 1])
        #expect((changed["values"] as? [String]) == ["0100ffff"])
        #expect(await eventually { (try? third.subscribers(of: Self.periphStream).map(\.connection)) == [again] })
        try await third.updateValue([0x04], for: Self.periphStream)
        #expect(
            (try await central.send(["op": "values", "handle": stream, "count": 1])["values"] as? [String]) == ["04"])

        // Unpairing forgets them with the bond.
        #expect(try third.unpair(centralAddress))
        #expect(third.bondedCentrals.record(for: identity) == nil)
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(third.host.security.bonds.all().isEmpty)
    }
}
