import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A Unix datagram socket standing in for systemd's notify socket (`NOTIFY_SOCKET`): what a
/// `Type=notify` service says (READY=1, STOPPING=1, WATCHDOG=1) arrives here, a datagram each.
package final class NotifySocket: Sendable {
    /// Where it is bound.
    package let path: String
    private let fd: Int32

    /// A socket bound at `path` (removed again when it goes). Each ``next()`` waits at most
    /// `timeout`: a hang guard, not a speed check.
    package init(path: String, timeout: Duration = .seconds(120)) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw NotifySocketError(description: "socket: errno \(errno)") }
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
        // A throw from here on still runs deinit, which closes the socket.
        guard bound == 0 else { throw NotifySocketError(description: "bind \(path): errno \(errno)") }
        var wait = timeval(tv_sec: Int(timeout.components.seconds), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
    }

    /// The next datagram, or nil when none came within the timeout.
    package func next() -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, buffer.count, 0)
        return count > 0 ? String(decoding: buffer.prefix(count), as: UTF8.self) : nil
    }

    /// The datagram already there, or nil: does not wait.
    package func pending() -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        return count > 0 ? String(decoding: buffer.prefix(count), as: UTF8.self) : nil
    }

    deinit {
        close(fd)
        unlink(path)
    }
}

/// A ``NotifySocket`` could not be made.
package struct NotifySocketError: Error, CustomStringConvertible {
    package let description: String
}
