/// Reads little-endian protocol fields from a view of a received buffer without copying it.
///
/// Every read checks the remaining length first and throws `DecodingError.truncated`
/// instead of trapping, so a short packet from a controller or a peer is an error, never a
/// crash.
public struct ByteReader: Sendable {
    /// The bytes not read yet (a slice of the original buffer: no copy).
    public private(set) var remaining: ArraySlice<UInt8>

    /// Starts reading at the first byte of `bytes`.
    public init(_ bytes: ArraySlice<UInt8>) { remaining = bytes }

    /// Starts reading at the first byte of `bytes`.
    public init(_ bytes: [UInt8]) { remaining = bytes[...] }

    /// How many bytes are left.
    public var count: Int { remaining.count }

    /// Whether every byte has been read.
    public var isAtEnd: Bool { remaining.isEmpty }

    /// Reads one byte.
    public mutating func readUInt8() throws(DecodingError) -> UInt8 {
        guard let byte = remaining.first else { throw .truncated(needed: 1, available: 0) }
        remaining.removeFirst()
        return byte
    }

    /// Reads a little-endian 16-bit value.
    public mutating func readUInt16() throws(DecodingError) -> UInt16 {
        UInt16(truncatingIfNeeded: try readLittleEndian(byteCount: 2))
    }

    /// Reads a little-endian 24-bit value.
    public mutating func readUInt24() throws(DecodingError) -> UInt32 {
        UInt32(truncatingIfNeeded: try readLittleEndian(byteCount: 3))
    }

    /// Reads a little-endian 32-bit value.
    public mutating func readUInt32() throws(DecodingError) -> UInt32 {
        UInt32(truncatingIfNeeded: try readLittleEndian(byteCount: 4))
    }

    /// Reads a little-endian 64-bit value.
    public mutating func readUInt64() throws(DecodingError) -> UInt64 {
        try readLittleEndian(byteCount: 8)
    }

    /// Reads a little-endian value of `byteCount` bytes (at most 8).
    public mutating func readLittleEndian(byteCount: Int) throws(DecodingError) -> UInt64 {
        guard byteCount >= 0, remaining.count >= byteCount else {
            throw .truncated(needed: byteCount, available: remaining.count)
        }
        // Read in place and move the start: no slice of the buffer is made (and retained).
        let start = remaining.startIndex
        var value: UInt64 = 0
        for offset in 0..<byteCount { value |= UInt64(remaining[start + offset]) << (8 * offset) }
        remaining.removeFirst(byteCount)
        return value
    }

    /// Reads `count` bytes as a view of the buffer.
    public mutating func readBytes(_ count: Int) throws(DecodingError) -> ArraySlice<UInt8> {
        guard count >= 0, remaining.count >= count else {
            throw .truncated(needed: count, available: remaining.count)
        }
        let start = remaining.startIndex
        let bytes = remaining[start..<(start + count)]
        remaining.removeFirst(count)
        return bytes
    }

    /// Reads everything that is left.
    public mutating func readRest() -> ArraySlice<UInt8> {
        defer { remaining.removeFirst(remaining.count) }
        return remaining
    }

    /// Throws unless every byte was read: for fixed-size PDUs, where extra bytes mean the
    /// sender and we disagree about the format.
    public func expectEnd() throws(DecodingError) {
        guard remaining.isEmpty else { throw .trailingBytes(remaining.count) }
    }

    /// Ends a format the sender may extend, under the stack's tolerance rule (strict in what
    /// we send, liberal in what we accept): the octets left after the last field this
    /// decoder knows are skipped, as the Linux kernel's `hci_event.c` does by pulling only
    /// each event's minimum length. Returns how many there were, so the caller can note them
    /// (a debug line, a `trace --check` warning). Too few octets stay an error: that is
    /// ``DecodingError/truncated(needed:available:)`` from the reads before.
    @discardableResult
    public mutating func skipExtraOctets() -> Int {
        defer { remaining.removeFirst(remaining.count) }
        return remaining.count
    }
}

