import BluetoothCore
import DiscoveryCache
import Foundation
import GATT
import HCI
import Testing

/// The discovery cache's file format and its store directory, without a peer.
@Suite struct CacheEntryTests {
    static let custom = BluetoothUUID("B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A00")!
    static let customValue = BluetoothUUID("B1E70008-9D3B-4C7A-8A5E-6F2D0C1B0A00")!

    /// A whole tree: two services, one including the other (by a 128-bit UUID), 16- and
    /// 128-bit characteristics, a characteristic with two descriptors and one with none.
    static let fullDatabase: GATTDatabase = {
        let battery = Service(uuid: BluetoothUUID(UInt16(0x180F)), handle: 0x0010, endGroupHandle: 0x0013)
        let custom = Service(uuid: Self.custom, handle: 0x0020, endGroupHandle: 0x002E)
        let level = Characteristic(
            uuid: BluetoothUUID(UInt16(0x2A19)), declarationHandle: 0x0011, properties: [.read, .notify],
            valueHandle: 0x0012, endHandle: 0x0013)
        let readOnly = Characteristic(
            uuid: Self.customValue, declarationHandle: 0x0022, properties: [.read], valueHandle: 0x0023,
            endHandle: 0x0023)
        let stream = Characteristic(
            uuid: BluetoothUUID(UInt16(0x2A37)), declarationHandle: 0x0024, properties: [.notify, .extendedProperties],
            valueHandle: 0x0025, endHandle: 0x002E)
        return GATTDatabase(
            services: [custom, battery], isComplete: true,
            includes: [0x0010: [], 0x0020: [IncludedService(declarationHandle: 0x0021, service: battery)]],
            characteristics: [0x0010: [level], 0x0020: [readOnly, stream]],
            descriptors: [
                0x0012: [Descriptor(uuid: .clientCharacteristicConfiguration, handle: 0x0013)], 0x0023: [],
                0x0025: [
                    Descriptor(uuid: .clientCharacteristicConfiguration, handle: 0x0026),
                    Descriptor(uuid: BluetoothUUID("0000FEED-0000-1000-8000-00805F9B34FC")!, handle: 0x002E),
                ],
            ])
    }()

    @Test func aWholeDatabaseRoundTrips() throws {
        let hash: [UInt8] = Array(0xF0...0xFF)
        let entry = CacheEntry(
            identity: "F0:0D:B1:E7:00:01/random", databaseHash: hash, bonded: true, database: Self.fullDatabase)
        #expect(Self.fullDatabase.isFullyDiscovered)
        let decoded = try CacheEntry(decoding: entry.encoded())
        #expect(decoded == entry)
        let serviceHandles: [AttributeHandle] = [0x0010, 0x0020]
        #expect(decoded.database.services.map(\.handle) == serviceHandles, "services in handle order")

        // The documented shape: hash as 32 hex digits in wire order, handles as numbers.
        let object = try #require(try JSONSerialization.jsonObject(with: Data(entry.encoded())) as? [String: Any])
        #expect(object["format"] as? String == "bluejay-gatt-cache")
        #expect(object["version"] as? Int == 2)
        #expect(object["service_changed_bonded"] as? Bool == false)
        #expect(object["database_hash"] as? String == "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff")
        #expect(object["bonded"] as? Bool == true)
        #expect(object["complete"] as? Bool == true)
        let services = try #require(object["services"] as? [[String: Any]])
        let starts: [Int?] = services.map { (service: [String: Any]) -> Int? in service["start"] as? Int }
        #expect(starts == [0x10, 0x20])
        let include = try #require((services[1]["includes"] as? [[String: Any]])?.first)
        #expect(include["uuid"] as? String == "180F")
        #expect(include["handle"] as? Int == 0x21)
    }

    /// A secondary service is kept as one: `"primary": false` on its record (absent on a
    /// primary one, as in files written before), and the include that names it says so
    /// after the round trip too.
    @Test func aSecondaryServiceRoundTrips() throws {
        let battery = Service(
            uuid: BluetoothUUID(UInt16(0x180F)), handle: 0x0010, endGroupHandle: 0x0012, isPrimary: false)
        let heartRate = Service(uuid: BluetoothUUID(UInt16(0x180D)), handle: 0x0001, endGroupHandle: 0x0004)
        let database = GATTDatabase(
            services: [heartRate, battery], isComplete: true,
            includes: [0x0001: [IncludedService(declarationHandle: 0x0002, service: battery)], 0x0010: []],
            characteristics: [0x0001: [], 0x0010: []])
        let entry = CacheEntry(
            identity: "F0:0D:B1:E7:00:01/random", databaseHash: nil, bonded: false, database: database)
        let decoded = try CacheEntry(decoding: entry.encoded())
        #expect(decoded == entry)
        #expect(decoded.database.includes[0x0001]?.first?.service.isPrimary == false)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(entry.encoded())) as? [String: Any])
        let services = try #require(object["services"] as? [[String: Any]])
        let primaries: [Bool?] = services.map { (service: [String: Any]) -> Bool? in service["primary"] as? Bool }
        #expect(primaries == [nil, false])
    }

