import BluetoothCore

// The fields HCI parameters are made of (Core Vol 4, Part E, 5.2 and 7): how each type
// looks on the wire, and the shapes of field the layouts of commands, events and LE
// subevents share. A layout names its fields; what a field's octets are is said here once.

// MARK: Types with one encoding

/// A status or error code octet: codes newer than the table still round-trip.
extension HCIStatus: WireRawRepresentable {}

/// Two octets, OGF and OCF, least significant first.
extension HCIOpcode: WireRawRepresentable {}

/// The 64 octets of Supported_Commands, octet 0 first.
extension SupportedCommands: WireCodable {
    /// Reads the 64 octets.
    public init(from reader: inout ByteReader) throws(DecodingError) {
        self.init(octets: Array(try reader.readBytes(64)))
    }
    /// Writes the 64 octets.
    public func encode(to writer: inout ByteWriter) { writer.write(bytes: octets) }
}

// MARK: Shapes of field

extension Field {
    /// A one-octet switch: written 0x01 or 0x00; any octet but 0x00 reads as on.
    static func flag(_ name: String, _ value: @escaping @Sendable (Message) -> Bool) -> Field where Value == Bool {
        Field(
            name, read: { reader throws(DecodingError) in try reader.readUInt8() != 0 },
            write: { message, writer in writer.write(UInt8(value(message) ? 1 : 0)) })
    }

    /// A fixed number of octets copied out (a key, a random number).
    static func octets(_ name: String, count: Int, _ value: @escaping @Sendable (Message) -> [UInt8]) -> Field
    where Value == [UInt8] {
        Field(
            name, read: { reader throws(DecodingError) in Array(try reader.readBytes(count)) },
            write: { message, writer in writer.write(bytes: value(message)) })
    }

    /// A length octet, then that many octets (Data_Length and Data), as a view of the
    /// received bytes. A length above `maximum` is ``DecodingError/invalidValue(field:value:)``
    /// about `lengthField`.
    static func lengthPrefixed(
        _ lengthField: String, _ name: String, maximum: Int = 255,
        _ value: @escaping @Sendable (Message) -> ArraySlice<UInt8>
    ) -> Field where Value == ArraySlice<UInt8> {
        Field(
            "\(lengthField), \(name)",
            read: { reader throws(DecodingError) in
                let length = Int(try reader.readUInt8())
                guard length <= maximum else { throw .invalidValue(field: lengthField, value: UInt64(length)) }
                return try reader.readBytes(length)
            },
            write: { message, writer in
                let bytes = value(message)
                writer.write(UInt8(bytes.count))
                writer.write(bytes: bytes)
            })
    }

    /// A count octet, then that many entries one after another (Num_Reports and the reports).
    static func counted<Entry: WireCodable>(
        _ countField: String, _ name: String,
        _ value: @escaping @Sendable (Message) -> [Entry]
    ) -> Field where Value == [Entry] {
        Field(
            "\(countField), \(name)",
            read: { reader throws(DecodingError) in
                let count = Int(try reader.readUInt8())
                var entries: [Entry] = []
                entries.reserveCapacity(count)
                for _ in 0..<count { entries.append(try Entry(from: &reader)) }
                return entries
            },
            write: { message, writer in
                let entries = value(message)
                writer.write(UInt8(entries.count))
                for entry in entries { entry.encode(to: &writer) }
            })
    }
}

extension Field where Value: LaidOut {
    /// Fields that travel together in several messages (a connection's interval, latency
    /// and timeout), declared once by their own layout and named here by the fields they are.
    static func group(_ value: @escaping @Sendable (Message) -> Value) -> Field {
        Field(Value.layout.fieldNames.joined(separator: ", "), value)
    }
}
