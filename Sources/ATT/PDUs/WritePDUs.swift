import BluetoothCore

// Writing: Write Request/Response, Write Command, Signed Write Command, Prepare and Execute
// Write (Core Vol 3, Part F, 3.4.5 and 3.4.6).

/// ATT_WRITE_REQ (0x12, 3.4.5.1): a write the server acknowledges.
public struct WriteRequest: AttributeValuePDU {
    /// 0x12.
    public static var opcode: ATTOpcode { .writeRequest }
    /// The attribute to write.
    public var handle: AttributeHandle
    /// The new value.
    public var value: ArraySlice<UInt8>

    /// A request to write `value` to the attribute at `handle`.
    public init(handle: AttributeHandle, value: ArraySlice<UInt8>) { (self.handle, self.value) = (handle, value) }

    /// Attribute_Handle, Attribute_Value.
    public static let layout = handleAndValue("Write_Req")
}

/// ATT_WRITE_RSP (0x13, 3.4.5.2): the write succeeded. No parameters.
public struct WriteResponse: ATTPDU {
    /// 0x13.
    public static var opcode: ATTOpcode { .writeResponse }

    /// The response.
    public init() {}

    /// No parameters.
    public static let layout = MessageLayout("Write_Rsp", Self.init)
}

/// ATT_WRITE_CMD (0x52, 3.4.5.3): a write with no response.
public struct WriteCommand: AttributeValuePDU {
    /// 0x52.
    public static var opcode: ATTOpcode { .writeCommand }
    /// The attribute to write.
    public var handle: AttributeHandle
    /// The new value.
    public var value: ArraySlice<UInt8>

    /// A command writing `value` to the attribute at `handle`.
    public init(handle: AttributeHandle, value: ArraySlice<UInt8>) { (self.handle, self.value) = (handle, value) }

    /// Attribute_Handle, Attribute_Value.
    public static let layout = handleAndValue("Write_Cmd")
}

/// ATT_SIGNED_WRITE_CMD (0xD2, 3.4.5.4): a write command followed by a 12-byte
/// authentication signature (sign counter and CMAC, Core Vol 3, Part H, 2.4.5).
public struct SignedWriteCommand: ATTPDU {
    /// 0xD2.
    public static var opcode: ATTOpcode { .signedWriteCommand }
    /// The attribute to write.
    public var handle: AttributeHandle
    /// The new value.
    public var value: ArraySlice<UInt8>
    /// The authentication signature: exactly 12 bytes, the last of the PDU.
    public var signature: ArraySlice<UInt8>

    /// A command writing `value` to the attribute at `handle`, signed with `signature`.
    public init(handle: AttributeHandle, value: ArraySlice<UInt8>, signature: ArraySlice<UInt8>) {
        (self.handle, self.value, self.signature) = (handle, value, signature)
    }

    /// Attribute_Handle, Attribute_Value (all but the last 12 octets), Authentication_Signature.
    /// Encoding traps unless the signature has 12 bytes.
    public static let layout = MessageLayout(
        "Signed_Write_Cmd", Self.init(handle:value:signature:),
        Field("Attribute_Handle", \.handle),
        Field(
            "Attribute_Value",
            read: { reader throws(DecodingError) in
                guard reader.count >= 12 else { throw .truncated(needed: 12, available: reader.count) }
                return try reader.readBytes(reader.count - 12)
            }, write: { command, writer in writer.write(bytes: command.value) }),
        Field(
            "Authentication_Signature", read: { reader in reader.readRest() },
            write: { command, writer in
                precondition(command.signature.count == 12, "an ATT authentication signature has 12 bytes")
                writer.write(bytes: command.signature)
            }))
}

/// ATT_PREPARE_WRITE_REQ (0x16, 3.4.6.1): queues part of a long or reliable write.
public struct PrepareWriteRequest: PreparedWritePDU {
    /// 0x16.
    public static var opcode: ATTOpcode { .prepareWriteRequest }
    /// The attribute to write.
    public var handle: AttributeHandle
    /// Where in the value this part goes.
    public var offset: UInt16
    /// The part.
    public var value: ArraySlice<UInt8>

    /// A request to queue `value` for the attribute at `handle`, at `offset`.
    public init(handle: AttributeHandle, offset: UInt16, value: ArraySlice<UInt8>) {
        (self.handle, self.offset, self.value) = (handle, offset, value)
    }

    /// Attribute_Handle, Value_Offset, Part_Attribute_Value.
    public static let layout = preparedPart("Prepare_Write_Req")
}

/// ATT_PREPARE_WRITE_RSP (0x17, 3.4.6.2): echoes the queued part.
public struct PrepareWriteResponse: PreparedWritePDU {
    /// 0x17.
    public static var opcode: ATTOpcode { .prepareWriteResponse }
    /// The attribute the part is for.
    public var handle: AttributeHandle
    /// Where in the value the part goes.
    public var offset: UInt16
    /// The part, as queued.
    public var value: ArraySlice<UInt8>

    /// A response echoing `value` for the attribute at `handle`, at `offset`.
    public init(handle: AttributeHandle, offset: UInt16, value: ArraySlice<UInt8>) {
        (self.handle, self.offset, self.value) = (handle, offset, value)
    }

    /// Attribute_Handle, Value_Offset, Part_Attribute_Value.
    public static let layout = preparedPart("Prepare_Write_Rsp")
}

/// ATT_EXECUTE_WRITE_REQ (0x18, 3.4.6.3): writes or cancels the queued parts.
public struct ExecuteWriteRequest: ATTPDU {
    /// What to do with the queue.
    public enum Flags: UInt8, Sendable, WireCodable {
        /// 0x00: discard every queued part.
        case cancel = 0x00
        /// 0x01: write every queued part.
        case write = 0x01

        /// Reads the Flags octet; other values are reserved, and an error.
        public init(from reader: inout ByteReader) throws(DecodingError) {
            let raw = try reader.readUInt8()
            guard let flags = Flags(rawValue: raw) else {
                throw .invalidValue(field: "Execute_Write_Req flags", value: UInt64(raw))
            }
            self = flags
        }

        /// Writes the Flags octet.
        public func encode(to writer: inout ByteWriter) { writer.write(rawValue) }
    }

    /// 0x18.
    public static var opcode: ATTOpcode { .executeWriteRequest }
    /// Write or cancel.
    public var flags: Flags

    /// A request to write or cancel the queue.
    public init(flags: Flags) { self.flags = flags }

    /// Flags.
    public static let layout = MessageLayout("Execute_Write_Req", Self.init(flags:), Field("Flags", \.flags))
}

/// ATT_EXECUTE_WRITE_RSP (0x19, 3.4.6.4): the queue was written or cancelled. No parameters.
public struct ExecuteWriteResponse: ATTPDU {
    /// 0x19.
    public static var opcode: ATTOpcode { .executeWriteResponse }

    /// The response.
    public init() {}

    /// No parameters.
    public static let layout = MessageLayout("Execute_Write_Rsp", Self.init)
}
