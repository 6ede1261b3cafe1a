import BluetoothCore
import Foundation
import HCI
import HCITestSupport
import L2CAP
import Storage
import Testing
@testable import SMP

/// The Security Manager's rules over the scripted controller: the 30 s SMP timeout, the
/// peer's Pairing Failed and malformed commands, and Security Requests per policy.
@Suite @BluetoothActor
struct SecurityManagerTests {
    struct Rig {
        let fake: FakeController
        let clock: ManualClock
        let controller: HCIController
        let security: SecurityManager
        let store: String
        static let handle: ConnectionHandle = 0x40

        /// SMP commands we sent, in order.
        var sent: [SMPPDU] {
            // Reassembled: a public key (65 octets) takes several 27-octet fragments.
            var frames: [[UInt8]] = []
            for acl in fake.sentACL {
                if acl.boundary == .continuing, !frames.isEmpty {
                    frames[frames.count - 1] += acl.data
                } else {
                    frames.append(Array(acl.data))
                }
            }
            return frames.compactMap { data in
                guard data.count > 4, data[2] == 0x06, data[3] == 0x00 else { return nil }
                return try? SMPPDU(decoding: data[4...])
            }
        }

        /// Delivers an SMP command from the peer and waits until it is handled.
        func receive(_ bytes: [UInt8]) async throws {
            let frame = [UInt8(bytes.count), 0x00, 0x06, 0x00] + bytes
            fake.deliver(
                .packets([.acl(ACLDataPacket(handle: Self.handle, boundary: .firstFlushable, data: frame[...]))]))
            try await controller.send(ReadBDADDR())
        }

        /// Starts a pairing; its value is the error it ended with (nil: it succeeded).
        func startPairing() -> Task<SMPError?, Never> {
            let security = security
            return Task { @BluetoothActor () -> SMPError? in
                do throws(SMPError) { _ = try await security.pair(Rig.handle); return nil } catch { return error }
            }
        }

        /// Waits until `count` SMP commands went out (the condition, polled: on a loaded
        /// machine a bounded number of yields is not enough for the fake's thread).
        func waitForSent(_ count: Int) async {
            _ = await eventually { sent.count >= count }
        }
    }

    /// `address`: what the controller reads as its public address, if not the fake's own.
    func rig(_ policy: PairingPolicy = PairingPolicy(ioCapability: .noInputNoOutput), address: BluetoothAddress? = nil)
        async throws -> Rig
    {
        var script = FakeController.Script()
        if let address { script.address = address }
        script.leBuffer = (27, 64)  // the fake returns no credits: enough for a whole pairing
        let fake = FakeController(script)
        let clock = ManualClock()
        let controller = HCIController(transport: fake, clock: clock, configuration: .init(logger: .silent))
        try await controller.start()
        let channels = L2CAPChannels(controller: controller, logger: .silent)
        let store = NSTemporaryDirectory() + "bluejay-smp-\(UUID().uuidString)"
        let security = SecurityManager(
            controller: controller, channels: channels, store: StoreDirectory(path: store),
            policy: policy, logger: .silent)
        let parameters: [UInt8] =
            [0x00, UInt8(Rig.handle.rawValue), 0x00, 0x00, 0x01] + BluetoothAddress("F0:0D:B1:E7:00:01")!.bytes
            + [0x18, 0x00, 0x00, 0x00, 0x90, 0x01, 0x00]
        fake.deliverEvent(.leMeta(LEMetaEvent(subeventCode: 0x01, parameters: parameters[...])))
        try await controller.send(ReadBDADDR())
        return Rig(fake: fake, clock: clock, controller: controller, security: security, store: store)
    }

    /// A peer that never answers: the pairing fails with the SMP timeout after 30 s, and
    /// Part H, 3.4 forbids any more SMP on the link (a later pairing fails at once).
    @Test func silentPeerTimesOutAndTheLinkIsDoneWithSMP() async throws {
        let rig = try await rig()
        defer { try? FileManager.default.removeItem(atPath: rig.store) }
        let pairing = rig.startPairing()
        await rig.waitForSent(1)
        guard case .pairingRequest? = rig.sent.first else { Issue.record("sent \(rig.sent)"); return }
        // The SMP timer is running before time moves.
        _ = await eventually { rig.clock.sleeperCount > 0 }
        rig.clock.advance(by: .seconds(29))
        await Task.yield()
        rig.clock.advance(by: .seconds(1))
        #expect(await pairing.value == .timeout)
        let again = rig.startPairing()
        #expect(await again.value == .timeout)
        #expect(rig.sent.count == 1, "nothing more may be sent after the SMP timeout")
        rig.controller.close()
    }

