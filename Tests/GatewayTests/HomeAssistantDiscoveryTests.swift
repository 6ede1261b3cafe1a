import Advertisements
import Bluejay
import Foundation
import Testing
@testable import Gateway

/// Home Assistant's discovery: the gateway is a device of its own, which every peripheral's
/// device names as `via_device`; a peripheral's sensors are available only while both the
/// gateway and the peripheral say `online`.
struct HomeAssistantDiscoveryTests {
    static let topics = Topics(prefix: "bluejay", gateway: "gw1")
    static let discovery = HomeAssistantDiscovery(prefix: "homeassistant", gateway: "gw1", topics: topics)

    static func object(_ payload: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any])
    }

    @Test func theGatewayIsADevice() throws {
        let message = Self.discovery.gatewayStatus
        #expect(message.topic == "homeassistant/binary_sensor/bluejay_gw1_status/config")
        let fields = try Self.object(message.payload)
        #expect(fields["state_topic"] as? String == "bluejay/gw1/status")
        #expect(fields["payload_on"] as? String == "online" && fields["payload_off"] as? String == "offline")
        #expect(fields["device_class"] as? String == "connectivity")
        let device = try #require(fields["device"] as? [String: Any])
        #expect(device["identifiers"] as? [String] == [Self.discovery.gatewayDevice])
        #expect(Self.discovery.gatewayDevice == "bluejay_gw1")
    }

    @Test func sensorsNeedTheGatewayAndThePeripheralOnline() throws {
        let rule = try #require(try GatewayConfiguration(yaml: ConfigurationTests.example).peripherals.first)
        let address = try #require(BluetoothAddress("C0:FF:EE:00:00:11"))
        let messages = Self.discovery.sensors(of: rule, at: address)
        #expect(
            messages.map(\.topic) == [
                "homeassistant/sensor/bluejay_gw1_C0FFEE000011_2A37/config",
                "homeassistant/sensor/bluejay_gw1_C0FFEE000011_2A19/config",
            ])
        for message in messages {
            let fields = try Self.object(message.payload)
            let availability = try #require(fields["availability"] as? [[String: String]])
            #expect(
                availability.compactMap { $0["topic"] } == [
                    "bluejay/gw1/status", "bluejay/gw1/C0:FF:EE:00:00:11/status",
                ])
            #expect(fields["availability_mode"] as? String == "all")
            let device = try #require(fields["device"] as? [String: Any])
            #expect(
                device["via_device"] as? String == Self.discovery.gatewayDevice, "the device announced by gatewayStatus"
            )
        }
    }

    /// A decoded sensor's values become entities with Home Assistant's device class, unit
    /// and state class; booleans are binary sensors; identifiers, counters and `extra` get
    /// none. Every entity reads `…/values`, is unique, and belongs to the sensor's device
    /// under the gateway's.
    @Test func decodedValuesAreEntitiesWithTheirClassesAndUnits() throws {
        let address = try #require(BluetoothAddress("A4:C1:38:00:00:01"))
        let decoded = DecodedAdvertisement(
            format: "bthome-v2",
            values: [
                "temperature": .number(DecimalNumber(215, exponent: -1)), "humidity": .number(DecimalNumber(45)),
                "battery": .integer(90), "motion": .bool(true), "packet_counter": .integer(7),
                "extra": .object(["flags": .integer(0)]),
                "uuid": .string("e2c56db5-dffb-48d2-b060-d0f5a71096e0"),
            ])
        let messages = Self.discovery.sensors(of: decoded, at: address)
        #expect(
            messages.map(\.topic) == [
                "homeassistant/sensor/bluejay_gw1_A4C138000001_battery/config",
                "homeassistant/sensor/bluejay_gw1_A4C138000001_humidity/config",
                "homeassistant/binary_sensor/bluejay_gw1_A4C138000001_motion/config",
                "homeassistant/sensor/bluejay_gw1_A4C138000001_rssi/config",
                "homeassistant/sensor/bluejay_gw1_A4C138000001_temperature/config",
            ])
        var classes: [String: [String?]] = [:]
        for message in messages {
            let fields = try Self.object(message.payload)
            // What each platform needs: a state topic, a unique id (for a device), a device
            // with identifiers, and a template that yields the state.
            #expect(fields["state_topic"] as? String == "bluejay/gw1/A4:C1:38:00:00:01/values")
            #expect(fields["availability_topic"] as? String == "bluejay/gw1/status")
            #expect((fields["unique_id"] as? String).map { message.topic.contains($0) } == true)
            #expect((fields["value_template"] as? String)?.contains("value_json.") == true)
            let device = try #require(fields["device"] as? [String: Any])
            #expect(device["identifiers"] as? [String] == ["bluejay_A4C138000001"])
            #expect(
                device["via_device"] as? String == Self.discovery.gatewayDevice
                    && device["model"] as? String == "bthome-v2")
            let name = String(message.topic.split(separator: "_").last!.split(separator: "/").first!)
            classes[name] = [
                fields["device_class"] as? String, fields["unit_of_measurement"] as? String,
                fields["state_class"] as? String,
            ]
        }
        #expect(classes["temperature"] == ["temperature", "°C", "measurement"])
        #expect(classes["humidity"] == ["humidity", "%", "measurement"])
        #expect(classes["battery"] == ["battery", "%", "measurement"])
        #expect(classes["rssi"] == ["signal_strength", "dBm", "measurement"])
        #expect(classes["motion"] == ["motion", nil, nil], "a binary sensor has no unit or state class")
    }

    @Test func peripheralStatusTopics() {
        let topics = Self.topics
        #expect(topics.peripheralStatusFilter == "bluejay/gw1/+/status")
        #expect(topics.parsePeripheralStatus("bluejay/gw1/C0:FF:EE:00:00:11/status") == "C0:FF:EE:00:00:11")
        #expect(topics.parsePeripheralStatus("bluejay/gw1/status") == nil, "the gateway's own")
        #expect(topics.parsePeripheralStatus("bluejay/gw2/C0:FF:EE:00:00:11/status") == nil, "another gateway's")
        #expect(topics.parsePeripheralStatus("bluejay/gw1/C0:FF:EE:00:00:11/180D/2A37") == nil)
    }
}
