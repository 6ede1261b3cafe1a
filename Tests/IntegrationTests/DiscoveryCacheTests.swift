import ATT
import BluetoothCore
import DiscoveryCache
import Foundation
import GATT
import HCI
import L2CAP
import SMP
import HCITestSupport
import Testing
import TraceDecoding

/// The GATT discovery cache through the `bluejay` tool against the Bumble peer: each test
/// has its own store directory (`BLUEJAY_STORE`), and what went over the air is read back
/// from the `--capture` btsnoop files.
extension IntegrationTests {
    static let customService = "B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A00"
    static let readOnlyCharacteristic = "B1E70008-9D3B-4C7A-8A5E-6F2D0C1B0A00"

    /// Acceptance 1: with a matching Database Hash the second `bluejay gatt` sends no
    /// discovery request at all — only the hash's Read By Type, the value reads and the
    /// MTU exchange — and prints the same tree as the first, which did discover.
    @Test func cacheSecondGattRunSendsNoDiscoveryRequests() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let store = try CacheTestStore()
        defer { store.remove() }
        let target = peer.address + "/random"

        // --no-pair: a pairing retry would add a read to the first run only.
        let first = try await store.bluejay([
            "gatt", target, "--transport", peer.transport, "--no-pair", "--capture", store.file("first.btsnoop"),
        ])
        #expect(first.status == 0, "stderr: \(first.stderr)")
        #expect(first.stdout.contains("\"Bluejay read-only\""))
        #expect(
            FileManager.default.fileExists(atPath: store.entryPath(target)), "the first run saved what it discovered")
        let second = try await store.bluejay([
            "gatt", target, "--transport", peer.transport, "--no-pair", "--capture", store.file("second.btsnoop"),
        ])
        #expect(second.status == 0, "stderr: \(second.stderr)")
        #expect(second.stdout == first.stdout, "the cached tree prints exactly like the discovered one")

        let discovered = try CapturedATT.requests(in: store.file("first.btsnoop"))
        #expect(discovered.contains { $0.opcode == .readByGroupTypeRequest })
        #expect(discovered.contains { $0.opcode == .findInformationRequest })
        #expect(discovered.contains { $0.readByTypeUUID == .characteristic })
        #expect(discovered.contains { $0.readByTypeUUID == .include })

        let cached = try CapturedATT.requests(in: store.file("second.btsnoop"))
        #expect(cached.filter(\.isDiscovery).isEmpty, "discovery on a hash match: \(cached.filter(\.isDiscovery))")
        let unexpected = cached.filter { request in
            ![ATTOpcode.exchangeMTURequest, .readRequest, .readBlobRequest].contains(request.opcode)
                && request.readByTypeUUID != .databaseHash
        }
        #expect(unexpected.isEmpty, "only the MTU exchange, the hash and value reads: \(unexpected)")
        #expect(cached.first?.opcode == .exchangeMTURequest)
        #expect(cached.dropFirst().first?.readByTypeUUID == .databaseHash, "the hash is read first")
        // The same values are read, in the same order: the cached handles are the peer's.
        // Discovery also read the included service's declaration (0x002F) for its 128-bit
        // UUID, which the cache remembers.
        let includeRead: [UInt8] = [ATTOpcode.readRequest.rawValue, 0x2F, 0x00]
        let discoveredReads: [[UInt8]] = discovered.filter { (request: CapturedATT) -> Bool in
            request.opcode == .readRequest
        }.map(\.pdu)
        let cachedReads: [[UInt8]] = cached.filter { (request: CapturedATT) -> Bool in request.opcode == .readRequest }
            .map(\.pdu)
        let includeReads: Int = discoveredReads.filter { (pdu: [UInt8]) -> Bool in pdu == includeRead }.count
        #expect(includeReads == 1)
        let discoveredValueReads: [[UInt8]] = discoveredReads.filter { (pdu: [UInt8]) -> Bool in pdu != includeRead }
        #expect(cachedReads == discoveredValueReads)
        #expect(
            second.stdout.contains("Include 0x0033 → B1E70201-9D3B-4C7A-8A5E-6F2D0C1B0A00 0x002f…0x0031"),
            "\(second.stdout)")

        // The trace decoder's own ATT counts agree.
        let before = TraceSummary(file: try BTSnoopFile(path: store.file("first.btsnoop"))).att
        let after = TraceSummary(file: try BTSnoopFile(path: store.file("second.btsnoop"))).att
        for opcode in [ATTOpcode.readByGroupTypeRequest, .findByTypeValueRequest, .findInformationRequest] {
            #expect(after[opcode.description] == nil, "\(opcode) in the second run")
        }
        #expect(after[ATTOpcode.readByTypeRequest.description] == 1)
        #expect(after[ATTOpcode.exchangeMTURequest.description] == 1)
        #expect((before[ATTOpcode.readByTypeRequest.description] ?? 0) > 10)
        #expect((before[ATTOpcode.readByGroupTypeRequest.description] ?? 0) >= 1)
    }

    /// Acceptance 2: the peer's database changes between connections (`--layout 2` moves
    /// the test service by 3 handles); the next `bluejay read` sees the new hash,
    /// rediscovers, reads the right handle and never the cached one, and the cache then
    /// holds the new hash.
    @Test func cacheRediscoversWhenThePeersDatabaseChanges() async throws {
        let store = try CacheTestStore()
        defer { store.remove() }
        func read(_ target: String) -> [String] {
            ["read", "--hex", target, Self.customService, Self.readOnlyCharacteristic]
        }
        let expected = Array("Bluejay read-only".utf8).hexString() + "\n"
        let readOnly = BluetoothUUID(Self.readOnlyCharacteristic)!

        let before = try await TestPeer()
        let target = before.address + "/random"
        let first = try await store.bluejay(
            read(target) + ["--transport", before.transport, "--capture", store.file("layout1.btsnoop")])
        before.stop()
        #expect(first.status == 0, "stderr: \(first.stderr)")
        #expect(first.stdout == expected)
        let oldEntry = try store.entry(target)
        let oldHandle = try #require(
            oldEntry.database.characteristics.values.joined().first { $0.uuid == readOnly }?.valueHandle)
        let oldHash = try #require(oldEntry.databaseHash)

        let after = try await TestPeer(arguments: ["--layout", "2"])
        defer { after.stop() }
        let second = try await store.bluejay(
            read(target) + ["--transport", after.transport, "--capture", store.file("layout2.btsnoop")])
        #expect(second.status == 0, "stderr: \(second.stderr)")
        #expect(second.stdout == expected, "the right value from the moved characteristic")

        let newEntry = try store.entry(target)
        let newHandle = try #require(
            newEntry.database.characteristics.values.joined().first { $0.uuid == readOnly }?.valueHandle)
        #expect(newHandle == oldHandle + 3, "layout 2 moves the test service by 3 handles")
        let traffic = try CapturedATT.all(in: store.file("layout2.btsnoop"))
        let requests = traffic.filter(\.sent)
        #expect(requests.contains { $0.opcode == .findByTypeValueRequest }, "the service is found again")
        #expect(requests.contains { $0.readByTypeUUID == .characteristic }, "and its characteristics")
        #expect(
            requests.filter { $0.opcode == .readRequest }.map(\.handle) == [newHandle],
            "one read, of the new handle; never the cached \(hex(oldHandle, digits: 4))")
        let errors = traffic.filter {
            !$0.sent && $0.opcode == .errorResponse && $0.pdu.last != ATTErrorCode.attributeNotFound.rawValue
        }
        #expect(errors.isEmpty, "only Attribute Not Found (ends of discoveries): \(errors)")

        // The hash the peer sent is the one now cached, and `cache list` shows it.
        let hashIndex = try #require(traffic.firstIndex { $0.readByTypeUUID == .databaseHash })
        let hashResponse = try #require(traffic[(hashIndex + 1)...].first { !$0.sent })
        #expect(hashResponse.opcode == .readByTypeResponse)
        let newHash = Array(hashResponse.pdu.suffix(16))
        #expect(newHash != oldHash)
        #expect(newEntry.databaseHash == newHash)
        let list = try await store.bluejay(["cache", "list", "--json"])
        #expect(list.status == 0, "stderr: \(list.stderr)")
        let objects: [[String: Any]] = try list.stdout.split(separator: "\n").map {
            (line: Substring) throws -> [String: Any] in
            try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        #expect(objects.count == 1)
        #expect(objects.first?["identity"] as? String == target)
        #expect(objects.first?["database_hash"] as? String == newHash.hexString())
    }

    /// Acceptance 3 (and issue 11's durability): a writer SIGKILLed at any moment leaves
    /// every entry whole. A process writing entries in a tight loop (`bluejay cache
    /// stress-write`) is killed 200 times at varying moments; each time, every `*.json` file
    /// must decode as a CacheEntry named after its identity, and the temporary files left
    /// behind are never taken for entries.
    @Test func cacheFilesAreWholeAfterSIGKILLDuringWrites() async throws {
        let store = try CacheTestStore()
        defer { store.remove() }
        try await killWritersRepeatedly(
            ["cache", "stress-write", "--count", "1000000"], store: store.path, folder: "gatt-cache"
        ) { name, bytes in
            let entry = try CacheEntry(decoding: bytes)
            #expect(DiscoveryCache.fileName(for: entry.identity) == name)
            #expect((1...64).contains(entry.database.services.count))
            #expect(entry.database.isFullyDiscovered)
        }
        // Only the three peers' entries count; the temporary files of killed writers do not.
        let entries = try StoreDirectory(path: store.path + "/gatt-cache").fileNames()
        #expect(entries == ["C00000000001-random.json", "C00000000002-random.json", "C00000000003-random.json"])
        let list = try await store.bluejay(["cache", "list", "--json"])
        #expect(list.status == 0, "stderr: \(list.stderr)")
        #expect(list.stderr.isEmpty, "no entry was unreadable")
        #expect(list.stdout.split(separator: "\n").count == 3)
        let clear = try await store.bluejay(["cache", "clear"])
        #expect(clear.stdout == "Removed 3 cache entries.\n")
    }

    /// The same for the key store: `bluejay bonds stress-write` killed 200 times; every bond
    /// file is a whole, usable bond for the address it is named after, and `bonds` lists the
    /// three peers with nothing unreadable.
    @Test func bondFilesAreWholeAfterSIGKILLDuringWrites() async throws {
        let store = try CacheTestStore()
        defer { store.remove() }
        try await killWritersRepeatedly(
            ["bonds", "stress-write", "--count", "1000000"], store: store.path, folder: "bonds"
        ) { name, bytes in
            let bond = try JSONDecoder().decode(Bond.self, from: Data(bytes))
            #expect(bond.isUsable)
            #expect(bond.address.filter { $0 != ":" } + ".json" == name)
        }
        let list = try await store.bluejay(["bonds"])
        #expect(list.status == 0 && list.stderr.isEmpty, "stderr: \(list.stderr)")
        #expect(list.stdout.split(separator: "\n").count == 3)
    }

    /// Runs `arguments` (a writer in a tight loop) `rounds` times, each killed with SIGKILL
    /// at a different moment, and checks every file of `folder` with `check` after each kill.
    /// Some kills must land between a temporary file's creation and its rename.
    func killWritersRepeatedly(
        _ arguments: [String], store: String, folder: String, rounds: Int = 200,
        check: (String, [UInt8]) throws -> Void
    ) async throws {
        let directory = store + "/" + folder
        var killedBeforeRename = 0
        for round in 0..<rounds {
            let process = Process()
            process.executableURL = Repository.bluejay
            process.arguments = arguments
            process.environment = ProcessInfo.processInfo.environment.merging(["BLUEJAY_STORE": store]) { $1 }
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            // Temporary files are `.NAME.tmp-PID-RANDOM`.
            let temporaryMark = ".tmp-\(process.processIdentifier)-"
            // Wait (at most a second) for this writer's first temporary file, then up to
            // 15 ms more: most kills land while a temporary file exists, some between.
            let deadline = ContinuousClock.now + .seconds(1)
            while ContinuousClock.now < deadline {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
                if names.contains(where: { $0.contains(temporaryMark) }) || !process.isRunning { break }
                try await Task.sleep(for: .microseconds(100))
            }
            try await Task.sleep(for: .microseconds(round * 509 % 15_000))
            kill(process.processIdentifier, SIGKILL)
            await waitUntilExit(process)
            #expect(
                process.terminationReason == .uncaughtSignal,
                "round \(round): killed mid-loop, status \(process.terminationStatus)")

            let names = try FileManager.default.contentsOfDirectory(atPath: directory)
            if names.contains(where: { $0.contains(temporaryMark) }) { killedBeforeRename += 1 }
            for name in names {
                if name.hasPrefix(".") {
                    #expect(name.contains(".json.tmp-"), "round \(round): unexpected file \(name)")
                    continue
                }
                #expect(name.hasSuffix(".json"), "round \(round): unexpected file \(name)")
                let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name)))
                do { try check(name, bytes) } catch {
                    Issue.record("round \(round): \(name) (\(bytes.count) bytes) is torn: \(error)")
                }
            }
        }
        // Otherwise the kills all fell outside the window this test is about.
        #expect(killedBeforeRename > 0, "no SIGKILL landed between creating a temporary file and renaming it")
    }

    /// Acceptance 4: `cache list` shows what `gatt` saved, `cache clear ADDRESS` forgets one
    /// peer, `cache clear` all of them; the JSON lines have the documented keys.
    @Test func cacheListAndClearShowAndForgetEntries() async throws {
        let peer = try await TestPeer(arguments: ["--peripherals", "2"])
        defer { peer.stop() }
        let store = try CacheTestStore()
        defer { store.remove() }
        let empty = try await store.bluejay(["cache", "list"])
        #expect(empty.status == 0 && empty.stdout.isEmpty, "no entries yet: \(empty)")

        for address in peer.addresses {
            let result = try await store.bluejay(["gatt", address + "/random", "--transport", peer.transport])
            #expect(result.status == 0, "stderr: \(result.stderr)")
        }
        let text = try await store.bluejay(["cache", "list"])
        #expect(text.status == 0, "stderr: \(text.stderr)")
        let lines = text.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        for address in peer.addresses {
            #expect(
                lines.contains { $0.hasPrefix("\(address)/random  8 services, 19 characteristics, hash ") },
                "\(text.stdout)")
        }

        let json = try await store.bluejay(["cache", "list", "--json"])
        #expect(json.status == 0, "stderr: \(json.stderr)")
        let objects: [[String: Any]] = try json.stdout.split(separator: "\n").map {
            (line: Substring) throws -> [String: Any] in
            try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        let identities: [String] = objects.compactMap { (object: [String: Any]) -> String? in
            object["identity"] as? String
        }.sorted()
        let targets: [String] = peer.addresses.map { (address: String) -> String in address + "/random" }.sorted()
        #expect(identities == targets)
        for object in objects {
            let entryKeys: Set<String> = [
                "identity", "file", "services", "characteristics", "complete", "database_hash", "bonded",
                "service_changed_bonded",
            ]
            #expect(Set(object.keys) == entryKeys)
            #expect(object["service_changed_bonded"] as? Bool == false)
            #expect(object["services"] as? Int == 8)
            #expect(object["characteristics"] as? Int == 19)
            #expect(object["complete"] as? Bool == true)
            #expect(object["bonded"] as? Bool == false)
            let hash = try #require(object["database_hash"] as? String)
            #expect(hash.count == 32 && hash.allSatisfy(\.isHexDigit))
            let file = try #require(object["file"] as? String)
            #expect(file == store.entryPath(object["identity"] as? String ?? ""))
            let entry = try CacheEntry(decoding: Array(try Data(contentsOf: URL(fileURLWithPath: file))))
            #expect(entry.databaseHash?.hexString() == hash)
        }

        // One peer, by address without a type: both types are tried, one entry existed.
        let second = peer.addresses[1]
        let clearOne = try await store.bluejay(["cache", "clear", second])
        #expect(clearOne.stdout == "Removed 1 cache entry.\n", "stderr: \(clearOne.stderr)")
        #expect(!FileManager.default.fileExists(atPath: store.entryPath(second + "/random")))
        let remaining = try await store.bluejay(["cache", "list"])
        let remainingTargets: [String] = remaining.stdout.split(separator: "\n").map { (line: Substring) -> String in
            String(line.prefix(24))
        }
        let firstTarget: String = peer.address + "/random"
        #expect(remainingTargets == [firstTarget])
        let again = try await store.bluejay(["cache", "clear", second + "/random"])
        #expect(again.stdout == "Removed 0 cache entries.\n")
        let bad = try await store.bluejay(["cache", "clear", "F0:0D"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("is not an address"))

        let clearAll = try await store.bluejay(["cache", "clear"])
        #expect(clearAll.stdout == "Removed 1 cache entry.\n", "stderr: \(clearAll.stderr)")
        let none = try await store.bluejay(["cache", "list", "--json"])
        #expect(none.status == 0 && none.stdout.isEmpty)
        #expect(try StoreDirectory(path: store.path + "/gatt-cache").fileNames().isEmpty)

        // Without BLUEJAY_STORE the store is $XDG_STATE_HOME/bluejay; BLUEJAY_STORE wins.
        let state = store.file("state")
        let xdg = ["BLUEJAY_STORE": "", "XDG_STATE_HOME": state]
        let written = try await store.bluejay(["cache", "stress-write", "--count", "3"], environment: xdg)
        #expect(written.status == 0, "stderr: \(written.stderr)")
        let listed = try await store.bluejay(["cache", "list", "--json"], environment: xdg)
        let files: [String?] = try listed.stdout.split(separator: "\n").map { (line: Substring) throws -> String? in
            try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])["file"] as? String
        }
        let expectedFiles: [String?] = (1...3).map { (index: Int) -> String? in
            state + "/bluejay/gatt-cache/C0000000000\(index)-random.json"
        }
        #expect(files == expectedFiles)
        let own = try await store.bluejay(["cache", "list"], environment: ["XDG_STATE_HOME": state])
        #expect(own.status == 0 && own.stdout.isEmpty, "BLUEJAY_STORE is used before XDG_STATE_HOME")
    }

    /// Acceptance 4, `--no-cache`: no file is written, the hash is not read, and a valid
    /// entry already there is neither used (discovery happens) nor rewritten.
    @Test func cacheNoCacheNeitherReadsNorWrites() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let store = try CacheTestStore()
        defer { store.remove() }
        let target = peer.address + "/random"

        let uncached = try await store.bluejay([
            "gatt", target, "--no-cache", "--transport", peer.transport, "--capture", store.file("none.btsnoop"),
        ])
        #expect(uncached.status == 0, "stderr: \(uncached.stderr)")
        #expect(
            !FileManager.default.fileExists(atPath: store.path + "/gatt-cache"),
            "nothing written, not even the directory")
        var requests = try CapturedATT.requests(in: store.file("none.btsnoop"))
        #expect(requests.contains { $0.opcode == .readByGroupTypeRequest })
        #expect(!requests.contains { $0.readByTypeUUID == .databaseHash }, "the cache's hash check is not made")
        #expect(!requests.contains { $0.opcode == .writeRequest }, "nor robust caching turned on")

        let cached = try await store.bluejay(["gatt", target, "--transport", peer.transport])
        #expect(cached.status == 0, "stderr: \(cached.stderr)")
        // (Not the same output: this run turned robust caching on, so Client Supported Features reads 01.)
        let path = store.entryPath(target)
        let saved = try Data(contentsOf: URL(fileURLWithPath: path))
        var before = stat()
        #expect(stat(path, &before) == 0)

        for command in [["gatt", target], ["read", target, Self.customService, Self.readOnlyCharacteristic]] {
            let capture = store.file("\(command[0]).btsnoop")
            let result = try await store.bluejay(
                command + ["--no-cache", "--transport", peer.transport, "--capture", capture])
            #expect(result.status == 0, "stderr: \(result.stderr)")
            requests = try CapturedATT.requests(in: capture)
            #expect(requests.contains { $0.isDiscovery }, "\(command[0]) --no-cache discovers despite a valid entry")
            #expect(!requests.contains { $0.readByTypeUUID == .databaseHash })
        }
        var after = stat()
        #expect(stat(path, &after) == 0)
        #expect(
            after.st_ino == before.st_ino && after.st_mtim.tv_sec == before.st_mtim.tv_sec
                && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec,
            "the entry was not rewritten")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == saved)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: store.path + "/gatt-cache") == [
                DiscoveryCache.fileName(for: target)
            ])
    }
}
