import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `metrics: HOST:PORT`: the gateway's counters for Prometheus, `GET /metrics` answered in
/// the text exposition format (version 0.0.4) by a small HTTP/1.0 server on a thread of its
/// own. The page is made by the gateway (``GatewayService``) every second and kept here, so
/// a scrape never waits for the stack's actor.
public final class MetricsEndpoint: Sendable {
    /// The port it listens on (the one asked for, or the kernel's choice for 0).
    public let port: Int
    private let socket: Int32
    private let page = Mutex("")

    /// Listens on `host:port` (an IPv4 address); throws when the socket cannot be bound.
    public init(host: String, port: Int) throws(MetricsEndpointError) {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw MetricsEndpointError(message: "socket: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            close(fd)
            throw MetricsEndpointError(message: "'\(host)' is not an IPv4 address")
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw MetricsEndpointError(message: "cannot listen on \(host):\(port): \(reason)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.port = Int(UInt16(bigEndian: address.sin_port))
        socket = fd
        let thread = Thread { [self] in serve() }
        thread.name = "bluejay-metrics"
        thread.start()
    }

    /// The page scrapes get from now on.
    public func update(_ text: String) { page.withLock { $0 = text } }

    /// Stops listening: the thread's `accept` fails and it ends.
    public func stop() { shutdown(socket, Int32(SHUT_RDWR)) }

    deinit { close(socket) }

    private func serve() {
        while true {
            let client = accept(socket, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            answer(client)
            close(client)
        }
    }

    /// One request: its first line decides; the rest of the headers are read and ignored.
    private func answer(_ client: Int32) {
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var request: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 2048)
        while request.count < 8192, !request.ends(with: Array("\r\n\r\n".utf8)) {
            let count = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            request += buffer[..<count]
        }
        let line = String(decoding: request.prefix { $0 != UInt8(ascii: "\r") }, as: UTF8.self)
        let parts = line.split(separator: " ")
        let response: String
        if parts.count >= 2, parts[0] == "GET", parts[1] == "/metrics" || parts[1].hasPrefix("/metrics?") {
            let body = page.withLock { $0 }
            response =
                "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
                + body
        } else {
            response = "HTTP/1.0 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\nnot found\n"
        }
        var bytes = Array(response.utf8)[...]
        while !bytes.isEmpty {
            let sent = bytes.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { return }
            bytes = bytes.dropFirst(sent)
        }
    }

    /// The counters of `PREFIX/GATEWAY/stats` in the text exposition format:
    /// `bluejay_gateway_values_total{gateway="gw1"} 12`; the gauges (`links`, `peripherals`,
    /// `queue_depth`, `leases`, `decoded_devices`) without `_total`.
    public static func exposition(_ counters: [String: Int], gateway: String) -> String {
        let gauges: Set<String> = ["links", "peripherals", "queue_depth", "leases", "decoded_devices"]
        let label = gateway.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        var text = ""
        for key in counters.keys.sorted() {
            let gauge = gauges.contains(key)
            let name = "bluejay_gateway_\(key)\(gauge ? "" : "_total")"
            text += "# TYPE \(name) \(gauge ? "gauge" : "counter")\n\(name){gateway=\"\(label)\"} \(counters[key]!)\n"
        }
        return text
    }
}

/// The metrics endpoint could not listen.
public struct MetricsEndpointError: Error, Sendable, CustomStringConvertible {
    /// Why.
    public var message: String
    /// The message.
    public var description: String { message }
}

extension Array where Element == UInt8 {
    fileprivate func ends(with suffix: [UInt8]) -> Bool {
        count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix
    }
}
