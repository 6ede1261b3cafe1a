import Bluejay
import BluetoothCore
import Foundation
import GATT
import HCI
import HCITestSupport
import SMP
import Testing

/// The user at our peripheral, played by the test: what we show comes out of `shown`,
/// what is typed goes into `typed`; numeric comparison values are shown and accepted.
actor PairingUser: PairingDelegate {
    nonisolated let shown: AsyncStream<UInt32>
    private let show: AsyncStream<UInt32>.Continuation
    nonisolated let typed: AsyncStream<UInt32>.Continuation
    private let keys: AsyncStream<UInt32>

    init() {
        (shown, show) = AsyncStream.makeStream()
        (keys, typed) = AsyncStream.makeStream()
    }

    func confirm(numericValue value: UInt32) async -> Bool {
        show.yield(value)
        return true
    }

    func display(passkey: UInt32) async { show.yield(passkey) }

    func enterPasskey() async -> UInt32? {
        for await key in keys { return key }
        return nil
    }

    /// The next number shown.
    nonisolated func next() async -> UInt32? {
        for await value in shown { return value }
        return nil
    }
}

extension IntegrationTests {
    /// One way a central pairs with us: LE Secure Connections or legacy, our IO capability
    /// and the central's (Bumble's spelling), the method they select, and who shows the
    /// number.
    struct PairingCase: Sendable, CustomTestStringConvertible {
        let secureConnections: Bool
        let ours: IOCapability
        let central: String
        let method: PairingMethod
        var testDescription: String {
            "\(secureConnections ? "LESC" : "legacy") \(method) (we \(ours), central \(central))"
        }
    }

    nonisolated static let pairingCases: [PairingCase] = [
        PairingCase(secureConnections: true, ours: .keyboardDisplay, central: "none", method: .justWorks),
        PairingCase(
            secureConnections: true, ours: .displayOnly, central: "keyboard",
            method: .passkeyEntry(initiatorDisplays: false)),
        PairingCase(
            secureConnections: true, ours: .keyboardOnly, central: "display",
            method: .passkeyEntry(initiatorDisplays: true)),
        PairingCase(secureConnections: true, ours: .displayYesNo, central: "display-yesno", method: .numericComparison),
        PairingCase(secureConnections: false, ours: .keyboardDisplay, central: "none", method: .justWorks),
        PairingCase(
            secureConnections: false, ours: .displayOnly, central: "keyboard",
            method: .passkeyEntry(initiatorDisplays: false)),
        PairingCase(
            secureConnections: false, ours: .keyboardOnly, central: "display",
            method: .passkeyEntry(initiatorDisplays: true)),
    ]

