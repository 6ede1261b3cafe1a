import Bluejay
import BluetoothCore
import Foundation
import GAP
import GATT
import HCI
import HCITestSupport
import SMP
import Testing

extension IntegrationTests {
    /// Our peripheral advertises from a resolvable private address made with our IRK
    /// (Core 6.0 Vol 6, Part B, 1.3.2.2): the Bumble central sees that address, not our
    /// public one, connects to it and pairs over it (LE Secure Connections or legacy, Just
    /// Works): c1 or f5/f6 hash the private address on both sides, or the pairing fails.
    /// The central receives our IRK and our identity (public) address; the IRK resolves the
    /// address it connected to. We renew the address; the central finds the new one,
    /// resolves it to our identity before connecting, connects, takes us for its bonded
    /// peer (Bumble resolves the link's address with the IRK) and encrypts with the bond.
    @Test(.hangGuard, arguments: [true, false])
    func aBumbleCentralPairsWithUsBehindOurPrivateAddress(secureConnections: Bool) async throws {
        let rig = try await PeripheralRig(name: "Bluejay Private")
        defer { rig.close() }
        let central = rig.central, manager = rig.manager
        var events = manager.events().makeAsyncIterator()
        let served = try manager.add(
            MutableService(
                uuid: Self.periphService,
                characteristics: [
                    MutableCharacteristic(
                        uuid: Self.periphSecret, properties: [.read], permissions: [.read, .readEncrypted],
                        value: Array("private".utf8))
                ]))
        let secret = Int(served.characteristics[0].valueHandle.rawValue)
        let identity = try #require(manager.host.controller.info?.address)
        try await manager.startAdvertising(
            Advertisement(localName: "Bluejay Private", serviceUUIDs: [Self.periphService]),
            parameters: AdvertisingParameters(ownAddress: .resolvablePrivate()))
        let first = try #require(manager.advertisingAddress)
        #expect(first.type == .random && first.address.randomKind == .resolvablePrivate && first.address != identity)

        // The central sees the private address, not the public one.
        let found = try await central.send(["op": "scan", "name": "Bluejay Private"])
        let foundAddress: String? = found["address"] as? String
        let foundType: Int? = found["address_type"] as? Int
        #expect(foundAddress == first.address.description && foundType == 1)
        try await central.send(["op": "connect", "address": first.address.description, "address_type": 1])
        guard let link = await Self.nextConnection(&events) else { Issue.record("no connection event"); return }
        let local: [Bool]? = manager.localAddress(of: link).map {
            (local: (type: AddressType, address: BluetoothAddress)) -> [Bool] in
            [local.type == .random, local.address == first.address]
        }
        #expect(local == [true, true])
        try await central.send(["op": "discover"])

        // Pairing over it; the keys go both ways.
        let paired: [String: Any] = try await central.send(["op": "pair", "sc": secureConnections, "mitm": false])
        #expect(paired["encrypted"] as? Bool == true)
        while let event = await events.next(isolation: #isolation) {
            if case let .paired(handle, _) = event {
                #expect(handle == link)
                break
            }
        }
        let read: [String: Any] = try await central.send(["op": "read", "handle": secret])
        let privateValue: [UInt8] = Array("private".utf8)
        #expect(hexBytes(read["value"]) == privateValue)
        let keys = try await central.send(["op": "keys"])
        let bondAddress: String? = (keys["address"] as? String)?.split(separator: "/").first.map {
            (part: Substring) -> String in String(part)
        }
        #expect(bondAddress == identity.description, "the central keeps our bond under our identity (public) address")
        let irk = hexBytes(keys["irk"])
        #expect(
            irk.count == 16 && ResolvablePrivateAddress.resolves(first.address, with: irk),
            "our IRK resolves the address the central connected to")
        #expect(manager.host.security.bonds.all().count == 1)

        try await central.send(["op": "disconnect"])
        while let event = await events.next(isolation: #isolation) {
            if case .disconnected = event { break }
        }

        // A new private address; the central resolves it to us, before and on connecting.
        try await manager.renewPrivateAddress()
        let second = try #require(manager.advertisingAddress)
        #expect(second.address != first.address && second.address.randomKind == .resolvablePrivate)
        #expect(ResolvablePrivateAddress.resolves(second.address, with: irk))
        let again = try await central.send(["op": "scan", "name": "Bluejay Private"])
        #expect(again["address"] as? String == second.address.description)
        #expect(
            try await central.send(["op": "resolve", "address": second.address.description])["identity"] as? String
                == identity.description)
        let relinked = try await central.send([
            "op": "connect", "address": second.address.description, "address_type": 1,
        ])
        #expect(
            relinked["peer_address"] as? String == identity.description,
            "Bumble resolved our new address to our identity")
        #expect(relinked["peer_resolvable_address"] as? String == second.address.description)
        guard let relink = await Self.nextConnection(&events) else { Issue.record("no reconnection event"); return }
        #expect(manager.localAddress(of: relink)?.address == second.address)
        #expect(try await central.send(["op": "encrypt"])["encrypted"] as? Bool == true)
        #expect(await eventually { manager.host.security.isEncryptedWithStoredBond(relink) })
        try await central.send(["op": "discover"])
        #expect(hexBytes(try await central.send(["op": "read", "handle": secret])["value"]) == Array("private".utf8))
    }
}