/// Writes little-endian protocol fields into a growing byte array.
public struct ByteWriter: Sendable {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8]

    /// Starts with room for `capacity` bytes (a hint) and, optionally, some bytes already
    /// written.
    public init(capacity: Int = 32, prefix: [UInt8] = []) {
        bytes = prefix
        bytes.reserveCapacity(capacity)
    }

    /// Starts with `headroom` zero octets already written, kept for headers a lower layer
    /// fills in later with ``overwrite(_:at:)``, and room for `capacity` more: a PDU built
    /// this way is never copied to put a header in front of it.
    public init(capacity: Int, headroom: Int) {
        bytes = []
        bytes.reserveCapacity(headroom + capacity)
        bytes.append(contentsOf: repeatElement(0, count: headroom))
    }

    /// How many bytes have been written (headroom included).
    public var count: Int { bytes.count }

    /// Replaces the two bytes at `offset` (already written) with `value`, little-endian.
    public mutating func overwrite(_ value: UInt16, at offset: Int) {
        bytes[offset] = UInt8(truncatingIfNeeded: value)
        bytes[offset + 1] = UInt8(truncatingIfNeeded: value >> 8)
    }

    /// Appends one byte.
    public mutating func write(_ value: UInt8) { bytes.append(value) }

    /// Appends a little-endian 16-bit value.
    public mutating func write(_ value: UInt16) { writeLittleEndian(UInt64(value), byteCount: 2) }

    /// Appends a little-endian 32-bit value.
    public mutating func write(_ value: UInt32) { writeLittleEndian(UInt64(value), byteCount: 4) }

    /// Appends a little-endian 64-bit value.
    public mutating func write(_ value: UInt64) { writeLittleEndian(value, byteCount: 8) }

    /// Appends the low 24 bits of `value`, little-endian.
    public mutating func writeUInt24(_ value: UInt32) { writeLittleEndian(UInt64(value), byteCount: 3) }

    /// Appends the low `byteCount` bytes of `value`, little-endian.
    public mutating func writeLittleEndian(_ value: UInt64, byteCount: Int) {
        for index in 0..<byteCount { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
    }

    /// Appends raw bytes.
    public mutating func write<S: Sequence>(bytes more: S) where S.Element == UInt8 {
        bytes.append(contentsOf: more)
    }
}

/// Why bytes could not be decoded.
public enum DecodingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The buffer ended before a field: `needed` bytes were wanted, `available` were left.
    case truncated(needed: Int, available: Int)
    /// A fixed-size structure was followed by bytes nobody expected.
    case trailingBytes(Int)
    /// A field held a value the format does not allow.
    case invalidValue(field: String, value: UInt64)
    /// A length field disagrees with the bytes present.
    case lengthMismatch(field: String, declared: Int, actual: Int)

    /// A one-line message with the field and byte counts involved.
    public var description: String {
        switch self {
        case let .truncated(needed, available):
            "truncated: needed \(needed) byte(s), \(available) left"
        case let .trailingBytes(count):
            "\(count) unexpected trailing byte(s)"
        case let .invalidValue(field, value):
            "invalid \(field) 0x\(String(value, radix: 16))"
        case let .lengthMismatch(field, declared, actual):
            "\(field) says \(declared) byte(s) but \(actual) are present"
        }
    }
}

extension Collection where Element == UInt8 {
    /// The bytes as two hex digits each, joined by `separator` (`"0a 1b"`, `"0A:1B"`, `"0a1b"`).
    /// Built as UTF-8 in one buffer: `bluejay trace` prints bytes for every packet, and a
    /// string per byte made that the formatter's largest cost.
    public func hexString(uppercase: Bool = false, separator: String = "") -> String {
        let digits = uppercase ? hexDigitsUppercase : hexDigitsLowercase
        var text: [UInt8] = []
        text.reserveCapacity(count * (2 + separator.utf8.count))
        for byte in self {
            if !text.isEmpty { text.append(contentsOf: separator.utf8) }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The bytes as lowercase hex separated by spaces, for logs and errors.
    public var hexDump: String { hexString(separator: " ") }
}

private let hexDigitsLowercase = Array("0123456789abcdef".utf8)
private let hexDigitsUppercase = Array("0123456789ABCDEF".utf8)

/// Formats `value` as `0x` and exactly `digits` lowercase hex digits.
public func hex<T: BinaryInteger>(_ value: T, digits: Int) -> String {
    let text = String(value, radix: 16)
    return "0x" + String(repeating: "0", count: max(0, digits - text.count)) + text
}
