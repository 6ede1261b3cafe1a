import BluetoothCore
import HCI
import SMP
import Testing

// The SMP half of redaction: which octets of which SMP command are secret, and how they are
// found in ACL fragments of either direction on any handle (PacketSecrets, what the
// redacting capture writer and `trace --redact` use).

/// `count` octets from `first` on, never zero.
private func key(_ first: UInt8, _ count: Int = 16) -> [UInt8] { (0..<count).map { first &+ UInt8($0) } }

/// An L2CAP basic frame: length, channel, payload.
private func frame(_ channel: UInt16, _ payload: [UInt8]) -> [UInt8] {
    [UInt8(payload.count & 0xFF), UInt8(payload.count >> 8), UInt8(channel & 0xFF), UInt8(channel >> 8)] + payload
}

/// An ACL packet's body (no H4 indicator): handle and flags, length, data.
private func acl(_ handle: UInt16, start: Bool, _ data: [UInt8]) -> [UInt8] {
    let header = handle | (start ? 0x2000 : 0x1000)
    return [UInt8(header & 0xFF), UInt8(header >> 8), UInt8(data.count & 0xFF), UInt8(data.count >> 8)] + data
}

@Suite("SMP secret fields")
struct SMPSecretFieldsTests {
    /// Every command, with the octets that must be secret (empty: none).
    static let cases: [(SMPPDU, [UInt8])] = [
        (
            .pairingRequest(
                PairingRequest(
                    features: PairingFeatures(
                        ioCapability: .keyboardDisplay, authentication: [.bonding, .secureConnections],
                        initiatorKeys: [.identityKey], responderKeys: [.encryptionKey, .identityKey]))), []
        ),
        (
            .pairingResponse(
                PairingResponse(
                    features: PairingFeatures(
                        ioCapability: .noInputNoOutput, authentication: [.bonding],
                        initiatorKeys: [], responderKeys: [.encryptionKey]))), []
        ),
        (.pairingConfirm(PairingConfirm(confirmValue: SecretValue(key(0xA0)))), key(0xA0)),
        (.pairingRandom(PairingRandom(randomValue: SecretValue(key(0xA0)))), key(0xA0)),
        (.pairingFailed(PairingFailed(reason: .confirmValueFailed)), []),
        (.encryptionInformation(EncryptionInformation(longTermKey: SecretValue(key(0xA0)))), key(0xA0)),
        (.centralIdentification(CentralIdentification(ediv: 0x4321, random: Octets(key(0x30, 8)))), []),
        (.identityInformation(IdentityInformation(identityResolvingKey: SecretValue(key(0xA0)))), key(0xA0)),
        (
            .identityAddressInformation(
                IdentityAddressInformation(addressType: 1, address: BluetoothAddress("F0:0D:B1:E7:00:01")!)), []
        ),
        (.signingInformation(SigningInformation(signatureKey: SecretValue(key(0xA0)))), key(0xA0)),
        (.securityRequest(SecurityRequest(authentication: [.bonding, .mitm])), []),
        (.pairingPublicKey(PairingPublicKey(x: Octets(key(0x20, 32)), y: Octets(key(0x60, 32)))), []),
        (.pairingDHKeyCheck(PairingDHKeyCheck(dhKeyCheck: SecretValue(key(0xA0)))), key(0xA0)),
        (.pairingKeypressNotification(PairingKeypressNotification(notificationType: 2)), []),
    ]

    @Test("Each command's secret field covers exactly its key, nonce or check value", arguments: cases)
    func table(pdu: SMPPDU, secret: [UInt8]) {
        let bytes = pdu.encoded()
        let fields = SMPSecretFields.fields(pdu: bytes)
        #expect(fields.flatMap { bytes[$0.range] } == secret, "\(pdu.code)")
        #expect(fields.allSatisfy { $0.offset == 1 && $0.length == 16 })
    }

    @Test("The channels that carry SMP: 0x0006 (LE) and 0x0007 (BR/EDR)")
    func channels() {
        #expect(SMPSecretFields.carriesSMP(channel: 0x0006) && SMPSecretFields.carriesSMP(channel: 0x0007))
        #expect(!SMPSecretFields.carriesSMP(channel: 0x0004) && !SMPSecretFields.carriesSMP(channel: 0x0040))
    }

