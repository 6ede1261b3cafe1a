import BluetoothCore
import HCI

/// What the peer may do with an attribute, and the security its link needs for it
/// (Core Vol 3, Part F, 3.2.5). Authorization is the app's to decide, per request: an
/// attribute with ``readAuthorized`` or ``writeAuthorized`` is served only when the server's
/// authorizer says yes.
public struct AttributePermissions: OptionSet, Hashable, Sendable {
    /// The permission bits.
    public let rawValue: UInt16
    /// Permissions from their bits.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// Read, Read Blob, Read Multiple, Read By Type, Read By Group Type and Find By Type Value
    /// see the value.
    public static let read = AttributePermissions(rawValue: 0x01)
    /// Write Request may change the value.
    public static let write = AttributePermissions(rawValue: 0x02)
    /// Write Command may change the value.
    public static let writeWithoutResponse = AttributePermissions(rawValue: 0x04)
    /// Reading needs an encrypted link (else Insufficient Encryption).
    public static let readEncrypted = AttributePermissions(rawValue: 0x08)
    /// Writing needs an encrypted link (else Insufficient Encryption).
    public static let writeEncrypted = AttributePermissions(rawValue: 0x10)
    /// Reading needs a link encrypted with an authenticated (MITM-protected) key (else
    /// Insufficient Authentication).
    public static let readAuthenticated = AttributePermissions(rawValue: 0x20)
    /// Writing needs a link encrypted with an authenticated key (else Insufficient
    /// Authentication).
    public static let writeAuthenticated = AttributePermissions(rawValue: 0x40)
    /// Reading needs the app's authorization, asked per request (else Insufficient
    /// Authorization).
    public static let readAuthorized = AttributePermissions(rawValue: 0x80)
    /// Writing needs the app's authorization, asked per request (else Insufficient
    /// Authorization).
    public static let writeAuthorized = AttributePermissions(rawValue: 0x100)
}

/// How secure a link is, as the server's permission checks see it.
public enum LinkSecurity: Int, Sendable, Comparable {
    /// Not encrypted.
    case none = 0
    /// Encrypted with an unauthenticated key (Just Works).
    case encrypted = 1
    /// Encrypted with an authenticated key (passkey, numeric comparison, OOB).
    case authenticated = 2

    /// Orders by strength.
    public static func < (lhs: LinkSecurity, rhs: LinkSecurity) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Why a server refused a request: the Error Response's handle and code.
public struct AttributeRefusal: Error, Sendable, Equatable {
    /// The handle in error (0x0000 when the request names none).
    public let handle: AttributeHandle
    /// The code.
    public let code: ATTErrorCode

    /// A refusal of `handle` with `code`.
    public init(handle: AttributeHandle, code: ATTErrorCode) { (self.handle, self.code) = (handle, code) }
}

/// One attribute of a local server (Core Vol 3, Part F, 3.2): handle, type, value and
/// what the peer may do with it.
public struct Attribute: Sendable, Equatable {
    /// The attribute's handle, 0x0001–0xFFFF.
    public var handle: AttributeHandle
    /// The attribute's type (0x2800 primary service, 0x2803 characteristic, …).
    public var type: BluetoothUUID
    /// The attribute's value, at most 512 bytes.
    public var value: [UInt8]
    /// What the peer may do with it.
    public var permissions: AttributePermissions
    /// For a service declaration: the last handle of its group, when it is not simply the
    /// last attribute before the next service (a database known only in part, such as one
    /// rebuilt from a recording, keeps the End Group Handle the real server declared).
    public var groupEndHandle: AttributeHandle?

    /// An attribute, readable only unless `permissions` says otherwise.
    public init(
        handle: AttributeHandle, type: BluetoothUUID, value: [UInt8], permissions: AttributePermissions = .read,
        groupEndHandle: AttributeHandle? = nil
    ) {
        (self.handle, self.type, self.value, self.permissions, self.groupEndHandle) =
            (handle, type, value, permissions, groupEndHandle)
    }
}