    @Test func aPartialDatabaseKeepsWhatWasNotDiscoveredAsNull() throws {
        // Found by UUID only: the service list is incomplete, one service's characteristics
        // are known (one without its descriptors), the other's are not, includes of neither.
        let heartRate = Service(uuid: BluetoothUUID(UInt16(0x180D)), handle: 0x000E, endGroupHandle: 0x0013)
        let custom = Service(uuid: Self.custom, handle: 0x001D, endGroupHandle: 0x002E)
        let readOnly = Characteristic(
            uuid: Self.customValue, declarationHandle: 0x002D, properties: [.read], valueHandle: 0x002E,
            endHandle: 0x002E)
        let control = Characteristic(
            uuid: BluetoothUUID("B1E70006-9D3B-4C7A-8A5E-6F2D0C1B0A00")!, declarationHandle: 0x0028,
            properties: [.write],
            valueHandle: 0x0029, endHandle: 0x002C)
        let database = GATTDatabase(
            services: [heartRate, custom], isComplete: false,
            characteristics: [0x001D: [control, readOnly]], descriptors: [0x002E: []])
        let entry = CacheEntry(
            identity: "C0:00:00:00:00:01/public", databaseHash: nil, bonded: false, database: database)
        let decoded = try CacheEntry(decoding: entry.encoded())
        #expect(decoded == entry)
        #expect(decoded.database.characteristics[0x000E] == nil)
        #expect(decoded.database.includes.isEmpty)
        #expect(decoded.database.descriptors[0x0029] == nil)
        #expect(decoded.database.descriptors[0x002E] == [])

        let object = try #require(try JSONSerialization.jsonObject(with: Data(entry.encoded())) as? [String: Any])
        #expect(object["database_hash"] is NSNull)
        #expect(object["complete"] as? Bool == false)
        let services = try #require(object["services"] as? [[String: Any]])
        #expect(services[0]["characteristics"] is NSNull, "not discovered is null")
        #expect(services[0]["includes"] is NSNull)
        let characteristics = try #require(services[1]["characteristics"] as? [[String: Any]])
        #expect(characteristics[0]["descriptors"] is NSNull)
        #expect((characteristics[1]["descriptors"] as? [Any])?.isEmpty == true, "discovered, none, is an empty list")
    }

    @Test func anythingButAVersion1Or2CacheFileIsMalformed() throws {
        let good = CacheEntry(
            identity: "F0:0D:B1:E7:00:01/random", databaseHash: Array(repeating: 7, count: 16), bonded: false,
            database: Self.fullDatabase
        ).encoded()
        let text = String(decoding: good, as: UTF8.self)
        func edited(_ from: String, _ to: String) -> [UInt8] {
            #expect(text.contains(from), "the file has \(from)")
            return Array(text.replacingOccurrences(of: from, with: to).utf8)
        }
        let rejected: [(String, [UInt8])] = [
            ("another version", edited("\"version\" : 2", "\"version\" : 3")),
            ("another format", edited("\"bluejay-gatt-cache\"", "\"someone-else\"")),
            ("garbage", Array("not json at all \u{00}\u{ff}".utf8)),
            ("empty", []),
            ("cut short", Array(good.prefix(good.count / 2))),
            ("a short hash", edited("07070707070707070707070707070707", "0707")),
            ("a hash that is not hex", edited("07070707070707070707070707070707", "0707070707070707070707070707070g")),
            ("a bad UUID", edited("\"180F\"", "\"1G0F\"")),
            ("a handle out of range", edited("\"start\" : 32", "\"start\" : 70000")),
            // Found by the cache-file fuzz target: the second of two services (or
            // characteristics) on one handle replaced the first's characteristics (or
            // descriptors), so the entry did not survive saving and loading again.
            ("two services on one handle", edited("\"start\" : 32", "\"start\" : 16")),
            ("two characteristics on one value handle", edited("\"value_handle\" : 35", "\"value_handle\" : 18")),
        ]
        for (what, bytes) in rejected {
            do {
                let entry = try CacheEntry(decoding: bytes)
                Issue.record("\(what): decoded as \(entry)")
            } catch {
                guard case .malformed = error else { Issue.record("\(what): \(error), expected malformed"); continue }
            }
        }
        #expect(throws: Never.self) { try CacheEntry(decoding: good) }
    }

