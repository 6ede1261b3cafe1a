import ATT
import BluetoothCore
import FoundationEssentials

/// A GATT database as a JSON file, as `bluejay serve DB.json` reads it (docs/Peripheral.md):
/// the GAP name and appearance, the services in order with each characteristic's
/// properties, permissions, value and descriptors, and what `serve` does besides (values
/// notified on a timer, a flood, the UUIDs advertised).
///
/// It can say where every attribute goes (`handle`, `value_handle`, `end_handle`), which
/// services a service includes, every property and extended property, each descriptor's
/// permissions, and whether the server makes the CCCD (`"cccd": false`: the file declares
/// it, or there is none). A file that declares GAP (0x1800) or GATT (0x1801) replaces ours.
///
/// Everything is checked before anything is served: a UUID that is no UUID, a property or
/// permission with no such name, a value that is not hex or longer than 512 octets, a timer
/// with no values or no period (or on a characteristic that neither notifies nor indicates),
/// a flood on one that does not notify, handles that are taken, out of order or past their
/// service's `end_handle`, an include of no service in the file. Each fails naming the
/// entry it is in.
public struct DatabaseFile: Sendable {
    /// Values notified one after another, `every` apart, while a central is subscribed.
    public struct NotifyTimer: Sendable, Equatable {
        /// The period.
        public let every: Duration
        /// The values, in turn (at least one).
        public let values: [[UInt8]]

        /// Values notified `every` apart.
        public init(every: Duration, values: [[UInt8]]) { (self.every, self.values) = (every, values) }
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

    /// The property names a file uses, as Core 6.0 Vol 3 Part G 3.3.1.1 names the bits
    /// (`writeWithoutResponse`; `write-without-response` and `write_without_response` too).
    public static let propertyNames: [String: CharacteristicProperties] = [
        "broadcast": .broadcast, "read": .read, "writeWithoutResponse": .writeWithoutResponse, "write": .write,
        "notify": .notify, "indicate": .indicate, "authenticatedSignedWrites": .authenticatedSignedWrites,
        "extendedProperties": .extendedProperties,
    ]
    /// The permission names a file uses.
    public static let permissionNames: [String: AttributePermissions] = [
        "read": .read, "write": .write, "writeWithoutResponse": .writeWithoutResponse, "readEncrypted": .readEncrypted,
        "writeEncrypted": .writeEncrypted, "readAuthenticated": .readAuthenticated,
        "writeAuthenticated": .writeAuthenticated,
        "readAuthorized": .readAuthorized, "writeAuthorized": .writeAuthorized,
    ]
    /// The extended property names a file uses, as Part G 3.3.3.1 names the bits.
    public static let extendedPropertyNames: [String: CharacteristicExtendedProperties] = [
        "reliableWrite": .reliableWrite, "writableAuxiliaries": .writableAuxiliaries,
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
        // Handles and includes as the server will lay them out (ours make way for a file
        // that gives handles, so the file alone says whether they fit).
        var layout = DatabaseLayout(table: [])
        do { _ = try layout.lay(services.map(\.definition)) } catch { throw DatabaseFileError(error.description) }
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
        let includes = try (entry.includes ?? []).enumerated().map { (index, include) throws(DatabaseFileError) in
            IncludeDefinition(
                uuid: try Self.uuid(include.uuid, at: "\(place).includes[\(index)]"),
                serviceHandle: include.serviceHandle?.handle,
                handle: include.handle?.handle)
        }
        let definition = ServiceDefinition(
            uuid: uuid, isPrimary: entry.primary ?? true, characteristics: characteristics.map(\.definition),
            includes: includes, handle: entry.handle?.handle, endHandle: entry.endHandle?.handle)
        return Service(definition: definition, characteristics: characteristics)
    }

