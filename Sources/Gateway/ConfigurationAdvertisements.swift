import Bluejay
import Yams

/// How the gateway scans (`scan:`).
public enum ScanMode: String, Sendable, Equatable {
    /// Scan requests go out, so scan responses (names, more UUIDs) arrive: what finding a
    /// peripheral by `name:` needs (the default).
    case active
    /// Nothing goes out: a sensor that only broadcasts spends no energy answering, and the
    /// gateway hears advertisements alone.
    case passive

    init(_ text: String) throws(FieldError) {
        guard let mode = ScanMode(rawValue: text.lowercased()) else {
            throw FieldError("'\(text)' is not active or passive")
        }
        self = mode
    }
}

/// The decoded advertisements (docs/Gateway.md, "Decoded advertisements"): which are
/// published at `PREFIX/GATEWAY/ADDRESS/values`, how often at most, and the keys of the
/// encrypted ones.
public struct AdvertisementDecoding: Sendable, Equatable {
    /// `decode:` `all` (the default): every advertisement of a known format seen is decoded
    /// and published; `off`: none.
    public var enabled: Bool
    /// `rate_limit:` (default 1 s): the least time between two `values` of one device;
    /// nil (`off`) publishes every new packet.
    public var rateLimit: Duration?
    /// `keys: {ADDRESS: HEX}`: each encrypting device's 16-byte key (BTHome, MiBeacon's
    /// bindkey, the thermometer firmware's), by address.
    public var keys: [BluetoothAddress: [UInt8]]

    /// Decoding of every advertisement, one `values` a second per device at most, no keys.
    public init(enabled: Bool = true, rateLimit: Duration? = .seconds(1), keys: [BluetoothAddress: [UInt8]] = [:]) {
        (self.enabled, self.rateLimit, self.keys) = (enabled, rateLimit, keys)
    }

    init(_ fields: Fields) throws(ConfigurationError) {
        enabled =
            try fields.optional(
                "decode",
                { (text: String) throws(FieldError) in
                    switch text.lowercased() {
                    case "all", "on", "true", "yes": return true
                    case "off", "false", "no", "none": return false
                    default: throw FieldError("'\(text)' is not all or off")
                    }
                }) ?? true
        rateLimit =
            try fields.optional(
                "rate_limit",
                { (text: String) throws(FieldError) -> Duration? in
                    if ["off", "none", "0"].contains(text.lowercased()) { return nil }
                    return try Fields.duration(text)
                }) ?? .seconds(1)
        keys = try fields.optionalMapping("keys", Fields.addressKey("key"))
    }

    /// The keys this part of the file reads.
    static let keysRead: Set<String> = ["decode", "rate_limit", "keys"]
}
