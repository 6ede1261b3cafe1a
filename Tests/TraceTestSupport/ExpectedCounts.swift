import ATT
import BluetoothCore
import Foundation  // JSONSerialization, to read the expected file; test support only.
import HCI
import L2CAP
import SMP
import TraceDecoding

/// Holds trace summaries against an `expected-counts.json` (the shared corpus's, which we
/// cannot edit, or the subset `Fixtures/real-traces` ships), under one rule for every test that reads it:
///
/// - the traces, and each trace's fields, are the same on both sides: none missing, none extra;
/// - in a count table keyed `0xNN Name` (commands, events, LE subevents, ATT, SMP, LE
///   signaling) each expected key is matched to ours by its code, the part before the first
///   space; the counts are equal and no code is missing or extra;
/// - the name after the code is the expected one, except where the expected file says
///   `Unknown`: there ours is whatever our name table gives for the code (the file was
///   written before our tables named every BR/EDR command), and that is recorded as an
///   accepted renaming;
/// - every other field (records, packet_types, att_mtu, malformed, …) is equal exactly.
package struct ExpectedCountsComparison: Sendable {
    /// A key the expected file names `Unknown` and we name from our table.
    package struct Renaming: Sendable, Equatable, CustomStringConvertible {
        /// The trace.
        package var file: String
        /// The count table: `commands`, `events`, ….
        package var table: String
        /// The key as the expected file spells it.
        package var expectedKey: String
        /// The key as our summary spells it.
        package var actualKey: String

        /// `trace: commands 0x0c1c (ogf 0x03 ocf 0x01c) Unknown → Write_Page_Scan_Activity`.
        package var description: String {
            "\(file): \(table) \(expectedKey) → \(ExpectedCountsComparison.name(in: actualKey))"
        }
    }

    /// Every disagreement, each naming the trace and the key.
    package private(set) var problems: [String] = []
    /// The accepted renamings, in file and key order.
    package private(set) var renamings: [Renaming] = []
    /// The expected value with the accepted renamings applied: what our summary must render
    /// to, byte for byte.
    package private(set) var renamedExpected: JSONValue

    /// Compares whole files: objects of summaries by trace name.
    package init(actual: JSONValue, expected: JSONValue) {
        renamedExpected = expected
        guard case .object(let got) = actual, case .object(let want) = expected else {
            problems.append("the summaries are not a JSON object of traces")
            return
        }
        for file in want.keys.sorted() where got[file] == nil { problems.append("\(file): no summary") }
        for file in got.keys.sorted() where want[file] == nil {
            problems.append("\(file): summarised, but not in the expected file")
        }
        var renamed = want
        for file in want.keys.sorted() {
            guard let summary = got[file], let entry = want[file] else { continue }
            renamed[file] = compare(file: file, actual: summary, expected: entry)
        }
        renamedExpected = .object(renamed)
    }

    /// Compares one trace's summary with its entry of the expected file.
    package init(file: String, actual: JSONValue, expected: JSONValue) {
        renamedExpected = expected
        renamedExpected = compare(file: file, actual: actual, expected: expected)
    }

    /// The count tables whose names `currentName(of:in:)` knows.
    package static let namedTables: Set<String> = ["commands", "events", "le_subevents", "att", "smp", "le_signaling"]

    /// The name our tables give `code` in the count table `table`, or nil for a table
    /// whose names we do not keep (then names must match exactly).
    package static func currentName(of code: Int, in table: String) -> String? {
        switch table {
        case "commands": UInt16(exactly: code).map { HCINames.command(HCIOpcode(rawValue: $0)) }
        case "events": UInt8(exactly: code).map { HCINames.event($0) }
        case "le_subevents": UInt8(exactly: code).map { HCINames.leSubevent($0) }
        case "att": UInt8(exactly: code).map { ATTOpcode(rawValue: $0).name }
        case "smp": UInt8(exactly: code).map { SMPCode(rawValue: $0).name }
        case "le_signaling": UInt8(exactly: code).map { SignalingCode(rawValue: $0).name }
        default: nil
        }
    }

    /// The name in a count key: its last word (`Unknown` in `0x0c1c (ogf 0x03 ocf 0x01c) Unknown`).
    static func name(in key: String) -> String { key.split(separator: " ").last.map(String.init) ?? key }

    /// The code of a count key: its first word, read as hex (`0x0c1c`).
    private static func code(of key: String) -> Int? {
        guard let word = key.split(separator: " ").first, word.hasPrefix("0x") else { return nil }
        return Int(word.dropFirst(2), radix: 16)
    }

    /// Compares one trace; returns its expected entry with the accepted renamings applied.
    private mutating func compare(file: String, actual: JSONValue, expected: JSONValue) -> JSONValue {
        guard case .object(let got) = actual, case .object(let want) = expected else {
            problems.append("\(file): the summary is not a JSON object")
            return expected
        }
        for field in want.keys.sorted() where got[field] == nil { problems.append("\(file): \(field) missing") }
        for field in got.keys.sorted() where want[field] == nil {
            problems.append("\(file): \(field) is not in the expected file (ours is \(got[field]!.compact))")
        }
        var renamed = want
        for field in want.keys.sorted() {
            guard let ours = got[field], let theirs = want[field] else { continue }
            if case .object(let ourCounts) = ours, case .object(let theirCounts) = theirs,
                isCodeTable(field, ourCounts, theirCounts)
            {
                renamed[field] = .object(
                    compareCounts(file: file, table: field, actual: ourCounts, expected: theirCounts))
            } else if ours != theirs {
                problems.append("\(file): \(field) is \(ours.compact), expected \(theirs.compact)")
            }
        }
        return .object(renamed)
    }

    /// A count table keyed by code: one we keep names for, or one whose keys all start `0x`.
    private func isCodeTable(_ field: String, _ ours: [String: JSONValue], _ theirs: [String: JSONValue]) -> Bool {
        Self.namedTables.contains(field)
            || (ours.keys.allSatisfy { Self.code(of: $0) != nil }
                && theirs.keys.allSatisfy { Self.code(of: $0) != nil })
    }

    /// Compares one count table code by code; returns the expected table with the accepted
    /// renamings applied.
    private mutating func compareCounts(
        file: String, table: String, actual: [String: JSONValue],
        expected: [String: JSONValue]
    ) -> [String: JSONValue] {
        let ours = index(actual, file: file, table: table, side: "our summary")
        let theirs = index(expected, file: file, table: table, side: "the expected file")
        var renamed = expected
        for code in theirs.keys.sorted() {
            let expectedKey = theirs[code]!
            guard let actualKey = ours[code] else {
                problems.append(
                    "\(file): \(table) \(expectedKey) missing (expected count \(expected[expectedKey]!.compact))")
                continue
            }
            if actual[actualKey] != expected[expectedKey] {
                problems.append(
                    "\(file): \(table) \(expectedKey): count \(actual[actualKey]!.compact), expected \(expected[expectedKey]!.compact)"
                )
            }
            guard actualKey != expectedKey else { continue }
            let current = Self.currentName(of: code, in: table)
            let accepted =
                current.map {
                    Self.name(in: expectedKey) == "Unknown" && Self.renaming(expectedKey, to: $0) == actualKey
                } ?? false
            if accepted {
                renamings.append(Renaming(file: file, table: table, expectedKey: expectedKey, actualKey: actualKey))
                renamed[actualKey] = renamed.removeValue(forKey: expectedKey)
            } else if Self.name(in: expectedKey) == "Unknown" {
                problems.append(
                    "\(file): \(table) \(expectedKey) is \(actualKey) in our summary; our name table gives \(current ?? "no name")"
                )
            } else {
                problems.append("\(file): \(table) \(expectedKey) is \(actualKey) in our summary")
            }
        }
        for code in ours.keys.sorted() where theirs[code] == nil {
            let key = ours[code]!
            problems.append("\(file): \(table) \(key) (count \(actual[key]!.compact)) is not in the expected file")
        }
        return renamed
    }

    /// `key` with its name replaced by `name`.
    private static func renaming(_ key: String, to name: String) -> String {
        var words = key.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        words[words.count - 1] = name
        return words.joined(separator: " ")
    }

    /// The keys of a count table by code; a key without a code, or two keys with one code,
    /// is a problem.
    private mutating func index(_ counts: [String: JSONValue], file: String, table: String, side: String) -> [Int:
        String]
    {
        var byCode: [Int: String] = [:]
        for key in counts.keys.sorted() {
            guard let code = Self.code(of: key) else {
                problems.append("\(file): \(table) key \"\(key)\" in \(side) has no 0x code")
                continue
            }
            if let other = byCode[code] {
                problems.append("\(file): \(table) keys \"\(other)\" and \"\(key)\" in \(side) share a code")
            }
            byCode[code] = key
        }
        return byCode
    }
}

extension JSONValue {
    /// Parses JSON text of the kinds a summary holds: objects, arrays, strings, integers and
    /// null.
    package init(parsing text: String) throws {
        self = try Self(foundation: JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]))
    }

    /// Converts what `JSONSerialization` returns.
    private init(foundation value: Any) throws {
        switch value {
        case let object as [String: Any]: self = .object(try object.mapValues { try JSONValue(foundation: $0) })
        case let array as [Any]: self = .array(try array.map { try JSONValue(foundation: $0) })
        case let string as String: self = .string(string)
        case let integer as Int: self = .number(integer)
        case is NSNull: self = .null
        default: throw UnsupportedJSON(value: "\(value)")
        }
    }
}

/// A JSON value a summary never holds (a fraction, say).
package struct UnsupportedJSON: Error, CustomStringConvertible {
    /// The value, as text.
    package var value: String
    /// `unsupported JSON value 1.5`.
    package var description: String { "unsupported JSON value \(value)" }
}
