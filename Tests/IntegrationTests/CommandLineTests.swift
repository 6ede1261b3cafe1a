import BluetoothCore
import Foundation
import HCI
import HCITestSupport
import TestTraits
import Testing
import TraceDecoding
import TraceTestSupport

/// The `bluejay` tool as scripts drive it: exit codes, stderr, the JSON contracts.
@Suite(.hangGuard) struct CommandLineTests {
    @Test func infoAgainstThePeerPrintsAddressAndBuffers() async throws {
        let peer = try await TestPeer(arguments: ["--acl-count-a", "6"])
        defer { peer.stop() }
        let result = try await run(Repository.bluejay, ["info", "--transport", peer.transport])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.contains("ACL buffers:        6 × 27 bytes"))
        let address = try #require(result.stdout.split(separator: "\n").first { $0.hasPrefix("Address:") })
        #expect(BluetoothAddress(String(address.split(separator: " ").last!)) != nil)

        // The environment names the transport and the capture when the flags do not.
        let capture = NSTemporaryDirectory() + "bluejay-env-\(UUID().uuidString).btsnoop"
        defer { try? FileManager.default.removeItem(atPath: capture) }
        let json = try await run(
            Repository.bluejay, ["info", "--json"],
            environment: ["BLUEJAY_TRANSPORT": peer.transport, "BLUEJAY_BTSNOOP": capture])
        #expect(json.status == 0, "stderr: \(json.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect((object["acl_buffers"] as? [String: Any])?["count"] as? Int == 6)
        #expect(try BTSnoopFile(path: capture).records.count == 20)
    }

    @Test func userChannelFailureNamesItsFix() async throws {
        let result = try await run(Repository.bluejay, ["info", "--transport", "hci0"])
        #expect(result.status != 0)
        #expect(!result.stderr.contains("Fatal error"), "a user mistake must not print a Swift trap")
        let probe = socket(31 /* AF_BLUETOOTH */, Int32(SOCK_RAW.rawValue), 1)
        if probe < 0 && errno == EAFNOSUPPORT {
            #expect(result.stderr.contains("EAFNOSUPPORT"))
            #expect(result.stderr.contains("no Bluetooth support"))
        } else {
            if probe >= 0 { close(probe) }
            // A kernel with Bluetooth: the error names one of the fixes instead.
            #expect(
                ["ENODEV", "EBUSY", "CAP_NET_ADMIN"].contains { result.stderr.contains($0) }, "stderr: \(result.stderr)"
            )
        }
    }

    @Test func badArgumentsGetClearErrors() async throws {
        let bogus = try await run(Repository.bluejay, ["info", "--transport", "bogus:thing"])
        #expect(bogus.status == 1)
        #expect(bogus.stderr.contains("unknown transport 'bogus:thing'"))
        let noTransport = try await run(Repository.bluejay, ["info"])
        #expect(noTransport.status == 1)
        #expect(noTransport.stderr.contains("BLUEJAY_TRANSPORT"))
        let noFile = try await run(Repository.bluejay, ["trace"])
        #expect(noFile.status == 64)
        let notSnoop = try await run(Repository.bluejay, ["trace", Repository.peer.path])
        #expect(notSnoop.status == 1)
        #expect(notSnoop.stderr.contains("not a btsnoop file"))
        let refused = try await run(Repository.bluejay, ["info", "--transport", "tcp:127.0.0.1:1"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("ECONNREFUSED"))
        for result in [bogus, noTransport, noFile, notSnoop, refused] {
            #expect(!result.stderr.contains("Fatal error") && !result.stderr.contains("Stack dump"))
        }
    }

    /// The real traces the repository ships (the whole shared corpus: `Tests/CorpusTests`).
    @Test func traceSummaryOfTheRealTracesIsExactlyTheExpectedCounts() async throws {
        let directory = URL(fileURLWithPath: RealTraces.shipped)
        let expected = try String(contentsOf: directory.appendingPathComponent("expected-counts.json"), encoding: .utf8)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".btsnoop") }.sorted().map { directory.appendingPathComponent($0).path }
        #expect(files.count == 4)
        let result = try await run(Repository.bluejay, ["trace", "--summary", "--json"] + files)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        // The shared file's rule (ExpectedCountsComparison): same traces, fields, codes and
        // counts; the expected names, but where the file says Unknown and our tables name
        // the code — those renamings are accepted, and printed.
        let comparison = ExpectedCountsComparison(
            actual: try JSONValue(parsing: result.stdout),
            expected: try JSONValue(parsing: expected))
        for problem in comparison.problems { Issue.record("bluejay trace --summary --json: \(problem)") }
        for renaming in comparison.renamings { print("accepted renaming: \(renaming)") }
        // And the text is the file's, byte for byte, once those renamings are applied to it.
        #expect(result.stdout.trimmingCharacters(in: .newlines) == comparison.renamedExpected.rendered())
    }
}

