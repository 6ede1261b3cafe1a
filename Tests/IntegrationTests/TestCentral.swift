import Foundation
import HCITestSupport

/// The Bumble peer as a CENTRAL (`peer.py --central`, Fixtures/peer/central.py): controller
/// A is served to our host, controller B's Device scans and connects to us and runs the GATT
/// client procedures it is told to, one JSON command per line on its stdin, one JSON answer
/// per line on its stdout.
final class TestCentral: @unchecked Sendable {
    let process = Process()
    /// `tcp:127.0.0.1:PORT`: the controller our host opens.
    let transport: String
    private let input: FileHandle
    private let output: FileHandle
    private let logPath: String
    private var stopped = false

    /// Starts the peer with `centrals` Bumble centrals (`--centrals`; a command picks one
    /// with `"central": k`), the first at `address` (static random; the peer's default when
    /// nil), and waits for its READY line.
    init(centrals: Int = 1, address: String? = nil) async throws {
        guard FileManager.default.isExecutableFile(atPath: Repository.python.path) else {
            throw TestPeerError(
                description: "no \(Repository.python.path): run 'make test', which creates the peer's venv")
        }
        logPath = NSTemporaryDirectory() + "bluejay-central-\(UUID().uuidString).log"
        process.executableURL = Repository.python
        process.arguments =
            [Repository.peer.path, "--central", "--centrals", String(centrals), "--log", logPath]
            + (address.map { ["--address", $0] } ?? [])
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        input = stdin.fileHandleForWriting
        output = stdout.fileHandleForReading
        let ready = await Self.line(output)
        guard ready.hasPrefix("READY "),
            let field = ready.split(separator: " ").first(where: { $0.hasPrefix("transport=") })
        else {
            process.terminate()
            throw TestPeerError(description: "the central did not print READY (got '\(ready)')")
        }
        transport = String(field.dropFirst("transport=".count))
    }

    /// One line of the peer's stdout, read byte by byte on a thread of its own.
    private static func line(_ handle: FileHandle) async -> String {
        await blocking {
            var line = [UInt8]()
            while let byte = handle.readData(ofLength: 1).first, byte != UInt8(ascii: "\n") { line.append(byte) }
            return String(decoding: line, as: UTF8.self)
        }
    }

    /// Sends `command` and returns the answer; an answer with `ok` false throws, with
    /// `att_error` (the ATT error code) when the peer's ATT client got an Error Response.
    /// It runs on the caller's actor (the reading of the answer does not): Swift 6.0 lets
    /// the answer, a `[String: Any]`, which is not Sendable, reach a caller on an actor only so.
    @discardableResult
    func send(_ command: [String: Any], isolation: isolated (any Actor)? = #isolation) async throws -> [String: Any] {
        var data = try JSONSerialization.data(withJSONObject: command)
        data.append(UInt8(ascii: "\n"))
        try input.write(contentsOf: data)
        let text = await Self.line(output)
        guard let answer = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            throw TestPeerError(description: "not a JSON object from the central: '\(text)'")
        }
        guard answer["ok"] as? Bool == true else { throw CentralError(answer: answer) }
        return answer
    }

    /// The peer's log so far.
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Closes its stdin (it exits at EOF) and SIGTERMs it.
    func stop() {
        guard !stopped else { return }
        stopped = true
        try? input.close()
        if process.isRunning { process.terminate() }
        let logPath = logPath
        cleanUpAfterExit(of: [process]) { try? FileManager.default.removeItem(atPath: logPath) }
    }

    deinit { stop() }
}

/// A command the central could not carry out.
struct CentralError: Error, CustomStringConvertible {
    /// The ATT error code the peer's client got, if that was the failure.
    let attError: Int?
    let description: String

    init(answer: [String: Any]) {
        attError = answer["att_error"] as? Int
        description = "the central failed: \(answer)"
    }
}

/// Bytes from the central's hex.
func hexBytes(_ text: Any?) -> [UInt8] {
    guard let text = text as? String else { return [] }
    var bytes: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex, let next = text.index(index, offsetBy: 2, limitedBy: text.endIndex) {
        bytes.append(UInt8(text[index..<next], radix: 16) ?? 0)
        index = next
    }
    return bytes
}

/// Hex for the central.
func hexString(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
