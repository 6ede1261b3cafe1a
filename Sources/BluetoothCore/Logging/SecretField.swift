/// A run of octets in a packet that must not reach a log or a shared capture: a key, a
/// nonce, a confirm or check value, a passkey, a PIN. Which octets of which packet are
/// secret is known in one place per layer (`HCISecretFields` for commands and events, the
/// SMP module's table for SMP PDUs); logs, the trace printer, `trace --redact` and the
/// redacting capture writer all ask those tables and nothing else.
///
/// `offset` counts from a point each table names (a command's first parameter, an SMP
/// PDU's Code octet, the first octet after an H4 indicator), so a field can be moved to
/// where a caller's bytes start with ``shifted(by:)``.
public struct SecretField: Sendable, Hashable, CustomStringConvertible {
    /// The parameter's name in the Core specification (`Long_Term_Key`).
    public var name: String
    /// Where the field starts.
    public var offset: Int
    /// How many octets it has.
    public var length: Int

    /// A field of `length` octets at `offset`.
    public init(_ name: String, offset: Int, length: Int) {
        (self.name, self.offset, self.length) = (name, offset, length)
    }

    /// The octets the field covers.
    public var range: Range<Int> { offset..<(offset + length) }

    /// The same field counted from a point `delta` octets earlier.
    public func shifted(by delta: Int) -> SecretField { SecretField(name, offset: offset + delta, length: length) }

    /// The part of the field inside `0..<count` (a packet cut short has fewer octets than its
    /// format); nil when none of it is.
    public func clipped(to count: Int) -> SecretField? {
        let start = max(0, offset), end = min(count, offset + length)
        return start < end ? SecretField(name, offset: start, length: end - start) : nil
    }

    /// `Long_Term_Key (12, 16 octets)`.
    public var description: String { "\(name) (\(offset), \(length) octets)" }
}

extension Collection where Element == UInt8 {
    /// The bytes as ``hexDump``, each secret field (offsets from the first byte) printed as
    /// `<redacted 16 octets>` instead of its octets. With `limit`, at most that many octets
    /// are shown (a field counts whole) and ` …` marks the rest.
    public func hexDump(redacting fields: [SecretField], limit: Int? = nil) -> String {
        let bytes = Array(self)
        let secret = fields.compactMap { $0.clipped(to: bytes.count) }.sorted { $0.offset < $1.offset }
        guard !secret.isEmpty else {
            guard let limit, bytes.count > limit else { return bytes.hexDump }
            return bytes[..<limit].hexDump + " …"
        }
        var parts: [String] = []
        var index = 0, fieldIndex = 0
        let end = Swift.min(bytes.count, limit ?? bytes.count)
        while index < end {
            while fieldIndex < secret.count, secret[fieldIndex].range.upperBound <= index { fieldIndex += 1 }
            if fieldIndex < secret.count, secret[fieldIndex].range.contains(index) {
                // Overlapping fields are one run: it ends where the last of them does.
                var runEnd = secret[fieldIndex].range.upperBound
                var next = fieldIndex + 1
                while next < secret.count, secret[next].offset < runEnd {
                    runEnd = Swift.max(runEnd, secret[next].range.upperBound)
                    next += 1
                }
                parts.append("<redacted \(runEnd - index) octets>")
                index = runEnd
                fieldIndex = next
            } else {
                let stop = fieldIndex < secret.count ? Swift.min(end, secret[fieldIndex].offset) : end
                parts.append(bytes[index..<stop].hexDump)
                index = stop
            }
        }
        return parts.joined(separator: " ") + (index < bytes.count ? " …" : "")
    }
}

extension Array where Element == UInt8 {
    /// Zeroes every secret field (offsets from the first byte), leaving the length and every
    /// other octet as it was; returns how many octets were zeroed.
    @discardableResult
    public mutating func zero(_ fields: [SecretField]) -> Int {
        var zeroed = 0
        for field in fields {
            guard let inside = field.clipped(to: count) else { continue }
            for index in inside.range {
                self[index] = 0
                zeroed += 1
            }
        }
        return zeroed
    }
}
