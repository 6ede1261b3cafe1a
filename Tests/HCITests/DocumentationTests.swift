import Foundation  // FileManager, to walk Sources; tests only.
import Testing

/// Every public or open declaration in Sources carries a `///` comment directly above it
/// (attributes in between are skipped, also one over several lines). `public func encode(to`
/// and `init(from reader` are the HCIParameters requirements, documented on the protocol, and
/// may stay bare.
///
/// Line-based on purpose, the same rule as the review script, so the two always agree.
@Suite("Documentation")
struct DocumentationTests {
    /// `<package root>`, from this file's path: `<root>/Tests/HCITests/DocumentationTests.swift`.
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test("Every public symbol in Sources has a /// comment")
    func everyPublicSymbolIsDocumented() throws {
        let sources = Self.packageRoot.appendingPathComponent("Sources")
        let files = Self.swiftFiles(under: sources)
        try #require(!files.isEmpty, "no .swift files found under \(sources.path)")
        var undocumented: [String] = []
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            let relative = String(file.path.dropFirst(Self.packageRoot.path.count + 1))
            for (line, declaration) in Self.undocumentedDeclarations(in: text) {
                undocumented.append("\(relative):\(line): \(declaration.prefix(100))")
            }
        }
        #expect(
            undocumented.isEmpty,
            """
            \(undocumented.count) public symbol(s) without a /// comment:
            \(undocumented.joined(separator: "\n"))
            """)
    }

    /// The .swift files under `directory`, hidden ones excluded, sorted by path.
    static func swiftFiles(under directory: URL) -> [URL] {
        guard
            let walker = FileManager.default.enumerator(
                at: directory, includingPropertiesForKeys: nil,
                options: [.skipsHiddenFiles])
        else { return [] }
        return walker.compactMap { $0 as? URL }
            .filter { $0.pathExtension == "swift" }
            .sorted { $0.path < $1.path }
    }

    /// `(line number, trimmed declaration)` for each public/open declaration in `text` whose
    /// nearest non-attribute line above is not a `///` comment.
    static func undocumentedDeclarations(in text: String) -> [(Int, String)] {
        // Split on "\n" scalars, not Characters: "\r\n" is a single Character.
        let lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
            .map { String(String.UnicodeScalarView($0)).trimmingCharacters(in: .whitespacesAndNewlines) }
        var found: [(Int, String)] = []
        for (index, line) in lines.enumerated() where isPublicDeclaration(line) {
            if line.hasPrefix("public func encode(to") || line.contains("init(from reader") { continue }
            var above = index - 1
            while above >= 0 {
                if lines[above].hasPrefix("@") {
                    above -= 1
                } else if lines[above].hasPrefix(")"),
                    let start = lines[..<above].lastIndex(where: { $0.hasPrefix("@") }), lines[start].hasSuffix("(")
                {
                    above = start - 1  // an attribute over several lines, as swift-format breaks a long one
                } else {
                    break
                }
            }
            if above < 0 || !lines[above].hasPrefix("///") { found.append((index + 1, line)) }
        }
        return found
    }

    /// Whether a trimmed line starts with `public` or `open` followed by whitespace.
    static func isPublicDeclaration(_ line: String) -> Bool {
        ["public", "open"].contains { keyword in
            line.hasPrefix(keyword) && line.dropFirst(keyword.count).first?.isWhitespace == true
        }
    }

    @Test("The rule flags a bare declaration and accepts a documented one")
    func ruleItself() {
        let text = """
            /// Documented.
            public struct A {}
            public struct B {}
            /// Documented, with an attribute in between.
            @discardableResult
            public func c() -> Int { 0 }
            @inlinable
            public func d() {}
                public func encode(to writer: inout ByteWriter) {}
                public init(from reader: inout ByteReader) throws(DecodingError) {}
            // A plain comment is not documentation.
            open class E {}
            publicity is not a keyword
            /// Documented, with an attribute over several lines in between.
            @available(
                *, unavailable,
                message: "gone"
            )
            public var f: Int { 0 }
            """
        let found = Self.undocumentedDeclarations(in: text)
        #expect(found.map(\.0) == [3, 8, 12])
        #expect(found.map(\.1) == ["public struct B {}", "public func d() {}", "open class E {}"])
    }
}
