import BluetoothCore

/// One numeric field as a format's table describes it: a name, a width, a signedness and a
/// factor. A table of these is a format's data; a new object type or model is a new row.
struct NumericField: Sendable {
    /// The value's name in `values` (`temperature`, `humidity`, …).
    let name: String
    /// Octets.
    let width: Int
    /// Two's complement when true.
    let signed: Bool
    /// The factor's digits: the value is raw × multiplier × 10^exponent (0.35 = 35, −2).
    let multiplier: Int64
    /// The factor's power of ten.
    let exponent: Int
    /// Least significant octet first (most formats), else most significant first.
    let littleEndian: Bool

    init(
        _ name: String, width: Int, signed: Bool = false, multiplier: Int64 = 1, exponent: Int = 0,
        littleEndian: Bool = true
    ) {
        (self.name, self.width, self.signed, self.multiplier, self.exponent, self.littleEndian) =
            (name, width, signed, multiplier, exponent, littleEndian)
    }

    /// The raw integer of `bytes` (exactly `width` of them).
    func raw(_ bytes: ArraySlice<UInt8>) -> Int64 {
        Bytes.integer(bytes, signed: signed, littleEndian: littleEndian)
    }

    /// The scaled value of `bytes`.
    func value(_ bytes: ArraySlice<UInt8>) -> AdvertisementValue {
        .scaled(raw(bytes), multiplier: multiplier, exponent: exponent)
    }
}

/// Integers out of byte slices.
enum Bytes {
    /// `bytes` as an integer (up to 8 octets), sign-extended from its top bit when `signed`.
    static func integer(_ bytes: some Collection<UInt8>, signed: Bool, littleEndian: Bool) -> Int64 {
        var value: UInt64 = 0
        let ordered = littleEndian ? Array(bytes.reversed()) : Array(bytes)
        for byte in ordered { value = value << 8 | UInt64(byte) }
        let bits = 8 * ordered.count
        if signed, bits > 0, bits < 64, value & (1 << UInt64(bits - 1)) != 0 {
            value |= ~UInt64(0) << UInt64(bits)
        }
        return Int64(bitPattern: value)
    }

    /// Little-endian unsigned.
    static func le(_ bytes: some Collection<UInt8>) -> Int64 { integer(bytes, signed: false, littleEndian: true) }
    /// Little-endian signed.
    static func leSigned(_ bytes: some Collection<UInt8>) -> Int64 { integer(bytes, signed: true, littleEndian: true) }
    /// Big-endian unsigned.
    static func be(_ bytes: some Collection<UInt8>) -> Int64 { integer(bytes, signed: false, littleEndian: false) }
    /// Big-endian signed.
    static func beSigned(_ bytes: some Collection<UInt8>) -> Int64 { integer(bytes, signed: true, littleEndian: false) }

    /// Lower-case hex without separators.
    static func hex(_ bytes: some Collection<UInt8>) -> String { bytes.hexString() }

    /// Six octets as an address, `AA:BB:CC:DD:EE:FF`, in the order given.
    static func address(_ bytes: some Collection<UInt8>) -> String {
        bytes.map { byte in
            let digits = String(byte, radix: 16, uppercase: true)
            return digits.count == 1 ? "0" + digits : digits
        }.joined(separator: ":")
    }
}

/// Values being collected: a name used twice gets `_2`, `_3` (BTHome's rule for several
/// measurements of one type), and vendor-specific values gather under `extra`.
struct ValueCollector {
    private(set) var values: [String: AdvertisementValue] = [:]
    private var extra: [String: AdvertisementValue] = [:]
    private var uses: [String: Int] = [:]

    /// Sets `name` (or, if taken, `name_2`, `name_3`, …) to `value`.
    mutating func add(_ name: String, _ value: AdvertisementValue) {
        values[claim(name)] = value
    }

    /// Takes the next free form of `name` without setting it (an event slot with no event).
    @discardableResult
    mutating func claim(_ name: String) -> String {
        let count = (uses[name] ?? 0) + 1
        uses[name] = count
        return count == 1 ? name : "\(name)_\(count)"
    }

    /// Sets `key` exactly, whatever was there.
    mutating func set(_ key: String, _ value: AdvertisementValue) {
        values[key] = value
    }

    /// Sets `extra.name`, numbered the same way.
    mutating func addExtra(_ name: String, _ value: AdvertisementValue) {
        var key = name, count = 1
        while extra[key] != nil {
            count += 1
            key = "\(name)_\(count)"
        }
        extra[key] = value
    }

    /// The values, with `extra` when there is any.
    func finished(_ format: String) -> DecodedAdvertisement {
        var all = values
        if !extra.isEmpty { all["extra"] = .object(extra) }
        return DecodedAdvertisement(format: format, values: all)
    }
}
