import BluetoothCore
#if canImport(Glibc)
    import Glibc
#endif

/// Connected stream sockets for H4 over TCP or a Unix socket.
enum StreamSocket {
    static func connectTCP(host: String, port: UInt16) throws(TransportError) -> Int32 {
        let addresses: [SocketAddress]
        switch SocketAddress.resolve(host, port: Int(port)) {
        case .success(let found): addresses = found
        case .failure(let error): throw .openFailed(what: "tcp:\(host):\(port) (\(error))", errno: 0)
        }
        var lastError: Int32 = ECONNREFUSED
        for address in addresses {
            let fd = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else {
                lastError = errno
                continue
            }
            if address.withPointer({ connect(fd, $0, $1) }) == 0 {
                var one: Int32 = 1
                // HCI packets are small and latency matters more than batching.
                setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                return fd
            }
            lastError = errno
            close(fd)
        }
        throw .openFailed(what: "tcp:\(host):\(port)", errno: lastError)
    }

    static func connectUnix(path: String) throws(TransportError) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        let utf8 = Array(path.utf8)
        guard utf8.count < capacity else { throw .invalidSpec("unix socket path is longer than \(capacity - 1) bytes") }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: utf8)
            raw[utf8.count] = 0
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .openFailed(what: "unix:\(path)", errno: errno) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw .openFailed(what: "unix:\(path)", errno: code)
        }
        return fd
    }
}
