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
