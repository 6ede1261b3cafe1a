import BluetoothCore
import HCI

/// What the peer may do with an attribute. Authentication, authorization and encryption
/// requirements are not modelled yet.
public struct AttributePermissions: OptionSet, Hashable, Sendable {
    /// The permission bits.
    public let rawValue: UInt8
    /// Permissions from their bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Read, Read Blob, Read Multiple, Read By Type, Read By Group Type and Find By Type Value
    /// see the value.
    public static let read = AttributePermissions(rawValue: 0x01)
    /// Write Request may change the value.
    public static let write = AttributePermissions(rawValue: 0x02)
    /// Write Command may change the value.
    public static let writeWithoutResponse = AttributePermissions(rawValue: 0x04)
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
    public init(handle: AttributeHandle, type: BluetoothUUID, value: [UInt8], permissions: AttributePermissions = .read,
                groupEndHandle: AttributeHandle? = nil) {
        self.handle = handle
        self.type = type
        self.value = value
        self.permissions = permissions
        self.groupEndHandle = groupEndHandle
    }
}
