import BluetoothCrypto

/// The custom firmware for Telink thermometers (LYWSD03MMC and kin), service data 0x181A,
/// told apart by length (pvvx/ATC_MiThermometer README, "Bluetooth Advertising Formats"):
///
/// - 13 octets, `atc1441`: MAC (most significant first), temperature (int16, 0.1 °C),
///   humidity (%), battery (%), battery (mV), frame counter; multi-octet values big-endian.
/// - 15 octets, `pvvx` custom: MAC (least significant first), temperature (int16, 0.01 °C),
///   humidity (0.01 %), battery (mV), battery (%), counter, flags; little-endian.
/// - 11 octets, `pvvx` encrypted: a counter, 6 octets of AES-CCM ciphertext (temperature,
///   humidity, battery %, flags as above), a 4-octet MIC.
/// - 8 octets, `atc1441` encrypted: a counter, 3 octets of ciphertext (temperature in
///   0.5 °C above −40 °C, humidity in 0.5 %, the trigger flag and battery %), a MIC.
///
/// The encrypted forms' nonce is the MAC as sent (least significant first), the AD
/// structure's first four octets (length, 0x16, 0x1A 0x18) and the counter; one octet 0x11
/// of associated data (the firmware's python-interface codec).
enum ThermometerFirmware {
    static func decode(_ input: AdvertisementInput) throws(AdvertisementError) -> DecodedAdvertisement? {
        guard let payload = input.serviceData(0x181A) else { return nil }
        switch payload.count {
        case 13: return atc1441(payload)
        case 15: return pvvx(payload)
        case 11, 8: return try encrypted(payload, input)
        default: return nil
        }
    }

    private static func atc1441(_ p: [UInt8]) -> DecodedAdvertisement {
        var collector = ValueCollector()
        collector.add("temperature", .scaled(Bytes.beSigned(p[6..<8]), exponent: -1))
        collector.add("humidity", .integer(p[8]))
        collector.add("battery", .integer(p[9]))
        collector.add("voltage", .scaled(Bytes.be(p[10..<12]), exponent: -3))
        collector.add("packet_counter", .integer(p[12]))
        collector.addExtra("mac", .string(Bytes.address(p[0..<6])))
        return collector.finished("atc1441")
    }

    private static func pvvx(_ p: [UInt8]) -> DecodedAdvertisement {
        var collector = ValueCollector()
        collector.add("temperature", .scaled(Bytes.leSigned(p[6..<8]), exponent: -2))
        collector.add("humidity", .scaled(Bytes.le(p[8..<10]), exponent: -2))
        collector.add("voltage", .scaled(Bytes.le(p[10..<12]), exponent: -3))
        collector.add("battery", .integer(p[12]))
        collector.add("packet_counter", .integer(p[13]))
        collector.addExtra("mac", .string(Bytes.address(p[0..<6].reversed())))
        addFlags(p[14], to: &collector)
        return collector.finished("pvvx")
    }

    /// The flags octet: bit 0 the reed switch input, bit 1 the trigger output's value, bit 2
    /// the output under threshold control, bits 3 and 4 the temperature and humidity triggers.
    private static func addFlags(_ flags: UInt8, to collector: inout ValueCollector) {
        collector.addExtra("flags", .integer(flags))
        collector.addExtra("reed_switch", .bool(flags & 0x01 != 0))
        collector.addExtra("trigger_output", .bool(flags & 0x02 != 0))
    }

    private static func encrypted(_ p: [UInt8], _ input: AdvertisementInput) throws(AdvertisementError)
        -> DecodedAdvertisement
    {
        let format = p.count == 11 ? "pvvx" : "atc1441"
        let key = try input.requireKey(format)
        let mac = try input.requireAddress(format)
        let header: [UInt8] = [UInt8(p.count + 3), 0x16, 0x1A, 0x18]
        let nonce = Array(mac.reversed()) + header + [p[0]]
        guard
            let plain = aesCCMDecrypt(
                key: key, nonce: nonce, ciphertext: Array(p[1..<(p.count - 4)]), tag: Array(p.suffix(4)),
                associatedData: [0x11])
        else {
            throw .authenticationFailed(format: format)
        }
        var collector = ValueCollector()
        if p.count == 11 {
            collector.add("temperature", .scaled(Bytes.leSigned(plain[0..<2]), exponent: -2))
            collector.add("humidity", .scaled(Bytes.le(plain[2..<4]), exponent: -2))
            collector.add("battery", .integer(plain[4]))
            addFlags(plain[5], to: &collector)
        } else {
            // Half degrees above −40 °C and half percent: ×5 ×10^-1.
            collector.add("temperature", .scaled(Int64(plain[0]) * 5 - 400, exponent: -1))
            collector.add("humidity", .scaled(Int64(plain[1]), multiplier: 5, exponent: -1))
            collector.add("battery", .integer(plain[2] & 0x7F))
            collector.addExtra("trigger_output", .bool(plain[2] & 0x80 != 0))
        }
        collector.add("packet_counter", .integer(p[0]))
        collector.addExtra("encrypted", .bool(true))
        return collector.finished(format)
    }
}
