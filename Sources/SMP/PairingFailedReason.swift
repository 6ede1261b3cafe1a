import BluetoothCore
import HCI

/// The reason a Pairing Failed command carries (Core Vol 3, Part H, 3.5.5, Table 3.7).
public struct PairingFailedReason: RawRepresentable, OneOctetField, Hashable, CustomStringConvertible {
    /// The reason byte as on the wire.
    public let rawValue: UInt8
    /// Wraps a reason byte from the wire.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// 0x01: the user input of the passkey failed (e.g. cancelled).
    public static let passkeyEntryFailed = Self(rawValue: 0x01)
    /// 0x02: the OOB data is not available.
    public static let oobNotAvailable = Self(rawValue: 0x02)
    /// 0x03: the IO capabilities cannot meet the authentication requirements.
    public static let authenticationRequirements = Self(rawValue: 0x03)
    /// 0x04: the confirm value does not match the calculated one.
    public static let confirmValueFailed = Self(rawValue: 0x04)
    /// 0x05: pairing is not supported by the device.
    public static let pairingNotSupported = Self(rawValue: 0x05)
    /// 0x06: the resulting key size is too short.
    public static let encryptionKeySize = Self(rawValue: 0x06)
    /// 0x07: the SMP command received is not supported.
    public static let commandNotSupported = Self(rawValue: 0x07)
    /// 0x08: pairing failed for an unspecified reason.
    public static let unspecifiedReason = Self(rawValue: 0x08)
    /// 0x09: too little time has passed since the last pairing request or security request.
    public static let repeatedAttempts = Self(rawValue: 0x09)
    /// 0x0A: a command's length or a parameter is invalid.
    public static let invalidParameters = Self(rawValue: 0x0A)
    /// 0x0B: the DHKey Check value does not match the calculated one.
    public static let dhKeyCheckFailed = Self(rawValue: 0x0B)
    /// 0x0C: the numeric comparison values did not match.
    public static let numericComparisonFailed = Self(rawValue: 0x0C)
    /// 0x0D: pairing over BR/EDR is in progress.
    public static let brEDRPairingInProgress = Self(rawValue: 0x0D)
    /// 0x0E: the BR/EDR link key cannot be used to derive LE keys.
    public static let crossTransportKeyDerivationNotAllowed = Self(rawValue: 0x0E)
    /// 0x0F: the device chose not to accept a distributed key.
    public static let keyRejected = Self(rawValue: 0x0F)
    /// 0x10: the device is not ready to perform a pairing procedure.
    public static let busy = Self(rawValue: 0x10)

    /// The name in Swift spelling (`dhKeyCheckFailed`), or `unknown`.
    public var name: String {
        switch rawValue {
        case 0x01: "passkeyEntryFailed"
        case 0x02: "oobNotAvailable"
        case 0x03: "authenticationRequirements"
        case 0x04: "confirmValueFailed"
        case 0x05: "pairingNotSupported"
        case 0x06: "encryptionKeySize"
        case 0x07: "commandNotSupported"
        case 0x08: "unspecifiedReason"
        case 0x09: "repeatedAttempts"
        case 0x0A: "invalidParameters"
        case 0x0B: "dhKeyCheckFailed"
        case 0x0C: "numericComparisonFailed"
        case 0x0D: "brEDRPairingInProgress"
        case 0x0E: "crossTransportKeyDerivationNotAllowed"
        case 0x0F: "keyRejected"
        case 0x10: "busy"
        default: "unknown"
        }
    }

    /// `0x0B dhKeyCheckFailed` (uppercase hex, as ATT error codes are written).
    public var description: String {
        let digits = String(rawValue, radix: 16, uppercase: true)
        return "0x\(digits.count == 1 ? "0" : "")\(digits) \(name)"
    }
}
