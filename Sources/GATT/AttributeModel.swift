import BluetoothCore
import HCI

/// A service found on the peer: its declaration handle, the last handle of its group, and
/// its UUID (Core Vol 3, Part G, 3.1).
public struct Service: Sendable, Hashable, CustomStringConvertible {
    /// The service's UUID.
    public var uuid: BluetoothUUID
    /// The handle of its service declaration (the first handle of the group).
    public var handle: AttributeHandle
    /// The last handle of its group.
    public var endGroupHandle: AttributeHandle
    /// Primary (0x2800) or secondary (0x2801).
    public var isPrimary: Bool

    /// A service spanning `handle...endGroupHandle`.
    public init(uuid: BluetoothUUID, handle: AttributeHandle, endGroupHandle: AttributeHandle, isPrimary: Bool = true) {
        (self.uuid, self.handle, self.endGroupHandle, self.isPrimary) = (uuid, handle, endGroupHandle, isPrimary)
    }

    /// Every handle of the service's group.
    public var handles: ClosedRange<AttributeHandle> { handle...max(handle, endGroupHandle) }

    /// `180D Heart Rate 0x0001…0x0009`.
    public var description: String {
        "\(uuid.nameAndValue) \(hex(handle, digits: 4))…\(hex(endGroupHandle, digits: 4))"
    }
}

/// An include declaration (0x2802) inside a service: it names another service.
public struct IncludedService: Sendable, Hashable {
    /// The handle of the include declaration itself.
    public var declarationHandle: AttributeHandle
    /// The included service (its handle range and UUID).
    public var service: Service

    /// An include declaration at `declarationHandle` naming `service`.
    public init(declarationHandle: AttributeHandle, service: Service) {
        (self.declarationHandle, self.service) = (declarationHandle, service)
    }
}

/// The properties octet of a characteristic declaration (Core Vol 3, Part G, 3.3.1.1).
public struct CharacteristicProperties: OptionSet, Sendable, Hashable, CustomStringConvertible {
    /// The octet as on the wire.
    public let rawValue: UInt8
    /// Wraps a properties octet.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The value may be broadcast in advertising data (Server Characteristic Configuration).
    public static let broadcast = CharacteristicProperties(rawValue: 0x01)
    /// The value may be read.
    public static let read = CharacteristicProperties(rawValue: 0x02)
    /// The value may be written with Write Command.
    public static let writeWithoutResponse = CharacteristicProperties(rawValue: 0x04)
    /// The value may be written with Write Request (and long writes).
    public static let write = CharacteristicProperties(rawValue: 0x08)
    /// The server may notify the value.
    public static let notify = CharacteristicProperties(rawValue: 0x10)
    /// The server may indicate the value.
    public static let indicate = CharacteristicProperties(rawValue: 0x20)
    /// The value may be written with Signed Write Command.
    public static let authenticatedSignedWrites = CharacteristicProperties(rawValue: 0x40)
    /// More properties sit in the Characteristic Extended Properties descriptor.
    public static let extendedProperties = CharacteristicProperties(rawValue: 0x80)

    private static let names: [(CharacteristicProperties, String)] = [
        (.broadcast, "broadcast"), (.read, "read"), (.writeWithoutResponse, "writeWithoutResponse"), (.write, "write"),
        (.notify, "notify"), (.indicate, "indicate"), (.authenticatedSignedWrites, "authenticatedSignedWrites"),
        (.extendedProperties, "extendedProperties"),
    ]

    /// The set properties by name, in bit order (`read, notify`).
    public var names: [String] { Self.names.filter { contains($0.0) }.map(\.1) }

    /// The names joined with commas.
    public var description: String { names.joined(separator: ", ") }
}

/// The value of a Characteristic Declaration (0x2803; Core Vol 3, Part G, 3.3.1):
/// Characteristic_Properties, Characteristic_Value_Handle and a 16- or 128-bit
/// Characteristic_UUID, 5 or 19 octets.
public struct CharacteristicDeclaration: Sendable, Hashable {
    /// What the characteristic allows.
    public var properties: CharacteristicProperties
    /// Where its value is.
    public var valueHandle: AttributeHandle
    /// Its type.
    public var uuid: BluetoothUUID

    /// A declaration from its fields.
    public init(properties: CharacteristicProperties, valueHandle: AttributeHandle, uuid: BluetoothUUID) {
        (self.properties, self.valueHandle, self.uuid) = (properties, valueHandle, uuid)
    }

