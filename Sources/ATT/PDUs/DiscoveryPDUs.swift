import BluetoothCore

// Discovery: Find Information and Find By Type Value (Core Vol 3, Part F, 3.4.3).

/// ATT_FIND_INFORMATION_REQ (0x04, 3.4.3.1): the handles and types of the attributes in a
/// handle range.
public struct FindInformationRequest: ATTPDU {
    /// 0x04.
    public static var opcode: ATTOpcode { .findInformationRequest }
    /// The first handle to look at.
    public var startingHandle: AttributeHandle
    /// The last handle to look at.
    public var endingHandle: AttributeHandle

    /// A request for `startingHandle...endingHandle`.
    public init(startingHandle: AttributeHandle, endingHandle: AttributeHandle) {
        (self.startingHandle, self.endingHandle) = (startingHandle, endingHandle)
    }

    /// Starting_Handle, Ending_Handle.
    public static let layout = MessageLayout(
        "Find_Information_Req", Self.init(startingHandle:endingHandle:),
        Field("Starting_Handle", \.startingHandle), Field("Ending_Handle", \.endingHandle))
}

/// ATT_FIND_INFORMATION_RSP (0x05, 3.4.3.2): handle–type pairs, all 16-bit UUIDs (format
/// 0x01) or all 128-bit (format 0x02).
public struct FindInformationResponse: ATTPDU {
    /// One attribute's handle and type.
    public struct Entry: Sendable, Equatable {
        /// The attribute's handle.
        public var handle: AttributeHandle
        /// The attribute's type.
        public var type: BluetoothUUID

        /// An entry for the attribute at `handle`.
        public init(handle: AttributeHandle, type: BluetoothUUID) { (self.handle, self.type) = (handle, type) }
    }

    /// 0x05.
    public static var opcode: ATTOpcode { .findInformationResponse }
    /// The attributes found, in handle order.
    public var entries: [Entry]

    /// A response listing `entries`.
    public init(entries: [Entry]) { self.entries = entries }

    /// Whether every type fits the 16-bit format (0x01); otherwise all go as 128-bit (0x02).
    public var usesShortUUIDs: Bool { entries.allSatisfy { $0.type.shortValue != nil } }

    /// Format, then Information_Data: handles with 2-octet types (format 0x01) or 16-octet
    /// ones (0x02).
    public static let layout = MessageLayout(
        "Find_Information_Rsp", Self.init(entries:),
        Field(
            "Information_Data",
            read: { reader throws(DecodingError) in
                let format = try reader.readUInt8()
                let uuidSize: Int
                switch format {
                case 0x01: uuidSize = 2
                case 0x02: uuidSize = 16
                default: throw .invalidValue(field: "Find_Information_Rsp format", value: UInt64(format))
                }
                guard !reader.isAtEnd else { throw .truncated(needed: 2 + uuidSize, available: 0) }
                var entries: [Entry] = []
                while !reader.isAtEnd {
                    var entry = ByteReader(try reader.readBytes(2 + uuidSize))
                    let handle = try AttributeHandle(from: &entry)
                    // 2 or 16 bytes: always a valid UUID.
                    entries.append(Entry(handle: handle, type: BluetoothUUID(littleEndianBytes: entry.readRest())!))
                }
                return entries
            },
            write: { response, writer in
                let short = response.usesShortUUIDs
                writer.write(short ? UInt8(0x01) : 0x02)
                for entry in response.entries {
                    writer.write(entry.handle)
                    if short {
                        writer.write(entry.type.shortValue!)
                    } else {
                        writer.write(bytes: entry.type.bytes.reversed())
                    }
                }
            }))
}

/// ATT_FIND_BY_TYPE_VALUE_REQ (0x06, 3.4.3.3): the attributes of a 16-bit type with a given
/// value (primary service discovery by UUID).
public struct FindByTypeValueRequest: ATTPDU {
    /// 0x06.
    public static var opcode: ATTOpcode { .findByTypeValueRequest }
    /// The first handle to look at.
    public var startingHandle: AttributeHandle
    /// The last handle to look at.
    public var endingHandle: AttributeHandle
    /// The 16-bit attribute type to match.
    public var attributeType: UInt16
    /// The value to match.
    public var attributeValue: ArraySlice<UInt8>

    /// A request for attributes of `attributeType` holding `attributeValue`.
    public init(
        startingHandle: AttributeHandle, endingHandle: AttributeHandle, attributeType: UInt16,
        attributeValue: ArraySlice<UInt8>
    ) {
        (self.startingHandle, self.endingHandle, self.attributeType, self.attributeValue) =
            (startingHandle, endingHandle, attributeType, attributeValue)
    }

    /// Starting_Handle, Ending_Handle, Attribute_Type, Attribute_Value.
    public static let layout = MessageLayout(
        "Find_By_Type_Value_Req", Self.init(startingHandle:endingHandle:attributeType:attributeValue:),
        Field("Starting_Handle", \.startingHandle), Field("Ending_Handle", \.endingHandle),
        Field("Attribute_Type", \.attributeType), .rest("Attribute_Value", \.attributeValue))
}

/// ATT_FIND_BY_TYPE_VALUE_RSP (0x07, 3.4.3.4): the handle ranges found.
public struct FindByTypeValueResponse: ATTPDU {
    /// One attribute found and the end of its group.
    public struct Entry: LaidOut, Equatable {
        /// The matching attribute's handle.
        public var foundHandle: AttributeHandle
        /// The last handle of its group (the found handle for a non-grouping attribute).
        public var groupEndHandle: AttributeHandle

        /// An entry for `foundHandle...groupEndHandle`.
        public init(foundHandle: AttributeHandle, groupEndHandle: AttributeHandle) {
            (self.foundHandle, self.groupEndHandle) = (foundHandle, groupEndHandle)
        }

        /// Found_Attribute_Handle, Group_End_Handle.
        public static let layout = MessageLayout(
            "Handles_Information", Self.init(foundHandle:groupEndHandle:),
            Field("Found_Attribute_Handle", \.foundHandle), Field("Group_End_Handle", \.groupEndHandle))
    }

    /// 0x07.
    public static var opcode: ATTOpcode { .findByTypeValueResponse }
    /// The ranges found, in handle order; at least one.
    public var entries: [Entry]

    /// A response listing `entries`.
    public init(entries: [Entry]) { self.entries = entries }

    /// Handles_Information_List: 4-octet entries to the end.
    public static let layout = MessageLayout(
        "Find_By_Type_Value_Rsp", Self.init(entries:),
        .entries("Handles_Information_List", size: 4, \.entries))
}
