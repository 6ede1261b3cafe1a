import BluetoothCore
import FoundationEssentials
import GATT

/// One peer's cached database, as stored in `gatt-cache/<identity>.json`.
///
/// Format (version 2): a JSON object
/// `{"format": "bluejay-gatt-cache", "version": 2, "identity": "F0:0D:B1:E7:00:01/random",
/// "database_hash": "<32 hex digits as on the wire>" | null, "bonded": false,
/// "service_changed_bonded": false, "complete": true,
/// "services": [{"uuid": "180D", "start": 14, "end": 19, "primary": false (a secondary service only), "includes": [...] | null,
/// "characteristics": [{"uuid": "2A37", "declaration_handle": 15, "value_handle": 16,
/// "end_handle": 17, "properties": 16, "descriptors": [{"uuid": "2902", "handle": 17}] | null}] | null}]}`.
/// `null` means "not discovered"; an empty list means "discovered, none". Handles are
/// numbers; UUIDs are written as `BluetoothUUID` prints them. Version 1 files (written
/// before `service_changed_bonded` existed) are still read, as not subscribed; a file of
/// another format or version is ignored (and replaced on the next save).
public struct CacheEntry: Sendable, Equatable {
    /// The peer: its identity address and type (`F0:0D:B1:E7:00:01/random`).
    public var identity: String
    /// The Database Hash value read when the entry was made (as on the wire), or nil when
    /// the peer has none.
    public var databaseHash: [UInt8]?
    /// Whether the peer was bonded (then an entry without a hash may be trusted).
    public var bonded: Bool
    /// Whether the entry was made on a link encrypted with the peer's bond and subscribed to
    /// its Service Changed indications. Such a peer remembers the subscription and indicates
    /// any change on reconnection (Core 6.0 Vol 3 Part G §2.5.2), so a bonded reconnection
    /// trusts the entry without reading the Database Hash.
    public var serviceChangedBonded: Bool
    /// What was discovered.
    public var database: GATTDatabase

    /// An entry for `identity`.
    public init(
        identity: String, databaseHash: [UInt8]?, bonded: Bool, serviceChangedBonded: Bool = false,
        database: GATTDatabase
    ) {
        (self.identity, self.databaseHash, self.bonded, self.serviceChangedBonded, self.database) =
            (identity, databaseHash, bonded, serviceChangedBonded, database)
    }

    /// The format name in the file.
    public static let format = "bluejay-gatt-cache"
    /// The format version this code writes.
    public static let version = 2
    /// The format versions this code reads.
    public static let readableVersions: ClosedRange<Int> = 1...2

    /// The file contents.
    public func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Encoding plain strings, numbers and arrays cannot fail.
        return Array((try? encoder.encode(File(self))) ?? Data())
    }

    /// Decodes a file; throws for anything that is not a version 1 or 2 cache file.
    public init(decoding bytes: [UInt8]) throws(StoreError) {
        let file: File
        do { file = try JSONDecoder().decode(File.self, from: Data(bytes)) } catch {
            throw .malformed("not a GATT cache file: \(error)")
        }
        guard file.format == Self.format, Self.readableVersions.contains(file.version) else {
            throw .malformed(
                "GATT cache format \(file.format) version \(file.version), expected \(Self.format) version \(Self.readableVersions.lowerBound)…\(Self.version)"
            )
        }
        self = try file.entry()
    }
}

// MARK: The JSON shape

private struct File: Codable {
    struct DescriptorRecord: Codable {
        var uuid: String
        var handle: AttributeHandle
    }