    /// The declaration a declaration attribute's value holds; nil unless it is 5 or 19 octets.
    public init?(value: some Collection<UInt8>) {
        guard value.count == 5 || value.count == 19 else { return nil }
        var fields = ByteReader(ArraySlice(value))
        guard let properties = try? fields.readUInt8(), let valueHandle = try? AttributeHandle(from: &fields),
            let uuid = BluetoothUUID(littleEndianBytes: fields.remaining)
        else { return nil }
        self.init(properties: CharacteristicProperties(rawValue: properties), valueHandle: valueHandle, uuid: uuid)
    }

    /// The value as a declaration attribute holds it.
    public var value: [UInt8] {
        [properties.rawValue, UInt8(truncatingIfNeeded: valueHandle.rawValue), UInt8(valueHandle.rawValue >> 8)]
            + uuid.attributeBytes
    }
}

/// A characteristic found on the peer (Core Vol 3, Part G, 3.3).
public struct Characteristic: Sendable, Hashable, CustomStringConvertible {
    /// The characteristic's UUID.
    public var uuid: BluetoothUUID
    /// The handle of its declaration (0x2803).
    public var declarationHandle: AttributeHandle
    /// What may be done with its value.
    public var properties: CharacteristicProperties
    /// The handle of its value.
    public var valueHandle: AttributeHandle
    /// The last handle belonging to it: its descriptors sit in `valueHandle + 1 ... endHandle`.
    public var endHandle: AttributeHandle

    /// A characteristic as declared.
    public init(
        uuid: BluetoothUUID, declarationHandle: AttributeHandle, properties: CharacteristicProperties,
        valueHandle: AttributeHandle, endHandle: AttributeHandle
    ) {
        (self.uuid, self.declarationHandle, self.properties, self.valueHandle, self.endHandle) =
            (uuid, declarationHandle, properties, valueHandle, endHandle)
    }

    /// Whether descriptors may follow the value (Part G, 4.7.1: skip the search when not).
    public var mayHaveDescriptors: Bool { endHandle > valueHandle }

    /// `2A37 Heart Rate Measurement value 0x0003 [notify]`.
    public var description: String {
        "\(uuid.nameAndValue) value \(hex(valueHandle, digits: 4)) [\(properties)]"
    }
}

/// A characteristic descriptor found on the peer.
public struct Descriptor: Sendable, Hashable, CustomStringConvertible {
    /// The descriptor's type.
    public var uuid: BluetoothUUID
    /// Its handle.
    public var handle: AttributeHandle

    /// A descriptor at `handle`.
    public init(uuid: BluetoothUUID, handle: AttributeHandle) { (self.uuid, self.handle) = (uuid, handle) }

    /// `2902 Client Characteristic Configuration 0x0004`.
    public var description: String { "\(uuid.nameAndValue) \(hex(handle, digits: 4))" }
}

/// The GATT UUIDs the client procedures use (Bluetooth Assigned Numbers, 3.5–3.8).
extension BluetoothUUID {
    /// 0x2800 Primary Service declaration.
    public static let primaryService = BluetoothUUID(UInt16(0x2800))
    /// 0x2801 Secondary Service declaration.
    public static let secondaryService = BluetoothUUID(UInt16(0x2801))
    /// 0x2802 Include declaration.
    public static let include = BluetoothUUID(UInt16(0x2802))
    /// 0x2803 Characteristic declaration.
    public static let characteristic = BluetoothUUID(UInt16(0x2803))
    /// 0x2902 Client Characteristic Configuration descriptor.
    public static let clientCharacteristicConfiguration = BluetoothUUID(UInt16(0x2902))
    /// 0x1800 Generic Access service.
    public static let genericAccess = BluetoothUUID(UInt16(0x1800))
    /// 0x1801 Generic Attribute service.
    public static let genericAttribute = BluetoothUUID(UInt16(0x1801))
    /// 0x2A00 Device Name.
    public static let deviceName = BluetoothUUID(UInt16(0x2A00))
    /// 0x2A01 Appearance.
    public static let appearance = BluetoothUUID(UInt16(0x2A01))
    /// 0x2A05 Service Changed.
    public static let serviceChanged = BluetoothUUID(UInt16(0x2A05))
    /// 0x2B29 Client Supported Features.
    public static let clientSupportedFeatures = BluetoothUUID(UInt16(0x2B29))
    /// 0x2B2A Database Hash.
    public static let databaseHash = BluetoothUUID(UInt16(0x2B2A))
}
