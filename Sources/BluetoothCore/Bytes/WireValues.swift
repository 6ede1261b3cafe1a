// Wire encodings every layer shares, beside WireCodable's unsigned integers: values that
// are their raw value, a two's-complement octet, and a value's encoding on its own.

/// A value that is its raw value on the wire, any raw value allowed (a status or result
/// code, an opcode, a bit mask, a PSM): reading and writing are the raw value's, said once
/// here instead of in every such type.
public protocol WireRawRepresentable: WireCodable, RawRepresentable where RawValue: WireCodable {
    /// Wraps a value read from the wire; every raw value is a valid one.
    init(rawValue: RawValue)
}

extension WireRawRepresentable {
    /// Reads the raw value.
    public init(from reader: inout ByteReader) throws(DecodingError) {
        self.init(rawValue: try RawValue(from: &reader))
    }
    /// Writes the raw value.
    public func encode(to writer: inout ByteWriter) { rawValue.encode(to: &writer) }
}

extension Int8: WireCodable {
    /// Reads one octet as a two's-complement value (an RSSI or a TX power in dBm).
    public init(from reader: inout ByteReader) throws(DecodingError) { self.init(bitPattern: try reader.readUInt8()) }
    /// Writes the value as one two's-complement octet.
    public func encode(to writer: inout ByteWriter) { writer.write(UInt8(bitPattern: self)) }
}

extension WireCodable {
    /// The value's encoding on its own, in a buffer of `capacity` octets to start with.
    public func wireBytes(capacity: Int = 16) -> [UInt8] {
        var writer = ByteWriter(capacity: capacity)
        encode(to: &writer)
        return writer.bytes
    }
}

extension Field where Value: RawRepresentable & Sendable, Value.RawValue == UInt8 {
    /// A one-octet code from a list the specification fixes (LE_Scan_Type, Address_Type, an
    /// IO capability): an octet outside the list is ``DecodingError/invalidValue(field:value:)``
    /// about `errorField`, by default the field's name.
    public static func code(_ name: String, errorField: String? = nil, _ value: @escaping @Sendable (Message) -> Value)
        -> Field
    {
        Field(
            name,
            read: { reader throws(DecodingError) in
                let raw = try reader.readUInt8()
                guard let code = Value(rawValue: raw) else {
                    throw .invalidValue(field: errorField ?? name, value: UInt64(raw))
                }
                return code
            }, write: { message, writer in writer.write(value(message).rawValue) })
    }
}
