import BluetoothCore
import HCI

/// One Security Manager Protocol command as it travels on L2CAP channel 0x0006 (Core Vol 3,
/// Part H, 3.3): a case per command, carrying it as declared (``SMPCommand``). What the
/// Security Manager receives and matches.
public enum SMPPDU: Sendable, Hashable {
    /// Pairing Request: the initiator's features.
    case pairingRequest(PairingRequest)
    /// Pairing Response: the responder's features.
    case pairingResponse(PairingResponse)
    /// Pairing Confirm: a confirm value.
    case pairingConfirm(PairingConfirm)
    /// Pairing Random: a nonce.
    case pairingRandom(PairingRandom)
    /// Pairing Failed, with the reason.
    case pairingFailed(PairingFailed)
    /// Encryption Information: the LTK (legacy pairing).
    case encryptionInformation(EncryptionInformation)
    /// Central Identification: the EDIV and Rand identifying that LTK.
    case centralIdentification(CentralIdentification)
    /// Identity Information: the IRK.
    case identityInformation(IdentityInformation)
    /// Identity Address Information: a public or static random identity address.
    case identityAddressInformation(IdentityAddressInformation)
    /// Signing Information: the CSRK.
    case signingInformation(SigningInformation)
    /// Security Request: the peripheral asks for security with these requirements.
    case securityRequest(SecurityRequest)
    /// Pairing Public Key: the P-256 X and Y coordinates.
    case pairingPublicKey(PairingPublicKey)
    /// Pairing DHKey Check: a check value.
    case pairingDHKeyCheck(PairingDHKeyCheck)
    /// Pairing Keypress Notification: the notification type.
    case pairingKeypressNotification(PairingKeypressNotification)

    /// Decodes one command: the Code octet, then the parameters its declaration lists, which
    /// must fill the PDU exactly. A wrong length, an unknown code or a value the format
    /// forbids is an error (the caller answers Pairing Failed with Invalid Parameters or
    /// Command Not Supported).
    public init(decoding bytes: some Collection<UInt8>) throws(SMPDecodingError) {
        var reader = ByteReader(Array(bytes))
        let code: UInt8
        do { code = try reader.readUInt8() } catch { throw .malformed(nil, error) }
        guard let type = SMPCode(rawValue: code).commandType else { throw .unknownCode(code) }
        do throws(DecodingError) {
            let command = try type.init(from: &reader)
            try reader.expectEnd()
            self = command.pdu
        } catch {
            throw .malformed(type.code, error)
        }
    }

    /// The command the case carries.
    public var command: any SMPCommand {
        switch self {
        case let .pairingRequest(command): command
        case let .pairingResponse(command): command
        case let .pairingConfirm(command): command
        case let .pairingRandom(command): command
        case let .pairingFailed(command): command
        case let .encryptionInformation(command): command
        case let .centralIdentification(command): command
        case let .identityInformation(command): command
        case let .identityAddressInformation(command): command
        case let .signingInformation(command): command
        case let .securityRequest(command): command
        case let .pairingPublicKey(command): command
        case let .pairingDHKeyCheck(command): command
        case let .pairingKeypressNotification(command): command
        }
    }

    /// The command code.
    public var code: SMPCode { type(of: command).code }

    /// The command as sent: code, then parameters.
    public func encoded() -> [UInt8] { command.encoded() }
}

/// Why bytes on the SMP channel are not a command.
public enum SMPDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A code Part H does not define.
    case unknownCode(UInt8)
    /// A known command (or an empty PDU, nil) with a wrong length or a forbidden value.
    case malformed(SMPCode?, DecodingError)

    /// One line naming the command and the fault.
    public var description: String {
        switch self {
        case let .unknownCode(code): "unknown SMP code \(hex(code, digits: 2))"
        case let .malformed(code?, error): "malformed SMP \(code): \(error)"
        case let .malformed(nil, error): "empty SMP PDU: \(error)"
        }
    }
}
