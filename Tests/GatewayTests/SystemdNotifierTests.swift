import Foundation
import TestTraits
import Testing
@testable import Gateway
#if canImport(Glibc)
    import Glibc
#endif

/// sd_notify's datagrams, received on a real Unix socket as systemd would.
struct SystemdNotifierTests {
    @Test func readinessReachesTheNotifySocket() throws {
        let socket = try NotifySocket(path: NSTemporaryDirectory() + "bluejay-notify-\(UUID().uuidString.prefix(8))")
        let path = socket.path
        let notifier = SystemdNotifier(environment: [
            "NOTIFY_SOCKET": path, "WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "\(getpid())",
        ])
        #expect(notifier.watchdogInterval == .seconds(15), "half of WatchdogSec")
        #expect(notifier.notify("READY=1\nSTATUS=serving"))
        #expect(socket.pending() == "READY=1\nSTATUS=serving")
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
