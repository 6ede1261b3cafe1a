/// Compact JSON text, written by hand so the module needs no Foundation. Written as UTF-8
/// bytes, with no String made per member: a gateway writes one object per decoded
/// advertisement, thousands a second.
public enum JSONText {
    /// Appends `value` to `text`: objects with sorted keys, no spaces.
    public static func write(_ value: AdvertisementValue, to text: inout String) {
        var bytes: [UInt8] = []
        write(value, to: &bytes)
        text += String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `value` to `bytes` as UTF-8: objects with sorted keys, no spaces.
    public static func write(_ value: AdvertisementValue, to bytes: inout [UInt8]) {
        switch value {
        case let .number(number): number.write(to: &bytes)
        case let .bool(flag): bytes.append(contentsOf: (flag ? "true" : "false").utf8)
        case let .string(string): writeQuoted(string, to: &bytes)
        case .null: bytes.append(contentsOf: "null".utf8)
        case let .object(members):
            bytes.append(UInt8(ascii: "{"))
            for (index, member) in members.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                writeQuoted(member.key, to: &bytes)
                bytes.append(UInt8(ascii: ":"))
                write(member.value, to: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// `string` as a JSON string: quotes, backslashes and control characters escaped, the
    /// rest as UTF-8.
    public static func quoted(_ string: String) -> String {
        var bytes: [UInt8] = []
        writeQuoted(string, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends ``quoted(_:)``'s text as UTF-8. Byte by byte: every character escaped is
    /// ASCII, and the octets of a longer UTF-8 sequence are all 0x80 or above, copied.
    public static func writeQuoted(_ string: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): bytes.append(contentsOf: #"\\"#.utf8)
            case UInt8(ascii: "\n"): bytes.append(contentsOf: #"\n"#.utf8)
            case UInt8(ascii: "\r"): bytes.append(contentsOf: #"\r"#.utf8)
            case UInt8(ascii: "\t"): bytes.append(contentsOf: #"\t"#.utf8)
            case 0..<0x20, 0x7F:
                let digits: [UInt8] = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: #"\u00"#.utf8)
                bytes.append(digits[Int(byte >> 4)])
                bytes.append(digits[Int(byte & 0x0F)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
