import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// systemd's notification protocol (sd_notify(3)) without libsystemd: a datagram to the
/// socket `NOTIFY_SOCKET` names (a path, or `@name` in the abstract namespace). Outside
/// systemd there is no socket and it does nothing.
public struct SystemdNotifier: Sendable {
    private let socketPath: String?
    /// Half of systemd's watchdog period (`WATCHDOG_USEC`), when the unit has one.
    public let watchdogInterval: Duration?

    /// Reads `NOTIFY_SOCKET` and `WATCHDOG_USEC` (and `WATCHDOG_PID`, which must be ours).
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        socketPath = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        if let text = environment["WATCHDOG_USEC"], let usec = Int64(text), usec > 0,
            environment["WATCHDOG_PID"].map({ Int32($0) == getpid() }) ?? true
        {
            watchdogInterval = .microseconds(usec / 2)
        } else {
            watchdogInterval = nil
        }
    }

    /// Sends `state` (`READY=1`, `STOPPING=1`, `WATCHDOG=1`, …); false when there is no
    /// socket or the send failed.
    @discardableResult
    public func notify(_ state: String) -> Bool {
        guard let socketPath else { return false }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(socketPath.utf8)
        if path.first == UInt8(ascii: "@") { path[0] = 0 }  // abstract namespace
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.count < capacity else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.enumerated() { buffer[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count)
        let bytes = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sockaddrPointer in
                sendto(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL), sockaddrPointer, length)
            }
        }
        return sent == bytes.count
    }

    /// Pets the watchdog every ``watchdogInterval`` while `healthy` answers true, until
    /// cancelled (nil: no watchdog). A `healthy` that runs on the stack's actor proves the
    /// actor still turns: a stuck stack stops the petting and systemd restarts the service.
    public func startWatchdog(healthy: @escaping @Sendable () async -> Bool) -> Task<Void, Never>? {
        guard let interval = watchdogInterval else { return nil }
        return Task {
            while !Task.isCancelled {
                if await healthy() { notify("WATCHDOG=1") }
                try? await Task.sleep(for: interval)
            }
        }
    }
}
