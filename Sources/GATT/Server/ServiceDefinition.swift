import ATT
import BluetoothCore

/// A descriptor an app serves: its type, value and permissions. The CCCD of a
/// characteristic that notifies or indicates is added by the server; do not declare it.
public struct MutableDescriptor: Sendable, Equatable {
    /// The descriptor's type (0x2901 Characteristic User Description, 0x2904 Presentation
    /// Format, or a vendor UUID).
    public var uuid: BluetoothUUID
    /// Its value, at most 512 octets.
    public var value: [UInt8]
    /// What a client may do with it; read-only by default.
    public var permissions: AttributePermissions

    /// A descriptor of type `uuid` holding `value`.
    public init(uuid: BluetoothUUID, value: [UInt8], permissions: AttributePermissions = .read) {
        self.uuid = uuid
        self.value = value
        self.permissions = permissions
    }

    /// A Characteristic User Description (0x2901): `text` as UTF-8, read-only.
    public static func userDescription(_ text: String) -> MutableDescriptor {
        MutableDescriptor(uuid: BluetoothUUID(UInt16(0x2901)), value: Array(text.utf8))
    }
}

/// A characteristic definition (Core Vol 3, Part G, 3.3) as the server lays it out: its
/// UUID, properties, the permissions of its value, its initial value and descriptors.
/// (Apps describe theirs with Bluejay's `MutableCharacteristic`, BlueCap's name.)
public struct CharacteristicDefinition: Sendable, Equatable {
    /// The characteristic's UUID.
    public var uuid: BluetoothUUID
    /// What the declaration announces: read, write, notify, indicate, …
    public var properties: CharacteristicProperties
    /// What a client may do with the value, and the link security it needs. By default
    /// what `properties` announce (read, write, write without response), with no security.
    public var permissions: AttributePermissions
    /// The value served until the app changes it (at most 512 octets).
    public var value: [UInt8]
    /// Descriptors after the value (the CCCD, if any, comes first and is the server's).
    public var descriptors: [MutableDescriptor]

    /// A characteristic of `uuid` with `properties`; `permissions` nil derives them from
    /// the properties.
    public init(uuid: BluetoothUUID, properties: CharacteristicProperties, permissions: AttributePermissions? = nil,
                value: [UInt8] = [], descriptors: [MutableDescriptor] = []) {
        self.uuid = uuid
        self.properties = properties
        self.permissions = permissions ?? Self.permissions(for: properties)
        self.value = value
        self.descriptors = descriptors
    }

    /// The permissions `properties` announce.
    public static func permissions(for properties: CharacteristicProperties) -> AttributePermissions {
        var permissions: AttributePermissions = []
        if properties.contains(.read) { permissions.insert(.read) }
        if properties.contains(.write) { permissions.insert(.write) }
        if properties.contains(.writeWithoutResponse) { permissions.insert(.writeWithoutResponse) }
        return permissions
    }

    /// Whether clients subscribe to it (it notifies or indicates, so it has a CCCD).
    public var hasCCCD: Bool { !properties.isDisjoint(with: [.notify, .indicate]) }
}

/// A service definition (Core Vol 3, Part G, 3.1) as the server lays it out: primary or
/// secondary, the services it includes (already in the database, by UUID) and its
/// characteristics in order. (Apps describe theirs with Bluejay's `MutableService`.)
public struct ServiceDefinition: Sendable, Equatable {
    /// The service's UUID.
    public var uuid: BluetoothUUID
    /// Primary (found by discovery) or secondary (only through an include).
    public var isPrimary: Bool
    /// Services in the database this one includes, by UUID.
    public var includedServices: [BluetoothUUID]
    /// The characteristics, in handle order.
    public var characteristics: [CharacteristicDefinition]

    /// A service of `uuid`.
    public init(uuid: BluetoothUUID, isPrimary: Bool = true, includedServices: [BluetoothUUID] = [],
                characteristics: [CharacteristicDefinition] = []) {
        self.uuid = uuid
        self.isPrimary = isPrimary
        self.includedServices = includedServices
        self.characteristics = characteristics
    }
}

/// Where a served service landed in the database.
public struct ServedService: Sendable, Equatable {
    /// The service as discovered by a client (handles included).
    public var service: Service
    /// Each characteristic, in declaration order.
    public var characteristics: [ServedCharacteristic]
}

/// Where a served characteristic landed in the database.
public struct ServedCharacteristic: Sendable, Equatable {
    /// The characteristic's UUID.
    public var uuid: BluetoothUUID
    /// Its properties.
    public var properties: CharacteristicProperties
    /// The handle of its value: the handle notifications carry.
    public var valueHandle: AttributeHandle
    /// The handle of its CCCD, if it notifies or indicates.
    public var cccdHandle: AttributeHandle?
}
