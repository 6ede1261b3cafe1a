import BluetoothCore

// Reading: Read By Type, Read, Read Blob, Read Multiple, Read By Group Type, Read Multiple
// Variable (Core Vol 3, Part F, 3.4.4).

/// ATT_READ_BY_TYPE_REQ (0x08, 3.4.4.1): the values of the attributes of one type in a
/// handle range.
public struct ReadByTypeRequest: ATTPDU {
    /// 0x08.
    public static var opcode: ATTOpcode { .readByTypeRequest }
    /// The first handle to look at.
    public var startingHandle: AttributeHandle
    /// The last handle to look at.
    public var endingHandle: AttributeHandle
    /// The attribute type: sent as 2 bytes when it has a 16-bit form, else as 16 (a 32-bit
    /// UUID goes as 128-bit; ATT has no 4-byte form).
    public var attributeType: BluetoothUUID

    /// A request for the attributes of `attributeType` in `startingHandle...endingHandle`.
    public init(startingHandle: AttributeHandle, endingHandle: AttributeHandle, attributeType: BluetoothUUID) {
        (self.startingHandle, self.endingHandle, self.attributeType) = (startingHandle, endingHandle, attributeType)
    }

    /// Starting_Handle, Ending_Handle, Attribute_Type.
    public static let layout = MessageLayout(
        "Read_By_Type_Req", Self.init(startingHandle:endingHandle:attributeType:),
        Field("Starting_Handle", \.startingHandle), Field("Ending_Handle", \.endingHandle),
        .attributeType("Attribute_Type", errorField: "Read_By_Type_Req attribute type", \.attributeType))
}

/// ATT_READ_BY_TYPE_RSP (0x09, 3.4.4.2): handle–value pairs, all values the same length
/// (the length byte is 2 + that length).
public struct ReadByTypeResponse: ATTPDU {
    /// One attribute's handle and value.
    public struct Entry: LaidOut, UniformLengthEntry, Equatable {
        /// The attribute's handle.
        public var handle: AttributeHandle
        /// The attribute's value (possibly truncated by the server).
        public var value: ArraySlice<UInt8>

        /// An entry for the attribute at `handle`.
        public init(handle: AttributeHandle, value: ArraySlice<UInt8>) { (self.handle, self.value) = (handle, value) }

        /// Attribute_Handle, Attribute_Value (the rest of the entry).
        public static let layout = MessageLayout(
            "Attribute_Data", Self.init(handle:value:),
            Field("Attribute_Handle", \.handle), .rest("Attribute_Value", \.value))
    }

    /// 0x09.
    public static var opcode: ATTOpcode { .readByTypeResponse }
    /// The attributes read, in handle order; every value the same length, at most 253 bytes.
    public var entries: [Entry]

    /// A response listing `entries`.
    public init(entries: [Entry]) { self.entries = entries }

    /// Length, then Attribute_Data_List: entries of that length each. Encoding traps unless
    /// every value has the same length, at most 253.
    public static let layout = MessageLayout(
        "Read_By_Type_Rsp", Self.init(entries:),
        .uniformEntries(
            "Attribute_Data_List", header: 2, maximumValueLength: 253,
            errorField: "Read_By_Type_Rsp", \.entries))
}

/// ATT_READ_REQ (0x0A, 3.4.4.3): the value of one attribute.
public struct ReadRequest: ATTPDU {
    /// 0x0A.
    public static var opcode: ATTOpcode { .readRequest }
    /// The attribute to read.
    public var handle: AttributeHandle

    /// A request to read the attribute at `handle`.
    public init(handle: AttributeHandle) { self.handle = handle }

    /// Attribute_Handle.
    public static let layout = MessageLayout("Read_Req", Self.init(handle:), Field("Attribute_Handle", \.handle))
}

/// ATT_READ_RSP (0x0B, 3.4.4.4): the value, or its first ATT_MTU - 1 bytes.
public struct ReadResponse: ATTPDU {
    /// 0x0B.
    public static var opcode: ATTOpcode { .readResponse }
    /// The value read.
    public var value: ArraySlice<UInt8>

    /// A response carrying `value`.
    public init(value: ArraySlice<UInt8>) { self.value = value }

    /// Attribute_Value.
    public static let layout = MessageLayout("Read_Rsp", Self.init(value:), .rest("Attribute_Value", \.value))
}

/// ATT_READ_BLOB_REQ (0x0C, 3.4.4.5): part of a long value, from an offset.
public struct ReadBlobRequest: ATTPDU {
    /// 0x0C.
    public static var opcode: ATTOpcode { .readBlobRequest }
    /// The attribute to read.
    public var handle: AttributeHandle
    /// Where in the value to start.
    public var offset: UInt16

