import BluetoothCore
import Foundation
import HCI
import HCITestSupport
import TestTraits

/// Paths of the checkout, found from this file so tests run from any clone.
enum Repository {
    /// The package root.
    static let root: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    /// The command-line tool of the build these tests belong to.
    static let bluejay = BuiltProducts.url("bluejay")
    /// The gateway of the build these tests belong to.
    static let gateway = BuiltProducts.url("bluejay-gateway")
    /// The peer's Python, from the venv `make test` creates.
    static let python = root.appendingPathComponent(".venv/bin/python")
    static let peer = root.appendingPathComponent("Fixtures/peer/peer.py")
}

struct TestPeerError: Error, CustomStringConvertible {
    let description: String
}

/// The Bumble test peer (Fixtures/peer/peer.py) as a child process: two linked virtual
/// controllers, one served to us over H4/TCP, the other a GATT peripheral. Started per
/// suite; stopped with SIGTERM (and it exits by itself if the test process dies).
final class TestPeer: @unchecked Sendable {
    let process = Process()
    /// `tcp:127.0.0.1:PORT`.
    let transport: String
    /// Every host-facing controller's transport: `transport`, then `transport2=`, ... of the
    /// READY line (with `--hosts N` or `--two-hosts`).
    let transports: [String]
    /// With `--two-hosts`: the second host's controller, on the same link.
    var transport2: String? { transports.count > 1 ? transports[1] : nil }
    /// The (first) peripheral's address.
    let address: String
    /// Every peripheral's address in order: `address`, then `address2=`, `address3=`, ...
    /// of the READY line (with `--peripherals N`).
    let addresses: [String]
    private let stderrPath: String
    /// `stop()` has run (it runs from a test's `defer` and again from `deinit`).
    private var stopped = false

    /// Starts the peer and waits (off the cooperative pool: Python and Bumble take a second
    /// or two to start) for its READY line.
    init(arguments: [String] = []) async throws {
        guard FileManager.default.isExecutableFile(atPath: Repository.python.path) else {
            throw TestPeerError(
                description: "no \(Repository.python.path): run 'make test', which creates the peer's venv")
        }
        stderrPath = NSTemporaryDirectory() + "bluejay-peer-\(UUID().uuidString).log"
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        process.executableURL = Repository.python
        process.arguments = [Repository.peer.path] + arguments
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = FileHandle(forWritingAtPath: stderrPath)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let text = await Self.readyLine(stdout.fileHandleForReading)
        guard text.hasPrefix("READY ") else {
            process.terminate()
            let log = (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
            throw TestPeerError(
                description: "the peer did not print READY (got '\(text)'); its log:\n\(log.suffix(2000))")
        }
        var fields: [String: String] = [:]
        for part in text.dropFirst(6).split(separator: " ") {
            let pair = part.split(separator: "=", maxSplits: 1)
            if pair.count == 2 { fields[String(pair[0])] = String(pair[1]) }
        }
        // `--two-hosts` runs no peripheral of its own: no address, a second transport.
        guard let transport = fields["transport"],
            let address = fields["address"] ?? fields["transport2"].map({ _ in "" })
        else {
            throw TestPeerError(description: "unexpected READY line '\(text)'")
        }
        self.transport = transport
        var transports = [transport]
        while let next = fields["transport\(transports.count + 1)"] { transports.append(next) }
        self.transports = transports
        self.address = address
        var addresses = [address]
        while let next = fields["address\(addresses.count + 1)"] { addresses.append(next) }
        self.addresses = addresses
    }

    /// The one READY line, read on a thread of its own (``blocking(_:)``) byte by byte so
    /// nothing after it is consumed.
    private static func readyLine(_ handle: FileHandle) async -> String {
        await blocking {
            var line = [UInt8]()
            while let byte = handle.readData(ofLength: 1).first, byte != UInt8(ascii: "\n") { line.append(byte) }
            return String(decoding: line, as: UTF8.self)
        }
    }

    /// The peer's log so far (for failure messages).
    var log: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    /// SIGTERM now; a thread of its own waits for the exit and sends SIGKILL if the peer has
    /// not gone within five seconds (a stuck child must never hang the test run), then
    /// removes the log. Returns at once: every peer has its own controllers and port, so
    /// nothing waits for this one to be gone, and no test's thread is held while it goes.
    func stop() {
        guard !stopped else { return }
        stopped = true
        guard process.isRunning else {
            try? FileManager.default.removeItem(atPath: stderrPath)
            return
        }
        process.terminate()
        let process = process, stderrPath = stderrPath
        Thread.detachNewThread {
            let deadline = Date(timeIntervalSinceNow: 5)
            while process.isRunning && Date() < deadline { usleep(10_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            try? FileManager.default.removeItem(atPath: stderrPath)
        }
    }

    deinit { stop() }
}

/// The full path of a program on PATH, or nil.
func which(_ program: String) -> URL? {
    for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
        let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent(program)
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
    }
    return nil
}
