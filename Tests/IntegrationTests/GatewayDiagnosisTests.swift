import Foundation
import HCITestSupport
import Testing

/// What a gateway's operator is told (issue 52): `--verbose` and `log_level:`.
extension IntegrationTests {
    /// `--verbose` adds debug lines; `log_level:` sets the least severe line written. The
    /// gateway runs until its controller cannot be opened (nothing listens on port 1).
    @Test(.hangGuard) func verboseAddsDebugLines() async throws {
        let directory = NSTemporaryDirectory() + "bluejay-gateway-log-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func configuration(_ extra: String) throws -> String {
            let path = directory + "/\(UUID().uuidString).yaml"
            try """
                gateway: gw1
                transport: tcp:127.0.0.1:1
                broker: mqtt://127.0.0.1:1
                \(extra)
                peripherals:
                  - address: C0:FF:EE:00:00:11/random
                """.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        let plain = try await runGateway([try configuration("")])
        let verbose = try await runGateway([try configuration(""), "--verbose"])
        let quiet = try await runGateway([try configuration("log_level: error")])
        let debugByKey = try await runGateway([try configuration("log_level: debug")])
        for run in [plain, verbose, quiet, debugByKey] { #expect(run.status == 1 && run.error.contains("cannot open the controller"), "\(run.error)") }
        #expect(!plain.error.contains(" debug "), "\(plain.error)")
        #expect(verbose.error.contains(" debug ") && verbose.error.contains("gateway gw1 on tcp:127.0.0.1:1"), "\(verbose.error)")
        #expect(debugByKey.error.contains(" debug "), "\(debugByKey.error)")
        #expect(!quiet.error.contains(" info ") && !quiet.error.contains(" debug "), "\(quiet.error)")
    }

    /// Runs `bluejay-gateway` with `arguments` to its end: its status and standard error.
    private func runGateway(_ arguments: [String]) async throws -> (status: Int32, error: String) {
        try await blocking {
            let process = Process()
            process.executableURL = Repository.gateway
            process.arguments = arguments
            let error = Pipe()
            process.standardOutput = FileHandle.nullDevice
            process.standardError = error
            try process.run()
            let text = error.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: text, as: UTF8.self))
        }
    }
}
