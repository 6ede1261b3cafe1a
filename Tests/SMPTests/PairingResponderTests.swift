import BluetoothCore
import BluetoothCrypto
import Foundation
import HCI
import HCITestSupport
import Storage
import Testing
@testable import SMP

/// The responder over the scripted controller, the test playing the central with the
/// crypto functions of Part H: LE legacy pairing (c1 and s1 computed here), the keys we
/// distribute and take, the LTK request answered with the STK and later with the stored
/// LTK by its EDIV and Rand; and a central that sends our own public key back.
extension SecurityManagerTests {
    static let peer = BluetoothAddress("F0:0D:B1:E7:00:01")!

    /// The address a central connected to: our public one, a resolvable private one, our
    /// static random one; and a resolvable private one on a controller with no public
    /// address (it reads 00:00:00:00:00:00).
    enum OwnAddressCase: CaseIterable, Sendable {
        case `public`, resolvablePrivate, staticRandom, resolvablePrivateWithoutPublicAddress
    }

    /// The key the controller was given for the LE Long Term Key Request (nil: the
    /// Negative Reply), from the last such command sent.
    func lastKeyReply(_ rig: Rig) -> [UInt8]?? {
        for packet in rig.fake.sent.reversed() {
            guard case let .command(command) = packet else { continue }
            if command.opcode.rawValue == 0x201A { return .some(Array(command.parameters.dropFirst(2))) }
            if command.opcode.rawValue == 0x201B { return .some(nil) }
        }
        return nil
    }

    func requestKey(_ rig: Rig, ediv: UInt16, random: [UInt8]) async throws {
        let parameters =
            [UInt8(Rig.handle.rawValue & 0xFF), UInt8(Rig.handle.rawValue >> 8)] + random + [
                UInt8(ediv & 0xFF), UInt8(ediv >> 8),
            ]
        rig.fake.deliverEvent(.leMeta(LEMetaEvent(subeventCode: 0x05, parameters: parameters[...])))
        try await rig.controller.send(ReadBDADDR())
    }

    /// LE legacy pairing, Just Works, as the responder: our Sconfirm is c1 over the
    /// central's request and our response with the initiator's and our addresses; the STK
    /// s1(0, Srand, Mrand) goes to the controller; our LTK, EDIV and Rand, IRK, identity
    /// address and CSRK go out in the order of 3.6.1; the central's IRK and CSRK land in
    /// the bond, which names our LTK. The STK is not given again: the next request gets
    /// the stored LTK when its EDIV and Rand are ours, the Negative Reply when not.
    ///
    /// When the central connected to our resolvable private or static random address, c1
    /// hashes that address (RAT 1), not the public one; the identity we distribute is the
    /// public address behind an RPA (with the IRK that resolves it), the static random
    /// address itself otherwise; and our static random address behind an RPA when the
    /// controller has no public address.
    @Test(arguments: OwnAddressCase.allCases)
    func legacyJustWorksAsResponder(_ own: OwnAddressCase) async throws {
        let rig = try await rig(
            PairingPolicy(ioCapability: .noInputNoOutput),
            address: own == .resolvablePrivateWithoutPublicAddress
                ? BluetoothAddress(littleEndianBytes: [0, 0, 0, 0, 0, 0]) : nil)
        defer { try? FileManager.default.removeItem(atPath: rig.store) }
        let publicAddress = try #require(rig.controller.info?.address)
        let local: (type: UInt8, address: BluetoothAddress), identity: (type: UInt8, address: BluetoothAddress)
        switch own {
        case .public:
            (local, identity) = ((0, publicAddress), (0, publicAddress))
        case .resolvablePrivate:
            let address = rig.security.makeResolvablePrivateAddress()
            (local, identity) = ((1, address), (0, publicAddress))
        case .staticRandom:
            let address = rig.security.staticRandomAddress
            (local, identity) = ((1, address), (1, address))
        case .resolvablePrivateWithoutPublicAddress:
            let address = rig.security.makeResolvablePrivateAddress()
            (local, identity) = ((1, address), (1, rig.security.staticRandomAddress))
        }
        if own != .public { rig.security.localAddress = { _ in (.random, local.address) } }
        guard let distributed = try await legacyJustWorksUntilOurKeys(rig, local: local),
            case let .encryptionInformation(ltk) = distributed[0],
            case let .centralIdentification(identification) = distributed[1],
            case let .identityInformation(ours) = distributed[2],
            case let .identityAddressInformation(address) = distributed[3]
        else { return }
        #expect(address.address == identity.address && address.addressType == identity.type)
        if own == .resolvablePrivate || own == .resolvablePrivateWithoutPublicAddress {
            #expect(
                ResolvablePrivateAddress.resolves(local.address, with: ours.identityResolvingKey.bytes),
                "the central resolves our address with the IRK we gave")
        }

