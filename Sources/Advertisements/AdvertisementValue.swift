/// An exact decimal: `significand` × 10^`exponent`. A sensor sends integers with a scale
/// (0.01 °C, 0.005 °C, 0.35 °C); kept as such, 25.06 °C prints as `25.06`, never as
/// `25.059999999999999`.
public struct DecimalNumber: Sendable, Hashable, CustomStringConvertible {
    /// The digits.
    public var significand: Int64
    /// The power of ten they are scaled by.
    public var exponent: Int

    /// `significand` × 10^`exponent`.
    public init(_ significand: Int64, exponent: Int = 0) { (self.significand, self.exponent) = (significand, exponent) }

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
        var text: [UInt8] = []
        write(to: &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// Appends ``description`` as UTF-8, with no String made on the way (a gateway writes a
    /// few per advertisement, thousands a second).
    public func write(to text: inout [UInt8]) {
        if significand < 0 { text.append(UInt8(ascii: "-")) }
        // The magnitude's digits, most significant first, at the end of the buffer (UInt64's
        // largest has 20), with zeros in front when fewer than the places + 1.
        let places = max(0, -exponent)
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 21 + places) { buffer in
            var magnitude = significand.magnitude, start = buffer.count
            repeat {
                start -= 1
                buffer[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            guard exponent < 0 else {
                text.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start...]))
                if significand != 0 { text.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: exponent)) }
                return
            }
            while buffer.count - start < places + 1 {
                start -= 1
                buffer[start] = UInt8(ascii: "0")
            }
            let point = buffer.count - places
            // The fraction's trailing zeros dropped, one digit kept.
            var end = buffer.count
            while end - point > 1, buffer[end - 1] == UInt8(ascii: "0") { end -= 1 }
            text.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start..<point]))
            text.append(UInt8(ascii: "."))
            text.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[point..<end]))
        }
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
