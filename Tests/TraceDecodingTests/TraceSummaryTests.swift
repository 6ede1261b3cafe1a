import BluetoothCore
import Foundation  // FileManager, to read the expected file; tests only.
import HCI
import Testing
import TraceDecoding
import TraceTestSupport

// Each real-world trace the repository carries (Fixtures/real-traces; the rest of the shared
// corpus runs in Tests/CorpusTests), summarised, must agree with its entry of
// expected-counts.json (the counts Wireshark agrees with) under ExpectedCountsComparison's
// rule: same traces, fields and codes, equal counts, the expected names — except where the
// file says Unknown and our tables name the code from the specification, an accepted
// renaming. Rendered, the summaries must equal the file byte for byte once those renamings
// are applied to it, as Python's json.dumps(indent=1, sort_keys=True) wrote it.

/// The text of expected-counts.json. A missing file fails the test (never skips it) and
/// says where it was looked for.
private func expectedText(sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
    let path = tracesDirectory + "/expected-counts.json"
    guard let data = FileManager.default.contents(atPath: path) else {
        Issue.record(
            """
            \(path) is missing: the repository carries it in Fixtures/real-traces
            """, sourceLocation: sourceLocation)
        throw MissingTraces()
    }
    return String(decoding: data, as: UTF8.self)
}

private struct MissingTraces: Error {}

/// Summarises one trace.
private func summary(of name: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> TraceSummary {
    TraceSummary(file: try readTrace(name, sourceLocation: sourceLocation))
}

/// Records each problem of `comparison` as an issue of its own, and prints the accepted
/// renamings so a run shows them.
private func report(_ comparison: ExpectedCountsComparison, sourceLocation: SourceLocation = #_sourceLocation) {
    for problem in comparison.problems { Issue.record("\(problem)", sourceLocation: sourceLocation) }
    for renaming in comparison.renamings { print("accepted renaming: \(renaming)") }
}

@Suite("Trace summaries")
struct TraceSummaryTests {
    @Test("The expected file lists exactly the traces listed here")
    func expectedFileNames() throws {
        guard case .object(let expected) = try JSONValue(parsing: try expectedText()) else {
            Issue.record("expected-counts.json is not a JSON object"); return
        }
        #expect(expected.keys.sorted() == traceNames)
    }

    @Test("Each trace's summary agrees with its expected counts", arguments: traceNames)
    func summaryMatches(name: String) throws {
        guard case .object(let expected) = try JSONValue(parsing: try expectedText()) else {
            Issue.record("expected-counts.json is not a JSON object"); return
        }
        let entry = try #require(expected[name], "no entry for \(name) in expected-counts.json")
        let json = try summary(of: name).json
        let comparison = ExpectedCountsComparison(file: name, actual: json, expected: entry)
        report(comparison)
        #expect(comparison.problems.isEmpty, "summary of \(name):\n\(json.rendered())")
    }

    @Test("All summaries rendered together equal expected-counts.json byte for byte, once its Unknowns are renamed")
    func wholeFileText() throws {
        let text = try expectedText()
        let trimmed = text.hasSuffix("\n") ? String(text.dropLast()) : text
        let expected = try JSONValue(parsing: text)
        // Our renderer writes the file exactly as Python did: the text comparison below
        // then tests the summaries, not the formatting.
        #expect(expected.rendered() == trimmed, "JSONValue does not render expected-counts.json as Python wrote it")

        var all: [String: JSONValue] = [:]
        for name in traceNames { all[name] = try summary(of: name).json }
        let comparison = ExpectedCountsComparison(actual: .object(all), expected: expected)
        report(comparison)
        let rendered = JSONValue.object(all).rendered()
        let wanted = comparison.renamedExpected.rendered()
        #expect(rendered == wanted)
        if rendered != wanted {
            // Point at the first line that differs.
            let got = rendered.split(separator: "\n", omittingEmptySubsequences: false)
            let want = wanted.split(separator: "\n", omittingEmptySubsequences: false)
            if let line = zip(got, want).enumerated().first(where: { $0.element.0 != $0.element.1 }) {
                Issue.record("line \(line.offset + 1): got \(line.element.0), expected \(line.element.1)")
            } else {
                Issue.record("got \(got.count) lines, expected \(want.count)")
            }
        }
    }

    @Test("The accepted renamings are exactly the BR/EDR commands the expected file leaves Unknown")
    func renamings() throws {
        let expected = try JSONValue(parsing: try expectedText())
        var all: [String: JSONValue] = [:]
        for name in traceNames { all[name] = try summary(of: name).json }
        let renamed = Set(
            ExpectedCountsComparison(actual: .object(all), expected: expected).renamings.map {
                "\($0.table) \($0.expectedKey) → \(String($0.actualKey.split(separator: " ").last!))"
            })
        #expect(renamed == RealTraces.acceptedRenamings)
    }

    @Test("The comparison names the trace and the key of each disagreement, and renames only Unknown")
    func comparisonRule() {
        let expected = JSONValue.object([
            "records": .number(3),
            "commands": .object(["0x0c03 (ogf 0x03 ocf 0x003) Reset": .number(1)]),
            "att": .object(["0x0a Unknown": .number(2), "0x0b Unknown": .number(2)]),
            "le_signaling": .object(["0x0a Unknown": .number(1)]),
        ])
        let agreeing = JSONValue.object([
            "records": .number(3),
            "commands": .object(["0x0c03 (ogf 0x03 ocf 0x003) Reset": .number(1)]),
            "att": .object(["0x0a Read_Req": .number(2), "0x0b Unknown": .number(2)]),
            "le_signaling": .object(["0x0a Unknown": .number(1)]),
        ])
        let good = ExpectedCountsComparison(file: "t.btsnoop", actual: agreeing, expected: expected)
        #expect(good.problems.isEmpty)
        #expect(good.renamings.map(\.description) == ["t.btsnoop: att 0x0a Unknown → Read_Req"])
        #expect(good.renamedExpected == agreeing)

        let disagreeing = JSONValue.object([
            "records": .number(4),
            "commands": .object([
                "0x0c03 (ogf 0x03 ocf 0x003) Resets": .number(2),
                "0x0c05 (ogf 0x03 ocf 0x005) Set_Event_Filter": .number(1),
            ]),
            "att": .object(["0x0a Read_Request": .number(2), "0x0b Read_Rsp": .number(2)]),
            "le_signaling": .object([:]),
            "l2cap": .object([:]),
        ])
        let bad = ExpectedCountsComparison(file: "t.btsnoop", actual: disagreeing, expected: expected)
        #expect(bad.renamings.map(\.description) == ["t.btsnoop: att 0x0b Unknown → Read_Rsp"])
        #expect(
            bad.problems == [
                "t.btsnoop: l2cap is not in the expected file (ours is {})",
                "t.btsnoop: att 0x0a Unknown is 0x0a Read_Request in our summary; our name table gives Read_Req",
                "t.btsnoop: commands 0x0c03 (ogf 0x03 ocf 0x003) Reset: count 2, expected 1",
                "t.btsnoop: commands 0x0c03 (ogf 0x03 ocf 0x003) Reset is 0x0c03 (ogf 0x03 ocf 0x003) Resets in our summary",
                "t.btsnoop: commands 0x0c05 (ogf 0x03 ocf 0x005) Set_Event_Filter (count 1) is not in the expected file",
                "t.btsnoop: le_signaling 0x0a Unknown missing (expected count 1)",
                "t.btsnoop: records is 4, expected 3",
            ])
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
