import BluetoothCrypto

/// Xiaomi MiBeacon, service data 0xFE95 (Xiaomi's "MiBeacon protocol" and "BLE Object
/// definition" documents, MiEcosystem/miio_open): a frame control word, the product id, a
/// frame counter, then as the control word says the MAC (least significant octet first),
/// a capability octet (and two octets of I/O capability when its bit 5 is set) and objects:
/// a 16-bit type, a length octet, the data. Versions 4 and 5 encrypt the objects with
/// AES-CCM under the device's bindkey: the nonce is the MAC as sent, the product id, the
/// frame counter and a 3-octet counter sent after the objects, then a 4-octet MIC; one
/// octet 0x11 of associated data. Mi Flora (HHCCJCY01) is a MiBeacon device: its moisture,
/// conductivity, illuminance and temperature are objects 0x1008, 0x1009, 0x1007, 0x1004.
enum MiBeacon {
    static let format = "mibeacon"

    /// What an object type carries.
    enum ObjectKind: Sendable {
        /// Numbers, one after another.
        case fields([NumericField])
        /// A little-endian IEEE float (the v5 «spec» objects), rounded to two places.
        case float(String)
        /// A state octet, 0 or 1.
        case binary(String)
        /// 0x1001: a 2-octet button index, then 0 press, 1 double press, 2 long press.
        case button
        /// 0x0007, 0x100F, 0x1019: a door's state octet.
        case door([UInt8: String])
        /// 0x000F: motion, with the illuminance in 3 octets.
        case motionWithIlluminance
        /// 0x1017, 0x101B: seconds without motion, 4 octets (0: motion now).
        case noMotionTime
    }

    private static func f(_ name: String, _ width: Int, signed: Bool = false, _ exponent: Int = 0) -> NumericField {
        NumericField(name, width: width, signed: signed, exponent: exponent)
    }

    /// Object types (Xiaomi's object definition; 0x100D, 0x1014–0x101B and the v5 «spec»
    /// objects 0x4803, 0x4C01, 0x4C02, 0x4C08 as sensors send them).
    static let objects: [UInt16: ObjectKind] = [
        0x0007: .door([
            0x00: "open", 0x01: "closed", 0x02: "timeout_not_closed", 0x03: "knock", 0x04: "pried", 0x05: "stuck",
        ]),
        0x000F: .motionWithIlluminance,
        0x1001: .button,
        0x1004: .fields([f("temperature", 2, signed: true, -1)]),  // °C
        0x1006: .fields([f("humidity", 2, -1)]),  // %
        0x1007: .fields([f("illuminance", 3)]),  // lx
        0x1008: .fields([f("moisture", 1)]),  // %
        0x1009: .fields([f("conductivity", 2)]),  // µS/cm
        0x100A: .fields([f("battery", 1)]),  // %
        0x100D: .fields([f("temperature", 2, signed: true, -1), f("humidity", 2, -1)]),
        0x100F: .door([0x00: "open", 0x01: "closed"]),
        0x1010: .fields([f("formaldehyde", 2, -2)]),  // mg/m³
        0x1012: .binary("power_on"),
        0x1013: .fields([f("consumable", 1)]),  // %
        0x1014: .binary("moisture_detected"),
        0x1015: .binary("smoke"),
        0x1017: .noMotionTime,
        0x1018: .binary("light"),
        0x1019: .door([0x00: "open", 0x01: "closed", 0x02: "timeout_not_closed", 0x03: "device_reset"]),
        0x101B: .noMotionTime,
        0x4803: .fields([f("battery", 1)]),
        0x4C01: .float("temperature"),
        0x4C02: .fields([f("humidity", 1)]),
        0x4C08: .float("humidity"),
    ]

    /// Product ids and model names (the ids the pvvx firmware and Xiaomi's own devices send).
    static let products: [UInt16: String] = [
        0x0098: "HHCCJCY01", 0x015D: "HHCCPOT002", 0x01AA: "LYWSDCGQ", 0x02DF: "JQJCY01YM", 0x0347: "CGG1",
        0x0387: "MHO-C401", 0x03BC: "GCLS002", 0x040A: "WX08ZM", 0x045B: "LYWSD02", 0x055B: "LYWSD03MMC",
        0x0576: "CGD1", 0x066F: "CGDK2", 0x06D3: "MHO-C303", 0x07F6: "MJYD02YL", 0x0863: "SJWS01LM",
        0x098B: "MCCGQ02HL", 0x0B48: "CGG1",
    ]