    /// A request to read the attribute at `handle` from `offset`.
    public init(handle: AttributeHandle, offset: UInt16) { (self.handle, self.offset) = (handle, offset) }

    /// Attribute_Handle, Value_Offset.
    public static let layout = MessageLayout(
        "Read_Blob_Req", Self.init(handle:offset:),
        Field("Attribute_Handle", \.handle), Field("Value_Offset", \.offset))
}

/// ATT_READ_BLOB_RSP (0x0D, 3.4.4.6): part of a value.
public struct ReadBlobResponse: ATTPDU {
    /// 0x0D.
    public static var opcode: ATTOpcode { .readBlobResponse }
    /// The part read.
    public var value: ArraySlice<UInt8>

    /// A response carrying `value`.
    public init(value: ArraySlice<UInt8>) { self.value = value }

    /// Part_Attribute_Value.
    public static let layout = MessageLayout("Read_Blob_Rsp", Self.init(value:), .rest("Part_Attribute_Value", \.value))
}

/// ATT_READ_MULTIPLE_REQ (0x0E, 3.4.4.7): the values of two or more attributes.
public struct ReadMultipleRequest: ATTPDU {
    /// 0x0E.
    public static var opcode: ATTOpcode { .readMultipleRequest }
    /// The attributes to read; the specification asks for two or more.
    public var handles: [AttributeHandle]

    /// A request to read the attributes at `handles`.
    public init(handles: [AttributeHandle]) { self.handles = handles }

    /// Set_Of_Handles.
    public static let layout = MessageLayout(
        "Read_Multiple_Req", Self.init(handles:), .entries("Set_Of_Handles", size: 2, minimum: 2, \.handles))
}

/// ATT_READ_MULTIPLE_RSP (0x0F, 3.4.4.8): the values concatenated, truncated to
/// ATT_MTU - 1 bytes.
public struct ReadMultipleResponse: ATTPDU {
    /// 0x0F.
    public static var opcode: ATTOpcode { .readMultipleResponse }
    /// The concatenated values.
    public var values: ArraySlice<UInt8>

    /// A response carrying `values`.
    public init(values: ArraySlice<UInt8>) { self.values = values }

    /// Set_Of_Values.
    public static let layout = MessageLayout("Read_Multiple_Rsp", Self.init(values:), .rest("Set_Of_Values", \.values))
}

/// ATT_READ_BY_GROUP_TYPE_REQ (0x10, 3.4.4.9): the grouping attributes (services) of one
/// type in a handle range.
public struct ReadByGroupTypeRequest: ATTPDU {
    /// 0x10.
    public static var opcode: ATTOpcode { .readByGroupTypeRequest }
    /// The first handle to look at.
    public var startingHandle: AttributeHandle
    /// The last handle to look at.
    public var endingHandle: AttributeHandle
    /// The group type (0x2800 primary or 0x2801 secondary service for GATT); sent as 2 bytes
    /// when it has a 16-bit form, else as 16.
    public var groupType: BluetoothUUID

    /// A request for the groups of `groupType` in `startingHandle...endingHandle`.
    public init(startingHandle: AttributeHandle, endingHandle: AttributeHandle, groupType: BluetoothUUID) {
        (self.startingHandle, self.endingHandle, self.groupType) = (startingHandle, endingHandle, groupType)
    }

    /// Starting_Handle, Ending_Handle, Attribute_Group_Type.
    public static let layout = MessageLayout(
        "Read_By_Group_Type_Req", Self.init(startingHandle:endingHandle:groupType:),
        Field("Starting_Handle", \.startingHandle), Field("Ending_Handle", \.endingHandle),
        .attributeType("Attribute_Group_Type", errorField: "Read_By_Group_Type_Req group type", \.groupType))
}

/// ATT_READ_BY_GROUP_TYPE_RSP (0x11, 3.4.4.10): handle, group end handle and value of each
/// group, all values the same length (the length byte is 4 + that length).
public struct ReadByGroupTypeResponse: ATTPDU {
    /// One group.
    public struct Entry: LaidOut, UniformLengthEntry, Equatable {
        /// The grouping attribute's handle.
        public var handle: AttributeHandle
        /// The last handle of the group.
        public var endGroupHandle: AttributeHandle
        /// The grouping attribute's value (a service's UUID), possibly truncated.
        public var value: ArraySlice<UInt8>

