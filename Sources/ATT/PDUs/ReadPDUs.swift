import BluetoothCore
import HCI

// Reading: Read By Type, Read, Read Blob, Read Multiple, Read By Group Type, Read Multiple
// Variable (Core Vol 3, Part F, 3.4.4).

/// ATT_READ_BY_TYPE_REQ (0x08, 3.4.4.1): the values of the attributes of one type in a
/// handle range.
public struct ReadByTypeRequest: ATTPDU {
    /// 0x08.
    public static var opcode: ATTOpcode { .readByTypeRequest }
    /// The first handle to look at.
    public var startingHandle: UInt16
    /// The last handle to look at.
    public var endingHandle: UInt16
    /// The attribute type: sent as 2 bytes when it has a 16-bit form, else as 16 (a 32-bit
    /// UUID goes as 128-bit; ATT has no 4-byte form).
    public var attributeType: BluetoothUUID

    /// A request for the attributes of `attributeType` in `startingHandle...endingHandle`.
    public init(startingHandle: UInt16, endingHandle: UInt16, attributeType: BluetoothUUID) {
        self.startingHandle = startingHandle
        self.endingHandle = endingHandle
        self.attributeType = attributeType
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        startingHandle = try reader.readUInt16()
        endingHandle = try reader.readUInt16()
        attributeType = try reader.readUUIDToEnd(field: "Read_By_Type_Req attribute type")
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(startingHandle)
        writer.write(endingHandle)
        writer.writeATT(attributeType)
    }
}

/// ATT_READ_BY_TYPE_RSP (0x09, 3.4.4.2): handle–value pairs, all values the same length
/// (the length byte is 2 + that length).
public struct ReadByTypeResponse: ATTPDU {
    /// One attribute's handle and value.
    public struct Entry: Sendable, Equatable {
        /// The attribute's handle.
        public var handle: UInt16
        /// The attribute's value (possibly truncated by the server).
        public var value: [UInt8]

        /// An entry for the attribute at `handle`.
        public init(handle: UInt16, value: [UInt8]) {
            self.handle = handle
            self.value = value
        }
    }

    /// 0x09.
    public static var opcode: ATTOpcode { .readByTypeResponse }
    /// The attributes read, in handle order; every value the same length, at most 253 bytes.
    public var entries: [Entry]

    /// A response listing `entries`.
    public init(entries: [Entry]) { self.entries = entries }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        let length = Int(try reader.readUInt8())
        guard length >= 2 else { throw .invalidValue(field: "Read_By_Type_Rsp length", value: UInt64(length)) }
        entries = try reader.readEntries(size: length) { (entry: inout ByteReader) throws(DecodingError) in
            Entry(handle: try entry.readUInt16(), value: Array(entry.readRest()))
        }
    }

    /// Encodes the entries; traps unless every value has the same length, at most 253.
    public func encode(to writer: inout ByteWriter) {
        let valueLength = entries.first?.value.count ?? 0
        precondition(entries.allSatisfy { $0.value.count == valueLength }, "Read By Type values must have one length")
        precondition(valueLength <= 253, "a Read By Type value is at most 253 bytes")
        writer.write(UInt8(2 + valueLength))
        for entry in entries {
            writer.write(entry.handle)
            writer.write(bytes: entry.value)
        }
    }
}

/// ATT_READ_REQ (0x0A, 3.4.4.3): the value of one attribute.
public struct ReadRequest: ATTPDU {
    /// 0x0A.
    public static var opcode: ATTOpcode { .readRequest }
    /// The attribute to read.
    public var handle: UInt16

    /// A request to read the attribute at `handle`.
    public init(handle: UInt16) { self.handle = handle }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        handle = try reader.readUInt16()
    }

    public func encode(to writer: inout ByteWriter) { writer.write(handle) }
}

/// ATT_READ_RSP (0x0B, 3.4.4.4): the value, or its first ATT_MTU - 1 bytes.
public struct ReadResponse: ValuePDU {
    /// 0x0B.
    public static var opcode: ATTOpcode { .readResponse }
    /// The value read.
    public var value: [UInt8]

    /// A response carrying `value`.
    public init(value: [UInt8]) { self.value = value }
}

