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
    static let measurement = Characteristic(
        uuid: BluetoothUUID(UInt16(0x2A37)), declarationHandle: 0x11, properties: [.notify],
        valueHandle: 0x12, endHandle: 0x13)
    static let database = GATTDatabase(
        services: [heartRate], isComplete: false, characteristics: [0x10: [measurement]],
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
        try cache.store(
            CacheEntry(identity: Self.identity, databaseHash: Self.hash, bonded: false, database: Self.database))
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
        try cache.store(
            CacheEntry(identity: Self.identity, databaseHash: Self.hash, bonded: false, database: Self.database))
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
        try cache.store(
            CacheEntry(identity: Self.identity, databaseHash: Self.hash, bonded: false, database: Self.database))
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

    // MARK: Bonded reconnection (issue #25 item 3)

    static let gattService = Service(uuid: .genericAttribute, handle: 0x06, endGroupHandle: 0x0B)
    static let serviceChanged = Characteristic(
        uuid: .serviceChanged, declarationHandle: 0x09, properties: [.indicate],
        valueHandle: 0x0A, endHandle: 0x0B)
    /// A complete database with Service Changed at 0x000A (CCCD 0x000B) and Heart Rate.
    static let subscribable = GATTDatabase(
        services: [gattService, heartRate], isComplete: true, includes: [0x06: [], 0x10: []],
        characteristics: [0x06: [serviceChanged], 0x10: [measurement]],
        descriptors: [
            0x0A: [Descriptor(uuid: .clientCharacteristicConfiguration, handle: 0x0B)],
            0x12: [Descriptor(uuid: .clientCharacteristicConfiguration, handle: 0x13)],
        ])

    /// A cache holding a subscribed entry of ``subscribable``, and a client on a scripted
    /// server that has preloaded it (as before encryption).
    func preloadedClient() throws -> (DiscoveryCache, ScriptedServer, GATTClient) {
        let cache = makeCache()
        try cache.store(
            CacheEntry(
                identity: Self.identity, databaseHash: Self.hash, bonded: true, serviceChangedBonded: true,
                database: Self.subscribable))
        let server = ScriptedServer()
        let client = GATTClient(bearer: server.bearer)
        #expect(cache.preload(client, identity: Self.identity))
        return (cache, server, client)
    }

    /// Saved subscribed on a bonded link and reconnected on one: nothing is sent, not even
    /// the hash read; a Service Changed indication the peer sends on encryption, before the
    /// cache is prepared, still invalidates (and the file keeps the rest, still subscribed).
    @Test func aBondedLinkTrustsASubscribedEntryWithoutTheHash() async throws {
        let (cache, server, client) = try preloadedClient()
        #expect(client.serviceChangedHandle == 0x0A && client.isSubscribedToServiceChanged)
        #expect(client.database == Self.subscribable)
        server.push("1D 0A 00 10 00 18 00")  // Heart Rate changed while we were away
        #expect(client.database.service(Self.heartRate.uuid) == nil)
        #expect(try await cache.prepare(client, identity: Self.identity, bonded: true, bondedLink: true) == .trusted)
        #expect(server.sent == [[0x1E]], "only the indication's confirmation")
        #expect(try await client.subscribeToServiceChanged(), "the peer keeps the subscription: no CCCD write")
        #expect(server.sent == [[0x1E]])
        cache.finish(client)
        let saved = try #require(cache.entry(for: Self.identity))
        #expect(saved.serviceChangedBonded)
        #expect(saved.database.service(Self.heartRate.uuid) == nil && saved.database.service(.genericAttribute) != nil)
        #expect(!saved.database.isComplete)
    }

    /// Preloaded, but the link is not encrypted with the bond (it failed, or the peer lost
    /// the bond and we paired again): the entry is taken back, the hash decides, and the
    /// subscription is no longer assumed (nor saved as the peer's).
    @Test func aLinkNotEncryptedWithTheBondChecksTheHash() async throws {
        let (cache, server, client) = try preloadedClient()
        expectHashRead(server, Self.hash)
        #expect(try await cache.prepare(client, identity: Self.identity, bonded: true, bondedLink: false) == .hit)
        #expect(!client.isSubscribedToServiceChanged)
        server.verify()
        cache.finish(client)
        #expect(cache.entry(for: Self.identity)?.serviceChangedBonded == false)
    }

    /// An entry that was not saved subscribed is hash-checked even on a bonded link; once
    /// the client subscribes there, the entry is saved subscribed for the next time.
    @Test func subscribingOnABondedLinkIsRecorded() async throws {
        let cache = makeCache()
        try cache.store(
            CacheEntry(identity: Self.identity, databaseHash: Self.hash, bonded: true, database: Self.subscribable))
        let server = ScriptedServer()
        let client = GATTClient(bearer: server.bearer)
        #expect(!cache.preload(client, identity: Self.identity))
        expectHashRead(server, Self.hash)
        #expect(try await cache.prepare(client, identity: Self.identity, bonded: true, bondedLink: true) == .hit)
        server.expect("12 0B 00 02 00", "13")
        #expect(try await client.subscribeToServiceChanged())
        server.verify()
        cache.finish(client)
        #expect(cache.entry(for: Self.identity)?.serviceChangedBonded == true)
    }

    @Test func aDisabledCacheSendsNothing() async throws {
        let cache = makeCache()
        cache.isEnabled = false
        let server = ScriptedServer()
        #expect(try await cache.prepare(GATTClient(bearer: server.bearer), identity: Self.identity) == .disabled)
        #expect(server.sent.isEmpty)
    }
}
