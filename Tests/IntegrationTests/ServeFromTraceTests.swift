import Foundation
import HCITestSupport
import Testing

extension CommandLineTests {
    /// Every shipped trace: the repository's recordings and, when present, the real ones in
    /// ../shared/traces.
    static var shippedTraces: [String] {
        let directories = [Repository.root.appendingPathComponent("Fixtures/traces").path,
                           Repository.root.deletingLastPathComponent().appendingPathComponent("shared/traces").path]
        return directories.flatMap { directory in
            ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".btsnoop") }.sorted()
                .map { directory + "/" + $0 }
        }
    }

    /// `bluejay serve --from-trace` on each shipped trace, over one emulated controller,
    /// answers `bluejay gatt` from our central on the other controller of the link
    /// (`peer.py --two-hosts`) exactly as `mock:` answers it: same exit status, same dump
    /// (services, handles, properties, values, refusals). A recorded static random address
    /// is advertised as recorded; a public one is the controller's own.
    @Test(.hangGuard) func serveFromTraceAnswersGattAsMockDoes() async throws {
        let traces = Self.shippedTraces
        #expect(traces.count >= 17, "the repository's recordings at least")
        for trace in traces {
            let summary = try await run(Repository.bluejay, ["mock", trace])
            let peer = summary.stdout.split(separator: "\n").first { $0.hasPrefix("Peer ") }.map { line -> String in
                let parts = line.split(separator: " ")
                return "\(parts[1])/\(parts[2].trimmingCharacters(in: CharacteristicSet.parentheses))"
            }
            guard let peer else {
                // No connected peer: neither has anything to serve.
                let served = try await run(Repository.bluejay, ["serve", "--from-trace", trace, "--transport", "tcp:127.0.0.1:9", "--duration", "1"])
                #expect(served.status != 0 && served.stderr.contains("no connected peer"), "\(trace): \(served.stderr)")
                continue
            }
            let mocked = try await run(Repository.bluejay, ["gatt", peer, "--transport", "mock:\(trace)"])

            let link = try await TestPeer(arguments: ["--two-hosts"])
            defer { link.stop() }
            let server = try await ServingProcess(["serve", "--from-trace", trace, "--transport", link.transport])
            defer { server.stop() }
            let address = peer.hasSuffix("/public") ? "B1:E7:00:00:00:0A/public" : peer
            let real = try await run(Repository.bluejay, ["gatt", address, "--transport", try #require(link.transport2)])
            #expect(real.status == mocked.status, "\(trace): \(real.stderr)")
            #expect(real.stdout == mocked.stdout, "\(trace)")
        }
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

    func stop() {
        if process.isRunning { process.interrupt() }
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: store)
    }
}
