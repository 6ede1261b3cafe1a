import BluetoothCore
import HCI

// Discovery: Find Information and Find By Type Value (Core Vol 3, Part F, 3.4.3).

/// ATT_FIND_INFORMATION_REQ (0x04, 3.4.3.1): the handles and types of the attributes in a
/// handle range.
public struct FindInformationRequest: ATTPDU {
    /// 0x04.
    public static var opcode: ATTOpcode { .findInformationRequest }
    /// The first handle to look at.
    public var startingHandle: UInt16
    /// The last handle to look at.
    public var endingHandle: UInt16

    /// A request for `startingHandle...endingHandle`.
    public init(startingHandle: UInt16, endingHandle: UInt16) {
        self.startingHandle = startingHandle
        self.endingHandle = endingHandle
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        startingHandle = try reader.readUInt16()
        endingHandle = try reader.readUInt16()
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(startingHandle)
        writer.write(endingHandle)
    }
}

/// ATT_FIND_INFORMATION_RSP (0x05, 3.4.3.2): handle–type pairs, all 16-bit UUIDs (format
/// 0x01) or all 128-bit (format 0x02).
public struct FindInformationResponse: ATTPDU {
    /// One attribute's handle and type.
    public struct Entry: Sendable, Equatable {
        /// The attribute's handle.
        public var handle: UInt16
        /// The attribute's type.
        public var type: BluetoothUUID

        /// An entry for the attribute at `handle`.
        public init(handle: UInt16, type: BluetoothUUID) {
            self.handle = handle
            self.type = type
        }
    }

    /// 0x05.
    public static var opcode: ATTOpcode { .findInformationResponse }
    /// The attributes found, in handle order.
    public var entries: [Entry]

    /// A response listing `entries`.
    public init(entries: [Entry]) { self.entries = entries }

    /// Whether every type fits the 16-bit format (0x01); otherwise all go as 128-bit (0x02).
    public var usesShortUUIDs: Bool { entries.allSatisfy { $0.type.shortValue != nil } }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        let format = try reader.readUInt8()
        let uuidSize: Int
        switch format {
        case 0x01: uuidSize = 2
        case 0x02: uuidSize = 16
        default: throw .invalidValue(field: "Find_Information_Rsp format", value: UInt64(format))
        }
        entries = try reader.readEntries(size: 2 + uuidSize) { (entry: inout ByteReader) throws(DecodingError) in
            let handle = try entry.readUInt16()
            // 2 or 16 bytes: always a valid UUID.
            return Entry(handle: handle, type: BluetoothUUID(littleEndianBytes: entry.readRest())!)
        }
    }

    public func encode(to writer: inout ByteWriter) {
        let short = usesShortUUIDs
        writer.write(short ? UInt8(0x01) : 0x02)
        for entry in entries {
            writer.write(entry.handle)
            if short {
                writer.write(entry.type.shortValue!)
            } else {
                writer.write(bytes: entry.type.bytes.reversed())
            }
        }
    }
}

/// ATT_FIND_BY_TYPE_VALUE_REQ (0x06, 3.4.3.3): the attributes of a 16-bit type with a given
/// value (primary service discovery by UUID).
public struct FindByTypeValueRequest: ATTPDU {
    /// 0x06.
    public static var opcode: ATTOpcode { .findByTypeValueRequest }
    /// The first handle to look at.
    public var startingHandle: UInt16
    /// The last handle to look at.
    public var endingHandle: UInt16
    /// The 16-bit attribute type to match.
    public var attributeType: UInt16
    /// The value to match.
    public var attributeValue: [UInt8]

    /// A request for attributes of `attributeType` holding `attributeValue`.
    public init(startingHandle: UInt16, endingHandle: UInt16, attributeType: UInt16, attributeValue: [UInt8]) {
        self.startingHandle = startingHandle
        self.endingHandle = endingHandle
        self.attributeType = attributeType
        self.attributeValue = attributeValue
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        startingHandle = try reader.readUInt16()
        endingHandle = try reader.readUInt16()
        attributeType = try reader.readUInt16()
        attributeValue = Array(reader.readRest())
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(startingHandle)
        writer.write(endingHandle)
        writer.write(attributeType)
        writer.write(bytes: attributeValue)
    }
}

/// ATT_FIND_BY_TYPE_VALUE_RSP (0x07, 3.4.3.4): the handle ranges found.
public struct FindByTypeValueResponse: ATTPDU {
    /// One attribute found and the end of its group.
    public struct Entry: Sendable, Equatable {
        /// The matching attribute's handle.
        public var foundHandle: UInt16
        /// The last handle of its group (the found handle for a non-grouping attribute).
        public var groupEndHandle: UInt16

        /// An entry for `foundHandle...groupEndHandle`.
        public init(foundHandle: UInt16, groupEndHandle: UInt16) {
            self.foundHandle = foundHandle
            self.groupEndHandle = groupEndHandle
        }
    }

    /// 0x07.
    public static var opcode: ATTOpcode { .findByTypeValueResponse }
    /// The ranges found, in handle order; at least one.
    public var entries: [Entry]

    /// A response listing `entries`.
    public init(entries: [Entry]) { self.entries = entries }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        entries = try reader.readEntries(size: 4) { (entry: inout ByteReader) throws(DecodingError) in
            Entry(foundHandle: try entry.readUInt16(), groupEndHandle: try entry.readUInt16())
        }
    }

    public func encode(to writer: inout ByteWriter) {
        for entry in entries {
            writer.write(entry.foundHandle)
            writer.write(entry.groupEndHandle)
        }
    }
}