    @Test(
        "An SMP key split across ACL fragments is found in each fragment, interleaved with the other direction and another handle"
    )
    func fragmentedKeys() {
        // Encryption Information from the peer in three fragments: half the basic header;
        // the rest of it, the Code and 5 octets of the LTK; the last 11 octets.
        let incoming = frame(0x0006, EncryptionInformation(longTermKey: SecretValue(key(0xA0))).encoded())
        let fragments = [Array(incoming[0..<2]), Array(incoming[2..<10]), Array(incoming[10...])]
        // Between them: our Identity Information in one piece on the same handle (the other
        // direction), and an ATT PDU on another handle whose octets look like SMP.
        let outgoing = frame(0x0006, IdentityInformation(identityResolvingKey: SecretValue(key(0xC0))).encoded())
        let lookalike: [UInt8] = [0x06] + key(0xE0)
        let otherHandle = frame(0x0004, lookalike)
        var secrets = PacketSecrets()
        var results: [[UInt8]] = []
        func redacted(_ body: [UInt8], _ direction: BTSnoop.Direction) -> [UInt8] {
            var copy = body
            copy.zero(secrets.secretFields(type: .acl, body: body[...], direction: direction))
            results.append(copy)
            return copy
        }
        let first = redacted(acl(0x0040, start: true, fragments[0]), .received)
        let ours = redacted(acl(0x0040, start: true, outgoing), .sent)
        let second = redacted(acl(0x0040, start: false, fragments[1]), .received)
        let att = redacted(acl(0x0041, start: true, otherHandle), .received)
        let third = redacted(acl(0x0040, start: false, fragments[2]), .received)

        #expect(first == acl(0x0040, start: true, fragments[0]))
        let secondExpected: [UInt8] = Array(incoming[2..<5]) + [UInt8](repeating: 0, count: 5)
        #expect(Array(second.dropFirst(4)) == secondExpected)
        let thirdExpected = [UInt8](repeating: 0, count: 11)
        #expect(Array(third.dropFirst(4)) == thirdExpected)
        let oursExpected: [UInt8] = Array(outgoing.prefix(5)) + [UInt8](repeating: 0, count: 16)
        #expect(Array(ours.dropFirst(4)) == oursExpected)
        #expect(att == acl(0x0041, start: true, otherHandle), "ATT is not SMP, whatever its octets")
    }

    @Test("A key split at every possible point is zeroed whole, nothing around it")
    func everySplitPoint() {
        let pdu = frame(0x0006, PairingRandom(randomValue: SecretValue(key(0xA0))).encoded())
        for cut in 1..<pdu.count {
            var secrets = PacketSecrets()
            var parts: [[UInt8]] = [
                acl(0x0001, start: true, Array(pdu[..<cut])), acl(0x0001, start: false, Array(pdu[cut...])),
            ]
            for index in parts.indices {
                parts[index].zero(secrets.secretFields(type: .acl, body: parts[index][...], direction: .sent))
            }
            let payload: [UInt8] = Array(parts[0].dropFirst(4) + parts[1].dropFirst(4))
            let expected: [UInt8] = Array(pdu.prefix(5)) + [UInt8](repeating: 0, count: 16)
            #expect(payload == expected, "cut at \(cut)")
        }
    }

    @Test("A continuation with no start, and the BR/EDR SMP channel")
    func continuationWithoutStartAndBREDR() {
        var secrets = PacketSecrets()
        // A capture that begins inside a PDU: nothing to place it by.
        #expect(
            secrets.secretFields(type: .acl, body: acl(0x0001, start: false, key(0xA0))[...], direction: .received)
                .isEmpty)
        let bredr = acl(
            0x000B, start: true, frame(0x0007, PairingDHKeyCheck(dhKeyCheck: SecretValue(key(0xA0))).encoded()))
        #expect(
            secrets.secretFields(type: .acl, body: bredr[...], direction: .received) == [
                SecretField("DHKey_Check", offset: 9, length: 16)
            ])
        // A new start ends whatever was under way on that handle and direction.
        _ = secrets.secretFields(
            type: .acl,
            body: acl(
                0x0001, start: true,
                Array(frame(0x0006, PairingConfirm(confirmValue: SecretValue(key(0xA0))).encoded()).prefix(6)))[...],
            direction: .sent)
        let restart = acl(0x0001, start: true, frame(0x0004, [0x0A, 0x01, 0x00]))
        #expect(secrets.secretFields(type: .acl, body: restart[...], direction: .sent).isEmpty)
        #expect(
            secrets.secretFields(type: .acl, body: acl(0x0001, start: false, key(0xA0, 4))[...], direction: .sent)
                .isEmpty)
    }

    @Test("Commands and events go by the HCI table")
    func commandsAndEvents() {
        var secrets = PacketSecrets()
        let command = HCIPacket.command(LEEnableEncryption(handle: 1, longTermKey: key(0xA0)).packet).encodeH4()
        #expect(
            secrets.secretFields(type: .command, body: command[1...], direction: .sent) == [
                SecretField("Long_Term_Key", offset: 15, length: 16)
            ])
    }
}
