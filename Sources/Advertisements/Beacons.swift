/// iBeacon (Apple's Proximity Beacon specification): manufacturer data of Apple (0x004C)
/// starting 0x02 0x15, then the proximity UUID, major and minor (big-endian) and the
/// measured power at 1 m (signed dBm).
enum IBeacon {
    static func decode(_ input: AdvertisementInput) throws(AdvertisementError) -> DecodedAdvertisement? {
        guard let data = input.manufacturerData(0x004C), data.count >= 2, data[0] == 0x02, data[1] == 0x15 else {
            return nil
        }
        guard data.count >= 23 else { throw .malformed(format: "ibeacon", reason: "\(data.count) byte(s), 23 needed") }
        let hex = Bytes.hex(data[2..<18])
        let uuid = [
            hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4),
            hex.dropFirst(20),
        ].joined(separator: "-")
        return DecodedAdvertisement(
            format: "ibeacon",
            values: [
                "uuid": .string(uuid),
                "major": .integer(Bytes.be(data[18..<20])),
                "minor": .integer(Bytes.be(data[20..<22])),
                "rssi_at_1m": .integer(Int8(bitPattern: data[22])),
            ])
    }
}

/// Eddystone (google/eddystone: protocol-specification.md and each frame's page), service
/// data 0xFEAA: the frame type, then UID (0x00: TX power at 0 m, 10-octet namespace, 6-octet
/// instance), URL (0x10: TX power, scheme, the URL with its expansion codes) or TLM (0x20,
/// version 0: battery mV, temperature in signed 8.8 fixed point, advertising PDU count,
/// time since power-on in 0.1 s; all big-endian).
enum Eddystone {
    static let schemes = ["http://www.", "https://www.", "http://", "https://"]
    static let expansions = [
        ".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/",
        ".com", ".org", ".edu", ".net", ".info", ".biz", ".gov",
    ]

    static func decode(_ input: AdvertisementInput) throws(AdvertisementError) -> DecodedAdvertisement? {
        guard let frame = input.serviceData(0xFEAA), let type = frame.first else { return nil }
        switch type {
        case 0x00:
            guard frame.count >= 18 else {
                throw .malformed(format: "eddystone-uid", reason: "\(frame.count) byte(s), at least 18 needed")
            }
            return DecodedAdvertisement(
                format: "eddystone-uid",
                values: [
                    "tx_power": .integer(Int8(bitPattern: frame[1])),
                    "namespace": .string(Bytes.hex(frame[2..<12])),
                    "instance": .string(Bytes.hex(frame[12..<18])),
                ])
        case 0x10:
            guard frame.count >= 3 else { throw .malformed(format: "eddystone-url", reason: "no URL scheme byte") }
            guard Int(frame[2]) < schemes.count else {
                throw .malformed(format: "eddystone-url", reason: "URL scheme \(hexByte(frame[2])) is reserved")
            }
            var url = schemes[Int(frame[2])]
            for byte in frame[3...] {
                if Int(byte) < expansions.count {
                    url += expansions[Int(byte)]
                } else if (0x21...0x7E).contains(byte) {
                    url.unicodeScalars.append(Unicode.Scalar(byte))
                } else {
                    throw .malformed(format: "eddystone-url", reason: "URL byte \(hexByte(byte)) is reserved")
                }
            }
            return DecodedAdvertisement(
                format: "eddystone-url",
                values: [
                    "tx_power": .integer(Int8(bitPattern: frame[1])), "url": .string(url),
                ])
        case 0x20:
            guard frame.count >= 2 else { throw .malformed(format: "eddystone-tlm", reason: "no version byte") }
            guard frame[1] == 0x00 else {
                throw .unsupported(
                    format: "eddystone-tlm", reason: "TLM version \(hexByte(frame[1])) (encrypted TLM) is not decoded")
            }
            guard frame.count >= 14 else {
                throw .malformed(format: "eddystone-tlm", reason: "\(frame.count) byte(s), 14 needed")
            }
            let millivolts = Bytes.be(frame[2..<4]), temperature = Bytes.beSigned(frame[4..<6])
            return DecodedAdvertisement(
                format: "eddystone-tlm",
                values: [
                    // 0 mV: not supported. 0x8000 (−128 °C): not supported. 1/256 °C = 390625 × 10^-8.
                    "voltage": millivolts == 0 ? .null : .scaled(millivolts, exponent: -3),
                    "temperature": temperature == -32768
                        ? .null : .scaled(temperature, multiplier: 390_625, exponent: -8),
                    "extra": .object([
                        "advertising_pdu_count": .integer(Bytes.be(frame[6..<10])),
                        "uptime": .scaled(Bytes.be(frame[10..<14]), exponent: -1),
                    ]),
                ])
        default:
            throw .unsupported(
                format: "eddystone", reason: "frame type \(hexByte(type)) is not decoded (UID, URL and TLM are)")
        }
    }
}
