import BluetoothCore
import HCI
import Testing
@testable import SMP

/// Every SMP command encodes and decodes back to itself; bad bytes are refused by name.
@Suite struct SMPPDUTests {
    static let sixteen = Array(0x00...0x0F).map(UInt8.init)

    static let samples: [SMPPDU] = [
        .pairingRequest(
            PairingRequest(
                features: PairingFeatures(
                    ioCapability: .keyboardDisplay, authentication: [.bonding, .mitm, .secureConnections],
                    initiatorKeys: [.identityKey], responderKeys: [.encryptionKey, .identityKey, .signingKey]))),
        .pairingResponse(
            PairingResponse(
                features: PairingFeatures(
                    ioCapability: .noInputNoOutput, oobDataPresent: true, authentication: [.bonding],
                    maximumKeySize: 7, initiatorKeys: [], responderKeys: [.encryptionKey]))),
        .pairingConfirm(PairingConfirm(confirmValue: SecretValue(sixteen))),
        .pairingRandom(PairingRandom(randomValue: SecretValue(sixteen.reversed()))),
        .pairingFailed(PairingFailed(reason: .dhKeyCheckFailed)),
        .encryptionInformation(EncryptionInformation(longTermKey: SecretValue(sixteen))),
        .centralIdentification(CentralIdentification(ediv: 0xBEEF, random: Octets(sixteen[0..<8]))),
        .identityInformation(IdentityInformation(identityResolvingKey: SecretValue(sixteen))),
        .identityAddressInformation(
            IdentityAddressInformation(addressType: 1, address: BluetoothAddress("F0:0D:B1:E7:00:01")!)),
        .signingInformation(SigningInformation(signatureKey: SecretValue(sixteen))),
        .securityRequest(SecurityRequest(authentication: [.bonding, .mitm])),
        .pairingPublicKey(
            PairingPublicKey(x: Octets(Array(repeating: 0xAA, count: 32)), y: Octets(Array(repeating: 0x55, count: 32)))
        ),
        .pairingDHKeyCheck(PairingDHKeyCheck(dhKeyCheck: SecretValue(sixteen))),
        .pairingKeypressNotification(PairingKeypressNotification(notificationType: 4)),
    ]

    @Test(arguments: samples) func roundTrips(_ pdu: SMPPDU) throws {
        let bytes = pdu.encoded()
        #expect(bytes.first == pdu.code.rawValue)
        #expect(try SMPPDU(decoding: bytes) == pdu)
    }

    /// Each command's length, Code octet included, is the one Part H gives (3.5 and 3.6), and
    /// a command encodes to exactly that many octets: the lengths come from the declarations'
    /// fields, so this pins them to the specification.
    @Test func lengthsArePartH() {
        let lengths: [UInt8: Int] = [
            0x01: 7, 0x02: 7, 0x03: 17, 0x04: 17, 0x05: 2, 0x06: 17, 0x07: 11, 0x08: 17,
            0x09: 8, 0x0A: 17, 0x0B: 2, 0x0C: 65, 0x0D: 17, 0x0E: 2,
        ]
        for code in UInt8.min...UInt8.max {
            #expect(SMPCode(rawValue: code).commandType?.length == lengths[code], "\(SMPCode(rawValue: code))")
        }
        for pdu in Self.samples {
            #expect(pdu.encoded().count == type(of: pdu.command).length, "\(pdu.code)")
        }
    }

