import BluetoothCore

/// The line contract of `bluejay adv decode` (docs/Gateway.md, "bluejay adv decode"): a
/// line `ADDRESS AD_HEX [KEY_HEX]` in, one JSON object out,
/// `{"address":…,"format":…,"values":{…}}` or `{"address":…,"error":…}`.
public enum AdvertisementLine {
    /// The JSON object (one line, no newline) for one input line; nil for a blank line or a
    /// comment (`#` first), which have no answer.
    public static func decode(_ line: some StringProtocol) -> String? {
        let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
        guard let first = fields.first, !first.hasPrefix("#") else { return nil }
        let addressText = String(first)
        guard fields.count == 2 || fields.count == 3 else {
            return error(addressText, "expected ADDRESS AD_HEX [KEY_HEX], got \(fields.count) field(s)")
        }
        guard let address = try? BluetoothAddress.parse(typed: addressText).address else {
            return error(addressText, "'\(addressText)' is not a Bluetooth address (AA:BB:CC:DD:EE:FF)")
        }
        let shown = address.description
        guard let bytes = hexBytes(fields[1]) else {
            return error(shown, "AD_HEX is not an even number of hex digits")
        }
        var key: [UInt8]?
        if fields.count == 3 {
            guard let parsed = hexBytes(fields[2]), parsed.count == 16 else {
                return error(shown, "KEY_HEX must be 32 hex digits (a 16-byte key)")
            }
            key = parsed
        }
        let data = AdvertisingData(parsing: bytes)
        if let problem = data.problem, data.structures.isEmpty {
            return error(shown, "malformed advertising data: \(problem)")
        }
        do throws(AdvertisementError) {
            let decoded = try AdvertisementDecoder.decode(data, address: address, key: key)
            var text =
                "{\"address\":" + JSONText.quoted(shown) + ",\"format\":" + JSONText.quoted(decoded.format)
                + ",\"values\":"
            JSONText.write(.object(decoded.values), to: &text)
            return text + "}"
        } catch {
            return Self.error(shown, error.description)
        }
    }

    private static func error(_ address: String, _ message: String) -> String {
        "{\"address\":" + JSONText.quoted(address) + ",\"error\":" + JSONText.quoted(message) + "}"
    }

    /// Hex digits, either case, an optional `0x` in front; nil for anything else or nothing.
    static func hexBytes(_ text: some StringProtocol) -> [UInt8]? {
        var digits = Substring(text)
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") { digits = digits.dropFirst(2) }
        guard !digits.isEmpty, digits.count.isMultiple(of: 2) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var high: UInt8?
        for character in digits.utf8 {
            let nibble: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = character - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = character - UInt8(ascii: "A") + 10
            default: return nil
            }
            if let value = high {
                bytes.append(value << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return bytes
    }
}