/// ATT_READ_BLOB_REQ (0x0C, 3.4.4.5): part of a long value, from an offset.
public struct ReadBlobRequest: ATTPDU {
    /// 0x0C.
    public static var opcode: ATTOpcode { .readBlobRequest }
    /// The attribute to read.
    public var handle: UInt16
    /// Where in the value to start.
    public var offset: UInt16

    /// A request to read the attribute at `handle` from `offset`.
    public init(handle: UInt16, offset: UInt16) {
        self.handle = handle
        self.offset = offset
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        handle = try reader.readUInt16()
        offset = try reader.readUInt16()
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(handle)
        writer.write(offset)
    }
}

/// ATT_READ_BLOB_RSP (0x0D, 3.4.4.6): part of a value.
public struct ReadBlobResponse: ValuePDU {
    /// 0x0D.
    public static var opcode: ATTOpcode { .readBlobResponse }
    /// The part read.
    public var value: [UInt8]

    /// A response carrying `value`.
    public init(value: [UInt8]) { self.value = value }
}

/// ATT_READ_MULTIPLE_REQ (0x0E, 3.4.4.7): the values of two or more attributes.
public struct ReadMultipleRequest: ATTPDU {
    /// 0x0E.
    public static var opcode: ATTOpcode { .readMultipleRequest }
    /// The attributes to read, at least two.
    public var handles: [UInt16]

    /// A request to read the attributes at `handles`.
    public init(handles: [UInt16]) { self.handles = handles }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        handles = try Self.readHandles(&reader)
    }

    public func encode(to writer: inout ByteWriter) {
        for handle in handles { writer.write(handle) }
    }

    /// Reads two or more handles to the end.
    static func readHandles(_ reader: inout ByteReader) throws(DecodingError) -> [UInt16] {
        guard reader.count >= 4 else { throw .truncated(needed: 4, available: reader.count) }
        return try reader.readEntries(size: 2) { (entry: inout ByteReader) throws(DecodingError) in
            try entry.readUInt16()
        }
    }
}

/// ATT_READ_MULTIPLE_RSP (0x0F, 3.4.4.8): the values concatenated, truncated to
/// ATT_MTU - 1 bytes.
public struct ReadMultipleResponse: ATTPDU {
    /// 0x0F.
    public static var opcode: ATTOpcode { .readMultipleResponse }
    /// The concatenated values.
    public var values: [UInt8]

    /// A response carrying `values`.
    public init(values: [UInt8]) { self.values = values }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        values = Array(reader.readRest())
    }

    public func encode(to writer: inout ByteWriter) { writer.write(bytes: values) }
}

/// ATT_READ_BY_GROUP_TYPE_REQ (0x10, 3.4.4.9): the grouping attributes (services) of one
/// type in a handle range.
public struct ReadByGroupTypeRequest: ATTPDU {
    /// 0x10.
    public static var opcode: ATTOpcode { .readByGroupTypeRequest }
    /// The first handle to look at.
    public var startingHandle: UInt16
    /// The last handle to look at.
    public var endingHandle: UInt16
    /// The group type (0x2800 primary or 0x2801 secondary service for GATT); sent as 2 bytes
    /// when it has a 16-bit form, else as 16.
    public var groupType: BluetoothUUID

    /// A request for the groups of `groupType` in `startingHandle...endingHandle`.
    public init(startingHandle: UInt16, endingHandle: UInt16, groupType: BluetoothUUID) {
        self.startingHandle = startingHandle
        self.endingHandle = endingHandle
        self.groupType = groupType
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        startingHandle = try reader.readUInt16()
        endingHandle = try reader.readUInt16()
        groupType = try reader.readUUIDToEnd(field: "Read_By_Group_Type_Req group type")
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(startingHandle)
        writer.write(endingHandle)
        writer.writeATT(groupType)
    }
}

/// ATT_READ_BY_GROUP_TYPE_RSP (0x11, 3.4.4.10): handle, group end handle and value of each
/// group, all values the same length (the length byte is 4 + that length).
public struct ReadByGroupTypeResponse: ATTPDU {
    /// One group.
    public struct Entry: Sendable, Equatable {
        /// The grouping attribute's handle.
        public var handle: UInt16
        /// The last handle of the group.
        public var endGroupHandle: UInt16
        /// The grouping attribute's value (a service's UUID), possibly truncated.
        public var value: [UInt8]

