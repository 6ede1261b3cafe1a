/// SwitchBot, service data 0xFD3D (0x0D00 before Meter firmware 2.7), as OpenWonderLabs'
/// SwitchBotAPI-BLE describes it: octet 0 is the device type in bits 0–6 (bit 7 set: the
/// sensors' encrypted form), octet 1 status, octet 2 the battery (%) in bits 0–6, then the
/// type's own octets. Decoded: the Meter (`T`, `t` in pairing mode) and Meter Plus (`i`), the
/// Contact Sensor (`d`, `D` in pairing mode) and the Motion Sensor (`s`, `S`).
enum SwitchBot {
    static let format = "switchbot"

    static func decode(_ input: AdvertisementInput) throws(AdvertisementError) -> DecodedAdvertisement? {
        guard let data = input.serviceData(0xFD3D) ?? input.serviceData(0x0D00), let first = data.first else {
            return nil
        }
        let type = first & 0x7F
        let models: [UInt8: String] = [
            0x54: "meter", 0x74: "meter", 0x69: "meter_plus", 0x64: "contact_sensor", 0x44: "contact_sensor",
            0x73: "motion_sensor", 0x53: "motion_sensor",
        ]
        guard let model = models[type] else { return nil }
        // Bit 7 says «encrypted» on the contact and motion sensors; the Meter's page calls it reserved.
        guard first & 0x80 == 0 || model.hasPrefix("meter") else {
            throw .unsupported(format: format, reason: "encrypted SwitchBot advertisements are not decoded")
        }
        let needed = model == "contact_sensor" ? 9 : 6
        guard data.count >= needed else {
            throw .malformed(format: format, reason: "\(model): \(data.count) byte(s), \(needed) needed")
        }
        var collector = ValueCollector()
        collector.addExtra("model", .string(model))
        collector.add("battery", .integer(data[2] & 0x7F))
        switch model {
        case "meter", "meter_plus":
            // Octet 3: tenths in bits 0–3; octet 4: whole degrees in bits 0–6, bit 7 set above
            // zero; octet 5: humidity in bits 0–6, bit 7 set when the display shows °F.
            let tenths = Int64(data[4] & 0x7F) * 10 + Int64(data[3] & 0x0F)
            collector.add("temperature", .scaled(data[4] & 0x80 != 0 ? tenths : -tenths, exponent: -1))
            collector.add("humidity", .integer(data[5] & 0x7F))
            collector.addExtra("fahrenheit_display", .bool(data[5] & 0x80 != 0))
        case "contact_sensor":
            // Octet 3: bit 0 light, bits 1–2 the door (0 closed, 1 open, 2 open too long),
            // bits 6 and 7 the top bits of the two times; octets 4–5 seconds since motion,
            // 6–7 since the door changed; octet 8 counters.
            collector.add("motion", .bool(data[1] & 0x40 != 0))
            let door = (data[3] >> 1) & 0x03
            let doors: [UInt8: String] = [0: "closed", 1: "open", 2: "timeout_not_closed"]
            collector.add("opening", doors[door] == nil ? .null : .bool(door != 0))
            collector.addExtra("door", .string(doors[door] ?? "unknown_\(door)"))
            collector.add("light", .bool(data[3] & 0x01 != 0))
            collector.addExtra("seconds_since_motion", .integer(Int64(data[3] >> 7) << 16 | Bytes.be(data[4..<6])))
            collector.addExtra(
                "seconds_since_door_change", .integer(Int64((data[3] >> 6) & 1) << 16 | Bytes.be(data[6..<8])))
            collector.addExtra("entrance_count", .integer(data[8] >> 6))
            collector.addExtra("exit_count", .integer((data[8] >> 4) & 0x03))
            collector.addExtra("button_count", .integer(data[8] & 0x0F))
        default:
            // Octets 3–4 seconds since motion (bit 7 of octet 5 above them); octet 5: bits
            // 0–1 light (1 dark, 2 bright), bits 2–3 sensing distance, bit 4 IoT, bit 5 LED.
            collector.add("motion", .bool(data[1] & 0x40 != 0))
            collector.addExtra("seconds_since_motion", .integer(Int64(data[5] >> 7) << 16 | Bytes.be(data[3..<5])))
            let light = data[5] & 0x03
            collector.add("light", light == 2 ? .bool(true) : light == 1 ? .bool(false) : .null)
            let distances: [UInt8: String] = [0: "long", 1: "middle", 2: "short"]
            collector.addExtra("sensing_distance", .string(distances[(data[5] >> 2) & 0x03] ?? "reserved"))
            collector.addExtra("led", .bool(data[5] & 0x20 != 0))
        }
        return collector.finished(format)
    }
}
