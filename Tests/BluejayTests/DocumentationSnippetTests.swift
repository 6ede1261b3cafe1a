import Foundation
import HCITestSupport
import Testing

/// The docs say only what is true: every ```swift block of README.md, of the pages in docs/
/// and of the DocC articles (Sources/Bluejay/Bluejay.docc/*.md) is type-checked against the
/// modules this test run was built from, with `CompileFailTests.typeCheck`. One rule, no
/// exceptions:
///
/// - A block whose first line is `// swift-tools-version:X.Y` is a whole `Package.swift`,
///   type-checked alone against the toolchain's PackageDescription at that tools version.
/// - A block marked `<!-- example: PATH -->` is a whole `main.swift` (ReadmeExamplesTests
///   holds it equal to that file), type-checked alone; one with `@main` is parsed as a
///   library, as SwiftPM does.
/// - Any other block is a snippet: what an app writes in a function on the main actor, where
///   Bluejay lives and calls back. Its leading `import` lines stay at file scope; the rest is
///   the body of a `@MainActor` `async throws` function, so it may `try` and `await`. A
///   snippet that begins with an `import` starts a program; one that does not continues the
///   program of the document's snippet before it (in the same body: what the earlier blocks
///   declared is in scope, as for a reader following the article), or, if there is none,
///   starts a program that imports `Bluejay` (an app imports it and nothing else of ours).
/// - `<!-- snippet context: CODE -->` right above a snippet's fence is Swift the prose takes
///   as given (a started `bluejay`, a firmware image): it is compiled just before the block
///   but not shown (neither GitHub nor DocC renders an HTML comment).
///
/// Pseudo-code (`{ … }`) is not Swift: such a block is written as real code or fenced as
/// something else. Each program is one compiler run; an error fails the test, naming the
/// document's own file and line (`#sourceLocation`). Warnings do not: a snippet's unused
/// `let` is only unused because the wrapping function ends after it.
struct DocumentationSnippetTests {
    /// A ```swift block as the document has it, with the markers written right above it.
    struct Block {
        /// The document's path from the repository root.
        let document: String
        /// The line of the block's first line of code (1-based).
        let line: Int
        /// The code, without the fences and without the indentation of a fence in a list.
        let lines: [String]
        /// The path an `<!-- example: PATH -->` marker names.
        let example: String?
        /// The code of a `<!-- snippet context: CODE -->` marker, and the marker's line.
        let context: (code: String, line: Int)?

        /// Where the block is, for the listing and the failures.
        var location: String { "\(document):\(line)" }
    }

    /// How a program is type-checked.
    enum Kind {
        /// A `Package.swift`, at its tools version.
        case manifest(toolsVersion: String)
        /// An example's whole `main.swift`.
        case example
        /// Snippets chained in the body of a main-actor function.
        case snippets
    }

    /// One compiler run: a manifest, an example, or the snippets a document chains together.
    struct Program {
        let kind: Kind
        var blocks: [Block]
    }