        /// An entry for the group `handle...endGroupHandle`.
        public init(handle: UInt16, endGroupHandle: UInt16, value: [UInt8]) {
            self.handle = handle
            self.endGroupHandle = endGroupHandle
            self.value = value
        }
    }

    /// 0x11.
    public static var opcode: ATTOpcode { .readByGroupTypeResponse }
    /// The groups, in handle order; every value the same length, at most 251 bytes.
    public var entries: [Entry]

    /// A response listing `entries`.
    public init(entries: [Entry]) { self.entries = entries }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        let length = Int(try reader.readUInt8())
        guard length >= 4 else { throw .invalidValue(field: "Read_By_Group_Type_Rsp length", value: UInt64(length)) }
        entries = try reader.readEntries(size: length) { (entry: inout ByteReader) throws(DecodingError) in
            Entry(handle: try entry.readUInt16(), endGroupHandle: try entry.readUInt16(), value: Array(entry.readRest()))
        }
    }

    /// Encodes the entries; traps unless every value has the same length, at most 251.
    public func encode(to writer: inout ByteWriter) {
        let valueLength = entries.first?.value.count ?? 0
        precondition(entries.allSatisfy { $0.value.count == valueLength }, "Read By Group Type values must have one length")
        precondition(valueLength <= 251, "a Read By Group Type value is at most 251 bytes")
        writer.write(UInt8(4 + valueLength))
        for entry in entries {
            writer.write(entry.handle)
            writer.write(entry.endGroupHandle)
            writer.write(bytes: entry.value)
        }
    }
}

/// ATT_READ_MULTIPLE_VARIABLE_REQ (0x20, 3.4.4.11): the values of two or more attributes,
/// each returned with its length.
public struct ReadMultipleVariableRequest: ATTPDU {
    /// 0x20.
    public static var opcode: ATTOpcode { .readMultipleVariableRequest }
    /// The attributes to read, at least two.
    public var handles: [UInt16]

    /// A request to read the attributes at `handles`.
    public init(handles: [UInt16]) { self.handles = handles }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        handles = try ReadMultipleRequest.readHandles(&reader)
    }

    public func encode(to writer: inout ByteWriter) {
        for handle in handles { writer.write(handle) }
    }
}

/// ATT_READ_MULTIPLE_VARIABLE_RSP (0x21, 3.4.4.12): length–value tuples. The PDU ends at
/// ATT_MTU, so the last value may be shorter than its length says.
public struct ReadMultipleVariableResponse: ATTPDU {
    /// One value and its full length.
    public struct Entry: Sendable, Equatable {
        /// The attribute value's full length.
        public var length: UInt16
        /// The value; shorter than `length` only in the last entry of a truncated response.
        public var value: [UInt8]

        /// An entry whose value may be truncated (`value.count < length`).
        public init(length: UInt16, value: [UInt8]) {
            self.length = length
            self.value = value
        }

        /// A whole value (`length` is its count).
        public init(value: [UInt8]) { self.init(length: UInt16(value.count), value: value) }

        /// Whether the value is shorter than its length.
        public var isTruncated: Bool { value.count < Int(length) }
    }

    /// 0x21.
    public static var opcode: ATTOpcode { .readMultipleVariableResponse }
    /// The values, in the request's order; at least one.
    public var entries: [Entry]

    /// A response listing `entries`.
    public init(entries: [Entry]) { self.entries = entries }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        guard !reader.isAtEnd else { throw .truncated(needed: 2, available: 0) }
        var entries: [Entry] = []
        while !reader.isAtEnd {
            let length = try reader.readUInt16()
            // A value shorter than its length takes the rest of the PDU, so it is the last.
            let value = try reader.readBytes(min(Int(length), reader.count))
            entries.append(Entry(length: length, value: Array(value)))
        }
        self.entries = entries
    }

    /// Encodes the tuples; traps if a value is longer than its length, or shorter in any
    /// but the last entry.
    public func encode(to writer: inout ByteWriter) {
        for (index, entry) in entries.enumerated() {
            precondition(entry.value.count <= Int(entry.length), "a value is longer than its length")
            precondition(!entry.isTruncated || index == entries.count - 1, "only the last value may be truncated")
            writer.write(entry.length)
            writer.write(bytes: entry.value)
        }
    }
}
