import ATT
import BluetoothCore
import FoundationEssentials

/// A GATT database as a JSON file, as `bluejay serve DB.json` reads it (docs/Peripheral.md):
/// the GAP name and appearance, the services in order with each characteristic's
/// properties, permissions, value and descriptors, and what `serve` does besides (values
/// notified on a timer, a flood, the UUIDs advertised).
///
/// Everything is checked before anything is served: a UUID that is no UUID, a property or
/// permission with no such name, a value that is not hex or longer than 512 octets, a timer
/// with no values or no period (or on a characteristic that neither notifies nor indicates),
/// a flood on one that does not notify. Each fails naming the entry it is in.
public struct DatabaseFile: Sendable {
    /// Values notified one after another, `every` apart, while a central is subscribed.
    public struct NotifyTimer: Sendable, Equatable {
        /// The period.
        public let every: Duration
        /// The values, in turn (at least one).
        public let values: [[UInt8]]

        /// Values notified `every` apart.
        public init(every: Duration, values: [[UInt8]]) {
            self.every = every
            self.values = values
        }
    }

    /// A characteristic of the file: what the server lays out, and what `serve` does with it.
    public struct Characteristic: Sendable, Equatable {
        /// Its definition.
        public let definition: CharacteristicDefinition
        /// Values notified on a timer, if any.
        public let notify: NotifyTimer?
        /// Whether it is notified back to back while subscribed.
        public let flood: Bool
    }

    /// A service of the file.
    public struct Service: Sendable, Equatable {
        /// Its definition (its characteristics' too).
        public let definition: ServiceDefinition
        /// Its characteristics, with what `serve` does with each.
        public let characteristics: [Characteristic]
    }

    /// The GAP Device Name (and the advertised name), if given.
    public let name: String?
    /// The GAP Appearance, if given.
    public let appearance: UInt16?
    /// The service UUIDs to advertise: the file's `advertise`, else its primary services'.
    public let advertise: [BluetoothUUID]
    /// The services, in order.
    public let services: [Service]

    /// The property names a file uses, as Core 6.0 Vol 3 Part G 3.3.1.1 names the bits.
    public static let propertyNames: [String: CharacteristicProperties] = [
        "broadcast": .broadcast, "read": .read, "writeWithoutResponse": .writeWithoutResponse, "write": .write,
        "notify": .notify, "indicate": .indicate, "authenticatedSignedWrites": .authenticatedSignedWrites,
        "extendedProperties": .extendedProperties,
    ]
    /// The permission names a file uses.
    public static let permissionNames: [String: AttributePermissions] = [
        "read": .read, "write": .write, "writeWithoutResponse": .writeWithoutResponse, "readEncrypted": .readEncrypted,
        "writeEncrypted": .writeEncrypted, "readAuthenticated": .readAuthenticated, "writeAuthenticated": .writeAuthenticated,
        "readAuthorized": .readAuthorized, "writeAuthorized": .writeAuthorized,
    ]

    /// Reads the file's JSON.
    public init(json bytes: [UInt8]) throws(DatabaseFileError) {
        let raw: Raw
        do { raw = try JSONDecoder().decode(Raw.self, from: Data(bytes)) } catch { throw DatabaseFileError("\(error)") }
        name = raw.name
        appearance = raw.appearance
        services = try raw.services.enumerated().map { (index, entry) throws(DatabaseFileError) in
            try Self.service(entry, at: "services[\(index)]")
        }
        if let listed = raw.advertise {
            advertise = try listed.map { (text) throws(DatabaseFileError) in try Self.uuid(text, at: "advertise") }
        } else {
            advertise = services.filter(\.definition.isPrimary).map(\.definition.uuid)
        }
    }

    // MARK: - Checking each entry

    private static func service(_ entry: Raw.Service, at place: String) throws(DatabaseFileError) -> Service {
        let uuid = try uuid(entry.uuid, at: place)
        let characteristics = try entry.characteristics.enumerated().map { (index, entry) throws(DatabaseFileError) in
            try characteristic(entry, at: "\(place).characteristics[\(index)]")
        }
        let definition = ServiceDefinition(uuid: uuid, isPrimary: entry.primary ?? true, characteristics: characteristics.map(\.definition))
        return Service(definition: definition, characteristics: characteristics)
    }