    private static func characteristic(_ entry: Raw.Characteristic, at place: String) throws(DatabaseFileError)
        -> Characteristic
    {
        let uuid = try uuid(entry.uuid, at: place)
        let properties = try named(entry.properties, propertyNames, "property", at: place)
        let extended = try named(entry.extendedProperties ?? [], extendedPropertyNames, "extended property", at: place)
        let permissions = try entry.permissions.map { (names) throws(DatabaseFileError) in
            try named(names, permissionNames, "permission", at: place)
        }
        let automaticCCCD = entry.cccd ?? true
        let descriptors = try (entry.descriptors ?? []).enumerated().map {
            (index, descriptor) throws(DatabaseFileError) in
            let spot = "\(place).descriptors[\(index)]"
            let uuid = try Self.uuid(descriptor.uuid, at: spot)
            // Unless the file says: the file's own CCCD (with "cccd": false) writable, so a
            // client can subscribe; a user description writable when Writable Auxiliaries
            // says so (Part G, 3.3.3.2); the rest read-only. A 0x2902 declared beside ours
            // stays a plain descriptor, as old files had it.
            let ownCCCD = uuid == .clientCharacteristicConfiguration && !automaticCCCD
            var permissions: AttributePermissions = .read
            if ownCCCD || (uuid == BluetoothUUID(UInt16(0x2901)) && extended.contains(.writableAuxiliaries)) {
                permissions = [.read, .write]
            }
            if let names = descriptor.permissions {
                permissions = try named(names, permissionNames, "permission", at: spot)
            }
            var bytes = try value(descriptor.value, descriptor.text, at: spot)
            if ownCCCD, descriptor.value == nil, descriptor.text == nil { bytes = [0, 0] }
            return MutableDescriptor(
                uuid: uuid, value: bytes, permissions: permissions, handle: descriptor.handle?.handle)
        }
        var notify: NotifyTimer?
        if let timer = entry.notify {
            guard timer.every.isFinite, timer.every > 0 else {
                throw DatabaseFileError("\(place).notify: 'every' must be seconds above 0")
            }
            guard !timer.values.isEmpty else { throw DatabaseFileError("\(place).notify: no values to notify") }
            let values = try timer.values.map { (text) throws(DatabaseFileError) in
                try value(text, nil, at: "\(place).notify")
            }
            notify = NotifyTimer(every: .seconds(min(timer.every, 1e9)), values: values)
        }
        let flood = entry.flood ?? false
        if flood, !properties.contains(.notify) {
            throw DatabaseFileError("\(place): \"flood\" needs the notify property")
        }
        if notify != nil, properties.isDisjoint(with: [.notify, .indicate]) {
            throw DatabaseFileError("\(place): \"notify\" needs the notify or indicate property")
        }
        let definition = CharacteristicDefinition(
            uuid: uuid, properties: properties, permissions: permissions,
            value: try value(entry.value, entry.text, at: place), descriptors: descriptors,
            extendedProperties: extended, handle: entry.handle?.handle,
            valueHandle: entry.valueHandle?.handle, automaticCCCD: automaticCCCD)
        return Characteristic(definition: definition, notify: notify, flood: flood)
    }

    /// The set `names` name in `table` (camelCase as the table has it, or with `-` or `_`
    /// between the words).
    private static func named<Bits: OptionSet>(
        _ names: [String], _ table: [String: Bits], _ kind: String,
        at place: String
    ) throws(DatabaseFileError) -> Bits {
        var set: Bits = []
        for name in names {
            let key = table.keys.first { $0.lowercased() == name.lowercased().filter { $0 != "-" && $0 != "_" } }
            guard let key, let element = table[key] else {
                throw DatabaseFileError("\(place): no \(kind) is called '\(name)'")
            }
            set.formUnion(element)
        }
        return set
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
            guard let parsed = parseHexBytes(hex) else {
                throw DatabaseFileError("\(place): value '\(hex)' is not hex octets")
            }
            bytes = parsed
        } else {
            bytes = []
        }
        guard bytes.count <= AttributeServer.maximumValueLength else {
            throw DatabaseFileError(
                "\(place): the value is \(bytes.count) octets; at most \(AttributeServer.maximumValueLength)")
        }
        return bytes
    }

    /// The file as JSON has it.
    private struct Raw: Decodable {
        struct Service: Decodable {
            var uuid: String
            var primary: Bool?
            var characteristics: [Characteristic]
            var handle: Handle?
            var endHandle: Handle?
            var includes: [Include]?

            enum CodingKeys: String, CodingKey {
                case uuid, primary, characteristics, handle, includes
                case endHandle = "end_handle"
            }
        }

        /// A handle: a number, or hex text (`"0x001A"`).
        struct Handle: Decodable {
            var handle: AttributeHandle

            init(from decoder: any Decoder) throws {
                let container = try decoder.singleValueContainer()
                let number: UInt16?
                if let text = try? container.decode(String.self) {
                    let digits = text.hasPrefix("0x") || text.hasPrefix("0X") ? String(text.dropFirst(2)) : text
                    number = UInt16(digits, radix: 16)
                } else {
                    number = try container.decode(UInt16.self)
                }
                guard let number else {
                    throw Swift.DecodingError.dataCorrupted(
                        .init(codingPath: decoder.codingPath, debugDescription: "not a handle (0x0001–0xFFFF)"))
                }
                handle = AttributeHandle(rawValue: number)
            }
        }

        /// An include: the service's UUID, or an object with its handle and the include's.
        struct Include: Decodable {
            var uuid: String
            var serviceHandle: Handle?
            var handle: Handle?

            enum CodingKeys: String, CodingKey {
                case uuid, handle
                case serviceHandle = "service_handle"
            }

            init(from decoder: any Decoder) throws {
                if let text = try? decoder.singleValueContainer().decode(String.self) {
                    uuid = text
                    return
                }
                let container = try decoder.container(keyedBy: CodingKeys.self)
                uuid = try container.decode(String.self, forKey: .uuid)
                serviceHandle = try container.decodeIfPresent(Handle.self, forKey: .serviceHandle)
                handle = try container.decodeIfPresent(Handle.self, forKey: .handle)
            }
        }

        struct Timer: Decodable {
            var every: Double
            var values: [String]
        }

        struct Descriptor: Decodable {
            var uuid: String
            var value: String?
            var text: String?
            var permissions: [String]?
            var handle: Handle?
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
            var handle: Handle?
            var valueHandle: Handle?
            var extendedProperties: [String]?
            var cccd: Bool?

            enum CodingKeys: String, CodingKey {
                case uuid, properties, permissions, value, text, notify, flood, descriptors, handle, cccd
                case valueHandle = "value_handle"
                case extendedProperties = "extended_properties"
            }
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
