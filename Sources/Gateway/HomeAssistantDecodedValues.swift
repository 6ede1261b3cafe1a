import Advertisements
import Bluejay

/// How Home Assistant shows one value of a decoded advertisement (issue 52's names and
/// units): which platform, device class, unit and state class. Values with no entry
/// (identifiers such as `uuid`, counters HA has no use for, `extra`) get no entity.
struct DecodedValueEntity: Sendable, Equatable {
    /// `sensor` or `binary_sensor`.
    var component: String
    var name: String
    var deviceClass: String?
    var unit: String?
    var stateClass: String?
    /// Diagnostic entities (battery, signal) go under the device's diagnostics.
    var diagnostic = false

    /// The entity of the value called `key`, if it gets one.
    static func of(_ key: String) -> DecodedValueEntity? { table[key] }

    private static func sensor(
        _ name: String, _ deviceClass: String?, _ unit: String?, state: String? = "measurement",
        diagnostic: Bool = false
    ) -> DecodedValueEntity {
        DecodedValueEntity(
            component: "sensor", name: name, deviceClass: deviceClass, unit: unit, stateClass: state,
            diagnostic: diagnostic)
    }

    private static func binary(_ name: String, _ deviceClass: String) -> DecodedValueEntity {
        DecodedValueEntity(component: "binary_sensor", name: name, deviceClass: deviceClass)
    }

    // Device classes and units as Home Assistant's sensor and binary_sensor platforms name them.
    private static let table: [String: DecodedValueEntity] = [
        "temperature": sensor("Temperature", "temperature", "°C"),
        "humidity": sensor("Humidity", "humidity", "%"),
        "battery": sensor("Battery", "battery", "%", diagnostic: true),
        "voltage": sensor("Voltage", "voltage", "V", diagnostic: true),
        "pressure": sensor("Pressure", "atmospheric_pressure", "hPa"),
        "illuminance": sensor("Illuminance", "illuminance", "lx"),
        "moisture": sensor("Moisture", "moisture", "%"),
        "conductivity": sensor("Conductivity", nil, "µS/cm"),
        "co2": sensor("CO2", "carbon_dioxide", "ppm"),
        "pm25": sensor("PM2.5", "pm25", "µg/m³"),
        "pm10": sensor("PM10", "pm10", "µg/m³"),
        "acceleration_x": sensor("Acceleration X", nil, "g"),
        "acceleration_y": sensor("Acceleration Y", nil, "g"),
        "acceleration_z": sensor("Acceleration Z", nil, "g"),
        "movement_counter": sensor("Movements", nil, nil, state: "total_increasing"),
        "rssi": sensor("Signal strength", "signal_strength", "dBm", diagnostic: true),
        "motion": binary("Motion", "motion"),
        "occupancy": binary("Occupancy", "occupancy"),
        "opening": binary("Opening", "opening"),
    ]
}

extension HomeAssistantDiscovery {
    /// One entity per value of a decoded advertisement that Home Assistant can show, each
    /// reading `…/ADDRESS/values`, in one device per sensor named by its format. A value is
    /// absent from some packets (a BTHome sensor sends what changed), so each entity reads
    /// its own key and keeps its state when a message lacks it. Available while the
    /// gateway is: an advertiser has no link, so no status of its own.
    public func sensors(of decoded: DecodedAdvertisement, at address: BluetoothAddress) -> [Message] {
        let addressID = Self.addressID(address)
        var keys = Set(decoded.values.keys)
        keys.insert("rssi")
        return keys.sorted().compactMap { key -> Message? in
            guard let entity = DecodedValueEntity.of(key), let topic = decodedValueTopic(key, at: address) else {
                return nil
            }
            let objectID = decodedValueObjectID(key, at: address)
            // An absent key keeps the entity's state: `this.state` is Home Assistant's own.
            let read = "value_json.\(key)"
            var fields: [String: Any] = [
                "name": entity.name,
                "unique_id": objectID,
                "state_topic": topics.values(address),
                "availability_topic": topics.status,
                "device": [
                    "identifiers": ["bluejay_\(addressID)"],
                    "name": "\(decoded.format) \(address.description.uppercased())",
                    "model": decoded.format, "via_device": gatewayDevice,
                ],
            ]
            if entity.component == "binary_sensor" {
                fields["value_template"] =
                    "{% if \(read) is defined %}{{ 'ON' if \(read) else 'OFF' }}{% else %}{{ 'ON' if this.state == 'on' else 'OFF' }}{% endif %}"
            } else {
                fields["value_template"] =
                    "{% if \(read) is defined and \(read) is not none %}{{ \(read) }}{% else %}{{ this.state }}{% endif %}"
            }
            if let deviceClass = entity.deviceClass { fields["device_class"] = deviceClass }
            if let unit = entity.unit { fields["unit_of_measurement"] = unit }
            if let stateClass = entity.stateClass { fields["state_class"] = stateClass }
            if entity.diagnostic { fields["entity_category"] = "diagnostic" }
            return Message(topic: topic, payload: JSONText.encode(fields))
        }
    }

    /// The discovery topic of decoded value `key` heard from `address`, nil when the value
    /// gets no entity: what `sensors(of:at:)` announces for a decoded advertisement, and what
    /// the clean-up of earlier runs' configurations keeps while decoding is on.
    func decodedValueTopic(_ key: String, at address: BluetoothAddress) -> String? {
        guard let entity = DecodedValueEntity.of(key) else { return nil }
        return "\(prefix)/\(entity.component)/\(decodedValueObjectID(key, at: address))/config"
    }

    private func decodedValueObjectID(_ key: String, at address: BluetoothAddress) -> String {
        "bluejay_\(gateway)_\(Self.addressID(address))_\(key)"
    }
}
