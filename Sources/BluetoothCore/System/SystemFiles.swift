#if canImport(Glibc)
import Glibc
#endif

// What the layers need of the operating system: errors by name, whole files, full writes.

/// An errno value from a failed system call.
public struct SystemError: Error, Sendable {
    /// The errno value.
    public let errno: Int32
}

/// Reads a whole file into memory.
public func readWholeFile(_ path: String) throws(SystemError) -> [UInt8] {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw SystemError(errno: errno) }
    defer { close(fd) }
    var result: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0 {
            if errno == EINTR { continue }
            throw SystemError(errno: errno)
        }
        if count == 0 { return result }
        result.append(contentsOf: chunk[0..<count])
    }
}

/// `ENOENT (No such file or directory)`.
public func errorName(_ code: Int32) -> String {
    let names: [Int32: String] = [
        EPERM: "EPERM", ENOENT: "ENOENT", EINTR: "EINTR", EIO: "EIO", EBADF: "EBADF", EAGAIN: "EAGAIN",
        EACCES: "EACCES", EBUSY: "EBUSY", EEXIST: "EEXIST", ENODEV: "ENODEV", ENOTDIR: "ENOTDIR",
        EISDIR: "EISDIR", EINVAL: "EINVAL", ENOSPC: "ENOSPC", EPIPE: "EPIPE", ENOTSOCK: "ENOTSOCK",
        EAFNOSUPPORT: "EAFNOSUPPORT", EADDRINUSE: "EADDRINUSE", ENETUNREACH: "ENETUNREACH",
        ECONNRESET: "ECONNRESET", ETIMEDOUT: "ETIMEDOUT", ECONNREFUSED: "ECONNREFUSED",
        EHOSTUNREACH: "EHOSTUNREACH", ENOTTY: "ENOTTY", ERFKILL: "ERFKILL",
    ]
    let text = String(cString: strerror(code))
    return "\(names[code] ?? "errno \(code)") (\(text))"
}

/// Writes every byte, retrying short writes and EINTR; false on any other error.
public func writeAll(_ fd: Int32, _ bytes: ArraySlice<UInt8>) -> Bool {
    var offset = bytes.startIndex
    while offset < bytes.endIndex {
        let written = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        if written < 0 {
            if errno == EINTR { continue }
            return false
        }
        offset += written
    }
    return true
}

/// Writes `header` then `body` with `writev`, so a packet's header need not be copied in
/// front of its body; retries short writes and EINTR, false on any other error. A datagram
/// socket (the HCI user channel) takes both parts as one packet.
public func writeAll(_ fd: Int32, header: UnsafeRawBufferPointer, body: ArraySlice<UInt8>) -> Bool {
    writeAll(fd, header: header, body: body, writev: Glibc.writev)
}

/// ``writeAll(_:header:body:)`` through the given `writev`, so a test can make the kernel
/// take less than asked.
package func writeAll(_ fd: Int32, header: UnsafeRawBufferPointer, body: ArraySlice<UInt8>,
                      writev: (Int32, UnsafePointer<iovec>, Int32) -> Int) -> Bool {
    body.withUnsafeBytes { body in
        var parts = (header, body)
        while parts.0.count + parts.1.count > 0 {
            var vectors = (iovec(iov_base: UnsafeMutableRawPointer(mutating: parts.0.baseAddress), iov_len: parts.0.count),
                           iovec(iov_base: UnsafeMutableRawPointer(mutating: parts.1.baseAddress), iov_len: parts.1.count))
            let written = withUnsafeMutablePointer(to: &vectors) {
                $0.withMemoryRebound(to: iovec.self, capacity: 2) { writev(fd, $0, 2) }
            }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            // A short write (a UART, a stream socket): go on from where it stopped.
            let fromHeader = min(written, parts.0.count)
            parts.0 = UnsafeRawBufferPointer(rebasing: parts.0[fromHeader...])
            parts.1 = UnsafeRawBufferPointer(rebasing: parts.1[(written - fromHeader)...])
        }
        return true
    }
}
