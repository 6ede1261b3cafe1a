import Foundation  // JSONSerialization, to compare with the expected file structurally; tests only.
import HCI
import Testing
import TraceDecoding

// Each real-world trace in ../shared/traces, summarised, must equal its entry of
// expected-counts.json (the counts Wireshark agrees with): structurally, and as text
// rendered the way Python's json.dumps(indent=1, sort_keys=True) wrote the file.

/// The text of expected-counts.json. A missing file fails the test (never skips it) and
/// says where it was looked for.
private func expectedText(sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
    let path = tracesDirectory + "/expected-counts.json"
    guard let data = FileManager.default.contents(atPath: path) else {
        Issue.record("""
            \(path) is missing: the trace tests need the shared traces checked out as \
            shared/traces, a sibling directory of the package root
            """, sourceLocation: sourceLocation)
        throw MissingTraces()
    }
    return String(decoding: data, as: UTF8.self)
}

private struct MissingTraces: Error {}

/// Parses JSON text into Foundation objects.
private func parse(_ text: String) throws -> NSObject {
    try #require(JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]) as? NSObject)
}

/// Summarises one trace.
private func summary(of name: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> TraceSummary {
    TraceSummary(file: try readTrace(name, sourceLocation: sourceLocation))
}

@Suite("Trace summaries")
struct TraceSummaryTests {
    @Test("The expected file lists exactly the seven traces")
    func expectedFileNames() throws {
        let expected = try #require(try parse(try expectedText()) as? [String: Any])
        #expect(expected.keys.sorted() == traceNames)
    }

    @Test("Each trace's summary equals its expected counts", arguments: traceNames)
    func summaryMatches(name: String) throws {
        let expected = try #require(try parse(try expectedText()) as? [String: Any])
        let entry = try #require(expected[name] as? NSObject, "no entry for \(name) in expected-counts.json")
        let summary = try summary(of: name)
        let rendered = summary.json.rendered()
        let actual = try parse(rendered)
        #expect(actual == entry, "summary of \(name):\n\(rendered)")

        // Field by field, so a failure says which count is off.
        if let actual = actual as? [String: NSObject], let entry = entry as? [String: NSObject] {
            #expect(actual.keys.sorted() == entry.keys.sorted())
            for key in entry.keys.sorted() where actual[key] != entry[key] {
                Issue.record("\(name): \(key) is \(actual[key].map { "\($0)" } ?? "missing"), expected \(entry[key]!)")
            }
        }
    }

    @Test("All summaries rendered together equal expected-counts.json byte for byte")
    func wholeFileText() throws {
        let expected = try expectedText()
        var all: [String: JSONValue] = [:]
        for name in traceNames { all[name] = try summary(of: name).json }
        let rendered = JSONValue.object(all).rendered()
        let trimmed = expected.hasSuffix("\n") ? String(expected.dropLast()) : expected
        #expect(rendered == trimmed)
        if rendered != trimmed {
            // Point at the first line that differs.
            let got = rendered.split(separator: "\n", omittingEmptySubsequences: false)
            let want = trimmed.split(separator: "\n", omittingEmptySubsequences: false)
            if let line = zip(got, want).enumerated().first(where: { $0.element.0 != $0.element.1 }) {
                Issue.record("line \(line.offset + 1): got \(line.element.0), expected \(line.element.1)")
            } else {
                Issue.record("got \(got.count) lines, expected \(want.count)")
            }
        }
    }

    @Test("A truncated capture is counted as malformed, with every whole record counted")
    func truncatedFile() throws {
        var bytes = Array("btsnoop".utf8) + [0, 0, 0, 0, 1, 0, 0, 0x03, 0xEA]
        let reset: [UInt8] = [0x01, 0x03, 0x0C, 0x00]
        bytes += [0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 2, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 8) + reset
        bytes += [0, 0, 0, 4, 0, 0, 0, 4]  // a second record cut inside its header
        let file = try BTSnoopFile(bytes: bytes)
        let summary = TraceSummary(file: file)
        #expect(summary.records == 1)
        #expect(summary.packetTypes == ["command": 1])
        #expect(summary.commands == ["0x0c03 (ogf 0x03 ocf 0x003) Reset": 1])
        #expect(summary.malformed == ["file truncated": 1])
    }
}
