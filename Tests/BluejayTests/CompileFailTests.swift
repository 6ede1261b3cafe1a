import Foundation
import HCITestSupport
import Testing

/// What the compiler must refuse an app: Tests/CompileFail holds small programs against
/// `import Bluejay`, type-checked here with the compiler against the modules this test run
/// was built from. Each failing program has a twin that must compile, so a broken harness
/// (a missing module, a wrong flag) cannot pass for the refusal.
struct CompileFailTests {
    /// Type-checks `file` of Tests/CompileFail alone.
    static func typeCheck(_ file: String) async throws -> (status: Int32, stderr: String) {
        try await typeCheck([file], in: "CompileFail")
    }

    /// Type-checks `files` of `Tests/<directory>` together, as one module of an app.
    static func typeCheck(_ files: [String], in directory: String) async throws -> (status: Int32, stderr: String) {
        let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        return try await typeCheck(
            paths: files.map { tests.appendingPathComponent(directory).appendingPathComponent($0).path })
    }

    /// Type-checks the files at `paths` together, as one module of an app, with the Swift
    /// compiler and the flags that find this build's modules: the test bundle lives in the
    /// build directory, beside `Modules/` and the C targets' module maps. The `-tool.build`
    /// ones are second copies of C targets built for build-tool plugins (package-benchmark's):
    /// both maps would define the same module. `parseAsLibrary: false` lets a lone file hold
    /// top-level code, as a `main.swift` does; `arguments` go to the compiler before the files
    /// (the documentation's snippets name their module and find PackageDescription this way).
    static func typeCheck(paths: [String], parseAsLibrary: Bool = true, arguments: [String] = []) async throws -> (
        status: Int32, stderr: String
    ) {
        let buildDirectory = URL(
            fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        )
        .deletingLastPathComponent()
        let moduleMaps = try FileManager.default.contentsOfDirectory(atPath: buildDirectory.path)
            .filter { $0.hasSuffix(".build") && !$0.hasSuffix("-tool.build") }
            .map { buildDirectory.appendingPathComponent($0).appendingPathComponent("module.modulemap").path }
            .filter { FileManager.default.fileExists(atPath: $0) }
        let compiler =
            ["swiftc", "-typecheck"] + (parseAsLibrary ? ["-parse-as-library"] : []) + [
                "-swift-version", "6",
                "-I", buildDirectory.appendingPathComponent("Modules").path,
            ]
        let invocation = compiler + moduleMaps.flatMap { ["-Xcc", "-fmodule-map-file=\($0)"] } + arguments + paths
        let result = try await run(URL(fileURLWithPath: "/usr/bin/env"), invocation)
        return (result.status, result.stderr)
    }

    @Test func aBackgroundTaskCannotTouchMainActorState() async throws {
        let right = try await Self.typeCheck("BackgroundTaskKeepsToItself.swift")
        #expect(right.status == 0, "the twin that keeps to itself must compile: \(right.stderr)")
        let wrong = try await Self.typeCheck("BackgroundTaskTouchesMainActor.swift")
        #expect(wrong.status != 0, "a background task touched main-actor state and compiled")
        #expect(
            wrong.stderr.contains("main actor-isolated property 'rates' can not be mutated from a Sendable closure"),
            "\(wrong.stderr)")
    }

    @Test func aCallbackOnTheAppsQueueCannotTouchMainActorState() async throws {
        let right = try await Self.typeCheck("CallbacksKeepToTheirPlace.swift")
        #expect(right.status == 0, "the twin that keeps to its place must compile: \(right.stderr)")
        let wrong = try await Self.typeCheck("QueuedCallbackTouchesMainActor.swift")
        #expect(wrong.status != 0, "a callback on the app's queue touched main-actor state and compiled")
        #expect(
            wrong.stderr.contains("main actor-isolated property 'rates' can not be referenced from a Sendable closure")
                || wrong.stderr.contains(
                    "main actor-isolated property 'rates' can not be mutated from a Sendable closure"),
            "\(wrong.stderr)")
    }

    /// ConnectionObserver's earlier spellings (Bluejay's README's, 0.1's) are still called;
    /// an app calling them itself is told which one Bluejay calls now.
    @Test func theEarlierSpellingsAreDeprecatedNamingTheOneToImplement() async throws {
        let checked = try await Self.typeCheck("EarlierObserverSpellings.swift")
        #expect(checked.status == 0, "\(checked.stderr)")
        for name in ["connected(to: PeripheralIdentifier)", "disconnected(from: PeripheralIdentifier)"] {
            #expect(
                checked.stderr.contains("is deprecated: Bluejay calls \(name); implement that one"), "\(checked.stderr)"
            )
        }
    }
}
