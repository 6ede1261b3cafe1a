import Bluejay
import Foundation
import Testing
@testable import Gateway

/// A characteristic under `write:` is a Home Assistant `text` entity whose command is its
/// `/set` topic: what HA requires of the platform, the state only where the gateway reads the
/// characteristic, and a pattern HA checks that `/set` itself accepts.
struct HomeAssistantTextTests {
    static let discovery = HomeAssistantDiscoveryTests.discovery

    static let yaml = """
        gateway: gw1
        transport: hci0
        broker: mqtt://127.0.0.1:1883
        peripherals:
          - address: C0:FF:EE:00:00:11/random
            subscribe:
              - {service: 180D, characteristic: 2A37}
            poll:
              - {service: 180D, characteristic: 2A38, every: 60s}
            write:
              - {service: 180D, characteristic: 2A39}
              - {service: 180d, characteristic: 2a38}
              - {service: 180D, characteristic: 2A39, write: command}
        """

    @Test func eachWrittenCharacteristicIsATextEntity() throws {
        let rule = try #require(try GatewayConfiguration(yaml: Self.yaml).peripherals.first)
        let address = try #require(BluetoothAddress("C0:FF:EE:00:00:11"))
        let messages = Self.discovery.texts(of: rule, at: address)
        #expect(
            messages.map(\.topic) == [
                "homeassistant/text/bluejay_gw1_C0FFEE000011_2A39_set/config",
                "homeassistant/text/bluejay_gw1_C0FFEE000011_2A38_set/config",
            ],
            "one per characteristic, however often listed or spelled; a subscribed one (2A37) gets none")
        var uniqueIDs: Set<String> = []
        for message in messages {
            let fields = try HomeAssistantDiscoveryTests.object(message.payload)
            let uniqueID = try #require(fields["unique_id"] as? String)
            uniqueIDs.insert(uniqueID)
            #expect(message.topic == "homeassistant/text/\(uniqueID)/config")
            #expect(fields["name"] as? String != nil)
            let command = try #require(fields["command_topic"] as? String)
            let parsed = try #require(Self.discovery.topics.parseSet(command), "\(command) is a /set of this gateway")
            #expect(parsed.address == "C0:FF:EE:00:00:11")
            #expect(rule.writable.contains { $0.topicPath == parsed.path }, "/set writes \(parsed.path)")
            #expect(fields["pattern"] as? String == HomeAssistantDiscovery.hexPattern)
            #expect(fields["retain"] as? Bool == false, "the gateway refuses a retained /set")
            let availability = try #require(fields["availability"] as? [[String: String]])
            #expect(
                availability.compactMap { $0["topic"] } == [
                    "bluejay/gw1/status", "bluejay/gw1/C0:FF:EE:00:00:11/status",
                ])
            #expect(fields["availability_mode"] as? String == "all")
            let device = try #require(fields["device"] as? [String: Any])
            #expect(
                device["identifiers"] as? [String] == ["bluejay_C0FFEE000011"],
                "the peripheral's device, as its sensors'")
            #expect(device["via_device"] as? String == Self.discovery.gatewayDevice)
        }
        #expect(uniqueIDs.count == 2)
        let controlPoint = try HomeAssistantDiscoveryTests.object(messages[0].payload)
        #expect(controlPoint["state_topic"] == nil, "2A39 is only written: no state")
        let location = try HomeAssistantDiscoveryTests.object(messages[1].payload)
        #expect(
            location["state_topic"] as? String == "bluejay/gw1/C0:FF:EE:00:00:11/180D/2A38",
            "2A38 is polled: its hex value")
        #expect(location["command_topic"] as? String == "bluejay/gw1/C0:FF:EE:00:00:11/180D/2A38/set")
        let sensors = Self.discovery.sensors(of: rule, at: address).map(\.topic)
        #expect(Set(sensors).isDisjoint(with: messages.map(\.topic)))
    }

    /// What the pattern lets through, `/set` writes; what `/set` refuses, the pattern stops
    /// in Home Assistant already (for these spellings). The value topic's own spelling, the
    /// state the entity shows, passes.
    @Test func thePatternIsWhatSetAccepts() throws {
        let pattern = try NSRegularExpression(pattern: HomeAssistantDiscovery.hexPattern)
        func matches(_ text: String) -> Bool {
            pattern.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
        }
        for good in ["01", "0208", "0x0208", "0X0a0B", "02 08", "02:08", "de-ad_be:ef", Hex.encode([0, 0x3c, 0xff])] {
            #expect(matches(good), "\(good)")
            #expect(Hex.decode(good) != nil, "/set accepts \(good)")
        }
        for bad in ["", "1", "zz", "012", "0x", "01 0", "hello", "01\n02"] {
            #expect(!matches(bad), "\(bad)")
        }
        for refused in ["", "1", "zz", "012", "0x", "hello"] {
            #expect(Hex.decode(refused) == nil, "/set refuses \(refused)")
        }
    }
}
