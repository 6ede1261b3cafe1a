/// An exact decimal: `significand` × 10^`exponent`. A sensor sends integers with a scale
/// (0.01 °C, 0.005 °C, 0.35 °C); kept as such, 25.06 °C prints as `25.06`, never as
/// `25.059999999999999`.
public struct DecimalNumber: Sendable, Hashable, CustomStringConvertible {
    /// The digits.
    public var significand: Int64
    /// The power of ten they are scaled by.
    public var exponent: Int

    /// `significand` × 10^`exponent`.
    public init(_ significand: Int64, exponent: Int = 0) {
        self.significand = significand
        self.exponent = exponent
    }

    /// `value` rounded to `places` decimal places (for formats that send IEEE floats).
    public init(rounding value: Double, places: Int) {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let scaled = (value * scale).rounded()
        self.init(scaled.isFinite && abs(scaled) < 9e18 ? Int64(scaled) : 0, exponent: -places)
    }

    /// The value as a `Double` (for comparisons; the text form is exact).
    public var doubleValue: Double {
        var value = Double(significand)
        if exponent >= 0 {
            for _ in 0..<exponent { value *= 10 }
        } else {
            for _ in 0..<(-exponent) { value /= 10 }
        }
        return value
    }

    /// The exact decimal, trailing fractional zeros dropped but one kept when the scale is
    /// fractional: a field of 0.01 °C reads `25.0`, never `25`, so that a consumer that types
    /// fields by their first value (InfluxDB) sees a float every time.
    public var description: String {
        let negative = significand < 0
        var digits = String(significand.magnitude)
        if exponent >= 0 {
            if significand != 0 { digits += String(repeating: "0", count: exponent) }
            return (negative ? "-" : "") + digits
        }
        let places = -exponent
        if digits.count <= places { digits = String(repeating: "0", count: places - digits.count + 1) + digits }
        var whole = String(digits.dropLast(places)), fraction = String(digits.suffix(places))
        while fraction.count > 1 && fraction.hasSuffix("0") { fraction.removeLast() }
        if whole.isEmpty { whole = "0" }
        return (negative ? "-" : "") + whole + "." + fraction
    }
}

/// One decoded value: what a `values` object of `bluejay adv decode` holds.
public indirect enum AdvertisementValue: Sendable, Hashable, CustomStringConvertible {
    /// A measurement or a count.
    case number(DecimalNumber)
    /// A state: motion, occupancy, opening, a binary sensor.
    case bool(Bool)
    /// An event name (`press`, `rotate_left`), an identifier, a text.
    case string(String)
    /// A value the format marks «not available».
    case null
    /// Vendor-specific values (`extra`).
    case object([String: AdvertisementValue])

    /// An integer.
    public static func integer(_ value: some BinaryInteger) -> AdvertisementValue {
        .number(DecimalNumber(Int64(value)))
    }

    /// `raw` × `factor`, where `factor` is `multiplier` × 10^`exponent` (0.35 is 35, −2).
    public static func scaled(_ raw: Int64, multiplier: Int64 = 1, exponent: Int = 0) -> AdvertisementValue {
        .number(DecimalNumber(raw * multiplier, exponent: exponent))
    }

    /// The number as a `Double`, nil for anything else.
    public var doubleValue: Double? {
        if case let .number(number) = self { return number.doubleValue }
        return nil
    }

    /// The value as compact JSON, object keys sorted.
    public var description: String {
        var text = ""
        JSONText.write(self, to: &text)
        return text
    }
}

/// Compact JSON text, written by hand so the module needs no Foundation.
public enum JSONText {
    /// Appends `value` to `text`: objects with sorted keys, no spaces.
    public static func write(_ value: AdvertisementValue, to text: inout String) {
        switch value {
        case let .number(number): text += number.description
        case let .bool(flag): text += flag ? "true" : "false"
        case let .string(string): text += quoted(string)
        case .null: text += "null"
        case let .object(members):
            text += "{"
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { text += "," }
                text += quoted(key) + ":"
                write(members[key]!, to: &text)
            }
            text += "}"
        }
    }

    /// `string` as a JSON string: quotes, backslashes and control characters escaped, the
    /// rest as UTF-8.
    public static func quoted(_ string: String) -> String {
        var result = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    let digits = String(scalar.value, radix: 16)
                    result += "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }
}
