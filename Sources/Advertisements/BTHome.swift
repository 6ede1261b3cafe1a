import BluetoothCrypto

/// BTHome (bthome.io): v2 in service data 0xFCD2 (a device information octet, then objects:
/// an id and a value whose width the id fixes), v1 in 0x181C, encrypted in 0x181E (each
/// object with a length-and-format octet). Encrypted payloads are AES-CCM with a 4-octet
/// MIC: v2's nonce is the MAC, the UUID as sent, the device information octet and the
/// counter (bthome.io/encryption); v1's the MAC, the UUID and the counter, with one octet
/// 0x11 of associated data.
enum BTHome {
    static let v2Format = "bthome-v2", v1Format = "bthome-v1"

    /// BTHome v2, service data 0xFCD2.
    static func decodeV2(_ input: AdvertisementInput) throws(AdvertisementError) -> DecodedAdvertisement? {
        guard let payload = input.serviceData(0xFCD2) else { return nil }
        guard let info = payload.first else { throw .malformed(format: v2Format, reason: "no device information byte") }
        guard info >> 5 == 2 else {
            throw .unsupported(
                format: v2Format, reason: "the device information byte says BTHome version \(info >> 5), not 2")
        }
        var collector = ValueCollector()
        var objects = Array(payload.dropFirst())
        if info & 0x01 != 0 {
            let key = try input.requireKey(v2Format)
            let mac = try input.requireAddress(v2Format)
            guard objects.count >= 8 else {
                throw .malformed(
                    format: v2Format, reason: "an encrypted payload needs a 4-byte counter and a 4-byte MIC")
            }
            let counter = Array(objects[(objects.count - 8)..<(objects.count - 4)])
            let nonce = mac + [0xD2, 0xFC, info] + counter
            guard
                let plaintext = aesCCMDecrypt(
                    key: key, nonce: nonce, ciphertext: Array(objects.dropLast(8)),
                    tag: Array(objects.suffix(4)))
            else {
                throw .authenticationFailed(format: v2Format)
            }
            objects = plaintext
            collector.addExtra("encrypted", .bool(true))
            collector.addExtra("encryption_counter", .integer(Bytes.le(counter)))
        }
        if info & 0x04 != 0 { collector.addExtra("trigger_based", .bool(true)) }
        try parseV2Objects(objects, into: &collector)
        return collector.finished(v2Format)
    }

    /// v2 objects: an id, then as many octets as the id says.
    static func parseV2Objects(_ bytes: [UInt8], into collector: inout ValueCollector) throws(AdvertisementError) {
        var index = 0
        while index < bytes.count {
            let id = bytes[index]
            index += 1
            guard let kind = BTHomeObjects.table[id] else {
                // The spec: a receiver stops at the first object id it does not know.
                collector.addExtra("unknown_object", .string(hexByte(id)))
                return
            }
            let value: ArraySlice<UInt8>
            if let width = kind.fixedWidth {
                guard index + width <= bytes.count else {
                    throw .malformed(
                        format: v2Format,
                        reason: "object \(hexByte(id)) needs \(width) byte(s), \(bytes.count - index) left")
                }
                value = bytes[index..<(index + width)]
                index += width
            } else {
                guard index < bytes.count else {
                    throw .malformed(format: v2Format, reason: "object \(hexByte(id)) has no length byte")
                }
                // Text and raw: a length octet. A command: its arguments' length in the low
                // five bits, then the opcode and the arguments.
                let length = Int(kind.isCommand ? (bytes[index] & 0x1F) + 1 : bytes[index])
                guard index + 1 + length <= bytes.count else {
                    throw .malformed(
                        format: v2Format,
                        reason: "object \(hexByte(id)) claims \(length) byte(s), \(bytes.count - index - 1) left")
                }
                value = bytes[(index + 1)..<(index + 1 + length)]
                index += 1 + length
            }
            add(kind, value, to: &collector)
        }
    }

    /// One object's value, however its width was found.
    static func add(_ kind: BTHomeObjectKind, _ value: ArraySlice<UInt8>, to collector: inout ValueCollector) {
        switch kind {
        case let .number(field): collector.add(field.name, field.value(value))
        case let .binary(name): collector.add(name, .bool(value.first.map { $0 != 0 } ?? false))
        case .button:
            let event = value.first ?? 0
            if event == 0 {
                collector.claim("button")
            } else {
                collector.add("button", .string(BTHomeObjects.buttonEvents[event] ?? "unknown_\(hexByte(event))"))
            }
        case .dimmer:
            let event = value.first ?? 0
            let key = collector.claim("event")
            if event != 0 {
                collector.set(key, .string(BTHomeObjects.dimmerEvents[event] ?? "unknown_\(hexByte(event))"))
                collector.set("steps" + key.dropFirst("event".count), .integer(value.dropFirst().first ?? 0))
            }
        case .command:
            guard let opcode = value.first else { return }
            collector.add("command", .string(BTHomeObjects.commands[opcode] ?? "unknown_\(hexByte(opcode))"))
            if value.count > 1 { collector.addExtra("command_arguments", .string(Bytes.hex(value.dropFirst()))) }
        case .text: collector.add("text", .string(String(decoding: value, as: UTF8.self)))
        case .raw: collector.add("raw", .string(Bytes.hex(value)))
        case .deviceTypeID: collector.addExtra("device_type_id", .integer(Bytes.le(value)))
        case .firmware:
            collector.addExtra("firmware_version", .string(value.reversed().map(String.init).joined(separator: ".")))
        }
    }

