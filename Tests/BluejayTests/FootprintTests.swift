import Foundation
import Testing

/// The static `bluejay` binary stays small (docs/Benchmarks.md: at most 16 MB stripped):
/// one `import Foundation` in a module it links pulls in the whole of Foundation with ICU's
/// data, about 40 MB more (it happened once, with `bluejay serve`). Everything `bluejay`
/// links imports `FoundationEssentials` at most; the gateway and the benchmarks, separate
/// executables, may import what they like.
@Suite struct FootprintTests {
    /// The targets that are not linked into `bluejay`.
    static let outside: Set<String> = ["BluejayGateway", "Gateway", "BluejayBench", "COpenSSL", "CBluetooth"]

    @Test func nothingLinkedIntoTheToolImportsFullFoundation() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources")
        let targets = try FileManager.default.contentsOfDirectory(atPath: sources.path).filter {
            !Self.outside.contains($0)
        }
        #expect(targets.contains("bluejay") && targets.contains("HCI"), "found targets: \(targets)")
        var offenders: [String] = []
        for target in targets {
            guard let files = FileManager.default.enumerator(atPath: sources.appendingPathComponent(target).path) else {
                continue
            }
            for case let file as String in files where file.hasSuffix(".swift") {
                let text = try String(
                    contentsOf: sources.appendingPathComponent(target).appendingPathComponent(file), encoding: .utf8)
                let imports = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
                    .filter {
                        $0 == "import Foundation" || $0.hasPrefix("@_exported import Foundation ")
                            || $0 == "@_exported import Foundation"
                    }
                if !imports.isEmpty { offenders.append("\(target)/\(file)") }
            }
        }
        #expect(
            offenders.isEmpty,
            "these import Foundation (full) into the bluejay binary; use FoundationEssentials: \(offenders)")
    }
}