    /// Version 2 adds `service_changed_bonded`; a version 1 file (without it) written by an
    /// earlier Bluejay still reads, as not subscribed, so its entry is hash-checked.
    @Test func aVersion1FileStillReadsAsNotSubscribed() throws {
        let entry = CacheEntry(
            identity: "F0:0D:B1:E7:00:01/random", databaseHash: Array(repeating: 7, count: 16), bonded: true,
            serviceChangedBonded: true, database: Self.fullDatabase)
        let decoded = try CacheEntry(decoding: entry.encoded())
        #expect(decoded == entry)
        #expect(decoded.serviceChangedBonded)
        let text = String(decoding: entry.encoded(), as: UTF8.self)
        #expect(text.contains("\"service_changed_bonded\" : true,\n"))
        let version1 = text.replacingOccurrences(of: "\"version\" : 2", with: "\"version\" : 1")
            .replacingOccurrences(of: "  \"service_changed_bonded\" : true,\n", with: "")
        #expect(!version1.contains("service_changed_bonded") && version1.contains("\"version\" : 1"))
        let old = try CacheEntry(decoding: Array(version1.utf8))
        #expect(old.serviceChangedBonded == false)
        #expect(old.database == entry.database && old.databaseHash == entry.databaseHash && old.bonded)
    }

    @Test func theFileNameOfAnIdentityIsFileSafe() {
        #expect(DiscoveryCache.fileName(for: "F0:0D:B1:E7:00:01/random") == "F00DB1E70001-random.json")
        #expect(DiscoveryCache.identity(BluetoothAddress("F0:0D:B1:E7:00:01")!, .random) == "F0:0D:B1:E7:00:01/random")
        #expect(DiscoveryCache.identity(BluetoothAddress("00:11:22:33:44:55")!, .public) == "00:11:22:33:44:55/public")
    }

    // MARK: The store directory

    /// A fresh directory path under the temporary directory (not created).
    func temporaryPath() -> String {
        NSTemporaryDirectory() + "bluejay-store-\(UUID().uuidString)"
    }

    @Test func writeAtomicallyCreatesTheDirectoryAndAPrivateFile() throws {
        let root = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let store = StoreDirectory(path: root + "/a/b")
        try store.writeAtomically(Array("first".utf8), to: "peer.json")
        var info = stat()
        #expect(stat(root + "/a/b/peer.json", &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(stat(root + "/a/b", &info) == 0)
        #expect(info.st_mode & 0o777 == 0o700)
        #expect(try store.read("peer.json") == Array("first".utf8))
        #expect(try store.read("absent.json") == nil)
    }

    @Test func writeAtomicallyReplacesTheOldFileAndLeavesNoTemporaryFile() throws {
        let root = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let store = StoreDirectory(path: root)
        try store.writeAtomically(Array(repeating: 0x41, count: 10_000), to: "peer.json")
        var before = stat()
        #expect(stat(root + "/peer.json", &before) == 0)
        try store.writeAtomically(Array("short".utf8), to: "peer.json")
        #expect(try store.read("peer.json") == Array("short".utf8), "the shorter new contents, nothing of the old")
        var after = stat()
        #expect(stat(root + "/peer.json", &after) == 0)
        #expect(after.st_ino != before.st_ino, "a new file renamed over the old one, not rewritten in place")
        #expect(after.st_mode & 0o777 == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root) == ["peer.json"])
    }

    @Test func fileNamesLeaveOutTemporaryFiles() throws {
        let root = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let store = StoreDirectory(path: root)
        #expect(try store.fileNames() == [], "a missing directory lists nothing")
        try store.writeAtomically(Array("{}".utf8), to: "b.json")
        try store.writeAtomically(Array("{}".utf8), to: "a.json")
        // What a writer killed between creating and renaming its temporary file leaves.
        #expect(FileManager.default.createFile(atPath: root + "/.c.json.tmp-4242", contents: Data("{\"trunc".utf8)))
        #expect(try store.fileNames() == ["a.json", "b.json"])
        #expect(try store.remove("a.json"))
        #expect(try !store.remove("a.json"))
        #expect(try store.fileNames() == ["b.json"])
    }

    @Test @BluetoothActor func entriesSkipTemporaryAndUnreadableFiles() throws {
        let root = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let cache = DiscoveryCache(store: StoreDirectory(path: root), logger: .silent)
        #expect(try cache.entries().isEmpty)
        let entry = CacheEntry(
            identity: "F0:0D:B1:E7:00:01/random", databaseHash: nil, bonded: true, database: Self.fullDatabase)
        try cache.store(entry)
        #expect(
            FileManager.default.createFile(atPath: cache.directory.path + "/garbage.json", contents: Data("{".utf8)))
        #expect(
            FileManager.default.createFile(
                atPath: cache.directory.path + "/." + DiscoveryCache.fileName(for: entry.identity) + ".tmp-1",
                contents: Data(entry.encoded())))
        #expect(try cache.entries() == [entry])
        #expect(cache.entry(for: entry.identity) == entry)
        #expect(cache.entry(for: "00:00:00:00:00:01/public") == nil)
        #expect(try cache.removeAll() == 2, "the entry and the unreadable file; not the temporary file")
        #expect(try cache.entries().isEmpty)
    }
}