    /// Our host as the PERIPHERAL pairs as responder with a Bumble central by every method
    /// but OOB: the passkey one side shows is typed on the other, the numeric value both
    /// show is the same. Keys go both ways (ours: IRK and identity address, CSRK, and an LTK
    /// with EDIV and Rand in legacy pairing; the central's IRK and CSRK in our bond). The
    /// central disconnects, finds us again and encrypts with the bond: we answer the LE Long
    /// Term Key Request with the stored key and serve a value that needs it.
    @Test(.hangGuard, arguments: pairingCases)
    func aBumbleCentralPairsWithOurPeripheral(_ pairing: PairingCase) async throws {
        let rig = try await PeripheralRig(name: "Bluejay Pairing")
        defer { rig.close() }
        let central = rig.central, manager = rig.manager
        var events = manager.events().makeAsyncIterator()
        let user = PairingUser()
        manager.pairingPolicy = PairingPolicy(ioCapability: pairing.ours)
        manager.pairingDelegate = user
        let permissions: AttributePermissions =
            pairing.method.isAuthenticated ? [.read, .readAuthenticated] : [.read, .readEncrypted]
        let served = try manager.add(
            MutableService(
                uuid: Self.periphService,
                characteristics: [
                    MutableCharacteristic(
                        uuid: Self.periphSecret, properties: [.read], permissions: permissions,
                        value: Array("secret".utf8))
                ]))
        let secret = Int(served.characteristics[0].valueHandle.rawValue)
        try await manager.startAdvertising("Bluejay Pairing", uuids: [Self.periphService])

        try await central.connect(toAdvertised: "Bluejay Pairing")
        guard case let .connected(link, centralAddress)? = await events.next() else {
            Issue.record("no connection event"); return
        }
        try await central.send(["op": "discover"])
        do {
            try await central.send(["op": "read", "handle": secret])
            Issue.record("the value needs encryption")
        } catch let error as CentralError {
            let insufficientEncryption = Int(ATTErrorCode.insufficientEncryption.rawValue)
            let insufficientAuthentication = Int(ATTErrorCode.insufficientAuthentication.rawValue)
            #expect(error.attError == insufficientEncryption || error.attError == insufficientAuthentication)
        }

        try await central.send([
            "op": "pair", "sc": pairing.secureConnections, "mitm": true, "io": pairing.central, "wait": false,
        ])
        switch pairing.method {
        case .justWorks: break
        case .passkeyEntry(initiatorDisplays: false):
            // We show the passkey; the central's user types it.
            let passkey = try #require(await user.next())
            #expect(passkey <= 999_999)
            try await central.send(["op": "pairing_input", "number": Int(passkey)])
        case .passkeyEntry(initiatorDisplays: true), .passkeyEntryBothInput:
            // The central shows it; ours types it.
            let shown = try await central.send(["op": "pairing_output"])
            #expect(shown["kind"] as? String == "passkey")
            user.typed.yield(UInt32(try #require(shown["number"] as? Int)))
        case .numericComparison:
            let theirs = try await central.send(["op": "pairing_output"])
            #expect(theirs["kind"] as? String == "compare")
            let ours: Int? = await user.next().map { (number: UInt32) -> Int in Int(number) }
            let shown: Int? = theirs["number"] as? Int
            #expect(ours == shown, "both sides show the same six digits")
        }
        let paired: [String: Any] = try await central.send(["op": "pair_wait"])
        let encrypted: Bool? = paired["encrypted"] as? Bool
        #expect(encrypted == true)
        while let event = await events.next() {
            if case let .paired(handle, method) = event {
                #expect(handle == link && method == pairing.method)
                break
            }
        }
        #expect(manager.host.security.isEncrypted(link))
        #expect(manager.host.security.isAuthenticated(link) == pairing.method.isAuthenticated)
        let secretRead: [String: Any] = try await central.send(["op": "read", "handle": secret])
        let secretValue: [UInt8] = Array("secret".utf8)
        #expect(hexBytes(secretRead["value"]) == secretValue)

        // Keys, both ways.
        let bonds = manager.host.security.bonds.all()
        #expect(bonds.count == 1)
        let bond = try #require(bonds.first)
        #expect(bond.identityAddress == centralAddress && bond.identityAddressType == .random)
        #expect(
            bond.secureConnections == pairing.secureConnections && bond.authenticated == pairing.method.isAuthenticated)
        #expect(
            bond.identityResolvingKeySecret != nil && bond.signatureKeySecret != nil,
            "the central's IRK and CSRK are kept")
        let theirs = try await central.send(["op": "keys"])
        let irk: String? = theirs["irk"] as? String, csrk: String? = theirs["csrk"] as? String
        #expect(irk != nil && csrk != nil, "our IRK and CSRK reached the central")
        if pairing.secureConnections {
            #expect(hexBytes(theirs["ltk"]) == bond.longTermKeyBytes)
            #expect(bond.ediv == 0)
        } else {
            // The LTK we distributed, named by its EDIV and Rand.
            #expect(hexBytes(theirs["ltk_central"]) == bond.longTermKeyBytes)
            #expect(theirs["ediv"] as? Int == Int(bond.ediv))
            #expect(hexBytes(theirs["rand"]) == bond.randomBytes)
        }

        // Reconnection: the central encrypts with the bond; we answer with the stored key.
        try await central.send(["op": "disconnect"])
        while let event = await events.next() {
            if case .disconnected = event { break }
        }
        try await central.connect(toAdvertised: "Bluejay Pairing")
        guard let relink = await Self.nextConnection(&events) else { Issue.record("no reconnection event"); return }
        let reencrypted: [String: Any] = try await central.send(["op": "encrypt"])
        let encryptedAgain: Bool? = reencrypted["encrypted"] as? Bool
        #expect(encryptedAgain == true)
        #expect(await eventually { manager.host.security.isEncryptedWithStoredBond(relink) })
        #expect(manager.host.security.isAuthenticated(relink) == pairing.method.isAuthenticated)
        try await central.send(["op": "discover"])
        let secretReread: [String: Any] = try await central.send(["op": "read", "handle": secret])
        #expect(hexBytes(secretReread["value"]) == secretValue)
    }
}

