import Foundation
import HCITestSupport
import Testing

extension CommandLineTests {
    /// Every shipped trace: the repository's recordings and, when present, the real ones in
    /// ../shared/traces.
    static var shippedTraces: [String] {
        let directories = [
            Repository.root.appendingPathComponent("Fixtures/traces").path,
            Repository.root.deletingLastPathComponent().appendingPathComponent("shared/traces").path,
        ]
        return directories.flatMap { directory in
            ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter {
                $0.hasSuffix(".btsnoop")
            }.sorted()
                .map { directory + "/" + $0 }
        }
    }

    /// The peer `serve --from-trace TRACE` serves with no `--peer` ("ADDRESS/TYPE"), found
    /// from `bluejay mock`'s summary: the one with the most recorded attributes. nil when
    /// there is none to serve, after checking that serve refuses the trace and says why.
    static func servedPeer(of trace: String) async throws -> String? {
        let summary = try await run(Repository.bluejay, ["mock", trace])
        var peers: [(peer: String, attributes: Int)] = []
        for line in summary.stdout.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if line.hasPrefix("Peer ") {
                peers.append(("\(parts[1])/\(parts[2].trimmingCharacters(in: CharacteristicSet.parentheses))", 0))
            } else if line.hasPrefix("  attributes: "), let count = Int(parts[1]), !peers.isEmpty {
                peers[peers.count - 1].attributes = count
            }
        }
        let most = peers.map(\.attributes).max() ?? 0
        let largest = peers.filter { $0.attributes == most }
        if peers.count == 1 || (most > 0 && largest.count == 1) { return largest[0].peer }
        // No peer, a tie, or several with no database: nothing is served.
        let served = try await run(
            Repository.bluejay, ["serve", "--from-trace", trace, "--transport", "tcp:127.0.0.1:9", "--duration", "1"])
        let why = peers.isEmpty ? "no connected peer" : "choose one with --peer"
        #expect(served.status != 0 && served.stderr.contains(why), "\(trace): \(served.stderr)")
        return nil
    }

    /// `bluejay serve --from-trace` on each shipped trace, over one emulated controller,
    /// answers `bluejay gatt` from our central on the other controller of the link
    /// (`peer.py --two-hosts`) exactly as `mock:` answers it: same exit status, same dump
    /// (services, handles, properties, values, refusals). With no `--peer`, the peer served
    /// is the one with the largest recorded database. A recorded static random address is
    /// advertised as recorded; a public one is the controller's own.
    @Test(.hangGuard) func serveFromTraceAnswersGattAsMockDoes() async throws {
        let traces = Self.shippedTraces
        #expect(traces.count >= 17, "the repository's recordings at least")
        for trace in traces {
            guard let peer = try await Self.servedPeer(of: trace) else { continue }
            let mocked = try await run(Repository.bluejay, ["gatt", peer, "--transport", "mock:\(trace)"])

            let link = try await TestPeer(arguments: ["--two-hosts"])
            defer { link.stop() }
            let server = try await ServingProcess(["serve", "--from-trace", trace, "--transport", link.transport])
            defer { server.stop() }
            let address = peer.hasSuffix("/public") ? "B1:E7:00:00:00:0A/public" : peer
            let real = try await run(
                Repository.bluejay, ["gatt", address, "--transport", try #require(link.transport2)])
            #expect(real.status == mocked.status, "\(trace): \(real.stderr)")
            #expect(real.stdout == mocked.stdout, "\(trace)")
        }
    }
}

extension CommandLineTests {
    /// A central that is not ours: Bumble's discovers, from `bluejay serve --from-trace` with
    /// no `--peer`, every service (UUID, handle range), characteristic (UUID, value handle,
    /// properties) and descriptor (UUID, handle) that our central finds through `mock:` for
    /// the same recording: the recording served whole.
    @Test(.hangGuard) func bumblesCentralDiscoversTheRecordedDatabaseWhole() async throws {
        for trace in Self.shippedTraces {
            guard let peer = try await Self.servedPeer(of: trace) else { continue }
            let mocked = try await run(Repository.bluejay, ["gatt", peer, "--json", "--transport", "mock:\(trace)"])
            try #require(mocked.status == 0, "\(trace): \(mocked.stderr)")
            let recorded = try Self.discovered(fromGattJSON: mocked.stdout)

            // Not the peer's default address: the shipped recordings were made with a Bumble
            // peripheral there, and serve advertises from a recorded static random address.
            let central = try await TestCentral(address: "C0:FF:EE:00:B1:E7")
            defer { central.stop() }
            let server = try await ServingProcess(["serve", "--from-trace", trace, "--transport", central.transport])
            defer { server.stop() }
            let found = try await central.send(["op": "scan", "connectable": true])
            try await central.send([
                "op": "connect", "address": found["address"] as Any, "address_type": found["address_type"] as Any,
            ])
            let services = try #require(try await central.send(["op": "discover"])["services"] as? [[String: Any]])
            #expect(Self.discovered(fromBumble: services) == recorded, "\(trace)")
            try await central.send(["op": "disconnect"])
        }
    }

    /// A UUID as both sides can compare it: hex digits in upper case, no dashes.
    static func comparable(_ uuid: Any?) -> String {
        ((uuid as? String) ?? "?").replacingOccurrences(of: "-", with: "").uppercased()
    }

    /// The Characteristic Properties bits (Core Vol 3, Part G, 3.3.1.1) by `gatt --json`'s names.
    static let propertyBits: [String: Int] = [
        "broadcast": 0x01, "read": 0x02, "writeWithoutResponse": 0x04, "write": 0x08, "notify": 0x10, "indicate": 0x20,
        "authenticatedSignedWrites": 0x40, "extendedProperties": 0x80,
    ]

    /// One line per service, characteristic and descriptor of a `bluejay gatt --json` dump.
    static func discovered(fromGattJSON json: String) throws -> [String] {
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        var lines: [String] = []
        for service in object?["services"] as? [[String: Any]] ?? [] where service["primary"] as? Bool != false {
            lines.append(
                "service \(comparable(service["uuid"])) \(service["start_handle"] ?? "?")-\(service["end_handle"] ?? "?")"
            )
            for characteristic in service["characteristics"] as? [[String: Any]] ?? [] {
                let names = characteristic["properties"] as? [String] ?? []
                let bits = names.reduce(0) { $0 | (propertyBits[$1] ?? 0x100) }
                lines.append(
                    "  characteristic \(comparable(characteristic["uuid"])) at \(characteristic["value_handle"] ?? "?"), properties \(bits)"
                )
                for descriptor in characteristic["descriptors"] as? [[String: Any]] ?? [] {
                    lines.append("    descriptor \(comparable(descriptor["uuid"])) at \(descriptor["handle"] ?? "?")")
                }
            }
        }
        return lines
    }

    /// The same lines from the Bumble central's `discover` answer.
    static func discovered(fromBumble services: [[String: Any]]) -> [String] {
        var lines: [String] = []
        for service in services {
            lines.append("service \(comparable(service["uuid"])) \(service["start"] ?? "?")-\(service["end"] ?? "?")")
            for characteristic in service["characteristics"] as? [[String: Any]] ?? [] {
                lines.append(
                    "  characteristic \(comparable(characteristic["uuid"])) at \(characteristic["handle"] ?? "?"), "
                        + "properties \(characteristic["properties"] ?? "?")")
                for descriptor in characteristic["descriptors"] as? [[String: Any]] ?? [] {
                    lines.append("    descriptor \(comparable(descriptor["uuid"])) at \(descriptor["handle"] ?? "?")")
                }
            }
        }
        return lines
    }
}

/// Parentheses, for trimming "(random)".
private enum CharacteristicSet {
    static let parentheses = CharacterSet(charactersIn: "()")
}

/// A `bluejay` command that runs until stopped (`serve`): started, waited for until its
/// first line ("advertising as …"), interrupted (SIGINT, its clean exit) by ``stop()``.
final class ServingProcess: @unchecked Sendable {
    let process = Process()
    private let store = NSTemporaryDirectory() + "bluejay-serving-\(UUID().uuidString)"

    init(_ arguments: [String]) async throws {
        process.executableURL = Repository.bluejay
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["BLUEJAY_STORE"] = store
        environment.removeValue(forKey: "BLUEJAY_TRANSPORT")
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let handle = output.fileHandleForReading
        let first = await blocking {
            var line = [UInt8]()
            while let byte = handle.readData(ofLength: 1).first, byte != UInt8(ascii: "\n") { line.append(byte) }
            return String(decoding: line, as: UTF8.self)
        }
        guard first.hasPrefix("advertising as ") else {
            stop()
            throw TestPeerError(description: "bluejay \(arguments.joined(separator: " ")) did not start: '\(first)'")
        }
    }

    /// Interrupts the process and returns; its store goes once it has ended.
    func stop() {
        if process.isRunning { process.interrupt() }
        let store = store
        cleanUpAfterExit(of: [process]) { try? FileManager.default.removeItem(atPath: store) }
    }
}
