import BluetoothCore

// What the signaling declarations need from the message-layout mechanism and BluetoothCore
// does not have yet: values that go on the wire as their raw value, a length-prefixed
// field, and a list read to the end of the data. Nothing here is L2CAP's own, so it belongs
// next to `WireCodable` in BluetoothCore/Bytes/MessageLayout.swift; it waits here until a
// change that may touch BluetoothCore moves it (HCI and SMP have raw-value types too).

/// A value that is its raw value on the wire, any raw value allowed (a code, a result, a
/// status, a mode, a PSM): reading and writing are the raw value's, said once here instead
/// of in every such type.
public protocol WireRawRepresentable: WireCodable, RawRepresentable where RawValue: WireCodable {
    /// Wraps a value read from the wire; every raw value is a valid one.
    init(rawValue: RawValue)
}

extension WireRawRepresentable {
    /// Reads the raw value.
    public init(from reader: inout ByteReader) throws(DecodingError) { self.init(rawValue: try RawValue(from: &reader)) }
    /// Writes the raw value.
    public func encode(to writer: inout ByteWriter) { rawValue.encode(to: &writer) }
}

extension WireCodable {
    /// The value's encoding on its own.
    func wireBytes(capacity: Int = 16) -> [UInt8] {
        var writer = ByteWriter(capacity: capacity)
        encode(to: &writer)
        return writer.bytes
    }
}

extension Field where Value == [UInt8] {
    /// A length field of `lengthOctets` octets, then that many octets (a signaling command's
    /// Length and Data, a configuration option's Length and Option_Data), named after both.
    /// Fewer octets than the length says is ``DecodingError/lengthMismatch(field:declared:actual:)``
    /// about `errorField`; on encoding, the length is the value's count.
    static func lengthPrefixed(_ lengthField: String, _ name: String, lengthOctets: Int, errorField: String,
                               _ value: @escaping @Sendable (Message) -> Value) -> Field {
        Field("\(lengthField), \(name)", read: { reader throws(DecodingError) in
            let length = Int(try reader.readLittleEndian(byteCount: lengthOctets))
            guard reader.count >= length else {
                throw .lengthMismatch(field: errorField, declared: length, actual: reader.count)
            }
            return Array(try reader.readBytes(length))
        }, write: { message, writer in
            let bytes = value(message)
            writer.writeLittleEndian(UInt64(bytes.count), byteCount: lengthOctets)
            writer.write(bytes: bytes)
        })
    }
}

extension Field {
    /// Elements one after another for as long as at least `minimumSize` octets are left, none
    /// at all allowed: configuration options (each says its length) or CIDs. Octets fewer
    /// than `minimumSize` stay in the reader, for the caller's rule on extra octets.
    static func repeated<Element: WireCodable>(_ name: String, minimumSize: Int,
                                               _ value: @escaping @Sendable (Message) -> Value) -> Field where Value == [Element] {
        Field(name, read: { reader throws(DecodingError) in
            var elements: [Element] = []
            while reader.count >= minimumSize { elements.append(try Element(from: &reader)) }
            return elements
        }, write: { message, writer in for element in value(message) { element.encode(to: &writer) } })
    }
}
