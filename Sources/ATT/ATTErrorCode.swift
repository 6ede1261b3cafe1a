import BluetoothCore
import HCI

/// An ATT error code (Core Vol 3, Part F, 3.4.1.1 Table 3.4), plus the common profile and
/// service error codes (Core Specification Supplement, Part B). Kept whole, so codes this
/// type does not name survive a round trip.
public struct ATTErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible, Error {
    /// The error code byte as on the wire.
    public let rawValue: UInt8
    /// Wraps an error code byte from the wire.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// 0x01 The attribute handle is not valid on this server.
    public static let invalidHandle = ATTErrorCode(rawValue: 0x01)
    /// 0x02 The attribute cannot be read.
    public static let readNotPermitted = ATTErrorCode(rawValue: 0x02)
    /// 0x03 The attribute cannot be written.
    public static let writeNotPermitted = ATTErrorCode(rawValue: 0x03)
    /// 0x04 The PDU was malformed.
    public static let invalidPDU = ATTErrorCode(rawValue: 0x04)
    /// 0x05 The attribute needs authentication first.
    public static let insufficientAuthentication = ATTErrorCode(rawValue: 0x05)
    /// 0x06 The server does not support the request.
    public static let requestNotSupported = ATTErrorCode(rawValue: 0x06)
    /// 0x07 The offset is past the end of the attribute.
    public static let invalidOffset = ATTErrorCode(rawValue: 0x07)
    /// 0x08 The attribute needs authorization first.
    public static let insufficientAuthorization = ATTErrorCode(rawValue: 0x08)
    /// 0x09 Too many prepare writes are queued.
    public static let prepareQueueFull = ATTErrorCode(rawValue: 0x09)
    /// 0x0A No attribute was found in the handle range.
    public static let attributeNotFound = ATTErrorCode(rawValue: 0x0A)
    /// 0x0B The attribute cannot be read or written with Read Blob / Prepare Write.
    public static let attributeNotLong = ATTErrorCode(rawValue: 0x0B)
    /// 0x0C The encryption key is too short for the attribute.
    public static let encryptionKeySizeTooShort = ATTErrorCode(rawValue: 0x0C)
    /// 0x0D The value has a length the attribute does not allow.
    public static let invalidAttributeValueLength = ATTErrorCode(rawValue: 0x0D)
    /// 0x0E The request failed for a reason not covered by another code.
    public static let unlikelyError = ATTErrorCode(rawValue: 0x0E)
    /// 0x0F The attribute needs an encrypted link.
    public static let insufficientEncryption = ATTErrorCode(rawValue: 0x0F)
    /// 0x10 The type is not a grouping attribute the server supports.
    public static let unsupportedGroupType = ATTErrorCode(rawValue: 0x10)
    /// 0x11 The server lacks the resources to complete the request.
    public static let insufficientResources = ATTErrorCode(rawValue: 0x11)
    /// 0x12 The server's database changed and the client is not aware of it yet.
    public static let databaseOutOfSync = ATTErrorCode(rawValue: 0x12)
    /// 0x13 The value is not allowed.
    public static let valueNotAllowed = ATTErrorCode(rawValue: 0x13)
    /// 0xFC Write Request Rejected (common profile error).
    public static let writeRequestRejected = ATTErrorCode(rawValue: 0xFC)
    /// 0xFD Client Characteristic Configuration Descriptor Improperly Configured.
    public static let cccdImproperlyConfigured = ATTErrorCode(rawValue: 0xFD)
    /// 0xFE Procedure Already in Progress.
    public static let procedureAlreadyInProgress = ATTErrorCode(rawValue: 0xFE)
    /// 0xFF Out of Range.
    public static let outOfRange = ATTErrorCode(rawValue: 0xFF)

    /// Whether the code is in the application range 0x80–0x9F.
    public var isApplicationError: Bool { (0x80...0x9F).contains(rawValue) }

    /// The code's name (`insufficientEncryption`); `applicationError` for 0x80–0x9F,
    /// `profileError` for the unnamed profile codes 0xE0–0xFB, else `reserved`.
    public var name: String {
        switch rawValue {
        case 0x01: "invalidHandle"
        case 0x02: "readNotPermitted"
        case 0x03: "writeNotPermitted"
        case 0x04: "invalidPDU"
        case 0x05: "insufficientAuthentication"
        case 0x06: "requestNotSupported"
        case 0x07: "invalidOffset"
        case 0x08: "insufficientAuthorization"
        case 0x09: "prepareQueueFull"
        case 0x0A: "attributeNotFound"
        case 0x0B: "attributeNotLong"
        case 0x0C: "encryptionKeySizeTooShort"
        case 0x0D: "invalidAttributeValueLength"
        case 0x0E: "unlikelyError"
        case 0x0F: "insufficientEncryption"
        case 0x10: "unsupportedGroupType"
        case 0x11: "insufficientResources"
        case 0x12: "databaseOutOfSync"
        case 0x13: "valueNotAllowed"
        case 0x80...0x9F: "applicationError"
        case 0xE0...0xFB: "profileError"
        case 0xFC: "writeRequestRejected"
        case 0xFD: "cccdImproperlyConfigured"
        case 0xFE: "procedureAlreadyInProgress"
        case 0xFF: "outOfRange"
        default: "reserved"
        }
    }

    /// The code in two uppercase hex digits, then the name: `0x0F insufficientEncryption`.
    public var description: String { "0x\([rawValue].hexString(uppercase: true)) \(name)" }
}
