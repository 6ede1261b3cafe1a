import Advertisements
import BluetoothCore

extension FuzzTarget {
    /// The advertiser every input is decoded for, and its key: those of the pvvx firmware's
    /// published samples (Fuzz/Corpus/advertisements), so its encrypted frames decrypt.
    static let advertiser = BluetoothAddress("A4:C1:38:AA:BB:CC")!
    static let advertiserKey = [UInt8](repeating: 0xAA, count: 16)

    /// Sensor and beacon advertisements: advertising data through every format's decoder
    /// (`bluejay adv decode`). The same bytes must decode the same way twice, and the line
    /// the command prints for them must be one JSON object on one line, naming the address.
    static let advertisements = FuzzTarget(
        name: "advertisements",
        summary: "the sensor and beacon decoders of bluejay adv decode (BTHome, MiBeacon, pvvx, Ruuvi, …), with a key",
        run: { bytes throws(FuzzFailure) in
            let first = try? AdvertisementDecoder.decode(
                bytes: bytes, address: FuzzTarget.advertiser, key: FuzzTarget.advertiserKey)
            let second = try? AdvertisementDecoder.decode(
                bytes: bytes, address: FuzzTarget.advertiser, key: FuzzTarget.advertiserKey)
            try expect(
                first == second,
                "decoding \(bytes.hexDump) twice gave \(String(describing: first)) and \(String(describing: second))")
            let address = FuzzTarget.advertiser
            let line =
                AdvertisementLine.decode("\(address) \(bytes.hexString()) \(FuzzTarget.advertiserKey.hexString())")
                ?? ""
            try expect(
                line.hasPrefix("{\"address\":\"\(address)\",") && line.hasSuffix("}") && !line.contains("\n"),
                "the line for \(bytes.hexDump) is not one JSON object: \(line)")
            return first == nil ? 0 : 1
        },
        // Traces rarely hold sensors; the seeds are the published examples under Fuzz/Corpus.
        seeds: { _, _ in [] },
        maximumLength: 254)
}
