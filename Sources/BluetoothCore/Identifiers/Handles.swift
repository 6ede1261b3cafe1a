/// An HCI Connection_Handle (Core 6.0 Vol 4 Part E §5.4.2): the controller's name for one
/// link, 12 bits on the wire (0x0000–0x0EFF; the packet-boundary and broadcast flags share
/// its 16-bit field in ACL headers and are not part of it).
///
/// A type of its own so that a connection handle and an attribute handle, both 16-bit
/// numbers, cannot be passed one for the other.
public struct ConnectionHandle: RawRepresentable, Hashable, Comparable, Sendable, Codable, CustomStringConvertible,
    ExpressibleByIntegerLiteral
{
    /// The handle's 12 bits.
    public let rawValue: UInt16

    /// Wraps a handle; the bits above the 12 of the field are dropped.
    public init(rawValue: UInt16) { self.rawValue = rawValue & 0x0FFF }

    /// A handle written as a number (`0x0040`).
    public init(integerLiteral value: UInt16) { self.init(rawValue: value) }

    /// Orders handles by value.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    /// `0x0040`.
    public var description: String { hex(rawValue, digits: 4) }
}

extension ConnectionHandle: WireCodable {
    /// Reads a 16-bit handle field and keeps its 12 bits (the rest are reserved).
    public init(from reader: inout ByteReader) throws(DecodingError) { self.init(rawValue: try reader.readUInt16()) }
    /// Writes the handle in a 16-bit field.
    public func encode(to writer: inout ByteWriter) { writer.write(rawValue) }
}

/// An ATT attribute handle (Core 6.0 Vol 3 Part F §3.2.2): 0x0001–0xFFFF name attributes;
/// 0x0000 is reserved, and a client that sends it gets Invalid Handle from the server.
///
/// Handles are ordered and step by one (``advanced(by:)``), so ranges of them work as
/// ranges of numbers do (`0x0001...0xFFFF`).
public struct AttributeHandle: RawRepresentable, Hashable, Strideable, Sendable, Codable, CustomStringConvertible,
    ExpressibleByIntegerLiteral
{
    /// The handle as on the wire.
    public let rawValue: UInt16

    /// Wraps a handle.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// A handle written as a number (`0x002A`).
    public init(integerLiteral value: UInt16) { self.init(rawValue: value) }

    /// The first handle a server may use.
    public static let first: AttributeHandle = 0x0001
    /// The last handle there is.
    public static let last: AttributeHandle = 0xFFFF

    /// How many handles from this one to `other`.
    public func distance(to other: Self) -> Int { Int(other.rawValue) - Int(rawValue) }

    /// The handle `n` after this one; traps outside 0x0000–0xFFFF, as UInt16 arithmetic does.
    public func advanced(by n: Int) -> Self { Self(rawValue: UInt16(Int(rawValue) + n)) }

    /// The handle `n` after `handle`.
    public static func + (handle: Self, n: Int) -> Self { handle.advanced(by: n) }

    /// The handle `n` before `handle`.
    public static func - (handle: Self, n: Int) -> Self { handle.advanced(by: -n) }

    /// `0x002a`.
    public var description: String { hex(rawValue, digits: 4) }
}

extension AttributeHandle: WireCodable {
    /// Reads a 16-bit handle.
    public init(from reader: inout ByteReader) throws(DecodingError) { self.init(rawValue: try reader.readUInt16()) }
    /// Writes the handle.
    public func encode(to writer: inout ByteWriter) { writer.write(rawValue) }
}

/// Formats a handle (or any value with an integer raw value) as `0x` and `digits` hex
/// digits, as ``hex(_:digits:)`` formats integers.
public func hex<Value: RawRepresentable>(_ value: Value, digits: Int) -> String where Value.RawValue: BinaryInteger {
    hex(value.rawValue, digits: digits)
}

extension ByteWriter {
    /// Writes a connection handle in a 16-bit field.
    public mutating func write(_ handle: ConnectionHandle) { write(handle.rawValue) }
    /// Writes an attribute handle.
    public mutating func write(_ handle: AttributeHandle) { write(handle.rawValue) }
}
