import Foundation
import Testing
@testable import Gateway
#if canImport(Glibc)
    import Glibc
#endif

/// sd_notify's datagrams, received on a real Unix socket as systemd would.
struct SystemdNotifierTests {
    @Test func readinessReachesTheNotifySocket() throws {
        let path = NSTemporaryDirectory() + "bluejay-notify-\(UUID().uuidString.prefix(8))"
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd); unlink(path) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.utf8.enumerated() { buffer[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        try #require(bound == 0)

        let notifier = SystemdNotifier(environment: [
            "NOTIFY_SOCKET": path, "WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "\(getpid())",
        ])
        #expect(notifier.watchdogInterval == .seconds(15), "half of WatchdogSec")
        #expect(notifier.notify("READY=1\nSTATUS=serving"))
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        #expect(count > 0 && String(decoding: buffer.prefix(max(0, count)), as: UTF8.self) == "READY=1\nSTATUS=serving")
    }

    @Test func outsideSystemdItDoesNothing() {
        let notifier = SystemdNotifier(environment: [:])
        #expect(!notifier.notify("READY=1"))
        #expect(notifier.watchdogInterval == nil)
        #expect(
            SystemdNotifier(environment: ["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"]).watchdogInterval == nil,
            "another process's watchdog")
    }
}