    /// The peer's Pairing Failed ends pairing with its reason by name; a malformed command
    /// is answered with Pairing Failed (Invalid Parameters).
    @Test func peerFailureAndMalformedCommands() async throws {
        let rig = try await rig()
        defer { try? FileManager.default.removeItem(atPath: rig.store) }
        var pairing = rig.startPairing()
        await rig.waitForSent(1)
        try await rig.receive([0x05, 0x05])
        #expect(await pairing.value == .pairingFailedByPeer(.pairingNotSupported))
        #expect("\(SMPError.pairingFailedByPeer(.pairingNotSupported))".contains("0x05 pairingNotSupported"))

        pairing = rig.startPairing()
        await rig.waitForSent(2)
        try await rig.receive([0x02, 0x03, 0x00])  // a Pairing Response cut short
        guard case .protocolError? = await pairing.value else {
            Issue.record("a malformed response must fail pairing"); return
        }
        #expect(rig.sent.last == .pairingFailed(PairingFailed(reason: .invalidParameters)))
        rig.controller.close()
    }

    /// A Security Request starts pairing when the policy allows it, and is refused with
    /// Pairing Not Supported when it does not (no bond to encrypt with either).
    @Test func securityRequestFollowsThePolicy() async throws {
        let allowed = try await rig()
        defer { try? FileManager.default.removeItem(atPath: allowed.store) }
        try await allowed.receive([0x0B, 0x0D])
        await allowed.waitForSent(1)
        guard case .pairingRequest? = allowed.sent.first else { Issue.record("sent \(allowed.sent)"); return }
        allowed.controller.close()

        let refused = try await rig(PairingPolicy(allowPairing: false))
        defer { try? FileManager.default.removeItem(atPath: refused.store) }
        try await refused.receive([0x0B, 0x0D])
        #expect(refused.sent == [.pairingFailed(PairingFailed(reason: .pairingNotSupported))])
        refused.controller.close()
    }

    /// How a peer reflects our public key: as it is, or with the Y coordinate negated
    /// (p − Y), which names the same X and so passes an octet-for-octet comparison.
    enum Reflection: String, CaseIterable, Sendable {
        case sameKey, negatedY
    }

    /// The IO capabilities (ours, the peer's) that select each Secure Connections method.
    nonisolated static let methods: [(IOCapability, IOCapability)] = [
        (.noInputNoOutput, .noInputNoOutput),  // Just Works
        (.displayYesNo, .displayYesNo),  // Numeric Comparison
        (.keyboardOnly, .displayOnly),  // Passkey Entry, the peer displays
        (.displayOnly, .keyboardOnly),  // Passkey Entry, we display
    ]

    /// A peer that sends our own public key back (CVE-2020-26558), whole or as (X, p − Y),
    /// is refused in every method before anything depends on it: Pairing Failed (Invalid
    /// Parameters), the error says why, and no bond is stored.
    @Test(arguments: Reflection.allCases, 0..<methods.count)
    func reflectedPublicKeyIsRefused(_ reflection: Reflection, _ method: Int) async throws {
        let (ours, theirs) = Self.methods[method]
        let rig = try await rig(PairingPolicy(ioCapability: ours))
        defer { try? FileManager.default.removeItem(atPath: rig.store) }
        let pairing = rig.startPairing()
        await rig.waitForSent(1)
        let response = PairingResponse(
            features: PairingFeatures(
                ioCapability: theirs, authentication: [.bonding, .mitm, .secureConnections],
                initiatorKeys: [.identityKey], responderKeys: [.identityKey]))
        try await rig.receive(response.encoded())
        await rig.waitForSent(2)
        guard case var .pairingPublicKey(key)? = rig.sent.last else { Issue.record("sent \(rig.sent)"); return }
        if reflection == .negatedY {
            let y = key.y.bytes
            key.y = Octets(Self.p256Prime(minus: y))
            #expect(key.y.bytes != y)
        }
        try await rig.receive(key.encoded())
        // Refused at once; a pairing that took the key would wait for the peer's next
        // command on a clock that does not move by itself: the SMP timeout then ends it.
        await rig.waitForSent(3)
        if rig.sent.last != .pairingFailed(PairingFailed(reason: .invalidParameters)) {
            rig.clock.advance(by: .seconds(30))
        }
        guard case let .invalidPublicKey(why)? = await pairing.value else {
            Issue.record("a reflected key must be refused"); return
        }
        #expect(why.contains("our own public key"))
        #expect(rig.sent.last == .pairingFailed(PairingFailed(reason: .invalidParameters)))
        #expect(BondStore(store: StoreDirectory(path: rig.store)).all().isEmpty)
        rig.controller.close()
    }

    /// p − y for P-256's prime p (SEC 2), both least significant octet first.
    nonisolated static func p256Prime(minus y: [UInt8]) -> [UInt8] {
        let p: [UInt8] = Array(
            [UInt8](repeating: 0xFF, count: 12) + [UInt8](repeating: 0, count: 12) + [
                0x01, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF,
            ])
        var result = [UInt8](repeating: 0, count: 32), borrow = 0
        for index in 0..<32 {
            let difference = Int(p[index]) - Int(y[index]) - borrow
            result[index] = UInt8((difference + 256) % 256)
            borrow = difference < 0 ? 1 : 0
        }
        return result
    }
}
