import Bluejay
import Foundation
import Testing
@testable import Gateway

/// docs/Gateway.md's `/set` examples write characteristics the shipped example file
/// (Fixtures/gateway/gateway.yaml) lets `/set` write: one its reader can try as printed.
struct DocumentedSetTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func everyDocumentedSetIsWritableInTheShippedFile() throws {
        let page = try String(contentsOf: Self.root.appendingPathComponent("docs/Gateway.md"), encoding: .utf8)
        let configuration = try GatewayConfiguration(
            contentsOf: Self.root.appendingPathComponent("Fixtures/gateway/gateway.yaml").path)
        let topics = Topics(prefix: configuration.prefix, gateway: configuration.gateway)
        // mosquitto_pub -t 'TOPIC/set' …
        let sets = page.components(separatedBy: "mosquitto_pub -t '").dropFirst().compactMap {
            $0.split(separator: "'").first.map(String.init)
        }
        #expect(!sets.isEmpty, "the page shows a /set")
        for topic in sets {
            let parsed = try #require(topics.parseSet(topic), "\(topic) is a /set of gateway \(configuration.gateway)")
            let rule = configuration.peripherals.first { (rule: PeripheralRule) -> Bool in
                guard case .address(let identifier) = rule.match else { return false }
                return identifier.address.description.uppercased() == parsed.address.uppercased()
            }
            let peripheral = try #require(rule, "\(parsed.address) is a configured address")
            #expect(
                peripheral.writable.contains { $0.topicPath == parsed.path.uppercased() },
                "\(parsed.path) is under subscribe:, poll: or write: of \(parsed.address)")
        }
    }
}
