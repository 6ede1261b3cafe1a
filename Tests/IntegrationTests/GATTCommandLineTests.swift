import BluetoothCore
import Foundation
import HCI
import HCITestSupport
import Testing

/// `bluejay gatt`, `read`, `write` and `listen` against the peer. Each run is a new host
/// session, and the peer resets its values with each, so a value written by one run
/// cannot be read back by the next: the writes are checked by exit status and output
/// (the GATT integration tests read them back within one connection).
extension CommandLineTests {
    /// `bluejay gatt --json`: the whole tree as one JSON object, parsed with
    /// JSONSerialization.
    @Test func gattCommandPrintsTheWholeTreeAsJSON() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        // --no-pair: the refused read shows how errors appear in the tree.
        let result = try await run(
            Repository.bluejay,
            ["gatt", "\(peer.address)/random", "--transport", peer.transport, "--json", "--no-pair"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let tree = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(tree["mtu"] as? Int == 517)
        #expect(tree["address"] as? String == "\(peer.address)/random")
        let services = try #require(tree["services"] as? [[String: Any]])
        // Every service in handle order, the tolerance service's secondary one (included,
        // 128-bit) among them, marked so.
        let uuids: [String] = services.compactMap { (service: [String: Any]) -> String? in service["uuid"] as? String }
        let expectedUUIDs: [String] = [
            "1800", "1801", "180D", "180A", "180F", "B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A00",
            "B1E70201-9D3B-4C7A-8A5E-6F2D0C1B0A00", "B1E70200-9D3B-4C7A-8A5E-6F2D0C1B0A00",
        ]
        #expect(uuids == expectedUUIDs)
        let starts: [Int] = services.compactMap { (service: [String: Any]) -> Int? in service["start_handle"] as? Int }
        let expectedStarts: [Int] = [0x01, 0x06, 0x0E, 0x14, 0x19, 0x1D, 0x2F, 0x32]
        #expect(starts == expectedStarts)
        let ends: [Int] = services.compactMap { (service: [String: Any]) -> Int? in service["end_handle"] as? Int }
        let expectedEnds: [Int] = [0x05, 0x0D, 0x13, 0x18, 0x1C, 0x2E, 0x31, 0x35]
        #expect(ends == expectedEnds)
        let primaries: [Bool] = services.compactMap { (service: [String: Any]) -> Bool? in service["primary"] as? Bool }
        let expectedPrimaries: [Bool] = [true, true, true, true, true, true, false, true]
        #expect(primaries == expectedPrimaries)
        // Only the tolerance service includes one, a secondary service with a 128-bit UUID.
        #expect(
            services.dropLast().allSatisfy { (service: [String: Any]) -> Bool in
                (service["includes"] as? [Any])?.isEmpty == true
            })
        let include = try #require((services.last?["includes"] as? [[String: Any]])?.first)
        #expect(include["uuid"] as? String == "B1E70201-9D3B-4C7A-8A5E-6F2D0C1B0A00")
        let includeHandle: Int? = include["handle"] as? Int
        let includeStart: Int? = include["start_handle"] as? Int
        let includeEnd: Int? = include["end_handle"] as? Int
        #expect(includeHandle == 0x33 && includeStart == 0x2F && includeEnd == 0x31)

        func characteristics(_ service: String) throws -> [[String: Any]] {
            let found = try #require(
                services.first { (item: [String: Any]) -> Bool in item["uuid"] as? String == service },
                "service \(service)")
            return try #require(found["characteristics"] as? [[String: Any]])
        }
        func characteristic(_ uuid: String, in service: String) throws -> [String: Any] {
            try #require(
                try characteristics(service).first { (item: [String: Any]) -> Bool in item["uuid"] as? String == uuid },
                "characteristic \(uuid)")
        }
        let measurement = try characteristic("2A37", in: "180D")
        let measurementProperties: [String]? = measurement["properties"] as? [String]
        #expect(measurementProperties == ["notify"])
        #expect(measurement["value_handle"] as? Int == 0x0010)
        let descriptors = try #require(measurement["descriptors"] as? [[String: Any]])
        let descriptorUUIDs: [String] = descriptors.compactMap { (descriptor: [String: Any]) -> String? in
            descriptor["uuid"] as? String
        }
        #expect(descriptorUUIDs == ["2902"])
        #expect(descriptors.first?["handle"] as? Int == 0x0011)
        #expect(measurement["value"] is NSNull, "not readable: not read")

        #expect(try characteristic("2A29", in: "180A")["text"] as? String == "Bluejay")
        #expect(try characteristic("2A19", in: "180F")["value"] as? String == "57")
        let custom = "B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A00"
        let long = try characteristic("B1E70002-9D3B-4C7A-8A5E-6F2D0C1B0A00", in: custom)
        let longValue: [UInt8] = (0..<512).map { (index: Int) -> UInt8 in UInt8(index % 256) }
        let longHex: String = longValue.hexString().lowercased()
        #expect((long["value"] as? String)?.lowercased() == longHex, "read long, all 512 bytes")
        let secret = try characteristic("B1E70004-9D3B-4C7A-8A5E-6F2D0C1B0A00", in: custom)
        let refusal = try #require(secret["error"] as? [String: Any], "\(secret)")
        let refusalCode: Int? = refusal["code"] as? Int
        let refusalName: String? = refusal["name"] as? String
        #expect(refusalCode == 0x0F && refusalName == "insufficientEncryption", "\(refusal)")
        #expect((refusal["message"] as? String)?.contains("Read_Req on handle 0x0024") == true, "\(refusal)")
        // Past 512 octets: the tolerance service's 600-octet value, whole.
        let oversized = try characteristic(
            "B1E70203-9D3B-4C7A-8A5E-6F2D0C1B0A00", in: "B1E70200-9D3B-4C7A-8A5E-6F2D0C1B0A00")
        let oversizedValue: [UInt8] = (0..<600).map { (index: Int) -> UInt8 in UInt8((index * 7 + 3) % 256) }
        let oversizedHex: String = oversizedValue.hexString()
        #expect((oversized["value"] as? String)?.lowercased() == oversizedHex, "\(oversized)")
        #expect(secret["value"] is NSNull)
        #expect(try characteristics(custom).count == 7)
        // Readable characteristics without an error have a value; the others have none.
        let allCharacteristics: [[String: Any]] = services.flatMap { (service: [String: Any]) -> [[String: Any]] in
            (service["characteristics"] as? [[String: Any]]) ?? []
        }
        for item in allCharacteristics where item["error"] is NSNull {
            let readable = (item["properties"] as? [String])?.contains("read") == true
            #expect((item["value"] is String) == readable, "\(item)")
        }
    }

    /// `bluejay gatt` never loses the whole dump for one value: a value refused by the peer or
    /// past --max-value is printed in its place with its error, the dump goes on, and the
    /// exit status is 0.
    @Test func gattCommandKeepsGoingPastAValueItCannotRead() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let address = "\(peer.address)/random"
        let json = try await run(
            Repository.bluejay,
            ["gatt", address, "--json", "--no-pair", "--max-value", "599", "--transport", peer.transport])
        #expect(json.status == 0, "stderr: \(json.stderr)")
        let tree = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let characteristics = ((tree["services"] as? [[String: Any]]) ?? []).flatMap {
            ($0["characteristics"] as? [[String: Any]]) ?? []
        }
        let errors = characteristics.compactMap { item in
            (item["error"] as? [String: Any]).map { (item["uuid"] as? String ?? "", $0) }
        }
        #expect(
            errors.map(\.0) == ["B1E70004-9D3B-4C7A-8A5E-6F2D0C1B0A00", "B1E70203-9D3B-4C7A-8A5E-6F2D0C1B0A00"],
            "\(errors)")
        #expect(errors.last?.1["name"] as? String == "valueLengthLimitExceeded")
        #expect(errors.last?.1["code"] is NSNull)
        // Values after the refused ones were read.
        #expect(
            characteristics.first { $0["uuid"] as? String == "B1E70008-9D3B-4C7A-8A5E-6F2D0C1B0A00" }?["text"]
                as? String == "Bluejay read-only")
        let text = try await run(
            Repository.bluejay, ["gatt", address, "--no-pair", "--max-value", "599", "--transport", peer.transport])
        #expect(text.status == 0, "stderr: \(text.stderr)")
        #expect(
            text.stdout.contains("Value: unreadable: the value at 0x0035 is longer than the 599-octet limit"),
            "\(text.stdout)")
        #expect(text.stdout.contains("Value: unreadable: 0x0F insufficientEncryption"), "\(text.stdout)")
    }

    /// `bluejay read`: text, hex, the default form, a long value whole at ATT_MTU 23, and
    /// refusals by name with exit status 1.
    @Test func gattReadCommandPrintsTheValue() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let address = "\(peer.address)/random"
        let text = try await run(
            Repository.bluejay, ["read", address, "180A", "2A29", "--utf8", "--transport", peer.transport])
        #expect(text.status == 0, "stderr: \(text.stderr)")
        #expect(text.stdout == "Bluejay\n")
        let hex = try await run(
            Repository.bluejay, ["read", address, "180F", "2A19", "--hex", "--transport", peer.transport])
        #expect(hex.stdout == "57\n")
        let plain = try await run(Repository.bluejay, ["read", address, "180A", "2A25", "--transport", peer.transport])
        #expect(
            plain.stdout == "42 4a 2d 30 30 30 31  \"BJ-0001\"\n"
                || plain.stdout == "42 4A 2D 30 30 30 31  \"BJ-0001\"\n", "\(plain.stdout)")

        let long = try await run(
            Repository.bluejay,
            [
                "read", address, "B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A00", "B1E70002-9D3B-4C7A-8A5E-6F2D0C1B0A00",
                "--hex", "--mtu", "23", "--transport", peer.transport,
            ])
        #expect(long.status == 0, "stderr: \(long.stderr)")
        let longValue: [UInt8] = (0..<512).map { (index: Int) -> UInt8 in UInt8(index % 256) }
        let longLine: String = longValue.hexString().lowercased() + "\n"
        #expect(long.stdout.lowercased() == longLine)

        // Past the specification's 512 octets: the tolerance service's 600-octet value, whole
        // at ATT_MTU 23 (Read + 27 Read Blobs), with one warning; past --max-value, a named error.
        let tolerance: [String] = [
            "read", address, "B1E70200-9D3B-4C7A-8A5E-6F2D0C1B0A00", "B1E70203-9D3B-4C7A-8A5E-6F2D0C1B0A00",
        ]
        let oversizedArguments: [String] = tolerance + ["--hex", "--mtu", "23", "--transport", peer.transport]
        let oversized = try await run(Repository.bluejay, oversizedArguments)
        #expect(oversized.status == 0, "stderr: \(oversized.stderr)")
        let oversizedValue: [UInt8] = (0..<600).map { (index: Int) -> UInt8 in UInt8((index * 7 + 3) % 256) }
        let oversizedLine: String = oversizedValue.hexString() + "\n"
        #expect(oversized.stdout == oversizedLine)
        #expect(
            oversized.stderr.components(separatedBy: "runs past the specification's 512 octets").count == 2,
            "stderr: \(oversized.stderr)")
        let limitedArguments: [String] = tolerance + ["--max-value", "599", "--transport", peer.transport]
        let limited = try await run(Repository.bluejay, limitedArguments)
        #expect(limited.status == 1)
        #expect(
            limited.stderr.contains("is longer than the 599-octet limit for one value"), "stderr: \(limited.stderr)")
        #expect(limited.stdout.isEmpty)

        let secret = try await run(
            Repository.bluejay,
            [
                "read", address, "B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A00", "B1E70004-9D3B-4C7A-8A5E-6F2D0C1B0A00",
                "--transport", peer.transport, "--no-pair",
            ])
        #expect(secret.status == 1)
        #expect(secret.stderr.contains("insufficientEncryption"), "stderr: \(secret.stderr)")
        #expect(secret.stdout.isEmpty)
        let absent = try await run(
            Repository.bluejay, ["read", address, "1812", "2A4D", "--transport", peer.transport])
        #expect(absent.status == 1)
        #expect(absent.stderr.contains("has no service 1812"), "stderr: \(absent.stderr)")
        for result in [secret, absent] {
            #expect(!result.stderr.contains("Fatal error") && !result.stderr.contains("Stack dump"))
        }
    }

    /// `bluejay read --each-line`: one process, its controller brought up once (one HCI
    /// Reset in its log), connects, reads and disconnects for each line of input, and says
    /// so after each; the end of the input ends it.
    @Test func gattReadCommandStaysUpForEachLine() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let result = try await run(
            Repository.bluejay,
            [
                "read", "\(peer.address)/random", "180A", "2A29", "--utf8", "--each-line", "--verbose",
                "--transport", peer.transport,
            ], input: "first\nsecond\nthird\n")
        #expect(result.status == 0, "stderr: \(result.stderr.suffix(600))")
        #expect(result.stdout == "Bluejay\nBluejay\nBluejay\n")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.filter { $0 == "disconnected" }.count == 3)
        #expect(lines.filter { $0.contains("< 0x0c03 Reset") }.count == 1, "one controller start for the three reads")
        let none = try await run(
            Repository.bluejay,
            ["read", "\(peer.address)/random", "180A", "2A29", "--each-line", "--transport", peer.transport], input: "")
        #expect(
            none.status == 0 && none.stdout.isEmpty && !none.stderr.contains("disconnected"), "stderr: \(none.stderr)")
    }

    /// `bluejay write`: a Write Request, a Write Command, a reliable write, and a 512-byte
    /// long write at `--mtu 23` that really goes as Prepare Write + Execute Write (counted
    /// in its capture); 513 bytes and a read-only characteristic are refused by name.
    @Test func gattWriteCommandWritesEveryWay() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let address = "\(peer.address)/random"
        let custom = "B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A00"
        let long = "B1E70002-9D3B-4C7A-8A5E-6F2D0C1B0A00"
        let request = try await run(
            Repository.bluejay, ["write", address, "180D", "2A38", "02", "--transport", peer.transport])
        #expect(request.status == 0, "stderr: \(request.stderr)")
        #expect(request.stdout.contains("(Write Request)"), "\(request.stdout)")
        let command = try await run(
            Repository.bluejay,
            [
                "write", address, custom, "B1E70005-9D3B-4C7A-8A5E-6F2D0C1B0A00", "68:69", "--without-response",
                "--transport", peer.transport,
            ])
        #expect(command.status == 0, "stderr: \(command.stderr)")
        #expect(command.stdout.contains("(Write Command)"))
        let reliable = try await run(
            Repository.bluejay,
            ["write", address, custom, long, "0x0102ff", "--reliable", "--transport", peer.transport])
        #expect(reliable.status == 0, "stderr: \(reliable.stderr)")
        #expect(reliable.stdout.contains("(reliable write)"))

        let capture = NSTemporaryDirectory() + "bluejay-cli-long-\(UUID().uuidString).btsnoop"
        defer { try? FileManager.default.removeItem(atPath: capture) }
        let bytes: [UInt8] = (0..<512).map { (index: Int) -> UInt8 in UInt8(255 - index % 256) }
        let value: String = bytes.hexString()
        let longWrite = try await run(
            Repository.bluejay,
            [
                "write", address, custom, long, value, "--mtu", "23", "--capture", capture,
                "--transport", peer.transport,
            ])
        #expect(longWrite.status == 0, "stderr: \(longWrite.stderr)")
        #expect(
            longWrite.stdout.contains("Wrote 512 bytes") && longWrite.stdout.contains("(long write)"),
            "\(longWrite.stdout)")
        let sent = try sentATTPDUs(capture)
        let prepares: Int = sent.filter { (pdu: [UInt8]) -> Bool in pdu.first == 0x16 }.count
        #expect(prepares == 29)
        let executes: [[UInt8]] = sent.filter { (pdu: [UInt8]) -> Bool in pdu.first == 0x18 }
        #expect(executes == [[0x18, 0x01]])

        let tooLong = try await run(
            Repository.bluejay,
            ["write", address, custom, long, value + "00", "--mtu", "23", "--transport", peer.transport])
        #expect(tooLong.status == 1)
        #expect(tooLong.stderr.contains("invalidAttributeValueLength"), "stderr: \(tooLong.stderr)")
        let readOnly = try await run(
            Repository.bluejay,
            ["write", address, custom, "B1E70008-9D3B-4C7A-8A5E-6F2D0C1B0A00", "00", "--transport", peer.transport])
        #expect(readOnly.status == 1)
        #expect(readOnly.stderr.contains("writeNotPermitted"), "stderr: \(readOnly.stderr)")
    }

    /// `bluejay listen`: nothing on the peer notifies by itself (heart rate needs control
    /// point 0x05 in the same connection, the battery level never notifies), so a listen
    /// for one second subscribes, prints nothing and exits 0.
    @Test func gattListenCommandEndsAfterItsDuration() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let started = ContinuousClock.now
        let result = try await run(
            Repository.bluejay,
            ["listen", "\(peer.address)/random", "180D", "2A37", "--duration", "1", "--transport", peer.transport])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("0 values received"), "stderr: \(result.stderr)")
        #expect(ContinuousClock.now - started >= .seconds(1))
        // Listening needs notify or indicate.
        let refused = try await run(
            Repository.bluejay,
            ["listen", "\(peer.address)/random", "180A", "2A29", "--count", "3", "--transport", peer.transport])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("neither notifies nor indicates"), "stderr: \(refused.stderr)")
    }

    /// Bad arguments to the value commands: a clear message and a usage exit status,
    /// before any connection.
    @Test func gattCommandsRejectBadArguments() async throws {
        let address = "F0:0D:B1:E7:00:01/random"
        let cases: [([String], String)] = [
            (["read", address, "18", "2A29"], "SERVICE '18' is not a UUID"),
            (["read", address, "180A", "2A2"], "CHARACTERISTIC '2A2' is not a UUID"),
            (["read", address, "180A", "2A29", "--hex", "--utf8"], "--hex and --utf8 exclude each other"),
            (["read", "F0:0D:B1:E7:00", "180A", "2A29"], "is not an address"),
            (["read", address, "180A", "2A29", "--mtu", "22"], "--mtu must be between 23 and 517"),
            (["write", address, "180D", "2A38", "0g"], "is not hex bytes"),
            (["write", address, "180D", "2A38", "01", "--without-response", "--reliable"], "exclude each other"),
            (["listen", address, "180D", "2A37", "--count", "0"], "--count must be at least 1"),
        ]
        for (arguments, message) in cases {
            let result = try await run(Repository.bluejay, arguments + ["--transport", "tcp:127.0.0.1:1"])
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("ECONNREFUSED"), "refused before connecting")
        }
    }
}