extension CommandLineTests {
    /// A capture survives its writer being killed: every record written before SIGKILL is
    /// whole and readable, by us and by tshark.
    @Test func captureOfAKilledProcessIsReadable() async throws {
        // Bring-up stalls at Read BD_ADDR, which the controller never answers.
        let peer = try await TestPeer(arguments: ["--mute-opcode", "0x1009"])
        defer { peer.stop() }
        let path = NSTemporaryDirectory() + "bluejay-killed-\(UUID().uuidString).btsnoop"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let process = Process()
        process.executableURL = Repository.bluejay
        process.arguments = ["info", "--transport", peer.transport, "--capture", path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Five answered commands (ten records), then the unanswered Read BD_ADDR: killed then,
        // before bluejay's 5 s command timeout ends it by itself. Watched and killed from a
        // thread of its own: under load the test's task waited seconds for the cooperative
        // pool, past that timeout (CI with busy loops beside it: the process had exited).
        let pid = process.processIdentifier
        let records = await blocking { () -> Int in
            let deadline = ContinuousClock.now + hangGuardWait
            var records = 0
            while records < 11, ContinuousClock.now < deadline {
                records = (try? BTSnoopFile(path: path).records.count) ?? 0
                if records < 11 { usleep(2_000) }
            }
            kill(pid, SIGKILL)
            return records
        }
        #expect(records == 11)
        await waitUntilExit(process)
        #expect(process.terminationReason == .uncaughtSignal)

        let file = try BTSnoopFile(path: path)
        #expect(file.records.count == 11)
        #expect(file.truncatedTail == nil)
        guard case let .packet(type, body) = try #require(file.records.last).content else {
            Issue.record("last record is no packet"); return
        }
        #expect(type == .command)
        #expect(Array(body) == [0x09, 0x10, 0x00])  // Read_BD_ADDR, no parameters
        let tshark = try #require(which("tshark"), "tshark is missing: 'make test' installs it")
        let frames = try await run(tshark, ["-r", path, "-T", "fields", "-e", "frame.number"])
        #expect(frames.status == 0)
        #expect(frames.stdout.split(separator: "\n").count == 11)
    }
}

extension CommandLineTests {
    /// Scanning the Bumble peripheral: its name and 128-bit service come only in the scan
    /// response, so they prove the merge; a passive scan must not have them.
    @Test func scanShowsThePeripheralWithItsScanResponse() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let active = try await run(
            Repository.bluejay, ["scan", "--transport", peer.transport, "--duration", "1", "--json"])
        #expect(active.status == 0, "stderr: \(active.stderr)")
        let lines = active.stdout.split(separator: "\n")
        #expect(lines.count == 1, "one discovery per peripheral: \(active.stdout)")
        let found = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect(found["address"] as? String == peer.address)
        #expect(found["address_type"] as? String == "random")
        #expect(found["name"] as? String == "Bluejay HRM")
        let foundServices: [String]? = found["services"] as? [String]
        #expect(foundServices == ["180D", "180F", "B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A00"])
        let manufacturer = try #require((found["manufacturer_data"] as? [[String: Any]])?.first)
        #expect(manufacturer["company_id"] as? Int == 0xFFFF)
        #expect(manufacturer["data"] as? String == "b1e7")
        #expect(found["scan_response"] as? Bool == true)
        #expect(found["connectable"] as? Bool == true)

        let passive = try await run(
            Repository.bluejay, ["scan", "--transport", peer.transport, "--duration", "1", "--json", "--passive"])
        let seen = try #require(
            try JSONSerialization.jsonObject(with: Data(passive.stdout.split(separator: "\n")[0].utf8))
                as? [String: Any])
        #expect(seen["scan_response"] as? Bool == false)
        #expect(seen["name"] is NSNull)
        let seenServices: [String]? = seen["services"] as? [String]
        #expect(seenServices == ["180D", "180F"])

        let filtered = try await run(
            Repository.bluejay,
            ["scan", "--transport", peer.transport, "--duration", "0.5", "--json", "--service", "1234"])
        #expect(filtered.status == 0)
        #expect(filtered.stdout.isEmpty)
        let table = try await run(Repository.bluejay, ["scan", "--transport", peer.transport, "--duration", "0.5"])
        #expect(table.stdout.contains("Bluejay HRM"))
        #expect(!table.stdout.contains("\u{1B}"), "not a terminal: plain rows, no cursor movement")
        let bad = try await run(Repository.bluejay, ["scan", "--transport", peer.transport, "--service", "nope"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("is not a UUID"))
    }
}