        // The central's keys.
        let irk = (0..<16).map { UInt8(0xA0 + $0) }, csrk = (0..<16).map { UInt8(0xC0 + $0) }
        try await rig.receive(IdentityInformation(identityResolvingKey: SecretValue(irk)).encoded())
        try await rig.receive(IdentityAddressInformation(addressType: 1, address: Self.peer).encoded())
        try await rig.receive(SigningInformation(signatureKey: SecretValue(csrk)).encoded())
        let bonds = BondStore(store: StoreDirectory(path: rig.store))
        _ = await eventually { !bonds.all().isEmpty }
        let bond = try #require(bonds.all().first)
        #expect(!bond.secureConnections && !bond.authenticated)
        #expect(
            bond.longTermKeyBytes == ltk.longTermKey.bytes && bond.ediv == identification.ediv
                && bond.randomBytes == identification.random.bytes)
        #expect(bond.identityResolvingKeyBytes == irk && bond.signatureKeySecret?.bytes == csrk)
        #expect(rig.security.isEncrypted(Rig.handle))

        // A later request: the stored LTK by EDIV and Rand, never the STK again.
        try await requestKey(rig, ediv: identification.ediv &+ 1, random: identification.random.bytes)
        _ = await eventually { lastKeyReply(rig) == .some(nil) }
        #expect(lastKeyReply(rig) == .some(nil), "an EDIV that names no key of ours: the Negative Reply")
        try await requestKey(rig, ediv: identification.ediv, random: identification.random.bytes)
        _ = await eventually { lastKeyReply(rig) != .some(nil) }
        #expect(lastKeyReply(rig) == .some(ltk.longTermKey.bytes))
        rig.controller.close()
    }

    /// The central's last key and the link's Disconnection Complete in one read from the
    /// controller (as a loaded machine reads them): the pairing's result is told, the bond
    /// stored, before the link's end reaches any layer. A layer that keeps something for a
    /// bonded peer (the GATT server its CCCDs) must learn of the bond while the link it
    /// binds is still there; told a turn later, the GATT server had already forgotten the
    /// link, and a bonded central's subscriptions were lost (CI, under load).
    @Test func theCentralsLastKeyCountsBeforeTheLinkEnds() async throws {
        let rig = try await rig(PairingPolicy(ioCapability: .noInputNoOutput))
        defer { try? FileManager.default.removeItem(atPath: rig.store) }
        var told: [String] = []
        rig.security.onPaired = { handle, _, bond in told.append("paired \(handle.rawValue) \(bond.address)") }
        // Registered after the Security Manager's, as every layer above it is.
        let observer = rig.controller.addEventObserver { event in
            if case let .disconnectionComplete(end) = event { told.append("ended \(end.handle.rawValue)") }
        }
        defer { rig.controller.removeEventObserver(observer) }
        guard try await legacyJustWorksUntilOurKeys(rig, local: (0, try #require(rig.controller.info?.address))) != nil
        else { return }
        try await rig.receive(
            IdentityInformation(identityResolvingKey: SecretValue((0..<16).map { UInt8(0xA0 + $0) })).encoded())
        try await rig.receive(IdentityAddressInformation(addressType: 1, address: Self.peer).encoded())

        let signing = SigningInformation(signatureKey: SecretValue((0..<16).map { UInt8(0xC0 + $0) })).encoded()
        let frame = [UInt8(signing.count), 0x00, 0x06, 0x00] + signing
        let end = DisconnectionComplete(status: .success, handle: Rig.handle, reason: .remoteUserTerminatedConnection)
        rig.fake.deliver(
            .packets([
                .acl(ACLDataPacket(handle: Rig.handle, boundary: .firstFlushable, data: frame[...])),
                .event(HCIEvent.disconnectionComplete(end).packet),
            ]))
        _ = await eventually { told.count == 2 }
        #expect(told == ["paired \(Rig.handle.rawValue) \(Self.peer)", "ended \(Rig.handle.rawValue)"])
        #expect(BondStore(store: StoreDirectory(path: rig.store)).bond(for: Self.peer, type: .random) != nil)
        rig.controller.close()
    }

    /// LE legacy Just Works with the test as the central that asks for every key, up to
    /// the five commands of our key distribution (returned: EncKey's two, IdKey's two,
    /// SignKey's). Our Sconfirm must be c1 over our Srand and the STK s1 over both rands;
    /// `local` is our address as the central connected to it.
    func legacyJustWorksUntilOurKeys(_ rig: Rig, local: (type: UInt8, address: BluetoothAddress)) async throws
        -> [SMPPDU]?
    {
        let request = PairingFeatures(
            ioCapability: .noInputNoOutput, authentication: [.bonding],
            initiatorKeys: [.encryptionKey, .identityKey, .signingKey],
            responderKeys: [.encryptionKey, .identityKey, .signingKey])
        try await rig.receive(PairingRequest(features: request).encoded())
        await rig.waitForSent(1)
        guard case let .pairingResponse(answer)? = rig.sent.first else { Issue.record("sent \(rig.sent)"); return nil }
        let response = answer.features
        #expect(
            !response.authentication.contains(.secureConnections)
                || !request.authentication.contains(.secureConnections))
        #expect(response.responderKeys == [.encryptionKey, .identityKey, .signingKey])
        #expect(
            response.initiatorKeys == [.identityKey, .signingKey],
            "the central's own LTK would serve only roles reversed")

        let tk = [UInt8](repeating: 0, count: 16)
        let preq: [UInt8] = PairingRequest(features: request).encoded().reversed()
        let pres: [UInt8] = PairingResponse(features: response).encoded().reversed()
        let ia: [UInt8] = Self.peer.bytes.reversed()
        let ra: [UInt8] = local.address.bytes.reversed()
        func confirm(_ r: [UInt8]) -> [UInt8] {
            c1(k: tk, r: r, preq: preq, pres: pres, iat: 1, ia: ia, rat: local.type, ra: ra)
        }
        let mrand: [UInt8] = (0..<16).map { (index: Int) -> UInt8 in UInt8(index * 7 + 1) }
        try await rig.receive(PairingConfirm(confirmValue: SecretValue(confirm(mrand).reversed())).encoded())
        await rig.waitForSent(2)
        guard case let .pairingConfirm(sconfirm)? = rig.sent.last else { Issue.record("sent \(rig.sent)"); return nil }
        try await rig.receive(PairingRandom(randomValue: SecretValue(mrand.reversed())).encoded())
        await rig.waitForSent(3)
        guard case let .pairingRandom(srandom)? = rig.sent.last else { Issue.record("sent \(rig.sent)"); return nil }
        let srand = Array(srandom.randomValue.bytes.reversed())
        #expect(Array(sconfirm.confirmValue.bytes.reversed()) == confirm(srand), "Sconfirm is c1 over Srand")

        // The central encrypts with the STK.
        try await requestKey(rig, ediv: 0, random: [UInt8](repeating: 0, count: 8))
        _ = await eventually { lastKeyReply(rig) != nil }
        #expect(lastKeyReply(rig) == .some(Array(s1(k: tk, r1: srand, r2: mrand).reversed())))
        rig.fake.deliverEvent(
            .encryptionChange(EncryptionChange(status: .success, handle: Rig.handle, encryptionEnabled: 1)))
        await rig.waitForSent(8)
        let distributed = Array(rig.sent[3...])
        guard distributed.count == 5, case .encryptionInformation = distributed[0],
            case .centralIdentification = distributed[1],
            case .identityInformation = distributed[2], case .identityAddressInformation = distributed[3],
            case .signingInformation = distributed[4]
        else { Issue.record("distributed \(distributed)"); return nil }
        return distributed
    }

    /// A central that sends our own public key as its own (CVE-2020-26558): our key is
    /// known here only because the entropy is seeded. The responder refuses it with Pairing
    /// Failed (Invalid Parameters) before sending its own key; nothing is stored.
    @Test(arguments: Reflection.allCases)
    func responderRefusesItsOwnPublicKey(_ reflection: Reflection) async throws {
        let rig = try await rig(PairingPolicy(ioCapability: .displayOnly))
        defer { try? FileManager.default.removeItem(atPath: rig.store) }
        rig.security.entropy = .seeded(0x35)
        // The same stream: our IRK is made first (16 octets), then the key pair.
        let entropy = PairingEntropy.seeded(0x35)
        _ = entropy.bytes(16)
        let raw = entropy.privateKey().publicKey.rawRepresentation
        var y = Array(raw[32..<64].reversed())
        if reflection == .negatedY { y = Self.p256Prime(minus: y) }
        let request = PairingFeatures(
            ioCapability: .keyboardOnly, authentication: [.bonding, .mitm, .secureConnections],
            initiatorKeys: [.identityKey], responderKeys: [.identityKey])
        try await rig.receive(PairingRequest(features: request).encoded())
        await rig.waitForSent(1)
        try await rig.receive(PairingPublicKey(x: Octets(Array(raw[0..<32].reversed())), y: Octets(y)).encoded())
        await rig.waitForSent(2)
        #expect(rig.sent.last == .pairingFailed(PairingFailed(reason: .invalidParameters)))
        #expect(!rig.sent.contains { if case .pairingPublicKey = $0 { true } else { false } }, "our key never went")
        #expect(BondStore(store: StoreDirectory(path: rig.store)).all().isEmpty)
        rig.controller.close()
    }

    /// The link is authenticated from the moment the central encrypts it with a
    /// MITM-protected pairing's key, not only once key distribution ends: a central's
    /// request may come right after its last key, before our session has taken it (our
    /// central then read an attribute needing authentication and got Insufficient
    /// Authentication). Legacy Passkey Entry, we display: after our keys, before the
    /// central's, the link already counts as authenticated.
    @Test func aLinkIsAuthenticatedOnceAPasskeyPairingEncryptsIt() async throws {
        let rig = try await rig(PairingPolicy(ioCapability: .displayOnly))
        defer { try? FileManager.default.removeItem(atPath: rig.store) }
        let user = ShownPasskeys()
        rig.security.delegate = user
        let request = PairingFeatures(
            ioCapability: .keyboardOnly, authentication: [.bonding, .mitm],
            initiatorKeys: [.identityKey], responderKeys: [.encryptionKey])
        try await rig.receive(PairingRequest(features: request).encoded())
        await rig.waitForSent(1)
        guard case let .pairingResponse(answer)? = rig.sent.first else { Issue.record("sent \(rig.sent)"); return }
        let response = answer.features
        let passkey = try #require(await user.next())
        let ours = try #require(rig.controller.info?.address)
        let passkeyBytes: [UInt8] = withUnsafeBytes(of: passkey.bigEndian) {
            (bytes: UnsafeRawBufferPointer) -> [UInt8] in Array(bytes)
        }
        let tk: [UInt8] = [UInt8](repeating: 0, count: 12) + passkeyBytes
        let preq: [UInt8] = PairingRequest(features: request).encoded().reversed()
        let pres: [UInt8] = PairingResponse(features: response).encoded().reversed()
        let ia: [UInt8] = Self.peer.bytes.reversed()
        let ra: [UInt8] = ours.bytes.reversed()
        func confirm(_ r: [UInt8]) -> [UInt8] {
            c1(k: tk, r: r, preq: preq, pres: pres, iat: 1, ia: ia, rat: 0, ra: ra)
        }
        let mrand: [UInt8] = (0..<16).map { (index: Int) -> UInt8 in UInt8(index * 5 + 3) }
        try await rig.receive(PairingConfirm(confirmValue: SecretValue(confirm(mrand).reversed())).encoded())
        await rig.waitForSent(2)
        try await rig.receive(PairingRandom(randomValue: SecretValue(mrand.reversed())).encoded())
        await rig.waitForSent(3)
        guard case .pairingRandom? = rig.sent.last else {
            Issue.record("sent \(rig.sent): the confirm value did not match"); return
        }
        #expect(!rig.security.isEncrypted(Rig.handle))

        try await requestKey(rig, ediv: 0, random: [UInt8](repeating: 0, count: 8))
        _ = await eventually { lastKeyReply(rig) != nil }
        rig.fake.deliverEvent(
            .encryptionChange(EncryptionChange(status: .success, handle: Rig.handle, encryptionEnabled: 1)))
        await rig.waitForSent(5)  // our LTK, EDIV and Rand
        #expect(
            rig.security.isAuthenticated(Rig.handle),
            "encrypted with the passkey pairing's STK, the central's keys still to come")

        let irk = (0..<16).map { UInt8(0xA0 + $0) }
        try await rig.receive(IdentityInformation(identityResolvingKey: SecretValue(irk)).encoded())
        try await rig.receive(IdentityAddressInformation(addressType: 1, address: Self.peer).encoded())
        let bonds = BondStore(store: StoreDirectory(path: rig.store))
        #expect(await eventually { bonds.all().first?.authenticated == true })
        #expect(rig.security.isAuthenticated(Rig.handle))
        rig.controller.close()
    }

    /// A Security Request from us asks for what the policy wants: bonding, MITM when our
    /// IO can give it, Secure Connections.
    @Test func securityRequestFromUs() async throws {
        let rig = try await rig(PairingPolicy(ioCapability: .displayOnly))
        defer { try? FileManager.default.removeItem(atPath: rig.store) }
        try rig.security.requestSecurity(Rig.handle)
        await rig.waitForSent(1)
        #expect(rig.sent == [.securityRequest(SecurityRequest(authentication: [.bonding, .mitm, .secureConnections]))])
        rig.controller.close()
    }
}

/// The user at our peripheral, played by the test: each passkey we show comes out of
/// ``next()``.
actor ShownPasskeys: PairingDelegate {
    private let shown: AsyncStream<UInt32>
    private let show: AsyncStream<UInt32>.Continuation

    init() { (shown, show) = AsyncStream.makeStream() }

    func confirm(numericValue value: UInt32) async -> Bool { false }
    func display(passkey: UInt32) async { show.yield(passkey) }
    func enterPasskey() async -> UInt32? { nil }

    /// The next passkey shown.
    func next() async -> UInt32? {
        for await passkey in shown { return passkey }
        return nil
    }
}
