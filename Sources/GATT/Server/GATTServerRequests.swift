import ATT
import BluetoothCore
import HCI

// What the GATT server hands an app's handlers (reads, writes, authorization), the
// subscriptions it reports, and why a service could not be added.

/// Why a service could not be added.
public enum GATTServerError: Error, Equatable, Sendable, CustomStringConvertible {
    /// An included service is not in the database.
    case includedServiceNotFound(BluetoothUUID)
    /// A value is longer than 512 octets.
    case valueTooLong(BluetoothUUID, Int)
    /// The database has no handles left.
    case outOfHandles
    /// The service is not in the database (never added, or removed already).
    case serviceNotFound(BluetoothUUID)
    /// The service cannot be removed: a service still in the database includes it.
    case serviceIncluded(BluetoothUUID, by: BluetoothUUID)
    /// The services' handles do not fit the database (taken, out of order, past an end
    /// handle, an include of no service): the entry, and why.
    case layout(DatabaseLayoutError)

    /// Readable.
    public var description: String {
        switch self {
        case let .includedServiceNotFound(uuid): "included service \(uuid) is not in the database"
        case let .valueTooLong(uuid, length): "the value of \(uuid) is \(length) octets; at most 512"
        case .outOfHandles: "the database has no handles left"
        case let .serviceNotFound(uuid): "service \(uuid) is not in the database"
        case let .serviceIncluded(uuid, including):
            "service \(uuid) is included by \(including), which stays in the database"
        case let .layout(error): error.description
        }
    }
}

/// A read a client asked for, as an app's handler sees it.
public struct GATTReadRequest: Sendable, Equatable {
    /// The client's link.
    public var connection: ConnectionHandle
    /// The characteristic value's handle.
    public var handle: AttributeHandle
    /// The characteristic's UUID.
    public var uuid: BluetoothUUID
    /// Where the client reads from (Read Blob); 0 for a Read.
    public var offset: Int

    /// A read of `handle` from `offset`.
    public init(connection: ConnectionHandle, handle: AttributeHandle, uuid: BluetoothUUID, offset: Int) {
        (self.connection, self.handle, self.uuid, self.offset) = (connection, handle, uuid, offset)
    }
}

/// A write a client made, as an app's handler sees it.
public struct GATTWriteRequest: Sendable, Equatable {
    /// The client's link.
    public var connection: ConnectionHandle
    /// The characteristic value's handle.
    public var handle: AttributeHandle
    /// The characteristic's UUID.
    public var uuid: BluetoothUUID
    /// The whole new value (a long or reliable write's parts put together).
    public var value: [UInt8]
    /// Whether the client waits for a response (Write Request, Execute Write) or not
    /// (Write Command).
    public var withResponse: Bool

    /// A write of `value` to `handle`.
    public init(
        connection: ConnectionHandle, handle: AttributeHandle, uuid: BluetoothUUID, value: [UInt8], withResponse: Bool
    ) {
        (self.connection, self.handle, self.uuid, self.value, self.withResponse) =
            (connection, handle, uuid, value, withResponse)
    }
}

/// A request an app is asked to authorize: a read or write of an attribute whose permissions
/// ask for authorization (`AttributePermissions.readAuthorized`,
/// `AttributePermissions.writeAuthorized`), asked before the request is served.
public struct GATTAuthorizationRequest: Sendable, Equatable {
    /// What the client asks to do.
    public enum Access: Sendable, Equatable {
        /// Read (Read Request, Read Blob Request).
        case read
        /// Write (Write Request, Write Command, Prepare Write Request).
        case write
    }

    /// The client's link.
    public var connection: ConnectionHandle
    /// The attribute's handle (a characteristic value or a descriptor).
    public var handle: AttributeHandle
    /// The attribute's type: the characteristic's UUID for a value, the descriptor's for a
    /// descriptor.
    public var uuid: BluetoothUUID
    /// Read or write.
    public var access: Access
    /// Where the client reads or writes from (Read Blob, Prepare Write); 0 otherwise.
    public var offset: Int
    /// The value (or, for a Prepare Write, the part) the client writes; empty for a read.
    public var value: [UInt8]

    /// A request to authorize `access` to `handle`.
    public init(
        connection: ConnectionHandle, handle: AttributeHandle, uuid: BluetoothUUID, access: Access, offset: Int = 0,
        value: [UInt8] = []
    ) {
        (self.connection, self.handle, self.uuid, self.access, self.offset, self.value) =
            (connection, handle, uuid, access, offset, value)
    }
}

/// A client's subscription to one characteristic, from its CCCD.
public struct GATTSubscription: Sendable, Equatable {
    /// The client's link.
    public var connection: ConnectionHandle
    /// The characteristic value's handle.
    public var handle: AttributeHandle
    /// The characteristic's UUID.
    public var uuid: BluetoothUUID
    /// Notifications on.
    public var notifications: Bool
    /// Indications on.
    public var indications: Bool

    /// The subscription of `connection` to `handle`.
    public init(
        connection: ConnectionHandle, handle: AttributeHandle, uuid: BluetoothUUID, notifications: Bool,
        indications: Bool
    ) {
        (self.connection, self.handle, self.uuid, self.notifications, self.indications) =
            (connection, handle, uuid, notifications, indications)
    }
}
