import Testing

@testable import Advertisements

/// ``JSONText`` and ``DecimalNumber`` write UTF-8 bytes directly (the gateway's decoded
/// advertisements, thousands a second); their text must stay what the String-building
/// versions wrote, kept here as the reference.
struct JSONTextBytesTests {
    /// The String-building `DecimalNumber.description` the bytes replaced.
    static func referenceDescription(_ number: DecimalNumber) -> String {
        let negative = number.significand < 0
        var digits = String(number.significand.magnitude)
        if number.exponent >= 0 {
            if number.significand != 0 { digits += String(repeating: "0", count: number.exponent) }
            return (negative ? "-" : "") + digits
        }
        let places = -number.exponent
        if digits.count <= places { digits = String(repeating: "0", count: places - digits.count + 1) + digits }
        var whole = String(digits.dropLast(places)), fraction = String(digits.suffix(places))
        while fraction.count > 1 && fraction.hasSuffix("0") { fraction.removeLast() }
        if whole.isEmpty { whole = "0" }
        return (negative ? "-" : "") + whole + "." + fraction
    }

    /// The unicode-scalar `JSONText.quoted` the bytes replaced.
    static func referenceQuoted(_ string: String) -> String {
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

    /// Significands around every power of ten (and zero, the extremes) at exponents −8 to 4.
    @Test func decimalsAsBefore() {
        var significands: [Int64] = [0, 1, -1, 5, 10, 100, 105, 2506, 25060, Int64.max, Int64.min + 1, Int64.min]
        var power: Int64 = 1
        for _ in 0..<18 {
            power *= 10
            significands += [power - 1, power, power + 1, -(power - 1), -power, power * 3 / 2]
        }
        var mismatches: [String] = []
        for significand in significands {
            for exponent in -8...4 {
                let number = DecimalNumber(significand, exponent: exponent)
                let expected = Self.referenceDescription(number)
                if number.description != expected {
                    mismatches.append("\(significand)e\(exponent): \(number.description) against \(expected)")
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }

    /// Quotes, backslashes, every control character, DEL, two- to four-octet UTF-8.
    @Test func quotedAsBefore() {
        var strings = ["", "plain", "a\"b\\c\nd\u{01}é", "\r\t", "\u{7F}", "°C", "温度", "🌡️ x", "\u{1F}\u{20}"]
        strings.append(String(decoding: (0..<0x80).map { UInt8($0) }, as: UTF8.self))
        for string in strings {
            #expect(JSONText.quoted(string) == Self.referenceQuoted(string), "\(Array(string.utf8))")
        }
    }

    /// An object's members in sorted key order, nested, every kind of value.
    @Test func objectsAsText() {
        let value = AdvertisementValue.object([
            "temperature": .scaled(2506, exponent: -2), "b": .bool(true), "a": .null,
            "extra": .object(["z": .string("x\"y"), "m": .integer(-3)]),
        ])
        #expect(value.description == #"{"a":null,"b":true,"extra":{"m":-3,"z":"x\"y"},"temperature":25.06}"#)
    }
}
