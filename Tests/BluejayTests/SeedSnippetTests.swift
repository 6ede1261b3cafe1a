import Foundation
import Testing

/// Bluejay's iOS README (`../shared/reference/bluejay-readme.txt`) is a contract: code an
/// iOS developer pastes from it compiles here. Tests/Seeds holds every Swift snippet of it
/// that is app code (the three blocks that print the library's own declarations,
/// `ConnectionObserver`, `ScanAction` and `ListenRestorer`, are left out), each verbatim
/// inside the function or type an app would put it in, with only what the issue allows
/// around it: `@MainActor` on the enclosing type, stand-ins for UIKit objects
/// (`UIKitStubs.swift`), the README app's own names the snippet uses, and, where Linux
/// forces it or the README itself is wrong, a change that says so in a comment there. The
/// newer API reference (`bluejay-api-reference.txt`) is held the same way: every member of
/// `Bluejay` it declares is called as declared (`APIReference.swift`).
struct SeedSnippetTests {
    /// Every file of Tests/Seeds, and the README sections they hold.
    static let seeds = [
        "UIKitStubs.swift",
        "Initialization.swift",  // Initialization, Bluetooth Events
        "Identifiers.swift",  // Services and Characteristics
        "Scanning.swift",  // Basic Scanning, Monitoring
        "Connecting.swift",  // Connecting (connect, disconnect twice), Connection States
        "Models.swift",  // Receivable, Sendable
        "Interactions.swift",  // Reading, Writing, Listening
        "BatchOperations.swift",  // Batch Operations
        "StateRestoration.swift",  // State Restoration (two starts), Listen Restoration
        "ConnectBySerialNumber.swift",  // Connect by Serial Number
        "SynchronizedPeripheralSnippets.swift",  // Write and Assemble, Flush Listen
        "APIReference.swift",  // the API reference: every member of Bluejay, as declared
    ]

    @Test func bluejaysReadmeSnippetsCompile() async throws {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Seeds")
        let present = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasSuffix(".swift")
        }
        #expect(present.sorted() == Self.seeds.sorted(), "every seed file is compiled, and only those")
        let result = try await CompileFailTests.typeCheck(Self.seeds, in: "Seeds")
        #expect(result.status == 0, "the README's snippets do not compile:\n\(result.stderr)")
        // A harness that compiled nothing would pass: each file must have been read.
        #expect(!result.stderr.contains("no such file"))
    }
}
