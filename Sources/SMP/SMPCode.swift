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

    /// The command type this code introduces, or nil for a code Part H does not define: how
    /// a reader meeting any code (the Security Manager, the trace checker and printer, the
    /// fuzz target) finds the command's declaration.
    public var commandType: (any SMPCommand.Type)? { Self.commandTypes[rawValue] }

    /// The name in trace spelling (`Pairing_Request`), from the command's declaration, or
    /// `Unknown`.
    public var name: String { commandType?.name ?? "Unknown" }

    /// `0x01 Pairing_Request`.
    public var description: String { "\(hex(rawValue, digits: 2)) \(name)" }

    /// Every command of Part H, 3.5 and 3.6, by code.
    private static let commandTypes: [UInt8: any SMPCommand.Type] = {
        let types: [any SMPCommand.Type] = [
            PairingRequest.self, PairingResponse.self, PairingConfirm.self, PairingRandom.self, PairingFailed.self,
            EncryptionInformation.self, CentralIdentification.self, IdentityInformation.self,
            IdentityAddressInformation.self, SigningInformation.self, SecurityRequest.self,
            PairingPublicKey.self, PairingDHKeyCheck.self, PairingKeypressNotification.self,
        ]
        return Dictionary(uniqueKeysWithValues: types.map { ($0.code.rawValue, $0) })
    }()
}
