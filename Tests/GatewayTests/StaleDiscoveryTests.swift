import Advertisements
import Bluejay
import Foundation
import Testing
@testable import Gateway

/// Which retained discovery configurations a gateway deletes on starting: its own (object id
/// and device) that the configuration no longer announces; never another gateway's, nor
/// what a name or service rule or the decoder could announce again.
struct StaleDiscoveryTests {
    static let discovery = HomeAssistantDiscoveryTests.discovery

    /// The run before: two peripherals by address, one written, a tracked device.
    static let before = """
        gateway: gw1
        transport: hci0
        broker: mqtt://127.0.0.1:1883
        presence: [D0:00:00:00:00:02]
        peripherals:
          - address: C0:FF:EE:00:00:11/random
            poll:
              - {service: 180F, characteristic: 2A19, every: 60s}
            write:
              - {service: 180D, characteristic: 2A39}
          - address: C0:FF:EE:00:00:22/random
            subscribe:
              - {service: 180D, characteristic: 2A37}
        """

    /// This run: the first peripheral's write and the second peripheral gone, no presence,
    /// a rule by name.
    static let after = """
        gateway: gw1
        transport: hci0
        broker: mqtt://127.0.0.1:1883
        peripherals:
          - address: C0:FF:EE:00:00:11/random
            poll:
              - {service: 180F, characteristic: 2A19, every: 60s}
          - name: Thermometer
            poll:
              - {service: 181A, characteristic: 2A6E, every: 30s}
        """

    static func announced(_ yaml: String) throws -> [HomeAssistantDiscovery.Message] {
        let configuration = try GatewayConfiguration(yaml: yaml)
        var messages = [discovery.gatewayStatus]
        for rule in configuration.peripherals {
            guard case .address(let identifier) = rule.match else { continue }
            messages +=
                discovery.sensors(of: rule, at: identifier.address) + discovery.texts(of: rule, at: identifier.address)
        }
        return messages + configuration.presence.tracked.map { discovery.tracker(of: $0) }
    }

    @Test func whatIsNoLongerConfiguredIsStaleAndTheRestIsNot() throws {
        let stale = StaleDiscovery(Self.discovery, configuration: try GatewayConfiguration(yaml: Self.after))
        #expect(stale.filter == "homeassistant/+/+/config")
        let earlier = try Self.announced(Self.before)
        let removed = Set(earlier.filter { stale.isStale($0.topic, payload: Array($0.payload.utf8)) }.map(\.topic))
        #expect(
            removed == [
                "homeassistant/text/bluejay_gw1_C0FFEE000011_2A39_set/config",
                "homeassistant/sensor/bluejay_gw1_C0FFEE000022_2A37/config",
                "homeassistant/device_tracker/bluejay_gw1_D00000000002_presence/config",
            ])
        for message in try Self.announced(Self.after) {
            #expect(
                !stale.isStale(message.topic, payload: Array(message.payload.utf8)), "\(message.topic) is announced now"
            )
        }
    }

    /// A name rule's entities at the address it found last time stay (it may find it again);
    /// a characteristic it no longer has goes.
    @Test func whatANameRuleWouldAnnounceStays() throws {
        let stale = StaleDiscovery(Self.discovery, configuration: try GatewayConfiguration(yaml: Self.after))
        let found = try #require(BluetoothAddress("A4:C1:38:00:00:09"))
        let rule = try #require(try GatewayConfiguration(yaml: Self.after).peripherals.last)
        for message in Self.discovery.sensors(of: rule, at: found) {
            #expect(!stale.isStale(message.topic, payload: Array(message.payload.utf8)), "\(message.topic)")
        }
        let humidity = try #require(
            try GatewayConfiguration(yaml: Self.after.replacingOccurrences(of: "2A6E", with: "2A6F")).peripherals.last)
        let old = try #require(Self.discovery.sensors(of: humidity, at: found).first)
        #expect(stale.isStale(old.topic, payload: Array(old.payload.utf8)), "a characteristic the rule no longer polls")
    }

    /// Decoded values stay while decoding is on (any device may send them again) and go
    /// when it is off.
    @Test func decodedValuesStayWhileDecodingIsOn() throws {
        let address = try #require(BluetoothAddress("A4:C1:38:00:00:01"))
        let decoded = DecodedAdvertisement(
            format: "bthome-v2", values: ["temperature": .integer(21), "motion": .bool(true)])
        let messages = Self.discovery.sensors(of: decoded, at: address)
        #expect(messages.count == 3, "temperature, motion, rssi")
        let on = StaleDiscovery(Self.discovery, configuration: try GatewayConfiguration(yaml: Self.after))
        let off = StaleDiscovery(
            Self.discovery, configuration: try GatewayConfiguration(yaml: "decode: off\n" + Self.after))
        for message in messages {
            #expect(!on.isStale(message.topic, payload: Array(message.payload.utf8)), "\(message.topic)")
            #expect(off.isStale(message.topic, payload: Array(message.payload.utf8)), "\(message.topic)")
        }
    }

    /// Not ours: another gateway's whose id starts with ours (`gw1_x`: its object ids start
    /// `bluejay_gw1_` too), another integration's, an already deleted one, another prefix.
    @Test func othersAreLeftAlone() throws {
        let stale = StaleDiscovery(Self.discovery, configuration: try GatewayConfiguration(yaml: Self.after))
        let other = HomeAssistantDiscovery(
            prefix: "homeassistant", gateway: "gw1_x", topics: Topics(prefix: "bluejay", gateway: "gw1_x"))
        let rule = try #require(try GatewayConfiguration(yaml: Self.before).peripherals.last)
        let address = try #require(BluetoothAddress("C0:FF:EE:00:00:22"))
        for message in [other.gatewayStatus] + other.sensors(of: rule, at: address) {
            #expect(message.topic.contains("/bluejay_gw1_"))
            #expect(!stale.isStale(message.topic, payload: Array(message.payload.utf8)), "\(message.topic)")
        }
        #expect(
            !stale.isStale(
                "homeassistant/sensor/0x00158d0001_temperature/config",
                payload: Array(#"{"device":{"identifiers":["zigbee"]}}"#.utf8)))
        let ours = try #require(Self.discovery.sensors(of: rule, at: address).first)
        #expect(stale.isStale(ours.topic, payload: Array(ours.payload.utf8)), "the same, ours: stale")
        #expect(!stale.isStale(ours.topic, payload: []), "already deleted")
        #expect(
            !stale.isStale(
                ours.topic.replacingOccurrences(of: "homeassistant/", with: "ha/"), payload: Array(ours.payload.utf8)))
        #expect(
            stale.matches(ours.topic) && !stale.matches("homeassistant/sensor/x/y/config")
                && !stale.matches("bluejay/gw1/status"))
    }
}
