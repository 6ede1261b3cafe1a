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
package func writeAll(
    _ fd: Int32, header: UnsafeRawBufferPointer, body: ArraySlice<UInt8>,
    writev: (Int32, UnsafePointer<iovec>, Int32) -> Int
) -> Bool {
    body.withUnsafeBytes { body in
        var vectors = (
            iovec(iov_base: UnsafeMutableRawPointer(mutating: header.baseAddress), iov_len: header.count),
            iovec(iov_base: UnsafeMutableRawPointer(mutating: body.baseAddress), iov_len: body.count)
        )
        return withUnsafeMutablePointer(to: &vectors) {
            $0.withMemoryRebound(to: iovec.self, capacity: 2) { writeAll(fd, vectors: $0, count: 2, writev: writev) }
        }
    }
}

/// Writes every byte the `count` I/O vectors at `vectors` hold, in order, with `writev`
/// (several packets gathered behind their headers, say); retries short writes and EINTR,
/// false on any other error. A short write trims the vectors in place, what went out left
/// as empty vectors, so each retry hands `writev` the same vectors.
package func writeAll(
    _ fd: Int32, vectors: UnsafeMutablePointer<iovec>, count: Int,
    writev: (Int32, UnsafePointer<iovec>, Int32) -> Int
) -> Bool {
    var first = 0
    while first < count {
        let written = writev(fd, vectors, Int32(count))
        if written < 0 {
            if errno == EINTR { continue }
            return false
        }
        // A short write (a UART, a stream socket): go on from where it stopped.
        var remaining = written
        while first < count, remaining >= vectors[first].iov_len {
            remaining -= vectors[first].iov_len
            vectors[first].iov_len = 0
            first += 1
        }
        if remaining > 0 {
            vectors[first].iov_base += remaining
            vectors[first].iov_len -= remaining
        }
    }
    return true
}
