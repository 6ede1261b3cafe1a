import Bluejay
import Foundation

/// Home Assistant MQTT discovery (docs/Gateway.md): the retained configurations that make
/// the gateway, and each known characteristic of its peripherals, entities of Home Assistant.
public struct HomeAssistantDiscovery: Sendable {
    /// One retained discovery configuration: its topic and its JSON.
    public struct Message: Sendable, Equatable {
        /// `HA_PREFIX/COMPONENT/OBJECT_ID/config`.
        public var topic: String
        /// The configuration, JSON.
        public var payload: String
    }

    /// The discovery prefix (`homeassistant:`).
    public let prefix: String
    /// The gateway's id (`gateway:`).
    public let gateway: String
    /// The gateway's topics, which the entities read.
    public let topics: Topics

    /// The discovery of gateway `gateway` under `prefix`.
    public init(prefix: String, gateway: String, topics: Topics) {
        self.prefix = prefix
        self.gateway = gateway
        self.topics = topics
    }

    /// The gateway's device identifier, `bluejay_GATEWAY`: each peripheral's device names it
    /// as `via_device`.
    public var gatewayDevice: String { "bluejay_\(gateway)" }

    /// The gateway itself: a connectivity binary sensor of `PREFIX/GATEWAY/status` (its last
    /// will makes it `offline`) in the device ``gatewayDevice``. Without it, the peripherals'
    /// `via_device` named a device Home Assistant was never told of.
    public var gatewayStatus: Message {
        let objectID = "\(gatewayDevice)_status"
        let fields: [String: Any] = [
            "name": "Status",
            "unique_id": objectID,
            "state_topic": topics.status,
            "payload_on": "online",
            "payload_off": "offline",
            "device_class": "connectivity",
            "entity_category": "diagnostic",
            "device": ["identifiers": [gatewayDevice], "name": "Bluejay gateway \(gateway)", "manufacturer": "Bluejay",
                       "model": "bluejay-gateway"],
        ]
        return Message(topic: "\(prefix)/binary_sensor/\(objectID)/config", payload: JSONText.encode(fields))
    }

    /// One sensor per subscribed or polled characteristic that ``KnownCharacteristic``
    /// decodes, reading its `/json` topic, in one device per peripheral. Available only while
    /// both the gateway and the peripheral are `online`: a gateway killed outright leaves the
    /// peripheral's retained `online` behind, and only the gateway's will says it is gone.
    public func sensors(of rule: PeripheralRule, at address: BluetoothAddress) -> [Message] {
        let addressID = address.description.uppercased().replacingOccurrences(of: ":", with: "")
        var messages: [Message] = []
        for characteristic in rule.subscribe + rule.poll {
            guard let known = KnownCharacteristic(characteristic.characteristic.uuid) else { continue }
            let objectID = "bluejay_\(gateway)_\(addressID)_\(characteristic.characteristicText)"
            var fields: [String: Any] = [
                "name": known.name,
                "unique_id": objectID,
                "state_topic": topics.json(address, characteristic),
                "value_template": "{{ value_json.\(known.field) }}",
                "unit_of_measurement": known.unit,
                "availability": [["topic": topics.status], ["topic": topics.status(address)]],
                "availability_mode": "all",
                "device": ["identifiers": ["bluejay_\(addressID)"], "name": "BLE \(address.description.uppercased())",
                           "via_device": gatewayDevice],
            ]
            if let deviceClass = known.deviceClass { fields["device_class"] = deviceClass }
            if known != .heartRate { fields["state_class"] = "measurement" }
            messages.append(Message(topic: "\(prefix)/sensor/\(objectID)/config", payload: JSONText.encode(fields)))
        }
        return messages
    }
}
