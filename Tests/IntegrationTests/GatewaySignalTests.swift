import Foundation
import HCITestSupport
import TestTraits
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// How systemd stops `bluejay-gateway` (`Type=notify`): SIGTERM as soon as it said READY=1
/// ends it cleanly (STOPPING=1, exit 0) every time. Until its signal sources were registered
/// a SIGTERM was ignored, and systemd would have waited out its stop timeout.
@Suite(.serialized) struct GatewaySignalTests {
    @Test(.hangGuard) func sigtermRightAfterReadyStopsItCleanly() async throws {
        let broker = try await MosquittoBroker()
        let directory = NSTemporaryDirectory() + "bluejay-gateway-signal-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let configuration = directory + "/gateway.yaml"
        try """
        gateway: sig1
        transport: mock:\(Repository.root.path)/Fixtures/traces/connect.btsnoop
        broker: \(broker.url)
        homeassistant: off
        peripherals:
          - address: C0:FF:EE:00:00:11/random
        """.write(toFile: configuration, atomically: true, encoding: .utf8)

        for attempt in 1...5 {
            let notifications = try NotifySocket(path: directory + "/notify-\(attempt)")
            let ended = try await blocking {
                () throws -> (status: Int32, reason: Process.TerminationReason, said: [String]) in
                let process = Process()
                process.executableURL = Repository.gateway
                process.arguments = [configuration]
                process.environment = ProcessInfo.processInfo.environment.merging([
                    "NOTIFY_SOCKET": notifications.path, "BLUEJAY_STORE": directory + "/store",
                ]) { $1 }
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
                var said: [String] = []
                while let message = notifications.next(), !message.contains("READY=1") { said.append(message) }
                kill(process.processIdentifier, SIGTERM)
                var stopping = false
                while !stopping, let message = notifications.next() {
                    said.append(message)
                    stopping = message.contains("STOPPING=1")
                }
                // A SIGTERM it lost leaves it running: end it, and the test fails on its status.
                if !stopping && process.isRunning { kill(process.processIdentifier, SIGKILL) }
                process.waitUntilExit()
                return (process.terminationStatus, process.terminationReason, said)
            }
            let clean = ended.reason == .exit && ended.status == 0 && ended.said.contains { $0.contains("STOPPING=1") }
            #expect(clean, "attempt \(attempt): \(ended)")
            if !clean { break }  // each wait is a two-minute hang guard: one failure says it
        }
        await broker.stop()
    }
}
