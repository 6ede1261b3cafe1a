import BluetoothCore
import Foundation  // FileManager, URL; tests only.
import HCI
import HCITestSupport
import SMP
import TestTraits
import Testing
import TraceDecoding
import TraceTestSupport

/// The whole shared corpus of real traces, `../shared/traces` beside the clone: the three
/// whose licence the repository cannot ship and the four it ships (Fixtures/real-traces,
/// which `make test` runs). `make test-corpus` runs this target and CI runs that; `make test`
/// leaves it out, so a fresh clone with nothing beside it passes. A missing corpus fails
/// here, saying where it was looked for; what was found is printed.
@Suite("The shared trace corpus")
struct CorpusTests {
    static let directory = RealTraces.corpus

    /// The traces expected-counts.json lists, or nothing (the first test then fails).
    static let names: [String] = {
        guard let text = try? String(contentsOfFile: directory + "/expected-counts.json", encoding: .utf8),
            case .object(let entries)? = try? JSONValue(parsing: text)
        else { return [] }
        return entries.keys.sorted()
    }()

    static func read(_ name: String) throws -> BTSnoopFile { try BTSnoopFile(path: directory + "/" + name) }

    @Test("The corpus is there: every trace expected-counts.json lists, and no other")
    func corpusIsThere() throws {
        let found = RealTraces.names(in: Self.directory)
        print("trace corpus \(Self.directory): \(found.count) traces")
        for name in found { print("  \(name)") }
        #expect(
            !Self.names.isEmpty,
            "no expected-counts.json in \(Self.directory): the corpus must be checked out as shared/traces beside the clone"
        )
        #expect(found == Self.names, "the traces found are not the ones expected-counts.json lists")
    }

    @Test("The traces the repository ships are the corpus's own, byte for byte")
    func shippedTracesAreTheCorpus() throws {
        let shipped = RealTraces.names(in: RealTraces.shipped)
        #expect(shipped.count == 4)
        for name in shipped {
            #expect(
                FileManager.default.contents(atPath: RealTraces.shipped + "/" + name)
                    == FileManager.default.contents(atPath: Self.directory + "/" + name),
                "\(name) differs from the corpus's")
        }
    }

    @Test(
        "Every summary agrees with expected-counts.json, and all of them render to it byte for byte once its Unknowns are renamed"
    )
    func summariesMatch() throws {
        let text = try String(contentsOfFile: Self.directory + "/expected-counts.json", encoding: .utf8)
        let expected = try JSONValue(parsing: text)
        var all: [String: JSONValue] = [:]
        for name in Self.names { all[name] = TraceSummary(file: try Self.read(name)).json }
        let comparison = ExpectedCountsComparison(actual: .object(all), expected: expected)
        for problem in comparison.problems { Issue.record("\(problem)") }
        for renaming in comparison.renamings { print("accepted renaming: \(renaming)") }
        #expect(JSONValue.object(all).rendered() == comparison.renamedExpected.rendered())
        let renamed = Set(
            comparison.renamings.map {
                "\($0.table) \($0.expectedKey) → \(String($0.actualKey.split(separator: " ").last!))"
            })
        #expect(renamed == RealTraces.acceptedRenamings)
    }

    @Test("Every trace checks clean, strict: nothing the tolerance rule has to accept")
    func tracesAreClean() throws {
        for name in Self.names {
            let check = TraceCheck(file: try Self.read(name), strict: true)
            #expect(check.failure == nil, "\(name): \(check.failure.map { "\($0)" } ?? "")")
            #expect(check.warnings.isEmpty, "\(name): \(check.warnings)")
        }
    }

    @Test("Every trace redacts to a copy that differs only in zeroed secret fields")
    func tracesRedact() throws {
        for name in Self.names {
            let original = [UInt8](try #require(FileManager.default.contents(atPath: Self.directory + "/" + name)))
            let problems = try redactionProblems(original).problems
            #expect(problems.isEmpty, "\(name): \(problems)")
        }
    }

    @Test("An Android legacy pairing: LE_Rand's output (its nonces) and the resolving list's IRKs are zeroed too")
    func androidLegacyPairing() throws {
        let original = [UInt8](
            try #require(
                FileManager.default.contents(
                    atPath: Self.directory + "/android-qualcomm-pokemongoplus-smp-legacy-pairing.btsnoop")))
        let (redaction, problems) = try redactionProblems(original)
        #expect(problems.isEmpty, "\(problems)")
        var counts: [String: Int] = [:]
        for entry in redaction.zeroed { counts[entry.field.name, default: 0] += 1 }
        #expect(counts["Random_Number"] ?? 0 >= 4, "\(counts)")
        #expect(counts["Peer_IRK"] ?? 0 >= 1 && counts["Local_IRK"] ?? 0 >= 1, "\(counts)")
        #expect(counts["Confirm_Value"] ?? 0 >= 4 && counts["Random_Value"] ?? 0 >= 4, "\(counts)")
        #expect(counts["Long_Term_Key"] ?? 0 >= 2 && counts["Identity_Resolving_Key"] ?? 0 >= 1, "\(counts)")
        let before = try BTSnoopFile(bytes: original), after = try BTSnoopFile(bytes: redaction.bytes)
        #expect(TraceSummary(file: after).json == TraceSummary(file: before).json)
    }

    /// The command-line tool built beside this test run.
    static let bluejay = BuiltProducts.url("bluejay")

    @Test("bluejay trace --summary --json of the whole corpus is expected-counts.json, renamings aside")
    func commandLineSummary() async throws {
        let files = Self.names.map { Self.directory + "/" + $0 }
        let result = try await run(Self.bluejay, ["trace", "--summary", "--json"] + files)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let expected = try JSONValue(
            parsing: try String(contentsOfFile: Self.directory + "/expected-counts.json", encoding: .utf8))
        let comparison = ExpectedCountsComparison(actual: try JSONValue(parsing: result.stdout), expected: expected)
        for problem in comparison.problems { Issue.record("bluejay trace --summary --json: \(problem)") }
        #expect(result.stdout.trimmingCharacters(in: .newlines) == comparison.renamedExpected.rendered())
    }

    @Test("bluejay trace prints every record of the legacy pairing readably")
    func commandLineDecodesTheLegacyPairing() async throws {
        let result = try await run(
            Self.bluejay, ["trace", Self.directory + "/android-qualcomm-pokemongoplus-smp-legacy-pairing.btsnoop"])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 897)
        #expect(lines.contains { $0.contains("SMP 0x01 Pairing_Request") })
        #expect(lines.contains { $0.contains("HCI Event: Encryption_Change (0x08)") })
        #expect(!lines.contains { $0.contains("malformed") })
    }
}