    /// BTHome v1: service data 0x181C, or 0x181E encrypted.
    static func decodeV1(_ input: AdvertisementInput) throws(AdvertisementError) -> DecodedAdvertisement? {
        var collector = ValueCollector()
        var objects: [UInt8]
        if let plain = input.serviceData(0x181C) {
            objects = plain
        } else if let sealed = input.serviceData(0x181E) {
            let key = try input.requireKey(v1Format)
            let mac = try input.requireAddress(v1Format)
            guard sealed.count >= 8 else {
                throw .malformed(
                    format: v1Format, reason: "an encrypted payload needs a 4-byte counter and a 4-byte MIC")
            }
            let counter = Array(sealed[(sealed.count - 8)..<(sealed.count - 4)])
            guard
                let plaintext = aesCCMDecrypt(
                    key: key, nonce: mac + [0x1E, 0x18] + counter, ciphertext: Array(sealed.dropLast(8)),
                    tag: Array(sealed.suffix(4)), associatedData: [0x11])
            else {
                throw .authenticationFailed(format: v1Format)
            }
            objects = plaintext
            collector.addExtra("encrypted", .bool(true))
            collector.addExtra("encryption_counter", .integer(Bytes.le(counter)))
        } else {
            return nil
        }
        try parseV1Objects(objects, into: &collector)
        return collector.finished(v1Format)
    }

    /// v1 objects: an octet of format (bits 5–7: 0 unsigned, 1 signed, 2 float, 3 string,
    /// 4 MAC) and length (bits 0–4, the octets after it), the object id, the value.
    static func parseV1Objects(_ bytes: [UInt8], into collector: inout ValueCollector) throws(AdvertisementError) {
        var index = 0
        while index < bytes.count {
            let header = bytes[index]
            let length = Int(header & 0x1F), format = header >> 5
            guard length >= 1, index + 1 + length <= bytes.count else {
                throw .malformed(
                    format: v1Format,
                    reason: "object at offset \(index) claims \(length) byte(s), \(bytes.count - index - 1) left")
            }
            let id = bytes[index + 1]
            let value = bytes[(index + 2)..<(index + 1 + length)]
            index += 1 + length
            switch format {
            case 3:
                collector.add(
                    id == 0x54 ? "raw" : "text",
                    id == 0x54 ? .string(Bytes.hex(value)) : .string(String(decoding: value, as: UTF8.self)))
                continue
            case 4:
                if value.count == 6 { collector.addExtra("mac", .string(Bytes.address(value.reversed()))) }
                continue
            default: break
            }
            guard let kind = BTHomeObjects.table[id] else {
                collector.addExtra("unknown_object", .string(hexByte(id)))
                continue
            }
            switch kind {
            case let .number(field):
                if format == 2 {
                    guard let float = floatValue(value) else {
                        throw .malformed(
                            format: v1Format, reason: "object \(hexByte(id)): a float of \(value.count) byte(s)")
                    }
                    collector.add(
                        field.name,
                        .number(DecimalNumber(rounding: float * scale(field), places: max(2, -field.exponent))))
                } else {
                    guard (1...8).contains(value.count) else {
                        throw .malformed(
                            format: v1Format, reason: "object \(hexByte(id)): an integer of \(value.count) byte(s)")
                    }
                    let raw = Bytes.integer(value, signed: format == 1, littleEndian: true)
                    collector.add(field.name, .scaled(raw, multiplier: field.multiplier, exponent: field.exponent))
                }
            default:
                add(kind, value, to: &collector)
            }
        }
    }

    private static func floatValue(_ bytes: ArraySlice<UInt8>) -> Double? {
        switch bytes.count {
        case 4: Double(Float(bitPattern: UInt32(truncatingIfNeeded: Bytes.le(bytes))))
        case 8: Double(bitPattern: UInt64(bitPattern: Bytes.le(bytes)))
        default: nil
        }
    }

    private static func scale(_ field: NumericField) -> Double {
        AdvertisementValue.scaled(1, multiplier: field.multiplier, exponent: field.exponent).doubleValue ?? 1
    }
}

extension BTHomeObjectKind {
    var isCommand: Bool { if case .command = self { true } else { false } }
}

/// `0x3a`.
func hexByte(_ byte: UInt8) -> String { "0x" + Bytes.hex([byte]) }
