import Foundation
import Testing

/// BlueCap's guides are a contract for `Central` and `PeripheralManager`: Tests/BlueCapSeeds
/// holds each app snippet of the CentralManager and PeripheralManager guides as an app writes
/// it here, with the documented differences (async/await for futures, named characteristics,
/// octets for profiles) said at the top of each file. They must compile.
struct BlueCapSnippetTests {
    static let seeds = ["CentralGuide.swift", "PeripheralGuide.swift"]

    @Test func blueCapsGuidesCompile() async throws {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("BlueCapSeeds")
        let present = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasSuffix(".swift")
        }
        #expect(present.sorted() == Self.seeds.sorted(), "every seed file is compiled, and only those")
        let result = try await CompileFailTests.typeCheck(Self.seeds, in: "BlueCapSeeds")
        #expect(result.status == 0, "BlueCap's guides do not compile:\n\(result.stderr)")
        #expect(!result.stderr.contains("no such file"))
    }
}