    struct CharacteristicRecord: Codable {
        var uuid: String
        var declaration_handle: AttributeHandle
        var value_handle: AttributeHandle
        var end_handle: AttributeHandle
        var properties: UInt8
        var descriptors: [DescriptorRecord]?

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(uuid, forKey: .uuid)
            try container.encode(declaration_handle, forKey: .declaration_handle)
            try container.encode(value_handle, forKey: .value_handle)
            try container.encode(end_handle, forKey: .end_handle)
            try container.encode(properties, forKey: .properties)
            try container.encode(descriptors, forKey: .descriptors)  // null when not discovered
        }
    }

    struct IncludeRecord: Codable {
        var handle: AttributeHandle
        var uuid: String
        var start: AttributeHandle
        var end: AttributeHandle
    }

    struct ServiceRecord: Codable {
        var uuid: String
        var start: AttributeHandle
        var end: AttributeHandle
        /// False for a secondary service; absent for a primary one (and in files written
        /// before secondary services were kept).
        var primary: Bool?
        var includes: [IncludeRecord]?
        var characteristics: [CharacteristicRecord]?

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(uuid, forKey: .uuid)
            try container.encode(start, forKey: .start)
            try container.encode(end, forKey: .end)
            try container.encodeIfPresent(primary, forKey: .primary)
            try container.encode(includes, forKey: .includes)  // null when not discovered
            try container.encode(characteristics, forKey: .characteristics)
        }
    }

    var format: String
    var version: Int
    var identity: String
    var database_hash: String?
    var bonded: Bool
    /// Absent in version 1.
    var service_changed_bonded: Bool?
    var complete: Bool
    var services: [ServiceRecord]

    // Written out, not synthesized: the synthesized encoder leaves nil out, and the format
    // says `null` ("not discovered", "no hash").
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(format, forKey: .format)
        try container.encode(version, forKey: .version)
        try container.encode(identity, forKey: .identity)
        try container.encode(database_hash, forKey: .database_hash)
        try container.encode(bonded, forKey: .bonded)
        try container.encode(service_changed_bonded ?? false, forKey: .service_changed_bonded)
        try container.encode(complete, forKey: .complete)
        try container.encode(services, forKey: .services)
    }

    init(_ entry: CacheEntry) {
        let database = entry.database
        format = CacheEntry.format
        version = CacheEntry.version
        identity = entry.identity
        database_hash = entry.databaseHash?.hexString()
        bonded = entry.bonded
        service_changed_bonded = entry.serviceChangedBonded
        complete = database.isComplete
        services = database.services.map { service in
            ServiceRecord(
                uuid: service.uuid.description, start: service.handle, end: service.endGroupHandle,
                primary: service.isPrimary ? nil : false,
                includes: database.includes[service.handle]?.map {
                    IncludeRecord(
                        handle: $0.declarationHandle, uuid: $0.service.uuid.description, start: $0.service.handle,
                        end: $0.service.endGroupHandle)
                },
                characteristics: database.characteristics[service.handle]?.map { characteristic in
                    CharacteristicRecord(
                        uuid: characteristic.uuid.description, declaration_handle: characteristic.declarationHandle,
                        value_handle: characteristic.valueHandle, end_handle: characteristic.endHandle,
                        properties: characteristic.properties.rawValue,
                        descriptors: database.descriptors[characteristic.valueHandle]?.map {
                            DescriptorRecord(uuid: $0.uuid.description, handle: $0.handle)
                        })
                })
        }
    }

    func entry() throws(StoreError) -> CacheEntry {
        func uuid(_ text: String) throws(StoreError) -> BluetoothUUID {
            guard let uuid = BluetoothUUID(text) else { throw .malformed("GATT cache: '\(text)' is not a UUID") }
            return uuid
        }
        var hash: [UInt8]?
        if let text = database_hash {
            let digits = Array(text)
            let bytes = stride(from: 0, to: digits.count - 1, by: 2).compactMap {
                UInt8(String(digits[$0...$0 + 1]), radix: 16)
            }
            guard digits.count == 32, bytes.count == 16 else {
                throw .malformed("GATT cache: database_hash '\(text)' is not 16 hex bytes")
            }
            hash = bytes
        }
        var database = GATTDatabase(services: [], isComplete: complete)
        var found: [Service] = []
        // The database keys includes and characteristics by service handle, descriptors by
        // value handle: a second service or characteristic on a handle would silently
        // replace the first's.
        var serviceHandles: Set<AttributeHandle> = [], valueHandles: Set<AttributeHandle> = []
        for record in services {
            guard serviceHandles.insert(record.start).inserted else {
                throw .malformed("GATT cache: two services start at handle \(hex(record.start, digits: 4))")
            }
            let service = Service(
                uuid: try uuid(record.uuid), handle: record.start, endGroupHandle: record.end,
                isPrimary: record.primary ?? true)
            found.append(service)
            if let includes = record.includes {
                var list: [IncludedService] = []
                for include in includes {
                    list.append(
                        IncludedService(
                            declarationHandle: include.handle,
                            service: Service(
                                uuid: try uuid(include.uuid), handle: include.start, endGroupHandle: include.end)))
                }
                database.includes[service.handle] = list
            }
            guard let characteristics = record.characteristics else { continue }
            var list: [Characteristic] = []
            for item in characteristics {
                guard valueHandles.insert(item.value_handle).inserted else {
                    throw .malformed(
                        "GATT cache: two characteristics have value handle \(hex(item.value_handle, digits: 4))")
                }
                let characteristic = Characteristic(
                    uuid: try uuid(item.uuid), declarationHandle: item.declaration_handle,
                    properties: CharacteristicProperties(rawValue: item.properties),
                    valueHandle: item.value_handle, endHandle: item.end_handle)
                list.append(characteristic)
                if let descriptors = item.descriptors {
                    var found: [Descriptor] = []
                    for descriptor in descriptors {
                        found.append(Descriptor(uuid: try uuid(descriptor.uuid), handle: descriptor.handle))
                    }
                    database.descriptors[characteristic.valueHandle] = found
                }
            }
            database.characteristics[service.handle] = list
        }
        // An include names its service by handle; whether that one is secondary is its record's.
        let secondary = Set(found.filter { !$0.isPrimary }.map(\.handle))
        for (handle, list) in database.includes {
            database.includes[handle] = list.map {
                IncludedService(
                    declarationHandle: $0.declarationHandle,
                    service: Service(
                        uuid: $0.service.uuid, handle: $0.service.handle, endGroupHandle: $0.service.endGroupHandle,
                        isPrimary: !secondary.contains($0.service.handle)))
            }
        }
        database = GATTDatabase(
            services: found, isComplete: complete, includes: database.includes,
            characteristics: database.characteristics, descriptors: database.descriptors)
        return CacheEntry(
            identity: identity, databaseHash: hash, bonded: bonded,
            serviceChangedBonded: service_changed_bonded ?? false, database: database)
    }
}
