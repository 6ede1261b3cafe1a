import HCI

/// The code of a Security Manager Protocol command (Core Vol 3, Part H, 3.3).
public struct SMPCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let pairingRequest = SMPCode(rawValue: 0x01)
    public static let pairingResponse = SMPCode(rawValue: 0x02)
    public static let pairingConfirm = SMPCode(rawValue: 0x03)
    public static let pairingRandom = SMPCode(rawValue: 0x04)
    public static let pairingFailed = SMPCode(rawValue: 0x05)
    public static let encryptionInformation = SMPCode(rawValue: 0x06)
    public static let centralIdentification = SMPCode(rawValue: 0x07)
    public static let identityInformation = SMPCode(rawValue: 0x08)
    public static let identityAddressInformation = SMPCode(rawValue: 0x09)
    public static let signingInformation = SMPCode(rawValue: 0x0A)
    public static let securityRequest = SMPCode(rawValue: 0x0B)
    public static let pairingPublicKey = SMPCode(rawValue: 0x0C)
    public static let pairingDHKeyCheck = SMPCode(rawValue: 0x0D)
    public static let pairingKeypressNotification = SMPCode(rawValue: 0x0E)

    /// The name in trace spelling (`Pairing_Request`), or `Unknown`.
    public var name: String {
        switch rawValue {
        case 0x01: "Pairing_Request"
        case 0x02: "Pairing_Response"
        case 0x03: "Pairing_Confirm"
        case 0x04: "Pairing_Random"
        case 0x05: "Pairing_Failed"
        case 0x06: "Encryption_Information"
        case 0x07: "Central_Identification"
        case 0x08: "Identity_Information"
        case 0x09: "Identity_Address_Information"
        case 0x0A: "Signing_Information"
        case 0x0B: "Security_Request"
        case 0x0C: "Pairing_Public_Key"
        case 0x0D: "Pairing_DHKey_Check"
        case 0x0E: "Pairing_Keypress_Notification"
        default: "Unknown"
        }
    }

    public var description: String { "\(hex(rawValue, digits: 2)) \(name)" }
}
