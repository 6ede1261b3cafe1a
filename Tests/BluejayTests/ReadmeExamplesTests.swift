import Foundation
import Testing

/// The README's quick start is the example apps' code: each block marked
/// `<!-- example: PATH -->` must be that file, whole, so what a reader copies is what CI
/// builds and runs (`make examples`).
struct ReadmeExamplesTests {
    @Test func exampleCodeInTheREADMEIsTheExamples() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let marker = "<!-- example: "
        var checked: [String] = []
        for part in readme.components(separatedBy: marker).dropFirst() {
            let path = try #require(part.components(separatedBy: " -->\n").first)
            let block = try #require(
                part.components(separatedBy: " -->\n```swift\n").dropFirst().first,
                "\(path): no swift block after the marker")
            let code = try #require(block.components(separatedBy: "```\n").first)
            let file = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
            #expect(code == file, "README's block for \(path) differs from the file")
            checked.append(path)
        }
        #expect(
            checked == [
                "Examples/HeartRateMonitor/Sources/HeartRateMonitor/main.swift",
                "Examples/HeartRateAsync/Sources/HeartRateAsync/main.swift",
            ])
    }
}