    private static func characteristic(_ entry: Raw.Characteristic, at place: String) throws(DatabaseFileError) -> Characteristic {
        let uuid = try uuid(entry.uuid, at: place)
        var properties: CharacteristicProperties = []
        for name in entry.properties {
            guard let property = propertyNames[name] else { throw DatabaseFileError("\(place): no property is called '\(name)'") }
            properties.insert(property)
        }
        var permissions: AttributePermissions?
        if let names = entry.permissions {
            var set: AttributePermissions = []
            for name in names {
                guard let permission = permissionNames[name] else { throw DatabaseFileError("\(place): no permission is called '\(name)'") }
                set.insert(permission)
            }
            permissions = set
        }
        let descriptors = try (entry.descriptors ?? []).enumerated().map { (index, descriptor) throws(DatabaseFileError) in
            let spot = "\(place).descriptors[\(index)]"
            return MutableDescriptor(uuid: try Self.uuid(descriptor.uuid, at: spot), value: try value(descriptor.value, descriptor.text, at: spot))
        }
        var notify: NotifyTimer?
        if let timer = entry.notify {
            guard timer.every.isFinite, timer.every > 0 else { throw DatabaseFileError("\(place).notify: 'every' must be seconds above 0") }
            guard !timer.values.isEmpty else { throw DatabaseFileError("\(place).notify: no values to notify") }
            let values = try timer.values.map { (text) throws(DatabaseFileError) in try value(text, nil, at: "\(place).notify") }
            notify = NotifyTimer(every: .seconds(min(timer.every, 1e9)), values: values)
        }
        let flood = entry.flood ?? false
        if flood, !properties.contains(.notify) { throw DatabaseFileError("\(place): \"flood\" needs the notify property") }
        if notify != nil, properties.isDisjoint(with: [.notify, .indicate]) {
            throw DatabaseFileError("\(place): \"notify\" needs the notify or indicate property")
        }
        let definition = CharacteristicDefinition(uuid: uuid, properties: properties, permissions: permissions,
                                                  value: try value(entry.value, entry.text, at: place), descriptors: descriptors)
        return Characteristic(definition: definition, notify: notify, flood: flood)
    }

    private static func uuid(_ text: String, at place: String) throws(DatabaseFileError) -> BluetoothUUID {
        guard let uuid = BluetoothUUID(text) else { throw DatabaseFileError("\(place): '\(text)' is not a UUID") }
        return uuid
    }

    /// A value: `text` as UTF-8, else `hex`, else none; at most 512 octets (Part F 3.2.9).
    private static func value(_ hex: String?, _ text: String?, at place: String) throws(DatabaseFileError) -> [UInt8] {
        let bytes: [UInt8]
        if let text {
            bytes = Array(text.utf8)
        } else if let hex {
            guard let parsed = parseHexBytes(hex) else { throw DatabaseFileError("\(place): value '\(hex)' is not hex octets") }
            bytes = parsed
        } else {
            bytes = []
        }
        guard bytes.count <= AttributeServer.maximumValueLength else {
            throw DatabaseFileError("\(place): the value is \(bytes.count) octets; at most \(AttributeServer.maximumValueLength)")
        }
        return bytes
    }

    /// The file as JSON has it.
    private struct Raw: Decodable {
        struct Service: Decodable {
            var uuid: String
            var primary: Bool?
            var characteristics: [Characteristic]
        }

        struct Timer: Decodable {
            var every: Double
            var values: [String]
        }

        struct Descriptor: Decodable {
            var uuid: String
            var value: String?
            var text: String?
        }

        struct Characteristic: Decodable {
            var uuid: String
            var properties: [String]
            var permissions: [String]?
            var value: String?
            var text: String?
            var notify: Timer?
            var flood: Bool?
            var descriptors: [Descriptor]?
        }

        var name: String?
        var appearance: UInt16?
        var advertise: [String]?
        var services: [Service]
    }
}

/// Why a database file cannot be served: the entry, and what is wrong with it.
public struct DatabaseFileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Readable, naming the entry (`services[0].characteristics[1]: …`).
    public let description: String

    init(_ description: String) { self.description = description }
}
