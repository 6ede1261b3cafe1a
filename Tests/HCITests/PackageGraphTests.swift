import Foundation
import HCITestSupport
import Testing

/// The package's module graph as SwiftPM reads it (`swift package dump-package`): every
/// module a target imports is one it declares, so the graph in Package.swift is the one the
/// code has, and an app that imports `Bluejay` builds none of what only tools need.
@Suite("Package graph")
struct PackageGraphTests {
    /// A target as Package.swift declares it.
    struct Target {
        let name: String
        let path: String
        let dependencies: Set<String>
    }

    /// The manifest's targets, read by SwiftPM itself (in a scratch folder of its own, so the
    /// build folder's lock, held by the test run, is never waited for).
    static func targets() async throws -> [String: Target] {
        let scratch = NSTemporaryDirectory() + "bluejay-dump-package-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let root = DocumentationTests.packageRoot.path
        let dumped = try await run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["swift", "package", "--package-path", root, "--scratch-path", scratch, "dump-package"])
        try #require(dumped.status == 0, "swift package dump-package: \(dumped.stderr)")
        let manifest = try #require(try JSONSerialization.jsonObject(with: Data(dumped.stdout.utf8)) as? [String: Any])
        var targets: [String: Target] = [:]
        for case let target as [String: Any] in manifest["targets"] as? [Any] ?? [] {
            guard let name = target["name"] as? String, let type = target["type"] as? String else { continue }
            let path = target["path"] as? String ?? ((type == "test" ? "Tests/" : "Sources/") + name)
            var dependencies = Set<String>()
            for case let dependency as [String: Any] in target["dependencies"] as? [Any] ?? [] {
                for key in ["byName", "target", "product"] {
                    if let named = (dependency[key] as? [Any])?.first as? String { dependencies.insert(named) }
                }
            }
            targets[name] = Target(name: name, path: path, dependencies: dependencies)
        }
        return targets
    }

    /// The modules `file` imports (`import X`, `@testable import X`, `import struct X.Y`, …).
    static func imports(in text: String) -> Set<String> {
        var modules = Set<String>()
        for line in text.split(separator: "\n") {
            var words = line.split(separator: " ").map(String.init)
            while let first = words.first, first.hasPrefix("@") || ["public", "package", "internal"].contains(first) {
                words.removeFirst()
            }
            guard words.first == "import", words.count >= 2 else { continue }
            let kinds = ["struct", "class", "enum", "protocol", "func", "var", "let", "typealias"]
            let module = kinds.contains(words[1]) && words.count >= 3 ? words[2] : words[1]
            modules.insert(String(module.split(separator: ".").first ?? ""))
        }
        return modules
    }

    @Test("Every module a target imports from this package is one it declares")
    func everyImportIsDeclared() async throws {
        let targets = try await Self.targets()
        try #require(targets["Bluejay"] != nil && targets["HCI"] != nil)
        var undeclared: [String] = []
        for target in targets.values.sorted(by: { $0.name < $1.name }) {
            let directory = DocumentationTests.packageRoot.appendingPathComponent(target.path)
            var imported = Set<String>()
            for file in DocumentationTests.swiftFiles(under: directory) {
                imported.formUnion(Self.imports(in: try String(contentsOf: file, encoding: .utf8)))
            }
            let missing = imported.filter {
                targets[$0] != nil && $0 != target.name && !target.dependencies.contains($0)
            }
            if !missing.isEmpty {
                undeclared.append("\(target.name) imports \(missing.sorted()) without declaring them")
            }
        }
        #expect(undeclared.isEmpty, "\(undeclared.joined(separator: "\n"))")
    }

    /// `mock:` is an opt-in (`VirtualController.enableMockTransport()`): the virtual controller
    /// and the trace walker under it are not in the graph of an app that imports `Bluejay`.
    @Test("An app's graph holds neither the virtual controller nor the trace walker")
    func appGraphLeavesOutTheToolsModules() async throws {
        let targets = try await Self.targets()
        var reached = Set<String>(), pending = ["Bluejay"]
        while let name = pending.popLast() {
            guard reached.insert(name).inserted, let target = targets[name] else { continue }
            pending += target.dependencies
        }
        #expect(reached.contains("HCI") && reached.contains("SMP"), "the walk reached the layers: \(reached.sorted())")
        #expect(!reached.contains("VirtualController"))
        #expect(!reached.contains("TraceDecoding"))
    }
}
