import ATT
import BluetoothCore
import DiscoveryCache
import GATT
import Glibc
import HCI
import Testing

/// The cache's validation against scripted PDUs: what is sent on a hit, a miss and a stale
/// entry, and the retry after `databaseOutOfSync`.
@Suite @BluetoothActor
struct DiscoveryCacheTests {
    static let identity = "F0:0D:B1:E7:00:01/random"
    static let hash = (0..<16).map { UInt8($0 * 3) }
    static let heartRate = Service(uuid: BluetoothUUID(UInt16(0x180D)), handle: 0x10, endGroupHandle: 0x18)
    static let measurement = Characteristic(uuid: BluetoothUUID(UInt16(0x2A37)), declarationHandle: 0x11, properties: [.notify],
                                            valueHandle: 0x12, endHandle: 0x13)
    static let database = GATTDatabase(services: [heartRate], isComplete: false, characteristics: [0x10: [measurement]],
                                       descriptors: [0x12: [Descriptor(uuid: .clientCharacteristicConfiguration, handle: 0x13)]])

    /// A cache in a fresh temporary store.
    func makeCache() -> DiscoveryCache {
        var template = Array("/tmp/bluejay-cache-test-XXXXXX".utf8CString)
        let path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        return DiscoveryCache(store: StoreDirectory(path: path), logger: .silent)
    }

    /// The Database Hash read: Read By Type 0x2B2A answered with `value` at 0x000D.
    func expectHashRead(_ server: ScriptedServer, _ value: [UInt8]?) {
        if let value {
            server.expect("08 01 00 FF FF 2A 2B", "09 12 0D 00" + value.hexString())
        } else {
            server.expect("08 01 00 FF FF 2A 2B", "01 08 01 00 0A")
        }
    }

    @Test func aMatchingHashAdoptsTheCacheWithOneRequest() async throws {
        let cache = makeCache()
        try cache.store(CacheEntry(identity: Self.identity, databaseHash: Self.hash, bonded: false, database: Self.database))
        let server = ScriptedServer()
        let client = GATTClient(bearer: server.bearer)
        expectHashRead(server, Self.hash)
        #expect(try await cache.prepare(client, identity: Self.identity) == .hit)
        #expect(client.database == Self.database)
        // Known handles: the lookup and the subscription's CCCD cost no discovery.
        let found = try await client.characteristic(Self.measurement.uuid, in: Self.heartRate.uuid)
        server.expect("12 13 00 01 00", "13")
        try await client.setNotifications(.notify, for: found)
        server.verify()
        #expect(server.sent.count == 2)
    }

    @Test func aDifferentHashDropsTheEntryAndDiscovers() async throws {
        let cache = makeCache()
        try cache.store(CacheEntry(identity: Self.identity, databaseHash: Self.hash, bonded: false, database: Self.database))
        let server = ScriptedServer()
        let client = GATTClient(bearer: server.bearer)
        expectHashRead(server, Self.hash.reversed())
        // Robust caching: find Client Supported Features and set bit 0.
        server.expect("06 01 00 FF FF 00 28 01 18", "07 06 00 0D 00")
        server.expect("06 0E 00 FF FF 00 28 01 18", "01 06 0E 00 0A")
        server.expect("08 06 00 0D 00 03 28", "09 07 0A 00 0A 0B 00 29 2B 0C 00 02 0D 00 2A 2B")
        server.expect("08 0D 00 0D 00 03 28", "01 08 0D 00 0A")
        server.expect("12 0B 00 01", "13")
        #expect(try await cache.prepare(client, identity: Self.identity) == .stale)
        #expect(cache.entry(for: Self.identity) == nil)
        #expect(client.database.service(Self.heartRate.uuid) == nil)
        server.verify()

        // What is discovered now is saved with the new hash.
        cache.finish(client)
        let saved = try #require(cache.entry(for: Self.identity))
        #expect(saved.databaseHash == Self.hash.reversed())
        #expect(saved.database == client.database)
    }

    @Test func aPeerWithoutAHashIsTrustedOnlyWhenBonded() async throws {
        let cache = makeCache()
        try cache.store(CacheEntry(identity: Self.identity, databaseHash: nil, bonded: false, database: Self.database))
        let server = ScriptedServer()
        let client = GATTClient(bearer: server.bearer)
        expectHashRead(server, nil)
        server.expect("06 01 00 FF FF 00 28 01 18", "01 06 01 00 0A")
        #expect(try await cache.prepare(client, identity: Self.identity) == .stale)
        server.verify()

        try cache.store(CacheEntry(identity: Self.identity, databaseHash: nil, bonded: true, database: Self.database))
        let bonded = ScriptedServer()
        let bondedClient = GATTClient(bearer: bonded.bearer)
        expectHashRead(bonded, nil)
        #expect(try await cache.prepare(bondedClient, identity: Self.identity, bonded: true) == .hit)
        #expect(bondedClient.database == Self.database)
        bonded.verify()
    }

    @Test func databaseOutOfSyncRevalidatesAndRetriesOnce() async throws {
        let cache = makeCache()
        try cache.store(CacheEntry(identity: Self.identity, databaseHash: Self.hash, bonded: false, database: Self.database))
        let server = ScriptedServer()
        let client = GATTClient(bearer: server.bearer)
        expectHashRead(server, Self.hash)
        #expect(try await cache.prepare(client, identity: Self.identity) == .hit)
        // The peer changed: the read is refused, the hash differs, the cache is dropped and
        // the retry rediscovers before reading.
        server.expect("0A 12 00", "01 0A 12 00 12")
        expectHashRead(server, Self.hash.reversed())
        server.expect("06 01 00 FF FF 00 28 0D 18", "07 20 00 28 00")
        server.expect("06 29 00 FF FF 00 28 0D 18", "01 06 29 00 0A")
        server.expect("08 20 00 28 00 03 28", "09 07 21 00 02 22 00 37 2A")
        server.expect("08 22 00 28 00 03 28", "01 08 22 00 0A")
        server.expect("0A 22 00", "0B 07")
        let value = try await cache.retryingOutOfSync(client) { () async throws(GATTError) -> [UInt8] in
            let characteristic = try await client.characteristic(Self.measurement.uuid, in: Self.heartRate.uuid)
            return try await client.read(characteristic.valueHandle)
        }
        #expect(value == [0x07])
        #expect(cache.entry(for: Self.identity) == nil)
        server.verify()
    }

    @Test func aDisabledCacheSendsNothing() async throws {
        let cache = makeCache()
        cache.isEnabled = false
        let server = ScriptedServer()
        #expect(try await cache.prepare(GATTClient(bearer: server.bearer), identity: Self.identity) == .disabled)
        #expect(server.sent.isEmpty)
    }
}
