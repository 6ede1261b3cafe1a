import Foundation
import Gateway
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `metrics:`: the text exposition format, served over a real socket.
struct MetricsEndpointTests {
    /// One HTTP request to 127.0.0.1:`port`; the whole answer.
    static func get(_ path: String, port: Int) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(connected == 0)
        let request = Array("GET \(path) HTTP/1.0\r\nHost: x\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        var answer: [UInt8] = [], buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            answer += buffer[..<count]
        }
        return String(decoding: answer, as: UTF8.self)
    }

    @Test func countersInTheTextFormat() {
        let text = MetricsEndpoint.exposition(["values": 12, "links": 2], gateway: "gw\"1")
        #expect(
            text == """
                # TYPE bluejay_gateway_links gauge
                bluejay_gateway_links{gateway="gw\\"1"} 2
                # TYPE bluejay_gateway_values_total counter
                bluejay_gateway_values_total{gateway="gw\\"1"} 12

                """)
    }

    @Test func servesThePageOnAPortOfItsOwn() throws {
        let endpoint = try MetricsEndpoint(host: "127.0.0.1", port: 0)
        defer { endpoint.stop() }
        endpoint.update(MetricsEndpoint.exposition(["values": 3], gateway: "gw1"))
        let answer = try Self.get("/metrics", port: endpoint.port)
        #expect(
            answer.hasPrefix("HTTP/1.0 200 OK\r\n") && answer.contains("Content-Type: text/plain; version=0.0.4"),
            "\(answer)")
        #expect(
            answer.hasSuffix(
                "\r\n\r\n# TYPE bluejay_gateway_values_total counter\nbluejay_gateway_values_total{gateway=\"gw1\"} 3\n"
            ), "\(answer)")
        #expect(try Self.get("/", port: endpoint.port).hasPrefix("HTTP/1.0 404"))
    }

    @Test func theKey() throws {
        let base =
            "gateway: gw1\ntransport: hci0\nbroker: mqtt://127.0.0.1\nperipherals:\n  - address: C0:FF:EE:00:00:11/random\n"
        #expect(
            try GatewayConfiguration(yaml: base + "metrics: 127.0.0.1:9464\n").metrics?.description == "127.0.0.1:9464")
        #expect(try GatewayConfiguration(yaml: base).metrics == nil)
        #expect(throws: ConfigurationError.self) { try GatewayConfiguration(yaml: base + "metrics: localhost:9464\n") }
        #expect(throws: ConfigurationError.self) { try GatewayConfiguration(yaml: base + "metrics: 127.0.0.1\n") }
    }
}
