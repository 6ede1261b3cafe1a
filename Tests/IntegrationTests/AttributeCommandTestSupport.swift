import ATT
import BluetoothCore
import Foundation
import HCI
import L2CAP
import HCITestSupport
import Testing

// The attribute command tests' rig (AttributeCommandTests.swift): the tool's runs and their output.

/// `bluejay` against one peer: each run with a capture of its own, in a store directory of
/// the test's own (by handle nothing is cached: ``finish()`` checks it stayed empty, and
/// that the peer saw no protocol violation).
struct AttributeCLI {
    let peer: TestPeer
    let store = NSTemporaryDirectory() + "bluejay-attribute-store-\(UUID().uuidString)"

    /// `bluejay COMMAND PEER ARGUMENTS --transport … --capture …`.
    func bluejay(_ command: String, _ arguments: [String]) async throws -> AttributeRun {
        let capture = NSTemporaryDirectory() + "bluejay-attribute-\(UUID().uuidString).btsnoop"
        defer { try? FileManager.default.removeItem(atPath: capture) }
        let result = try await run(
            Repository.bluejay,
            [command, peer.address + "/random"] + arguments + ["--transport", peer.transport, "--capture", capture],
            environment: ["BLUEJAY_STORE": store])
        return try AttributeRun(status: result.status, stdout: result.stdout, stderr: result.stderr, capture: capture)
    }

    func finish() {
        let left = (try? FileManager.default.subpathsOfDirectory(atPath: store)) ?? []
        #expect(left.isEmpty, "by handle nothing is cached, yet the store holds \(left)")
        #expect(!peer.log.contains("PROTOCOL-VIOLATION"), "\(peer.log.suffix(2000))")
        try? FileManager.default.removeItem(atPath: store)
    }
}

/// One run's exit status, output, and the ATT PDUs of its capture: whole (reassembled)
/// L2CAP frames on the ATT channel, each direction in order.
struct AttributeRun {
    let status: Int32
    let stdout: String
    let stderr: String
    /// The ATT PDUs the host sent, and when (µs since 1970).
    private(set) var sent: [[UInt8]] = []
    private(set) var sentTimes: [Int64] = []
    /// The ATT PDUs the host received.
    private(set) var received: [[UInt8]] = []
    /// L2CAP frames the host sent on channels other than ATT.
    private(set) var otherFrames: [String] = []

    init(status: Int32, stdout: String, stderr: String, capture: String) throws {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
        var reassemblers: [String: Reassembler] = [:]
        for record in try BTSnoopFile(path: capture).records {
            guard case let .packet(type, body) = record.content, type == .acl,
                case let .acl(packet) = try HCIPacket(type: type, body: body)
            else { continue }
            let fromHost = record.direction == .sent
            let key = "\(packet.handle) \(fromHost)"
            let (frame, problem) = reassemblers[key, default: Reassembler()].append(packet)
            if let problem { Issue.record("record \(record.number): \(problem)") }
            guard let frame else { continue }
            if frame.channel != .att {
                if fromHost { otherFrames.append("\(frame.channel) \(frame.payload.hexDump)") }
            } else if fromHost {
                sent.append(Array(frame.payload))
                sentTimes.append(record.unixMicroseconds)
            } else {
                received.append(Array(frame.payload))
            }
        }
    }

    var sentNames: [String] { sent.map { ATTOpcode(rawValue: $0.first ?? 0).name } }
    var receivedNames: [String] { received.map { ATTOpcode(rawValue: $0.first ?? 0).name } }
    /// The sent PDUs as lowercase hex separated by spaces (`0a 03 00`).
    var sentHex: [String] { sent.map(\.hexDump) }
    /// Standard output parsed as JSON, or nil.
    var json: Any? { try? JSONSerialization.jsonObject(with: Data(stdout.utf8)) }
}

/// Bytes from `0a 03 00`.
func attributeBytes(_ text: String) -> [UInt8] {
    text.split(separator: " ").compactMap { UInt8($0, radix: 16) }
}