extension IntegrationTests {
    /// A bonded central's subscriptions survive its link (Part G, 3.3.3.3): it subscribes,
    /// pairs, leaves; we add a service while it is away; it comes back and encrypts with the
    /// bond, writing no CCCD: our next notification reaches it, and Service Changed (which it
    /// had turned on) tells it the new service's handles (7.1). A central that did not bond
    /// gets nothing of this: its subscriptions go with its link.
    @Test(.hangGuard) func aBondedCentralKeepsItsSubscriptions() async throws {
        let rig = try await PeripheralRig(name: "Bluejay Bonded")
        defer { rig.close() }
        let central = rig.central, manager = rig.manager
        var events = manager.events().makeAsyncIterator()
        let served = try manager.add(
            MutableService(
                uuid: Self.periphService,
                characteristics: [
                    MutableCharacteristic(uuid: Self.periphStream, properties: [.notify])
                ]))
        let stream = Int(served.characteristics[0].valueHandle.rawValue)
        let serviceChanged = Int(LocalGATTServer.serviceChangedHandle.rawValue)
        try await manager.startAdvertising("Bluejay Bonded", uuids: [Self.periphService])

        try await central.connect(toAdvertised: "Bluejay Bonded")
        guard case .connected? = await events.next() else { Issue.record("no connection event"); return }
        try await central.send(["op": "discover"])
        try await central.send(["op": "subscribe", "handle": stream])
        try await central.send(["op": "subscribe", "handle": serviceChanged, "indicate": true])
        #expect(try await central.send(["op": "pair"])["encrypted"] as? Bool == true)
        try await central.send(["op": "disconnect"])
        while let event = await events.next() {
            if case .disconnected = event { break }
        }
        #expect(try manager.subscribers(of: Self.periphStream).isEmpty)

        // The database changes while the central is away.
        let added = try manager.add(
            MutableService(
                uuid: Self.periphIndicated,
                characteristics: [
                    MutableCharacteristic(uuid: Self.periphReadable, properties: [.read], value: [1])
                ]))

        try await central.connect(toAdvertised: "Bluejay Bonded")
        guard let relink = await Self.nextConnection(&events) else { Issue.record("no reconnection event"); return }
        try await central.send(["op": "listen", "handle": stream])
        try await central.send(["op": "listen", "handle": serviceChanged, "indicate": true])
        #expect(try await central.send(["op": "encrypt"])["encrypted"] as? Bool == true)
        #expect(await eventually { (try? manager.subscribers(of: Self.periphStream).map(\.connection)) == [relink] })
        let changed = try await central.send(["op": "values", "handle": serviceChanged, "count": 1])
        #expect(
            (changed["values"] as? [String])?.map { hexBytes($0) } == [
                Self.littleEndian(added.service.handle) + Self.littleEndian(added.service.endGroupHandle)
            ])
        try await manager.updateValue([0xB0, 0x4D], for: Self.periphStream)
        #expect(
            (try await central.send(["op": "values", "handle": stream, "count": 1])["values"] as? [String]) == ["b04d"])
    }

    /// The handle of the next connection among `events`. Events of an earlier link may still
    /// come before it (a subscription turned off as that link went, on a slow machine: it
    /// once arrived after the Disconnected event under TSan), so they are passed over.
    static func nextConnection(_ events: inout AsyncStream<PeripheralManagerEvent>.Iterator) async -> ConnectionHandle?
    {
        while let event = await events.next(isolation: #isolation) {
            if case let .connected(handle, _) = event { return handle }
        }
        return nil
    }

    /// A handle as ATT carries it.
    nonisolated static func littleEndian(_ handle: AttributeHandle) -> [UInt8] {
        [UInt8(handle.rawValue & 0xFF), UInt8(handle.rawValue >> 8)]
    }
}