        /// An entry for the group `handle...endGroupHandle`.
        public init(handle: AttributeHandle, endGroupHandle: AttributeHandle, value: ArraySlice<UInt8>) {
            (self.handle, self.endGroupHandle, self.value) = (handle, endGroupHandle, value)
        }

        /// Attribute_Handle, End_Group_Handle, Attribute_Value (the rest of the entry).
        public static let layout = MessageLayout(
            "Attribute_Data", Self.init(handle:endGroupHandle:value:),
            Field("Attribute_Handle", \.handle), Field("End_Group_Handle", \.endGroupHandle),
            .rest("Attribute_Value", \.value))
    }

    /// 0x11.
    public static var opcode: ATTOpcode { .readByGroupTypeResponse }
    /// The groups, in handle order; every value the same length, at most 251 bytes.
    public var entries: [Entry]

    /// A response listing `entries`.
    public init(entries: [Entry]) { self.entries = entries }

    /// Length, then Attribute_Data_List: entries of that length each. Encoding traps unless
    /// every value has the same length, at most 251.
    public static let layout = MessageLayout(
        "Read_By_Group_Type_Rsp", Self.init(entries:),
        .uniformEntries(
            "Attribute_Data_List", header: 4, maximumValueLength: 251,
            errorField: "Read_By_Group_Type_Rsp", \.entries))
}

/// ATT_READ_MULTIPLE_VARIABLE_REQ (0x20, 3.4.4.11): the values of two or more attributes,
/// each returned with its length.
public struct ReadMultipleVariableRequest: ATTPDU {
    /// 0x20.
    public static var opcode: ATTOpcode { .readMultipleVariableRequest }
    /// The attributes to read; the specification asks for two or more.
    public var handles: [AttributeHandle]

    /// A request to read the attributes at `handles`.
    public init(handles: [AttributeHandle]) { self.handles = handles }

    /// Set_Of_Handles.
    public static let layout = MessageLayout(
        "Read_Multiple_Variable_Req", Self.init(handles:), .entries("Set_Of_Handles", size: 2, minimum: 2, \.handles))
}

/// ATT_READ_MULTIPLE_VARIABLE_RSP (0x21, 3.4.4.12): length–value tuples. The PDU ends at
/// ATT_MTU, so the last value may be shorter than its length says.
public struct ReadMultipleVariableResponse: ATTPDU {
    /// One value and its full length.
    public struct Entry: WireCodable, Equatable {
        /// The attribute value's full length.
        public var length: UInt16
        /// The value; shorter than `length` only in the last entry of a truncated response.
        public var value: ArraySlice<UInt8>

        /// An entry whose value may be truncated (`value.count < length`).
        public init(length: UInt16, value: ArraySlice<UInt8>) { (self.length, self.value) = (length, value) }

        /// A whole value (`length` is its count).
        public init(value: ArraySlice<UInt8>) { self.init(length: UInt16(value.count), value: value) }

        /// Whether the value is shorter than its length.
        public var isTruncated: Bool { value.count < Int(length) }

        /// Reads Value_Length and then that many octets, or what is left: a value shorter
        /// than its length takes the rest of the PDU, so it is the last.
        public init(from reader: inout ByteReader) throws(DecodingError) {
            length = try reader.readUInt16()
            value = try reader.readBytes(min(Int(length), reader.count))
        }

        /// Writes Value_Length and the value; traps if the value is longer than its length.
        public func encode(to writer: inout ByteWriter) {
            precondition(value.count <= Int(length), "a value is longer than its length")
            writer.write(length)
            writer.write(bytes: value)
        }
    }

    /// 0x21.
    public static var opcode: ATTOpcode { .readMultipleVariableResponse }
    /// The values, in the request's order; at least one. Only the last may be truncated.
    public var entries: [Entry]

    /// A response listing `entries`.
    public init(entries: [Entry]) { self.entries = entries }

    /// Length_Value_Tuple_List. Encoding traps if a value is shorter than its length in any
    /// but the last entry.
    public static let layout = MessageLayout(
        "Read_Multiple_Variable_Rsp", Self.init(entries:),
        {
            let tuples = Field<Self, [Entry]>.selfDelimitedEntries("Length_Value_Tuple_List", minimumSize: 2, \.entries)
            return Field(
                "Length_Value_Tuple_List", read: tuples.read,
                write: { response, writer in
                    precondition(
                        response.entries.dropLast().allSatisfy { !$0.isTruncated },
                        "only the last value may be truncated")
                    tuples.write(response, &writer)
                })
        }())
}
