import BluetoothCore

// The shapes of field signaling commands have and the HCI and SMP layouts do not: a
// length-prefixed field with a length of two octets and a list read to the end of the data.

extension Field where Value == [UInt8] {
    /// A length field of `lengthOctets` octets, then that many octets (a signaling command's
    /// Length and Data, a configuration option's Length and Option_Data), named after both.
    /// Fewer octets than the length says is ``DecodingError/lengthMismatch(field:declared:actual:)``
    /// about `errorField`; on encoding, the length is the value's count.
    static func lengthPrefixed(
        _ lengthField: String, _ name: String, lengthOctets: Int, errorField: String,
        _ value: @escaping @Sendable (Message) -> Value
    ) -> Field {
        Field(
            "\(lengthField), \(name)",
            read: { reader throws(DecodingError) in
                let length = Int(try reader.readLittleEndian(byteCount: lengthOctets))
                guard reader.count >= length else {
                    throw .lengthMismatch(field: errorField, declared: length, actual: reader.count)
                }
                return Array(try reader.readBytes(length))
            },
            write: { message, writer in
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
    static func repeated<Element: WireCodable>(
        _ name: String, minimumSize: Int,
        _ value: @escaping @Sendable (Message) -> Value
    ) -> Field where Value == [Element] {
        Field(
            name,
            read: { reader throws(DecodingError) in
                var elements: [Element] = []
                while reader.count >= minimumSize { elements.append(try Element(from: &reader)) }
                return elements
            }, write: { message, writer in for element in value(message) { element.encode(to: &writer) } })
    }
}