extension CommandLineTests {
    /// On a terminal (a pty from `script`) the table is redrawn in place, one row per
    /// peripheral; `--json` stays one object per line.
    @Test func scanOnATerminalRedrawsOneRowPerPeripheral() async throws {
        let script = try #require(which("script"), "script is missing (util-linux)")
        let peer = try await TestPeer(arguments: ["--peripherals", "2"])
        defer { peer.stop() }
        func onTerminal(_ arguments: [String]) async throws -> String {
            let words: [String] = [Repository.bluejay.path] + arguments
            let command: String = words.map { (word: String) -> String in "'\(word)'" }.joined(separator: " ")
            let result = try await run(script, ["-qec", command, "/dev/null"])
            #expect(result.status == 0, "stderr: \(result.stderr)")
            return result.stdout.replacingOccurrences(of: "\r\n", with: "\n")
        }
        let live = try await onTerminal(["scan", "--transport", peer.transport, "--duration", "1.5"])
        // The second peripheral's row is drawn by going back up over the first one.
        #expect(live.contains("\u{1B}[1A"), "\(live.debugDescription)")
        #expect(live.contains("\u{1B}[2K"))
        // The screen at the end: the header, then exactly one row per peripheral.
        let screen = finalScreen(live)
        #expect(screen.count == 3, "\(screen)")
        #expect(screen.first?.hasPrefix("ADDRESS") == true)
        // In the order first seen, which either peripheral may win.
        let rowAddresses: [String] = screen.dropFirst().map { (row: String) -> String in String(row.prefix(17)) }
            .sorted()
        let addresses: [String] = peer.addresses.sorted()
        #expect(rowAddresses == addresses)
        let secondAddress: String = peer.addresses[1]
        #expect(
            screen.contains { (row: String) -> Bool in row.hasPrefix(secondAddress) && row.contains("Bluejay HRM 2") })

        let json = try await onTerminal(["scan", "--transport", peer.transport, "--duration", "1", "--json"])
        #expect(!json.contains("\u{1B}"))
        let objects: [[String: Any]] = json.split(separator: "\n").compactMap { (line: Substring) -> [String: Any]? in
            try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        }
        let objectAddresses: Set<String> = Set(
            objects.compactMap { (object: [String: Any]) -> String? in object["address"] as? String })
        #expect(objectAddresses == Set(peer.addresses))
        #expect(objects.count == 2, "one object per discovery, as before: \(json)")
    }

    /// What a terminal shows after `output`, for the few controls the live table uses:
    /// ESC[nA (cursor up n lines), ESC[2K (clear the line), carriage return, newline.
    func finalScreen(_ output: String) -> [String] {
        var lines: [String] = [""]
        var row = 0
        var rest = Substring(output)
        while let character = rest.first {
            rest = rest.dropFirst()
            switch character {
            case "\u{1B}":
                guard rest.first == "[" else { continue }
                let digits = rest.dropFirst().prefix { $0.isNumber }
                let command = rest.dropFirst(1 + digits.count).first
                rest = rest.dropFirst(2 + digits.count)
                if command == "A" { row = max(0, row - (Int(digits) ?? 1)) }
                if command == "K" { lines[row] = "" }
            case "\r":
                break
            case "\n", "\r\n":
                row += 1
                if row == lines.count { lines.append("") }
            default:
                lines[row].append(character)
            }
        }
        return lines.filter { !$0.isEmpty }
    }

    @Test func connectPrintsTheLinkAndTimesOutOnAbsentPeers() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        // No address type given: learnt from a scan (the peer advertises a random address).
        let result = try await run(Repository.bluejay, ["connect", peer.address, "--transport", peer.transport])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.contains("Connected to:        \(peer.address)/random"))
        #expect(result.stdout.contains("PHY:                 TX 2M, RX 2M"))
        #expect(result.stdout.contains("Data length:         TX 251 bytes, RX 251 bytes"))
        #expect(result.stdout.contains("Role:                central"))
        let absent = try await run(
            Repository.bluejay,
            ["connect", "C0:00:00:00:00:09/random", "--timeout", "0.3", "--transport", peer.transport])
        #expect(absent.status == 1)
        #expect(absent.stderr.contains("connectionTimeout"))
        let bad = try await run(
            Repository.bluejay, ["connect", "C0:00:00:00:00/random", "--transport", peer.transport])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("is not an address"))
    }
}
