import BluetoothCore
import Foundation
import HCITestSupport
import HCI
import TestTraits

/// Paths of the checkout, found from this file so tests run from any clone.
enum Repository {
    /// The package root.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    /// The recorded sessions.
    static let traces = root.appendingPathComponent("Fixtures/traces")
    /// The command-line tool of the build these tests belong to.
    static let bluejay = BuiltProducts.url("bluejay")

    static func trace(_ name: String) -> String { traces.appendingPathComponent("\(name).btsnoop").path }
}

/// One line of Fixtures/traces/sessions.txt: a recorded `bluejay` invocation.
struct Session: Sendable, CustomStringConvertible {
    let name: String
    let exitStatus: Int32
    let arguments: [String]

    var description: String { name }
    var path: String { Repository.trace(name) }

    /// What the recording printed, with the transport written as TRANSPORT.
    func expected(_ stream: String) throws -> String {
        try String(contentsOf: Repository.traces.appendingPathComponent("\(name).\(stream)"), encoding: .utf8)
    }

    /// Every session of sessions.txt (read when the test list is made; a missing file is
    /// an empty list, which the suite's own count check then reports).
    static let all: [Session] = {
        guard
            let text = try? String(
                contentsOf: Repository.traces.appendingPathComponent("sessions.txt"), encoding: .utf8)
        else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard !line.hasPrefix("#") else { return nil }
            let words = line.split(separator: " ").map(String.init)
            guard words.count >= 3, let status = Int32(words[1]) else { return nil }
            return Session(name: words[0], exitStatus: status, arguments: Array(words[2...]))
        }
    }()

    /// The store its set-up steps left (Fixtures/traces/setups.txt), when it has some.
    var recordedStore: String? {
        let store = Repository.traces.appendingPathComponent("\(name).store").path
        return FileManager.default.fileExists(atPath: store) ? store : nil
    }

    /// A new store to replay in: a copy of ``recordedStore``, or empty.
    func freshStore() throws -> String {
        let store = NSTemporaryDirectory() + "bluejay-replay-store-\(UUID().uuidString)"
        if let recordedStore { try FileManager.default.copyItem(atPath: recordedStore, toPath: store) }
        return store
    }

    /// Runs the tool on `recording` (this session's own unless told) with a fresh store.
    func replay(_ recording: String? = nil) async throws -> (status: Int32, stdout: String, stderr: String) {
        let file = recording ?? path
        let store = try freshStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let result = try await run(
            Repository.bluejay, arguments + ["--transport", "replay:\(file)"], environment: ["BLUEJAY_STORE": store])
        return (
            result.status, result.stdout.replacingOccurrences(of: "replay:\(file)", with: "TRANSPORT"),
            result.stderr.replacingOccurrences(of: "replay:\(file)", with: "TRANSPORT")
        )
    }
}

/// A copy of the btsnoop file at `path` with one octet of record `number` flipped
/// (`index` counts from the H4 packet type), for proving a replay notices.
func corruptedCopy(of path: String, record number: Int, octet index: Int) throws -> String {
    let file = try BTSnoopFile(path: path)
    let copy = NSTemporaryDirectory() + "bluejay-corrupt-\(UUID().uuidString).btsnoop"
    let writer = try BTSnoopWriter(path: copy)
    defer { writer.close() }
    for record in file.records {
        guard case let .packet(type, body) = record.content else { continue }
        var bytes = [type.rawValue] + body
        if record.number == number { bytes[index] ^= 0x01 }
        writer.write(h4: bytes[...], direction: record.direction, timestamp: record.timestamp)
    }
    return copy
}

/// Numbers of the host→controller records of a recording.
func hostRecords(_ path: String) throws -> [(number: Int, length: Int)] {
    try BTSnoopFile(path: path).records.compactMap { record in
        guard record.direction == .sent, case let .packet(_, body) = record.content else { return nil }
        return (record.number, body.count + 1)
    }
}