    static func decode(_ input: AdvertisementInput) throws(AdvertisementError) -> DecodedAdvertisement? {
        guard let payload = input.serviceData(0xFE95) else { return nil }
        guard payload.count >= 5 else {
            throw .malformed(format: format, reason: "\(payload.count) byte(s), at least 5 needed")
        }
        let control = UInt16(payload[0]) | UInt16(payload[1]) << 8
        let version = Int(control >> 12)
        let productID = UInt16(Bytes.le(payload[2..<4]))
        let frameCounter = payload[4]
        var collector = ValueCollector()
        collector.addExtra("product_id", .string(String(format4: productID)))
        if let model = products[productID] { collector.addExtra("model", .string(model)) }
        collector.add("packet_counter", .integer(frameCounter))
        var index = 5
        func take(_ count: Int, _ what: String) throws(AdvertisementError) -> ArraySlice<UInt8> {
            guard index + count <= payload.count else {
                throw .malformed(format: format, reason: "the \(what) runs past the end")
            }
            defer { index += count }
            return payload[index..<(index + count)]
        }
        var mac: [UInt8]?  // least significant octet first, as sent
        if control & 0x10 != 0 {
            mac = Array(try take(6, "MAC"))
            collector.addExtra("mac", .string(Bytes.address(mac!.reversed())))
        }
        if control & 0x20 != 0, let capability = try take(1, "capability").first, capability & 0x20 != 0 {
            _ = try take(2, "I/O capability")
        }
        guard control & 0x40 != 0 else { return collector.finished(format) }
        var objects = Array(payload[index...])
        if control & 0x08 != 0 {
            guard version >= 4 else {
                throw .unsupported(
                    format: format, reason: "MiBeacon v\(version) legacy encryption is not decoded (only v4 and v5)")
            }
            let key = try input.requireKey(format)
            let nonceMAC: [UInt8]
            if let mac { nonceMAC = mac } else { nonceMAC = Array(try input.requireAddress(format).reversed()) }
            guard objects.count >= 7 else {
                throw .malformed(format: format, reason: "an encrypted payload needs a 3-byte counter and a 4-byte MIC")
            }
            let counter = Array(objects[(objects.count - 7)..<(objects.count - 4)])
            let nonce = nonceMAC + Array(payload[2..<4]) + [frameCounter] + counter
            guard
                let plaintext = aesCCMDecrypt(
                    key: key, nonce: nonce, ciphertext: Array(objects.dropLast(7)),
                    tag: Array(objects.suffix(4)), associatedData: [0x11])
            else {
                throw .authenticationFailed(format: format)
            }
            objects = plaintext
            collector.addExtra("encrypted", .bool(true))
        }
        try parseObjects(objects, into: &collector)
        return collector.finished(format)
    }

    /// Objects: a 16-bit type, a length, the data.
    static func parseObjects(_ bytes: [UInt8], into collector: inout ValueCollector) throws(AdvertisementError) {
        var index = 0
        while index < bytes.count {
            guard index + 3 <= bytes.count else {
                throw .malformed(format: format, reason: "an object header runs past the end")
            }
            let type = UInt16(bytes[index]) | UInt16(bytes[index + 1]) << 8
            let length = Int(bytes[index + 2])
            guard index + 3 + length <= bytes.count else {
                throw .malformed(
                    format: format,
                    reason: "object \(String(format4: type)) claims \(length) byte(s), \(bytes.count - index - 3) left")
            }
            let data = bytes[(index + 3)..<(index + 3 + length)]
            index += 3 + length
            guard let kind = objects[type] else {
                collector.addExtra(
                    "object_" + Bytes.hex([UInt8(type >> 8), UInt8(type & 0xFF)]), .string(Bytes.hex(data)))
                continue
            }
            add(kind, data, to: &collector)
        }
    }

    private static func add(_ kind: ObjectKind, _ data: ArraySlice<UInt8>, to collector: inout ValueCollector) {
        switch kind {
        case let .fields(fields):
            var start = data.startIndex
            for field in fields where start + field.width <= data.endIndex {
                collector.add(field.name, field.value(data[start..<(start + field.width)]))
                start += field.width
            }
        case let .float(name):
            guard data.count == 4 else { return }
            let value = Float(bitPattern: UInt32(truncatingIfNeeded: Bytes.le(data)))
            collector.add(name, .number(DecimalNumber(rounding: Double(value), places: 2)))
        case let .binary(name):
            if let state = data.first { collector.add(name, .bool(state != 0)) }
        case .button:
            guard data.count >= 3 else { return }
            let presses: [UInt8: String] = [0x00: "press", 0x01: "double_press", 0x02: "long_press"]
            let press = data[data.startIndex + 2]
            collector.add("button", .string(presses[press] ?? "unknown_\(hexByte(press))"))
            collector.addExtra("button_index", .integer(Bytes.le(data.prefix(2))))
        case let .door(states):
            guard let state = data.first else { return }
            // Open unless closed; a state the table does not name is «not available».
            collector.add("opening", state == 0x01 ? .bool(false) : states[state] == nil ? .null : .bool(true))
            collector.addExtra("door", .string(states[state] ?? "unknown_\(hexByte(state))"))
        case .motionWithIlluminance:
            collector.add("motion", .bool(true))
            if data.count >= 3 { collector.add("illuminance", .integer(Bytes.le(data.prefix(3)))) }
        case .noMotionTime:
            guard data.count >= 4 else { return }
            let seconds = Bytes.le(data.prefix(4))
            collector.add("motion", .bool(seconds == 0))
            collector.addExtra("no_motion_time", .integer(seconds))
        }
    }
}

extension String {
    /// `0x055b`: a 16-bit identifier as four hex digits.
    init(format4 value: UInt16) {
        self = "0x" + Bytes.hex([UInt8(value >> 8), UInt8(value & 0xFF)])
    }
}
