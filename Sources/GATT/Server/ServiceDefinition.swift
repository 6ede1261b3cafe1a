import ATT
import BluetoothCore

/// A descriptor an app serves: its type, value and permissions, and its handle if it has
/// to be one. The CCCD of a characteristic that notifies or indicates is added by the
/// server; declare one only for a characteristic that turns that off
/// (``CharacteristicDefinition/automaticCCCD``).
public struct MutableDescriptor: Sendable, Equatable {
    /// The descriptor's type (0x2901 Characteristic User Description, 0x2904 Presentation
    /// Format, or a vendor UUID).
    public var uuid: BluetoothUUID
    /// Its value, at most 512 octets.
    public var value: [UInt8]
    /// What a client may do with it; read-only by default.
    public var permissions: AttributePermissions
    /// Its handle; nil: the one after the attribute before it.
    public var handle: AttributeHandle?

    /// A descriptor of type `uuid` holding `value`.
    public init(
        uuid: BluetoothUUID, value: [UInt8], permissions: AttributePermissions = .read, handle: AttributeHandle? = nil
    ) {
        (self.uuid, self.value, self.permissions, self.handle) = (uuid, value, permissions, handle)
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
    /// Descriptors after the value (the server's Extended Properties descriptor and CCCD,
    /// if any, come first).
    public var descriptors: [MutableDescriptor]
    /// The bits of its Characteristic Extended Properties descriptor (Part G, 3.3.3.1):
    /// when there are any, the server serves that descriptor and sets the Extended
    /// Properties bit of ``properties``.
    public var extendedProperties: CharacteristicExtendedProperties
    /// The handle of its declaration; nil: the one after the attribute before it.
    public var handle: AttributeHandle?
    /// The handle of its value; nil: the one after the declaration.
    public var valueHandle: AttributeHandle?
    /// Whether the server adds the CCCD of a characteristic that notifies or indicates
    /// (true), or the app declares it among ``descriptors`` or has none (false).
    public var automaticCCCD: Bool

    /// A characteristic of `uuid` with `properties`; `permissions` nil derives them from
    /// the properties (and a Reliable Write among `extendedProperties`).
    public init(
        uuid: BluetoothUUID, properties: CharacteristicProperties, permissions: AttributePermissions? = nil,
        value: [UInt8] = [], descriptors: [MutableDescriptor] = [],
        extendedProperties: CharacteristicExtendedProperties = [], handle: AttributeHandle? = nil,
        valueHandle: AttributeHandle? = nil, automaticCCCD: Bool = true
    ) {
        self.uuid = uuid
        self.properties = extendedProperties.isEmpty ? properties : properties.union(.extendedProperties)
        self.permissions = permissions ?? Self.permissions(for: properties, extendedProperties)
        self.value = value
        self.descriptors = descriptors
        self.extendedProperties = extendedProperties
        self.handle = handle
        self.valueHandle = valueHandle
        self.automaticCCCD = automaticCCCD
    }

    /// The permissions `properties` announce. Reliable Write announces writes too: its
    /// Prepare Write Requests need a writable value (Part G, 4.9.5).
    public static func permissions(
        for properties: CharacteristicProperties,
        _ extendedProperties: CharacteristicExtendedProperties = []
    ) -> AttributePermissions {
        var permissions: AttributePermissions = []
        if properties.contains(.read) { permissions.insert(.read) }
        if properties.contains(.write) || extendedProperties.contains(.reliableWrite) { permissions.insert(.write) }
        if properties.contains(.writeWithoutResponse) { permissions.insert(.writeWithoutResponse) }
        return permissions
    }

    /// Whether the server adds a CCCD for it (it notifies or indicates, and the app did not
    /// take the CCCD on itself).
    public var hasCCCD: Bool { automaticCCCD && subscribable }

    /// Whether clients may subscribe to it: it notifies or indicates.
    public var subscribable: Bool { !properties.isDisjoint(with: [.notify, .indicate]) }
}

/// The bits of a Characteristic Extended Properties descriptor (Core 6.0 Vol 3, Part G,
/// 3.3.3.1), as on the wire.
public struct CharacteristicExtendedProperties: OptionSet, Sendable, Hashable {
    /// The descriptor's value.
    public let rawValue: UInt16
    /// Wraps the descriptor's value.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// The value may be written with the Reliable Writes procedure (Part G, 4.9.5).
    public static let reliableWrite = CharacteristicExtendedProperties(rawValue: 0x0001)
    /// The Characteristic User Description descriptor may be written.
    public static let writableAuxiliaries = CharacteristicExtendedProperties(rawValue: 0x0002)
}

/// An Include declaration (Core 6.0 Vol 3, Part G, 3.2): the service it names, and where.
public struct IncludeDefinition: Sendable, Equatable {
    /// The included service's UUID.
    public var uuid: BluetoothUUID
    /// The included service's declaration handle, to name one of several services with
    /// `uuid`; nil: the first with it.
    public var serviceHandle: AttributeHandle?
    /// The Include declaration's own handle; nil: the one after the attribute before it.
    public var handle: AttributeHandle?

    /// An include of the service `uuid` (at `serviceHandle`), declared at `handle`.
    public init(uuid: BluetoothUUID, serviceHandle: AttributeHandle? = nil, handle: AttributeHandle? = nil) {
        (self.uuid, self.serviceHandle, self.handle) = (uuid, serviceHandle, handle)
    }
}

/// A service definition (Core Vol 3, Part G, 3.1) as the server lays it out: primary or
/// secondary, the services it includes (in the database, or added with it) and its
/// characteristics in order; where it goes, when it has to go somewhere. (Apps describe
/// theirs with Bluejay's `MutableService`.)
public struct ServiceDefinition: Sendable, Equatable {
    /// The service's UUID.
    public var uuid: BluetoothUUID
    /// Primary (found by discovery) or secondary (only through an include).
    public var isPrimary: Bool
    /// Its Include declarations, in order.
    public var includes: [IncludeDefinition]
    /// The characteristics, in handle order.
    public var characteristics: [CharacteristicDefinition]
    /// The handle of its declaration; nil: after the last attribute (or the service
    /// before it, when several are added together).
    public var handle: AttributeHandle?
    /// The last handle of its group, to keep handles after its last attribute free for it;
    /// nil: its last attribute's.
    public var endHandle: AttributeHandle?

    /// Services this one includes, by UUID.
    public var includedServices: [BluetoothUUID] {
        get { includes.map(\.uuid) }
        set { includes = newValue.map { IncludeDefinition(uuid: $0) } }
    }

    /// A service of `uuid`, including the services `includedServices` names and then those
    /// `includes` declares.
    public init(
        uuid: BluetoothUUID, isPrimary: Bool = true, includedServices: [BluetoothUUID] = [],
        characteristics: [CharacteristicDefinition] = [], includes: [IncludeDefinition] = [],
        handle: AttributeHandle? = nil, endHandle: AttributeHandle? = nil
    ) {
        self.uuid = uuid
        self.isPrimary = isPrimary
        self.includes = includedServices.map { IncludeDefinition(uuid: $0) } + includes
        self.characteristics = characteristics
        self.handle = handle
        self.endHandle = endHandle
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
