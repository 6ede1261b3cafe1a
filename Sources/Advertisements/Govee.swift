import BluetoothCore

/// Govee thermometers and hygrometers: manufacturer data, one layout per model family as
/// the community documents them (Govee publishes none). A new model is a row of
/// ``models``: its company identifier, data length and layout.
enum Govee {
    /// Where a model keeps its readings.
    enum Layout: Sendable {
        /// One 24-bit big-endian number at `offset`: temperature × 10000 + humidity × 10 (the
        /// top bit set for a temperature below zero), then the battery (%) at `battery`.
        case packed(offset: Int, battery: Int)
        /// Temperature (int16, 0.01 °C) and humidity (uint16, 0.01 %) little-endian at
        /// `temperature` and `humidity`, then the battery (%) at `battery`.
        case pair(temperature: Int, humidity: Int, battery: Int)
    }

    /// One model family.
    struct Model: Sendable {
        /// The name reported when the local name does not say (`H5072/H5075`).
        let name: String
        /// The manufacturer data's company identifier as sent.
        let company: UInt16
        /// Octets after the company identifier.
        let length: Int
        let layout: Layout
        /// Whether the company identifier is another company's (0x0001), so the
        /// advertisement must also show it is a Govee one (its name or service UUID 0xEC88).
        let needsGoveeMark: Bool
    }

    static let models: [Model] = [
        Model(
            name: "H5072/H5075", company: 0xEC88, length: 6, layout: .packed(offset: 1, battery: 4),
            needsGoveeMark: false),
        Model(
            name: "H5074", company: 0xEC88, length: 7, layout: .pair(temperature: 1, humidity: 3, battery: 5),
            needsGoveeMark: false),
        Model(
            name: "H5051", company: 0xEC88, length: 9, layout: .pair(temperature: 1, humidity: 3, battery: 5),
            needsGoveeMark: false),
        Model(
            name: "H5101/H5102/H5177", company: 0x0001, length: 6, layout: .packed(offset: 2, battery: 5),
            needsGoveeMark: true),
        Model(
            name: "H5179", company: 0x8801, length: 9, layout: .pair(temperature: 4, humidity: 6, battery: 8),
            needsGoveeMark: false),
    ]

    static func decode(_ input: AdvertisementInput) throws(AdvertisementError) -> DecodedAdvertisement? {
        for model in models {
            guard let data = input.manufacturerData(model.company), data.count == model.length else { continue }
            let name = modelName(input.data.localName)
            if model.needsGoveeMark && name == nil && !input.data.serviceUUIDs.contains(BluetoothUUIDs.govee) {
                continue
            }
            // A name saying another family than this row's: leave it to that row (H5106 and
            // H5178 share H5102's company and length with other readings).
            if let name, model.needsGoveeMark, !model.name.contains(name) { continue }
            var collector = ValueCollector()
            switch model.layout {
            case let .packed(offset, battery):
                let packed = Bytes.be(data[offset..<(offset + 3)])
                let negative = packed & 0x80_0000 != 0
                let magnitude = packed & 0x7F_FFFF
                collector.add("temperature", .scaled(negative ? -(magnitude / 1000) : magnitude / 1000, exponent: -1))
                collector.add("humidity", .scaled(magnitude % 1000, exponent: -1))
                collector.add("battery", .integer(data[battery]))
            case let .pair(temperature, humidity, battery):
                collector.add(
                    "temperature", .scaled(Bytes.leSigned(data[temperature..<(temperature + 2)]), exponent: -2))
                collector.add("humidity", .scaled(Bytes.le(data[humidity..<(humidity + 2)]), exponent: -2))
                collector.add("battery", .integer(data[battery]))
            }
            collector.addExtra("model", .string(name ?? model.name))
            return collector.finished("govee")
        }
        return nil
    }

    /// `H5075` out of `GVH5075_CB9B`, `Govee_H5074_1234` or `B5178C545`: an `H` or `B`, then
    /// four digits.
    static func modelName(_ localName: String?) -> String? {
        guard let localName, localName.hasPrefix("GV") || localName.hasPrefix("Govee") || localName.hasPrefix("B5")
        else { return nil }
        let characters = Array(localName)
        for start in characters.indices where characters[start] == "H" || characters[start] == "B" {
            let digits = characters[(start + 1)...].prefix(4)
            if digits.count == 4, digits.allSatisfy(\.isNumber) { return "H" + String(digits) }
        }
        return nil
    }
}

/// Service UUIDs the decoders look for in the UUID lists.
enum BluetoothUUIDs {
    /// Govee's 16-bit service UUID 0xEC88, which its thermometers list.
    static let govee = BluetoothUUID(UInt16(0xEC88))
    /// Inkbird's 16-bit service UUID 0xFFF0.
    static let inkbird = BluetoothUUID(UInt16(0xFFF0))
}