    /// Replay's rules for SMP (in HCI, which cannot see the declarations) name each command
    /// and field as declared, where the declaration puts it.
    @Test func replayRulesAgreeWithTheDeclarations() throws {
        for rule in ReplayRule.standard {
            guard case let .smp(code) = rule.target else { continue }
            let command = try #require(SMPCode(rawValue: code).commandType, "\(rule.name)")
            #expect(rule.name == command.name)
            for field in rule.fields {
                #expect(
                    command.fields.contains {
                        $0.name == field.name && $0.offset == field.offset && $0.length == field.length
                    },
                    "\(rule.name) \(field.name)")
            }
        }
    }

    /// The Pairing Request of Core Vol 3, Part H, Appendix D.2 (c1's sample) as sent.
    @Test func pairingRequestLayout() throws {
        let pdu = try SMPPDU(decoding: [0x01, 0x01, 0x00, 0x00, 0x10, 0x07, 0x07])
        guard case let .pairingRequest(request) = pdu else { Issue.record("\(pdu)"); return }
        let features = request.features
        #expect(features.ioCapability == .displayYesNo && !features.oobDataPresent && features.authentication.isEmpty)
        #expect(features.maximumKeySize == 16 && features.initiatorKeys == [.encryptionKey, .identityKey, .signingKey])
    }

    /// A reserved OOB_Data_Flag (0x02–0xFF) means "not present", and the octet stays as sent:
    /// c1 hashes the Pairing Response's bytes and f6 its IOcap, both as the peer sent them
    /// (found by the smp fuzz target, which re-encoded 0x08 as 0x00).
    @Test func reservedOOBFlagIsKeptAsSent() throws {
        let bytes: [UInt8] = [0x02, 0x03, 0x08, 0x01, 0x10, 0x07, 0x07]
        let pdu = try SMPPDU(decoding: bytes)
        guard case let .pairingResponse(response) = pdu else { Issue.record("\(pdu)"); return }
        let features = response.features
        #expect(!features.oobDataPresent && features.oobDataFlag == 0x08)
        #expect(pdu.encoded() == bytes)
        #expect(features.ioCap == [0x01, 0x08, 0x03])
    }

    @Test func badBytesAreRefusedByName() {
        #expect(throws: SMPDecodingError.unknownCode(0x42)) { try SMPPDU(decoding: [0x42]) }
        #expect(throws: SMPDecodingError.malformed(nil, .truncated(needed: 1, available: 0))) {
            try SMPPDU(decoding: [])
        }
        #expect(throws: SMPDecodingError.malformed(.pairingConfirm, .truncated(needed: 16, available: 3))) {
            try SMPPDU(decoding: [0x03, 1, 2, 3])
        }
        #expect(throws: SMPDecodingError.malformed(.pairingFailed, .trailingBytes(1))) {
            try SMPPDU(decoding: [0x05, 0x01, 0x00])
        }
        // Key size outside 7...16, an IO capability Part H does not define.
        #expect(
            throws: SMPDecodingError.malformed(
                .pairingRequest, .invalidValue(field: "Maximum_Encryption_Key_Size", value: 6))
        ) {
            try SMPPDU(decoding: [0x01, 0x03, 0x00, 0x01, 0x06, 0x00, 0x00])
        }
        #expect(throws: SMPDecodingError.malformed(.pairingResponse, .invalidValue(field: "IO_Capability", value: 5))) {
            try SMPPDU(decoding: [0x02, 0x05, 0x00, 0x01, 0x10, 0x00, 0x00])
        }
        #expect("\(PairingFailedReason.dhKeyCheckFailed)" == "0x0B dhKeyCheckFailed")
    }
}

/// Table 2.8 of Core Vol 3, Part H: which method the IO capabilities give.
@Suite struct PairingMethodTests {
    private func features(_ io: IOCapability, mitm: Bool = true) -> PairingFeatures {
        PairingFeatures(ioCapability: io, authentication: mitm ? [.mitm] : [], initiatorKeys: [], responderKeys: [])
    }

    @Test func table() {
        let cases: [(IOCapability, IOCapability, Bool, PairingMethod)] = [
            // (initiator, responder, Secure Connections, method)
            (.keyboardDisplay, .noInputNoOutput, true, .justWorks),
            (.keyboardDisplay, .displayOnly, true, .passkeyEntry(initiatorDisplays: false)),
            (.keyboardOnly, .displayOnly, false, .passkeyEntry(initiatorDisplays: false)),
            (.displayOnly, .keyboardOnly, true, .passkeyEntry(initiatorDisplays: true)),
            (.keyboardOnly, .keyboardOnly, true, .passkeyEntryBothInput),
            (.displayYesNo, .displayYesNo, true, .numericComparison),
            (.displayYesNo, .displayYesNo, false, .justWorks),
            (.keyboardDisplay, .keyboardDisplay, true, .numericComparison),
            (.keyboardDisplay, .keyboardDisplay, false, .passkeyEntry(initiatorDisplays: true)),
            (.keyboardDisplay, .displayYesNo, false, .passkeyEntry(initiatorDisplays: false)),
            (.displayOnly, .displayOnly, true, .justWorks),
        ]
        for (initiator, responder, sc, method) in cases {
            #expect(
                PairingMethod.select(
                    initiator: features(initiator), responder: features(responder), secureConnections: sc) == method,
                "\(initiator) → \(responder), SC \(sc)")
        }
        // Neither side asks for MITM: Just Works whatever the IO.
        #expect(
            PairingMethod.select(
                initiator: features(.keyboardOnly, mitm: false), responder: features(.displayOnly, mitm: false),
                secureConnections: true) == .justWorks)
    }
}