    /// The documents held to the rule: the README, every page in docs/ (where the README's
    /// longer sections went) and every DocC article.
    static func documents(root: URL) throws -> [String] {
        func markdown(in folder: String) throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(folder).path)
                .filter { $0.hasSuffix(".md") }.sorted().map { "\(folder)/\($0)" }
        }
        return try ["README.md"] + markdown(in: "docs") + markdown(in: "Sources/Bluejay/Bluejay.docc")
    }

    /// The ```swift blocks of `text` (the document at `document`), in order, and the line of a
    /// fence never closed. A fence in a list item is indented; its code loses that
    /// indentation, as Markdown reads it.
    static func blocks(of text: String, document: String) -> (blocks: [Block], unclosed: Int?) {
        let lines = text.components(separatedBy: "\n")
        var blocks: [Block] = []
        var index = 0
        while index < lines.count {
            let fence = lines[index]
            let indent = fence.prefix { $0 == " " }.count
            let info = fence.dropFirst(indent)
            guard info == "```swift" || info.hasPrefix("```swift ") else { index += 1; continue }
            var example: String?
            var context: (code: String, line: Int)?
            var above = index - 1
            while above >= 0, case let marker = lines[above].trimmingCharacters(in: .whitespaces),
                marker.hasPrefix("<!--"), marker.hasSuffix("-->")
            {
                if let path = Self.marker("example", in: marker) { example = path }
                if let code = Self.marker("snippet context", in: marker) { context = (code, above + 1) }
                above -= 1
            }
            let opening = index
            var code: [String] = []
            index += 1
            while index < lines.count, !lines[index].trimmingCharacters(in: .whitespaces).hasPrefix("```") {
                let line = lines[index]
                code.append(String(line.dropFirst(min(indent, line.prefix { $0 == " " }.count))))
                index += 1
            }
            guard index < lines.count else { return (blocks, opening + 1) }
            blocks.append(
                Block(document: document, line: index - code.count + 1, lines: code, example: example, context: context)
            )
            index += 1
        }
        return (blocks, nil)
    }

    /// The value of `<!-- NAME: VALUE -->`, if `line` is that marker.
    static func marker(_ name: String, in line: String) -> String? {
        let opening = "<!-- \(name): "
        guard line.hasPrefix(opening), line.hasSuffix(" -->") else { return nil }
        return String(line.dropFirst(opening.count).dropLast(" -->".count))
    }

    /// The blocks of one document grouped into programs, under the rule above.
    static func programs(of blocks: [Block]) -> [Program] {
        var programs: [Program] = []
        var snippets: Int?  // the index of the program the next snippet without imports continues
        for block in blocks {
            if let first = block.lines.first, first.hasPrefix("// swift-tools-version:") {
                let version = first.dropFirst("// swift-tools-version:".count).trimmingCharacters(in: .whitespaces)
                programs.append(Program(kind: .manifest(toolsVersion: version), blocks: [block]))
            } else if block.example != nil {
                programs.append(Program(kind: .example, blocks: [block]))
            } else if let snippets, !Self.head(of: block).contains(where: { $0.hasPrefix("import ") }) {
                programs[snippets].blocks.append(block)
            } else {
                programs.append(Program(kind: .snippets, blocks: [block]))
                snippets = programs.count - 1
            }
        }
        return programs
    }

    /// A snippet's leading lines that belong at file scope: `import`s, and the blank lines
    /// and comments among them.
    static func head(of block: Block) -> ArraySlice<String> {
        let end =
            block.lines.firstIndex { line in
                !(line.hasPrefix("import ") || line.hasPrefix("//")
                    || line.trimmingCharacters(in: .whitespaces).isEmpty)
            } ?? block.lines.endIndex
        let head = block.lines[..<end]
        return head.contains { $0.hasPrefix("import ") } ? head : []
    }

    /// `lines`, numbered from `line` of `document` in the compiler's diagnostics.
    static func located(_ lines: some Sequence<String>, _ document: String, _ line: Int) -> [String] {
        ["#sourceLocation(file: \"\(document)\", line: \(line))"] + lines + ["#sourceLocation()"]
    }

    /// The file a program is type-checked as.
    static func source(of program: Program) -> String {
        let first = program.blocks[0]
        switch program.kind {
        case .manifest, .example:
            return Self.located(first.lines, first.document, first.line).joined(separator: "\n") + "\n"
        case .snippets:
            let head = Self.head(of: first)
            var file = head.isEmpty ? ["import Bluejay"] : Self.located(head, first.document, first.line)
            file.append("")
            file.append("@MainActor func documentationSnippets() async throws {")
            for (index, block) in program.blocks.enumerated() {
                if let context = block.context {
                    file += Self.located([context.code], block.document, context.line)
                }
                let skipped = index == 0 ? head.count : 0
                file += Self.located(block.lines.dropFirst(skipped), block.document, block.line + skipped)
            }
            file.append("}")
            return file.joined(separator: "\n") + "\n"
        }
    }

    /// The toolchain's PackageDescription, for the manifests: beside the compiler's runtime
    /// resources (`pm/ManifestAPI`), as SwiftPM finds it.
    static func manifestAPI() async throws -> String {
        let info = try await run(URL(fileURLWithPath: "/usr/bin/env"), ["swiftc", "-print-target-info"])
        let json = try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [String: Any]
        let paths = try #require(json?["paths"] as? [String: Any], "swiftc -print-target-info: \(info.stderr)")
        let resources = try #require(paths["runtimeResourcePath"] as? String)
        return URL(fileURLWithPath: resources).appendingPathComponent("pm/ManifestAPI").path
    }

    /// Type-checks `program` in a directory of its own under `directory`.
    static func typeCheck(_ program: Program, in directory: URL, manifestAPI: String) async throws -> (
        status: Int32, stderr: String
    ) {
        let own = directory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: own, withIntermediateDirectories: true)
        let source = Self.source(of: program)
        var arguments = ["-module-name", "DocumentationSnippets"]
        let file: URL
        var parseAsLibrary = true
        switch program.kind {
        case let .manifest(toolsVersion):
            file = own.appendingPathComponent("Package.swift")
            parseAsLibrary = false  // top-level code, as SwiftPM compiles a manifest
            arguments += ["-I", manifestAPI, "-package-description-version", toolsVersion]
        case .example:
            file = own.appendingPathComponent("main.swift")
            parseAsLibrary = program.blocks[0].lines.contains { $0.hasPrefix("@main") }
        case .snippets:
            file = own.appendingPathComponent("snippets.swift")
        }
        try source.write(to: file, atomically: true, encoding: .utf8)
        return try await CompileFailTests.typeCheck(
            paths: [file.path], parseAsLibrary: parseAsLibrary, arguments: arguments)
    }

    /// Checks every program of `documents` (path and text) and returns the failures, each
    /// with the block it names and the compiler's diagnostics about that block.
    static func failures(of documents: [(path: String, text: String)], listing: Bool) async throws -> [(
        block: String, diagnostics: String
    )] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "bluejay-doc-snippets-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let manifestAPI = try await Self.manifestAPI()
        var failures: [(block: String, diagnostics: String)] = []
        for (path, text) in documents {
            let (blocks, unclosed) = Self.blocks(of: text, document: path)
            if let unclosed { failures.append(("\(path):\(unclosed)", "the fence is never closed")) }
            // Each ```swift of the text is a block found: none is skipped by a fence the parser missed.
            let fences = text.components(separatedBy: "```swift").count - 1
            if fences != blocks.count {
                failures.append((path, "\(fences) ```swift fences, \(blocks.count) blocks read"))
            }
            let programs = Self.programs(of: blocks)
            if listing {
                print(
                    "\(path): swift blocks: \(blocks.count)"
                        + programs.map { program in
                            "\n  \(program.kind.name): "
                                + program.blocks.map { "line \($0.line)" }.joined(separator: " + ")
                        }.joined())
            }
            for program in programs {
                let result = try await Self.typeCheck(program, in: directory, manifestAPI: manifestAPI)
                guard result.status != 0 else { continue }
                failures += Self.attribute(result.stderr, to: program)
            }
        }
        return failures
    }

    /// The compiler's diagnostics (blank-line separated, each beginning `FILE:LINE:COLUMN:`),
    /// sorted by the block whose lines or context they name; the rest go to the program's
    /// first block.
    static func attribute(_ stderr: String, to program: Program) -> [(block: String, diagnostics: String)] {
        var byBlock: [Int: [String]] = [:]
        for diagnostic in stderr.components(separatedBy: "\n\n")
        where !diagnostic.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            let fields = diagnostic.split(separator: ":", maxSplits: 2)
            let line = fields.count > 1 ? Int(fields[1]) ?? 0 : 0
            let index =
                program.blocks.lastIndex { block in
                    String(fields.first ?? "") == block.document
                        && ((block.line...(block.line + block.lines.count)).contains(line)
                            || block.context?.line == line)
                } ?? 0
            byBlock[index, default: []].append(diagnostic)
        }
        return byBlock.keys.sorted().map { index in
            let block = program.blocks[index]
            return (
                "\(block.location) (\(program.kind.name) from \(program.blocks[0].location))",
                byBlock[index]!.joined(separator: "\n\n")
            )
        }
    }

    /// What a reader copies from the README or an article compiles against today's API.
    @Test func everySwiftBlockOfTheDocsCompiles() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let documents = try Self.documents(root: root).map { path in
            (path: path, text: try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8))
        }
        // A reader that found no documents or no blocks would pass: the README and the
        // getting-started article are there, and have code.
        #expect(documents.map(\.path).contains("Sources/Bluejay/Bluejay.docc/GettingStarted.md"))
        for document in documents
        where ["README.md", "Sources/Bluejay/Bluejay.docc/GettingStarted.md"].contains(document.path) {
            #expect(
                !Self.blocks(of: document.text, document: document.path).blocks.isEmpty,
                "\(document.path) has no swift block")
        }
        for failure in try await Self.failures(of: documents, listing: true) {
            Issue.record("\(failure.block) does not compile:\n\(failure.diagnostics)")
        }
    }

    /// The harness can fail: a block calling what Bluejay does not have is refused, at its
    /// own line, while its context and the block before it (which it continues) compile.
    @Test func aBlockThatDoesNotCompileFailsAtItsLine() async throws {
        let text = """
            # Broken

            <!-- snippet context: let bluejay = Bluejay() -->
            ```swift
            bluejay.start(mode: .new(StartOptions(transport: "hci0")))
            ```

            ```swift
            let sensor = try PeripheralIdentifier("C0:FF:EE:00:00:01/random")
            bluejay.teleport(to: sensor)
            ```
            """
        let failures = try await Self.failures(of: [("Broken.md", text)], listing: false)
        #expect(failures.count == 1, "\(failures)")
        #expect(failures.first?.block.hasPrefix("Broken.md:9 ") == true, "\(failures)")
        #expect(failures.first?.diagnostics.contains("Broken.md:10:") == true, "\(failures)")
        #expect(failures.first?.diagnostics.contains("has no member 'teleport'") == true, "\(failures)")
    }
}

extension DocumentationSnippetTests.Kind {
    /// How the listing names a program of this kind.
    var name: String {
        switch self {
        case let .manifest(toolsVersion): "manifest (tools \(toolsVersion))"
        case .example: "example"
        case .snippets: "snippets"
        }
    }
}
