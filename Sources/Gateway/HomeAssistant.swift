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
        (self.prefix, self.gateway, self.topics) = (prefix, gateway, topics)
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
            "device": [
                "identifiers": [gatewayDevice], "name": "Bluejay gateway \(gateway)", "manufacturer": "Bluejay",
                "model": "bluejay-gateway",
            ],
        ]
        return Message(topic: "\(prefix)/binary_sensor/\(objectID)/config", payload: JSONText.encode(fields))
    }

    /// One sensor per subscribed or polled characteristic that ``KnownCharacteristic``
    /// decodes, reading its `/json` topic, in one device per peripheral. Available only while
    /// both the gateway and the peripheral are `online`: a gateway killed outright leaves the
    /// peripheral's retained `online` behind, and only the gateway's will says it is gone.
    public func sensors(of rule: PeripheralRule, at address: BluetoothAddress) -> [Message] {
        let addressID = Self.addressID(address)
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
                "device": [
                    "identifiers": ["bluejay_\(addressID)"], "name": "BLE \(address.description.uppercased())",
                    "via_device": gatewayDevice,
                ],
            ]
            if let deviceClass = known.deviceClass { fields["device_class"] = deviceClass }
            if known != .heartRate { fields["state_class"] = "measurement" }
            messages.append(Message(topic: "\(prefix)/sensor/\(objectID)/config", payload: JSONText.encode(fields)))
        }
        return messages
    }

    /// What a text entity accepts: hex bytes as `/set` reads them, a subset of
    /// ``Hex/decode(_:)``'s spellings, so that Home Assistant refuses a value before it
    /// reaches the gateway's error topic. Anchored: Home Assistant matches from the start only.
    public static let hexPattern = "^(0[xX])?[0-9A-Fa-f]{2}([ :_-]?[0-9A-Fa-f]{2})*$"

    /// One `text` entity per characteristic under `write:`, whose command is its `/set` topic
    /// (hex, ``hexPattern``), in the peripheral's device and available as its sensors are (a
    /// write needs the link). Its state is the hex value topic when the characteristic is also
    /// subscribed or polled; a characteristic only written has none, and Home Assistant shows
    /// the last value it set. Subscribed and polled characteristics accept `/set` too, but
    /// most are not writable at all (a measurement), so only `write:` makes an entity.
    public func texts(of rule: PeripheralRule, at address: BluetoothAddress) -> [Message] {
        let addressID = Self.addressID(address)
        let read = Set((rule.subscribe + rule.poll).map(\.topicPath))
        var seen: Set<String> = []
        return rule.write.compactMap { characteristic -> Message? in
            guard seen.insert(characteristic.topicPath).inserted else { return nil }
            // `_set`: a characteristic both read and written is a sensor and a text of one id stem.
            let objectID = "bluejay_\(gateway)_\(addressID)_\(characteristic.characteristicText)_set"
            var fields: [String: Any] = [
                "name": "Write \(characteristic.topicPath)",
                "unique_id": objectID,
                "command_topic": topics.set(address, characteristic),
                "pattern": Self.hexPattern,
                // Two hex digits at least; 255 is Home Assistant's longest text (127 bytes).
                "min": 2,
                "max": 255,
                // A retained /set is refused: the gateway does not act on a stale command.
                "retain": false,
                "availability": [["topic": topics.status], ["topic": topics.status(address)]],
                "availability_mode": "all",
                "device": [
                    "identifiers": ["bluejay_\(addressID)"], "name": "BLE \(address.description.uppercased())",
                    "via_device": gatewayDevice,
                ],
            ]
            if read.contains(characteristic.topicPath) { fields["state_topic"] = topics.value(address, characteristic) }
            return Message(topic: "\(prefix)/text/\(objectID)/config", payload: JSONText.encode(fields))
        }
    }

    /// An address as the object ids spell it: upper case, no colons.
    static func addressID(_ address: BluetoothAddress) -> String {
        address.description.uppercased().replacingOccurrences(of: ":", with: "")
    }
}
