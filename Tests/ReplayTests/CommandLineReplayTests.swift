import BluetoothCore
import Foundation
import HCI
import HCITestSupport
import Testing

/// Every recorded session of Fixtures/traces replayed through the `bluejay` tool: the host
/// must send what the recording says, and print what it printed when it was recorded.
@Suite struct CommandLineReplayTests {
    /// The sessions the issue asks for are all there (a lost line would silently drop a test).
    @Test func everySessionIsListed() {
        let names = Set(Session.all.map(\.name))
        let required: Set = [
            "bumble-bringup", "scan", "connect", "gatt-discovery", "read", "read-long", "write", "write-long",
            "write-reliable", "notifications", "indications", "disconnect-by-peer", "connection-update",
            "bluejay-api-demo",
            "read-bonded",
        ]
        #expect(required.isSubset(of: names), "missing: \(required.subtracting(names).sorted())")
        for session in Session.all {
            #expect(FileManager.default.fileExists(atPath: session.path), "\(session.name).btsnoop is missing")
        }
    }

    @Test(arguments: Session.all)
    func replaysAsRecorded(_ session: Session) async throws {
        let result = try await session.replay()
        #expect(result.status == session.exitStatus, "stderr: \(result.stderr)")
        let expectedOut = try session.expected("out"), expectedErr = try session.expected("err")
        #expect(result.stdout == expectedOut)
        #expect(result.stderr == expectedErr)
    }

    /// The checker is not vacuous: one flipped octet in the first, a middle or the last
    /// host→controller packet of any recording stops the replay at that record, with the
    /// recorded and the sent bytes, both decoded.
    @Test(arguments: Session.all)
    func aFlippedOctetOfTheHostSideFailsWithTheMismatchReport(_ session: Session) async throws {
        let records = try hostRecords(session.path)
        try #require(records.count >= 3)
        let file = try BTSnoopFile(path: session.path)
        for chosen in [records.first!, records[records.count / 2], records.last!] {
            let octet = chosen.length - 1
            let corrupt = try corruptedCopy(of: session.path, record: chosen.number, octet: octet)
            defer { try? FileManager.default.removeItem(atPath: corrupt) }
            let result = try await session.replay(corrupt)
            guard case let .packet(type, body) = file.records[chosen.number - 1].content else {
                Issue.record("not a packet"); continue
            }
            let sent = [type.rawValue] + body
            var recorded = sent
            recorded[octet] ^= 0x01
            #expect(result.status == 1, "record \(chosen.number): \(result.stderr)")
            #expect(result.stderr.contains("replay mismatch at record \(chosen.number): "), "\(result.stderr)")
            let report =
                result.stderr.contains("expected: \(recorded.hexDump)\n")
                && result.stderr.contains("actual  : \(sent.hexDump)\n")
            // The Bluejay API reports a failed start as one line (BluejayError.startFailed).
            let oneLine =
                result.stderr.contains("expected \(recorded.hexDump) (")
                && result.stderr.contains("sent \(sent.hexDump) (")
            #expect(report || (session.name == "bluejay-api-demo" && oneLine), "\(result.stderr)")
            // Decoded, not just hex: a command by name or an ACL packet down to its L2CAP channel.
            #expect(
                ["HCI Command", "ACL TX: ", "ACL handle"].contains { result.stderr.contains($0) }, "\(result.stderr)")
            #expect(!result.stderr.contains("Fatal error"))
        }
    }

    /// A host that stops before the recording does fails too, naming the first packet it
    /// never sent.
    @Test func aHostThatStopsEarlyFails() async throws {
        // `info` against the recording of `connect`: bring-up matches, then the host stops.
        let result = try await run(
            Repository.bluejay, ["info", "--transport", "replay:\(Repository.trace("connect"))"])
        #expect(result.status == 1)
        let records = try hostRecords(Repository.trace("connect"))
        let bringUp = try hostRecords(Repository.trace("bumble-bringup")).count
        #expect(
            result.stderr.contains(
                "replay mismatch at record \(records[bringUp].number): the host stopped, but the recording has \(records.count - bringUp) more"
            ),
            "\(result.stderr)")
        #expect(result.stderr.contains("actual  : nothing"))
    }

    /// The phone traces the repository ships (Fixtures/real-traces; the whole shared
    /// corpus is `Tests/CorpusTests`) and every recorded session.
    @Test func traceCheckPassesOnThePhoneTracesAndEveryFixture() async throws {
        let directory = Repository.root.appendingPathComponent("Fixtures/real-traces")
        let phones = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".btsnoop") }.sorted().map { directory.appendingPathComponent($0).path }
        #expect(phones.count == 4)
        let files = phones + Session.all.map(\.path)
        let result = try await run(Repository.bluejay, ["trace", "--check"] + files)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == files.count)
        #expect(lines.allSatisfy { $0.contains("every packet decodes") })
        // Qualcomm's vendor debug stream is recognised as such, not decoded as ATT.
        #expect(
            lines.contains { $0.contains("vband") && $0.contains("92 ACL packets on handles no connection announced") })
    }

    @Test func traceCheckNamesTheFirstPacketThatDoesNotDecode() async throws {
        // Record 3 of the bring-up is the Command Complete of Read Local Version
        // Information; a wrong parameter length makes it undecodable.
        let path = Repository.trace("bumble-bringup")
        let corrupt = try corruptedCopy(of: path, record: 4, octet: 2)
        defer { try? FileManager.default.removeItem(atPath: corrupt) }
        let result = try await run(Repository.bluejay, ["trace", "--check", path, corrupt])
        #expect(result.status == 1)
        #expect(result.stdout.contains("\(path): 20 records, every packet decodes"))
        #expect(result.stdout.contains("\(corrupt): FAILED at record 4: event packet: "), "\(result.stdout)")
        #expect(result.stderr.contains("1 of 2 file(s) do not decode"))
    }
}
