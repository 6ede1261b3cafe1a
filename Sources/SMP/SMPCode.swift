import BluetoothCore
import HCI

/// The code of a Security Manager Protocol command (Core Vol 3, Part H, 3.3).
public struct SMPCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The code byte as on the wire.
    public let rawValue: UInt8
    /// Wraps a code byte from the wire.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// 0x01 Pairing Request: the initiator's pairing features.
    public static let pairingRequest = SMPCode(rawValue: 0x01)
    /// 0x02 Pairing Response: the responder's pairing features.
    public static let pairingResponse = SMPCode(rawValue: 0x02)
    /// 0x03 Pairing Confirm: the confirm value.
    public static let pairingConfirm = SMPCode(rawValue: 0x03)
    /// 0x04 Pairing Random: the random value behind the confirm value.
    public static let pairingRandom = SMPCode(rawValue: 0x04)
    /// 0x05 Pairing Failed: carries the reason.
    public static let pairingFailed = SMPCode(rawValue: 0x05)
    /// 0x06 Encryption Information: the LTK (LE legacy pairing).
    public static let encryptionInformation = SMPCode(rawValue: 0x06)
    /// 0x07 Central Identification: the EDIV and Rand that go with the LTK.
    public static let centralIdentification = SMPCode(rawValue: 0x07)
    /// 0x08 Identity Information: the IRK.
    public static let identityInformation = SMPCode(rawValue: 0x08)
    /// 0x09 Identity Address Information: the public or static random address.
    public static let identityAddressInformation = SMPCode(rawValue: 0x09)
    /// 0x0A Signing Information: the CSRK.
    public static let signingInformation = SMPCode(rawValue: 0x0A)
    /// 0x0B Security Request: the peripheral asks the central to pair or encrypt.
    public static let securityRequest = SMPCode(rawValue: 0x0B)
    /// 0x0C Pairing Public Key: the P-256 public key (LE Secure Connections).
    public static let pairingPublicKey = SMPCode(rawValue: 0x0C)
    /// 0x0D Pairing DHKey Check (LE Secure Connections).
    public static let pairingDHKeyCheck = SMPCode(rawValue: 0x0D)
    /// 0x0E Pairing Keypress Notification (passkey entry).
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

    /// `0x01 Pairing_Request`.
    public var description: String { "\(hex(rawValue, digits: 2)) \(name)" }
}
