import BluetoothCore
import HCI

/// One Security Manager Protocol command (Core Vol 3, Part H, 3.5 and 3.6), its values in
/// wire order (least significant octet first), as they travel on L2CAP channel 0x0006.
public enum SMPPDU: Sendable, Hashable {
    /// Pairing Request: the initiator's features.
    case pairingRequest(PairingFeatures)
    /// Pairing Response: the responder's features.
    case pairingResponse(PairingFeatures)
    /// Pairing Confirm: a 16-octet confirm value.
    case pairingConfirm([UInt8])
    /// Pairing Random: a 16-octet nonce.
    case pairingRandom([UInt8])
    /// Pairing Failed, with the reason.
    case pairingFailed(PairingFailedReason)
    /// Encryption Information: the 16-octet LTK (legacy pairing).
    case encryptionInformation(longTermKey: [UInt8])
    /// Central Identification: the EDIV and 8-octet Rand identifying that LTK.
    case centralIdentification(ediv: UInt16, random: [UInt8])
    /// Identity Information: the 16-octet IRK.
    case identityInformation(identityResolvingKey: [UInt8])
    /// Identity Address Information: a public or static random identity address.
    case identityAddressInformation(addressType: UInt8, address: BluetoothAddress)
    /// Signing Information: the 16-octet CSRK.
    case signingInformation(signatureKey: [UInt8])
    /// Security Request: the peripheral asks for security with these requirements.
    case securityRequest(AuthenticationRequirements)
    /// Pairing Public Key: the P-256 X and Y coordinates, 32 octets each.
    case pairingPublicKey(x: [UInt8], y: [UInt8])
    /// Pairing DHKey Check: a 16-octet check value.
    case pairingDHKeyCheck([UInt8])
    /// Pairing Keypress Notification: the notification type.
    case pairingKeypressNotification(UInt8)

    /// The command code.
    public var code: SMPCode {
        switch self {
        case .pairingRequest: .pairingRequest
        case .pairingResponse: .pairingResponse
        case .pairingConfirm: .pairingConfirm
        case .pairingRandom: .pairingRandom
        case .pairingFailed: .pairingFailed
        case .encryptionInformation: .encryptionInformation
        case .centralIdentification: .centralIdentification
        case .identityInformation: .identityInformation
        case .identityAddressInformation: .identityAddressInformation
        case .signingInformation: .signingInformation
        case .securityRequest: .securityRequest
        case .pairingPublicKey: .pairingPublicKey
        case .pairingDHKeyCheck: .pairingDHKeyCheck
        case .pairingKeypressNotification: .pairingKeypressNotification
        }
    }

    /// Decodes one command. A wrong length, an unknown code or a value the format forbids
    /// is an error (the caller answers Pairing Failed with Invalid Parameters or Command
    /// Not Supported).
    public init(bytes: some Collection<UInt8>) throws(SMPDecodingError) {
        var reader = ByteReader(Array(bytes)[...])
        let code: UInt8
        do { code = try reader.readUInt8() } catch { throw .malformed(nil, error) }
        guard (0x01...0x0E).contains(code) else { throw .unknownCode(code) }
        do throws(DecodingError) {
            switch SMPCode(rawValue: code) {
            case .pairingRequest: self = .pairingRequest(try PairingFeatures(from: &reader))
            case .pairingResponse: self = .pairingResponse(try PairingFeatures(from: &reader))
            case .pairingConfirm: self = .pairingConfirm(Array(try reader.readBytes(16)))
            case .pairingRandom: self = .pairingRandom(Array(try reader.readBytes(16)))
            case .pairingFailed: self = .pairingFailed(PairingFailedReason(rawValue: try reader.readUInt8()))
            case .encryptionInformation: self = .encryptionInformation(longTermKey: Array(try reader.readBytes(16)))
            case .centralIdentification: self = .centralIdentification(ediv: try reader.readUInt16(), random: Array(try reader.readBytes(8)))
            case .identityInformation: self = .identityInformation(identityResolvingKey: Array(try reader.readBytes(16)))
            case .identityAddressInformation:
                let type = try reader.readUInt8()
                guard type <= 1 else { throw .invalidValue(field: "AddrType", value: UInt64(type)) }
                self = .identityAddressInformation(addressType: type, address: try BluetoothAddress(from: &reader))
            case .signingInformation: self = .signingInformation(signatureKey: Array(try reader.readBytes(16)))
            case .securityRequest: self = .securityRequest(AuthenticationRequirements(rawValue: try reader.readUInt8()))
            case .pairingPublicKey: self = .pairingPublicKey(x: Array(try reader.readBytes(32)), y: Array(try reader.readBytes(32)))
            case .pairingDHKeyCheck: self = .pairingDHKeyCheck(Array(try reader.readBytes(16)))
            case .pairingKeypressNotification: self = .pairingKeypressNotification(try reader.readUInt8())
            default: preconditionFailure("codes outside 0x01...0x0E were refused above")
            }
            try reader.expectEnd()
        } catch {
            throw .malformed(SMPCode(rawValue: code), error)
        }
    }

    /// The command as sent: code, then parameters.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter()
        writer.write(code.rawValue)
        switch self {
        case let .pairingRequest(features), let .pairingResponse(features): features.encode(to: &writer)
        case let .pairingConfirm(value), let .pairingRandom(value), let .pairingDHKeyCheck(value): writer.write(bytes: value)
        case let .pairingFailed(reason): writer.write(reason.rawValue)
        case let .encryptionInformation(key), let .identityInformation(key), let .signingInformation(key): writer.write(bytes: key)
        case let .centralIdentification(ediv, random):
            writer.write(ediv)
            writer.write(bytes: random)
        case let .identityAddressInformation(type, address):
            writer.write(type)
            writer.write(bytes: address.bytes)
        case let .securityRequest(authentication): writer.write(authentication.rawValue)
        case let .pairingPublicKey(x, y):
            writer.write(bytes: x)
            writer.write(bytes: y)
        case let .pairingKeypressNotification(type): writer.write(type)
        }
        return writer.bytes
    }
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
