#if canImport(Glibc)
    import Glibc
#endif

/// A TCP peer's address, as `getaddrinfo` gives it: what the H4-over-TCP transport and the
/// gateway's MQTT connection connect to, each address of a host in turn.
public struct SocketAddress: Sendable {
    /// `AF_INET` or `AF_INET6`.
    public let family: Int32
    private let storage: sockaddr_storage
    private let length: socklen_t

    private init(_ info: addrinfo) {
        family = info.ai_family
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { target in
            target.copyMemory(from: UnsafeRawBufferPointer(start: info.ai_addr, count: Int(info.ai_addrlen)))
        }
        self.storage = storage
        length = info.ai_addrlen
    }

    /// Calls `body` with the address as `connect(2)` takes it.
    public func withPointer<T>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        withUnsafeBytes(of: storage) { body($0.baseAddress!.assumingMemoryBound(to: sockaddr.self), length) }
    }

    /// The TCP addresses of `host`'s `port`, in `getaddrinfo`'s order, or why there are none
    /// (`gai_strerror`'s text). Blocks while the name is looked up.
    public static func resolve(_ host: String, port: Int) -> Result<[SocketAddress], AddressError> {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let list else { return .failure(AddressError(description: String(cString: gai_strerror(rc)))) }
        defer { freeaddrinfo(list) }
        var addresses: [SocketAddress] = []
        var next: UnsafeMutablePointer<addrinfo>? = list
        while let entry = next {
            addresses.append(SocketAddress(entry.pointee))
            next = entry.pointee.ai_next
        }
        return addresses.isEmpty ? .failure(AddressError(description: "no address")) : .success(addresses)
    }

    /// Why a host name has no address.
    public struct AddressError: Error, Sendable, CustomStringConvertible {
        /// `gai_strerror`'s text.
        public let description: String
    }
}
