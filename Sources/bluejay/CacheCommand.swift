import ArgumentParser
import BluetoothCore
import DiscoveryCache
import GATT
import HCI
import TraceDecoding

/// `bluejay cache list|clear`: the GATT discovery cache.
struct Cache: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Show or clear the GATT discovery cache.",
        discussion:
            "Entries live in $BLUEJAY_STORE/gatt-cache (else $XDG_STATE_HOME/bluejay/gatt-cache, else ~/.local/state/bluejay/gatt-cache), one JSON file per peer.",
        subcommands: [List.self, Clear.self, StressWrite.self])

    /// `bluejay cache list`.
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List the cached peers: identity, services, database hash.")

        @Flag(
            name: .long,
            help:
                "One JSON object per entry: identity, file, services, characteristics, complete, database_hash, bonded, service_changed_bonded."
        )
        var json = false

        func run() async throws {
            let json = json
            let lines = try await Task { @BluetoothActor in
                let cache = DiscoveryCache()
                let entries: [CacheEntry]
                do { entries = try cache.entries() } catch { throw CLIError("cache: \(error)") }
                return entries.map { entry in
                    let database = entry.database
                    let characteristics = database.characteristics.values.reduce(0) { $0 + $1.count }
                    let hash = entry.databaseHash?.hexString()
                    if json {
                        return
                            "{\"identity\": \(JSONValue.quote(entry.identity)), \"file\": \(JSONValue.quote(cache.directory.path + "/" + DiscoveryCache.fileName(for: entry.identity))), "
                            + "\"services\": \(database.services.count), \"characteristics\": \(characteristics), \"complete\": \(database.isComplete), "
                            + "\"database_hash\": \(hash.map(JSONValue.quote) ?? "null"), \"bonded\": \(entry.bonded), "
                            + "\"service_changed_bonded\": \(entry.serviceChangedBonded)}"
                    }
                    return
                        "\(entry.identity)  \(database.services.count) services, \(characteristics) characteristics\(database.isComplete ? "" : " (partial)"), "
                        + "hash \(hash ?? "none")\(entry.bonded ? ", bonded" : "")"
                        + (entry.serviceChangedBonded
                            ? ", trusted on a bonded link (Service Changed kept by the peer)" : "")
                }
            }.value
            for line in lines { print(line) }
        }
    }

    /// `bluejay cache clear [ADDRESS]`.
    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "clear", abstract: "Forget one peer's cached database, or all of them.")

        @Argument(
            help:
                "The peer: AA:BB:CC:DD:EE:FF[/random|/public] (default: every entry). Without a type, both are cleared."
        )
        var address: String?

        func validate() throws {
            if let address, Connect.parse(address) == nil {
                throw ValidationError(
                    "'\(address)' is not an address: expected AA:BB:CC:DD:EE:FF, optionally with /random or /public")
            }
        }

        func run() async throws {
            let target = address.flatMap(Connect.parse)
            let count = try await Task { @BluetoothActor in
                let cache = DiscoveryCache()
                do {
                    guard let (address, type) = target else { return try cache.removeAll() }
                    let types: [AddressType] = type.map { [$0] } ?? [.public, .random]
                    var removed = 0
                    for type in types where try cache.remove(DiscoveryCache.identity(address, type)) { removed += 1 }
                    return removed
                } catch {
                    throw CLIError("cache: \(error)")
                }
            }.value
            print("Removed \(count) cache entr\(count == 1 ? "y" : "ies").")
        }
    }

    /// `bluejay cache stress-write --count N`: a test hook, hidden from help. Writes N cache
    /// entries as fast as it can, round-robin for three made-up peers, each database a little
    /// larger than the last (1 to 64 services), through ``DiscoveryCache/store(_:)``. The
    /// SIGKILL test in Tests/IntegrationTests/DiscoveryCacheTests.swift kills it mid-write and
    /// checks that every entry left behind is whole.
    struct StressWrite: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "stress-write", abstract: "Test hook: write cache entries in a tight loop.",
            shouldDisplay: false)

        @Option(name: .long, help: "How many entries to write.")
        var count = 1000

        func validate() throws {
            guard count >= 0 else { throw ValidationError("--count must not be negative") }
        }

        func run() async throws {
            let count = count
            try await Task { @BluetoothActor in
                let cache = DiscoveryCache()
                let peers = (1...3).map {
                    DiscoveryCache.identity(
                        BluetoothAddress(littleEndianBytes: [UInt8($0), 0, 0, 0, 0, 0xC0]), .random)
                }
                for index in 0..<count {
                    let size = 1 + (index / peers.count) % 64
                    let hash = (0..<16).map { UInt8(truncatingIfNeeded: index &+ $0) }
                    let entry = CacheEntry(
                        identity: peers[index % peers.count], databaseHash: hash, bonded: false,
                        database: Self.database(services: size))
                    do { try cache.store(entry) } catch { throw CLIError("cache: \(error)") }
                }
            }.value
        }

        /// `services` services of 5 handles each: one characteristic with a CCCD.
        static func database(services: Int) -> GATTDatabase {
            var database = GATTDatabase(services: [], isComplete: true)
            for index in 0..<services {
                let start = AttributeHandle(rawValue: UInt16(1 + index * 5))
                let service = Service(
                    uuid: BluetoothUUID(UInt16(0x1800 + index)), handle: start, endGroupHandle: start + 4)
                database.services.append(service)
                database.includes[start] = []
                let characteristic = Characteristic(
                    uuid: BluetoothUUID(UInt16(0x2A00 + index)), declarationHandle: start + 1,
                    properties: [.read, .notify], valueHandle: start + 2, endHandle: start + 4)
                database.characteristics[start] = [characteristic]
                database.descriptors[start + 2] = [
                    Descriptor(uuid: .clientCharacteristicConfiguration, handle: start + 3)
                ]
            }
            return database
        }
    }
}
