/// Qingping (ClearGrass) sensors, service data 0xFDCD, as the community documents it: a
/// frame control octet, the device type, the MAC (least significant octet first), then
/// objects: an id, a length, little-endian data. A new object is a row of ``objects``.
enum Qingping {
    static let format = "qingping"

    /// What an object id carries.
    enum ObjectKind: Sendable {
        /// Numbers, one after another.
        case fields([NumericField])
        /// A state octet.
        case binary(String)
        /// Motion (one octet), then the illuminance in 3 octets.
        case motionWithIlluminance
    }

    private static func f(_ name: String, _ width: Int, signed: Bool = false, _ exponent: Int = 0) -> NumericField {
        NumericField(name, width: width, signed: signed, exponent: exponent)
    }

    static let objects: [UInt8: ObjectKind] = [
        0x01: .fields([f("temperature", 2, signed: true, -1), f("humidity", 2, -1)]),  // °C, %
        0x02: .fields([f("battery", 1)]),  // %
        0x07: .fields([f("pressure", 2, -1)]),  // hPa
        0x08: .motionWithIlluminance,  // lx
        0x09: .fields([f("illuminance", 4)]),  // lx
        0x0F: .fields([f("packet_counter", 1)]),
        0x11: .binary("light"),
        0x12: .fields([f("pm25", 2), f("pm10", 2)]),  // µg/m³
        0x13: .fields([f("co2", 2)]),  // ppm
    ]

    /// Device types and model names.
    static let models: [UInt8: String] = [
        0x01: "CGG1", 0x07: "CGG1", 0x09: "CGP1W", 0x0C: "CGD1", 0x0E: "CGDN1", 0x12: "CGPR1", 0x18: "CGP23W",
        0x24: "CGDN1", 0x33: "CGP22C", 0x5D: "CGP22C",
    ]

    static func decode(_ input: AdvertisementInput) throws(AdvertisementError) -> DecodedAdvertisement? {
        guard let payload = input.serviceData(0xFDCD) else { return nil }
        guard payload.count >= 8 else {
            throw .malformed(format: format, reason: "\(payload.count) byte(s), at least 8 needed")
        }
        var collector = ValueCollector()
        collector.addExtra("device_type", .integer(payload[1]))
        if let model = models[payload[1]] { collector.addExtra("model", .string(model)) }
        collector.addExtra("mac", .string(Bytes.address(payload[2..<8].reversed())))
        var index = 8
        while index < payload.count {
            guard index + 2 <= payload.count else {
                throw .malformed(format: format, reason: "an object header runs past the end")
            }
            let id = payload[index], length = Int(payload[index + 1])
            guard index + 2 + length <= payload.count else {
                throw .malformed(
                    format: format,
                    reason: "object \(hexByte(id)) claims \(length) byte(s), \(payload.count - index - 2) left")
            }
            let data = payload[(index + 2)..<(index + 2 + length)]
            index += 2 + length
            switch objects[id] {
            case let .fields(fields)?:
                var start = data.startIndex
                for field in fields where start + field.width <= data.endIndex {
                    collector.add(field.name, field.value(data[start..<(start + field.width)]))
                    start += field.width
                }
            case let .binary(name)?:
                if let state = data.first { collector.add(name, .bool(state != 0)) }
            case .motionWithIlluminance?:
                guard data.count >= 4 else { continue }
                collector.add("motion", .bool(data[data.startIndex] != 0))
                collector.add("illuminance", .integer(Bytes.le(data.dropFirst().prefix(3))))
            case nil:
                collector.addExtra("object_" + Bytes.hex([id]), .string(Bytes.hex(data)))
            }
        }
        return collector.finished(format)
    }
}
