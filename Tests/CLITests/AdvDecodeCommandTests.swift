import Foundation
import Testing
import TestTraits

/// `bluejay adv decode` as a script drives it: lines piped in, one JSON object per line out,
/// in order, each as soon as it is decoded.
@Suite struct AdvDecodeCommandTests {
    /// The tool of the build these tests belong to.
    static let bluejay = BuiltProducts.url("bluejay")

    /// BTHome's encrypted example (bthome.io/encryption), a RuuviTag format 5 test vector, a
    /// line that is not hex, Mi Flora moisture, an advertisement of no known format, the
    /// BTHome example with a wrong key, and a comment.
    static let input = """
        54:48:E6:8F:80:A5 0201061216d2fc41e445f3c9962b332211006c7c4519 231d39c1d7cc1ab1aee224cd096db932
        CB:B8:33:4C:88:4F 1bff99040512FC5394C37C0004FFFC040CAC364200CDCBB8334C884F
        11:22:33:44:55:66 not-hex
        C4:7C:8D:6A:3E:7A 131695fe71209800477a3e6a8d7cc40d08100140
        # ignored
        11:22:33:44:55:66 0201060303aafe
        54:48:E6:8F:80:A5 1216d2fc41e445f3c9962b332211006c7c4519 00000000000000000000000000000000
        """

    static let expected = [
        #"{"address":"54:48:E6:8F:80:A5","format":"bthome-v2","values":{"extra":{"encrypted":true,"encryption_counter":1122867},"humidity":50.55,"temperature":25.06}}"#,
        #"{"address":"CB:B8:33:4C:88:4F","format":"ruuvi-v5","values":{"acceleration_x":0.004,"acceleration_y":-0.004,"acceleration_z":1.036,"extra":{"mac":"CB:B8:33:4C:88:4F","tx_power":4},"humidity":53.49,"movement_counter":66,"packet_counter":205,"pressure":1000.44,"temperature":24.3,"voltage":2.977}}"#,
        #"{"address":"11:22:33:44:55:66","error":"AD_HEX is not an even number of hex digits"}"#,
        #"{"address":"C4:7C:8D:6A:3E:7A","format":"mibeacon","values":{"extra":{"mac":"C4:7C:8D:6A:3E:7A","model":"HHCCJCY01","product_id":"0x0098"},"moisture":64,"packet_counter":71}}"#,
        #"{"address":"11:22:33:44:55:66","error":"no known advertisement format"}"#,
        #"{"address":"54:48:E6:8F:80:A5","error":"bthome-v2: decryption failed (the message integrity check does not match): wrong key, or the data was altered"}"#,
    ]

    @Test func linesPipedInGiveOneJSONObjectEachInOrder() throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.bluejay.path), "build the tool first: swift build")
        let process = Process()
        process.executableURL = Self.bluejay
        process.arguments = ["adv", "decode"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        input.fileHandleForWriting.write(Data(Self.input.utf8))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(lines == Self.expected)
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["address"] is String, "not a JSON object with an address: \(line)")
        }
    }

    /// Each answer is written before the next line is read: a script waiting on its answer
    /// does not wait for end of input.
    @Test func eachAnswerArrivesBeforeTheNextLineIsSent() throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.bluejay.path), "build the tool first: swift build")
        let process = Process()
        process.executableURL = Self.bluejay
        process.arguments = ["adv", "decode"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        let reader = LineReader(output.fileHandleForReading)
        let lines = Self.input.split(separator: "\n").filter { !$0.hasPrefix("#") }
        for (line, expected) in zip(lines, Self.expected) {
            input.fileHandleForWriting.write(Data((line + "\n").utf8))
            // A hang guard, not a speed check: the answer comes at once, but a ThreadSanitizer
            // build starting beside other work can take seconds to answer the first line.
            #expect(reader.next(timeout: 120) == expected, "no answer to '\(line)' while the input stays open")
        }
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }
}

/// The lines of a pipe, read on a thread of their own, handed out one at a time.
final class LineReader: @unchecked Sendable {
    private let lock = NSCondition()
    private var lines: [String] = []
    private var ended = false

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            var pending = Data()
            while true {
                let chunk = handle.availableData
                lock.lock()
                if chunk.isEmpty {
                    ended = true
                    lock.broadcast()
                    lock.unlock()
                    return
                }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: 0x0A) {
                    lines.append(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                    pending = Data(pending[(newline + 1)...])
                }
                lock.broadcast()
                lock.unlock()
            }
        }
    }

    /// The next line, or nil when none comes within `timeout` seconds or the pipe ends.
    func next(timeout: TimeInterval) -> String? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        lock.lock()
        defer { lock.unlock() }
        while lines.isEmpty && !ended {
            if !lock.wait(until: deadline) { break }
        }
        return lines.isEmpty ? nil : lines.removeFirst()
    }
}
