import BluetoothCore

/// Inkbird thermometers, as the community documents them (Inkbird publishes no format):
///
/// - IBS-TH and IBS-TH2 (local name `sps`, or `tps` for the temperature-only IBS-TH2):
///   the two octets where a company identifier belongs are the temperature (int16,
///   0.01 °C, little-endian), then humidity (0.01 %), the probe (0 internal, 1 external),
///   two octets of check value and the battery (%).
/// - ITH-11-B, ITH-13-B, ITH-21-B (company 0x2449, 16 octets, name `ITH-…` or service
///   UUID 0xFFF0 listed): temperature (int16, 0.1 °C) at 4, humidity (0.1 %) at 6, battery
///   (%) at 8.
enum Inkbird {
    static let format = "inkbird"

    static func decode(_ input: AdvertisementInput) throws(AdvertisementError) -> DecodedAdvertisement? {
        let name = input.data.localName
        if name == "sps" || name == "tps" {
            // The temperature sits where the company identifier belongs: the raw structure.
            guard let raw = input.data.structures.first(where: { $0.type == ADType.manufacturerSpecificData })?.data,
                raw.count == 9
            else { return nil }
            var collector = ValueCollector()
            collector.add("temperature", .scaled(Bytes.leSigned(raw[0..<2]), exponent: -2))
            if name == "sps" { collector.add("humidity", .scaled(Bytes.le(raw[2..<4]), exponent: -2)) }
            collector.add("battery", .integer(raw[7]))
            collector.addExtra("probe", .string(raw[4] == 1 ? "external" : "internal"))
            collector.addExtra("model", .string(name == "sps" ? "IBS-TH" : "IBS-TH2"))
            return collector.finished(format)
        }
        guard let data = input.manufacturerData(0x2449), data.count >= 9,
            name?.hasPrefix("ITH-") == true || input.data.serviceUUIDs.contains(BluetoothUUIDs.inkbird)
        else { return nil }
        var collector = ValueCollector()
        collector.add("temperature", .scaled(Bytes.leSigned(data[4..<6]), exponent: -1))
        collector.add("humidity", .scaled(Bytes.le(data[6..<8]), exponent: -1))
        collector.add("battery", .integer(data[8]))
        collector.addExtra("model", .string(name?.hasPrefix("ITH-") == true ? name! : "ITH"))
        return collector.finished(format)
    }
}
