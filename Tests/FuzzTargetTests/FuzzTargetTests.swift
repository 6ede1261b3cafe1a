import BluetoothCore
import Foundation
import FuzzTargets
import HCI
import HCITestSupport
import Testing

/// Every fuzz target over its seed corpus (cut from the recorded traces, plus the files
/// under Fuzz/Corpus) and over every crash libFuzzer ever found (Fuzz/Regressions): the
/// regression tests of `make fuzz`, and proof that the harness itself runs on real data.
@Suite struct FuzzTargetTests {
    /// The repository root, from this file's place in it.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// Every btsnoop trace of the repository (its recorded sessions and the real traces it
    /// ships) and, where the workspace has them, the rest of the shared real-world traces.
    static let traces: [(name: String, bytes: [UInt8])] = {
        var seen = Set<String>()
        // A shipped real trace is also in the shared corpus: seed it once.
        return ["\(root)/Fixtures/traces", "\(root)/Fixtures/real-traces", "\(root)/../shared/traces"]
            .flatMap { directory in files(in: directory).filter { $0.name.hasSuffix(".btsnoop") } }
            .filter { seen.insert($0.name).inserted }
    }()

    @Test(arguments: FuzzTarget.all.map(\.name))
    func holdsOnSeedsAndPastCrashes(_ name: String) async throws {
        // Up to minutes of synchronous decoding in a debug build, so on a thread of its own:
        // run on the cooperative pool, the targets held both of its threads and starved the
        // other suites' tasks, while the stack's timers, on its own loop, ran on.
        let problems = await blocking { Self.problems(of: name) }
        #expect(problems.isEmpty, "\(problems.count) problems:\n\(problems.joined(separator: "\n"))")
    }

    /// What is wrong with target `name` over its seeds and past crashes (empty: nothing).
    static func problems(of name: String) -> [String] {
        guard let target = FuzzTarget.named(name) else { return ["no target named \(name)"] }
        var problems: [String] = []
        var seeds: [(name: String, bytes: [UInt8])] = []
        for trace in traces {
            do {
                let file = try BTSnoopFile(bytes: trace.bytes)
                seeds += target.seeds(trace.bytes, file).enumerated().map {
                    ("\(trace.name) seed \($0.offset)", $0.element)
                }
            } catch {
                problems.append("\(trace.name): \(error)")
            }
        }
        seeds += files(in: "\(root)/Fuzz/Corpus/\(name)")
        if seeds.isEmpty { problems.append("\(name) has no seeds") }
        // Seeds are real traffic and real files: each must get past the outermost decoder,
        // or the target does not drive the decoders it names.
        for seed in seeds {
            do {
                let units = try target.run(seed.bytes)
                if units == 0 {
                    problems.append("\(name), \(seed.name) does not decode: \(seed.bytes.prefix(32).hexDump)")
                }
            } catch {
                problems.append("\(name), \(seed.name): \(error)")
            }
        }
        // Past findings only have to keep their invariants (a fixed decoder may reject them).
        for crash in files(in: "\(root)/Fuzz/Regressions/\(name)") {
            do { _ = try target.run(crash.bytes) } catch {
                problems.append("\(name), regression \(crash.name): \(error)")
            }
        }
        return problems
    }

    /// Names pick corpus folders and crash files, so no two targets share one.
    @Test func targetsHaveDistinctNames() {
        let names = FuzzTarget.all.map(\.name)
        #expect(Set(names).count == names.count)
        for target in FuzzTarget.all {
            #expect(target.maximumLength > 0 && !target.summary.isEmpty, "\(target.name)")
        }
    }

    private static func files(in directory: String) -> [(name: String, bytes: [UInt8])] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.sorted().compactMap { name in
            (try? readWholeFile("\(directory)/\(name)")).map { (name, $0) }
        }
    }
}
