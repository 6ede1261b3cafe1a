/// RuuviTag, manufacturer data of company 0x0499 (docs.ruuvi.com, "Bluetooth
/// advertisements"): data format 3 (RAWv1) and 5 (RAWv2), all fields most significant octet
/// first. Format 5 marks a value «not available» with the largest unsigned or the smallest
/// signed value of its field (and a MAC of all ones); those read `null`. Format 4 is an
/// Eddystone-URL and decodes as one.
enum Ruuvi {
    static func decode(_ input: AdvertisementInput) throws(AdvertisementError) -> DecodedAdvertisement? {
        guard let data = input.manufacturerData(0x0499), let version = data.first else { return nil }
        switch version {
        case 3:
            guard data.count >= 14 else {
                throw .malformed(format: "ruuvi-v3", reason: "\(data.count) byte(s), 14 needed")
            }
            return v3(data)
        case 5:
            guard data.count >= 24 else {
                throw .malformed(format: "ruuvi-v5", reason: "\(data.count) byte(s), 24 needed")
            }
            return v5(data)
        default:
            throw .unsupported(format: "ruuvi", reason: "data format \(version) is not decoded (only 3 and 5)")
        }
    }

    /// RAWv1: humidity in 0.5 %; temperature as a sign bit, whole degrees and hundredths;
    /// pressure in Pa above 50 000; acceleration in mG; battery in mV.
    private static func v3(_ d: [UInt8]) -> DecodedAdvertisement {
        var collector = ValueCollector()
        collector.add("humidity", .scaled(Int64(d[1]), multiplier: 5, exponent: -1))
        let magnitude = Int64(d[2] & 0x7F) * 100 + Int64(d[3])
        collector.add("temperature", .scaled(d[2] & 0x80 != 0 ? -magnitude : magnitude, exponent: -2))
        collector.add("pressure", .scaled(Bytes.be(d[4..<6]) + 50_000, exponent: -2))
        for (axis, offset) in [("x", 6), ("y", 8), ("z", 10)] {
            collector.add("acceleration_" + axis, .scaled(Bytes.beSigned(d[offset..<(offset + 2)]), exponent: -3))
        }
        collector.add("voltage", .scaled(Bytes.be(d[12..<14]), exponent: -3))
        return collector.finished("ruuvi-v3")
    }

    /// RAWv2: temperature in 0.005 °C, humidity in 0.0025 %, pressure in Pa above 50 000,
    /// acceleration in mG, battery in mV above 1600 (11 bits) and TX power in 2 dBm steps
    /// above −40 dBm (5 bits), movement counter, measurement sequence number, MAC.
    private static func v5(_ d: [UInt8]) -> DecodedAdvertisement {
        var collector = ValueCollector()
        func value(_ raw: Int64, unavailable: Int64, _ make: (Int64) -> AdvertisementValue) -> AdvertisementValue {
            raw == unavailable ? .null : make(raw)
        }
        let temperature = Bytes.beSigned(d[1..<3])
        collector.add(
            "temperature", value(temperature, unavailable: -32768) { .scaled($0, multiplier: 5, exponent: -3) })
        collector.add(
            "humidity", value(Bytes.be(d[3..<5]), unavailable: 0xFFFF) { .scaled($0, multiplier: 25, exponent: -4) })
        collector.add("pressure", value(Bytes.be(d[5..<7]), unavailable: 0xFFFF) { .scaled($0 + 50_000, exponent: -2) })
        for (axis, offset) in [("x", 7), ("y", 9), ("z", 11)] {
            collector.add(
                "acceleration_" + axis,
                value(Bytes.beSigned(d[offset..<(offset + 2)]), unavailable: -32768) { .scaled($0, exponent: -3) })
        }
        let power = Bytes.be(d[13..<15])
        collector.add("voltage", value(power >> 5, unavailable: 2047) { .scaled($0 + 1600, exponent: -3) })
        collector.add("movement_counter", value(Int64(d[15]), unavailable: 0xFF) { .integer($0) })
        collector.add("packet_counter", value(Bytes.be(d[16..<18]), unavailable: 0xFFFF) { .integer($0) })
        collector.addExtra("tx_power", value(power & 0x1F, unavailable: 31) { .integer($0 * 2 - 40) })
        let mac = d[18..<24]
        collector.addExtra("mac", mac.allSatisfy { $0 == 0xFF } ? .null : .string(Bytes.address(mac)))
        return collector.finished("ruuvi-v5")
    }
}
