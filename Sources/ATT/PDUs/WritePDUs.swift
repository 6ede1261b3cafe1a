import BluetoothCore
import HCI

// Writing: Write Request/Response, Write Command, Signed Write Command, Prepare and Execute
// Write (Core Vol 3, Part F, 3.4.5 and 3.4.6).

/// ATT_WRITE_REQ (0x12, 3.4.5.1): a write the server acknowledges.
public struct WriteRequest: HandleValuePDU {
    /// 0x12.
    public static var opcode: ATTOpcode { .writeRequest }
    /// The attribute to write.
    public var handle: UInt16
    /// The new value.
    public var value: [UInt8]

    /// A request to write `value` to the attribute at `handle`.
    public init(handle: UInt16, value: [UInt8]) {
        self.handle = handle
        self.value = value
    }
}

/// ATT_WRITE_RSP (0x13, 3.4.5.2): the write succeeded. No parameters.
public struct WriteResponse: ParameterlessPDU {
    /// 0x13.
    public static var opcode: ATTOpcode { .writeResponse }

    /// The response.
    public init() {}
}

/// ATT_WRITE_CMD (0x52, 3.4.5.3): a write with no response.
public struct WriteCommand: HandleValuePDU {
    /// 0x52.
    public static var opcode: ATTOpcode { .writeCommand }
    /// The attribute to write.
    public var handle: UInt16
    /// The new value.
    public var value: [UInt8]

    /// A command writing `value` to the attribute at `handle`.
    public init(handle: UInt16, value: [UInt8]) {
        self.handle = handle
        self.value = value
    }
}

/// ATT_SIGNED_WRITE_CMD (0xD2, 3.4.5.4): a write command followed by a 12-byte
/// authentication signature (sign counter and CMAC, Core Vol 3, Part H, 2.4.5).
public struct SignedWriteCommand: ATTPDU {
    /// 0xD2.
    public static var opcode: ATTOpcode { .signedWriteCommand }
    /// The attribute to write.
    public var handle: UInt16
    /// The new value.
    public var value: [UInt8]
    /// The authentication signature: exactly 12 bytes, the last of the PDU.
    public var signature: [UInt8]

    /// A command writing `value` to the attribute at `handle`, signed with `signature`.
    public init(handle: UInt16, value: [UInt8], signature: [UInt8]) {
        self.handle = handle
        self.value = value
        self.signature = signature
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        handle = try reader.readUInt16()
        guard reader.count >= 12 else { throw .truncated(needed: 12, available: reader.count) }
        value = Array(try reader.readBytes(reader.count - 12))
        signature = Array(reader.readRest())
    }

    /// Encodes the parameters; traps unless the signature has 12 bytes.
    public func encode(to writer: inout ByteWriter) {
        precondition(signature.count == 12, "an ATT authentication signature has 12 bytes")
        writer.write(handle)
        writer.write(bytes: value)
        writer.write(bytes: signature)
    }
}

/// ATT_PREPARE_WRITE_REQ (0x16, 3.4.6.1): queues part of a long or reliable write.
public struct PrepareWriteRequest: PreparedWritePDU {
    /// 0x16.
    public static var opcode: ATTOpcode { .prepareWriteRequest }
    /// The attribute to write.
    public var handle: UInt16
    /// Where in the value this part goes.
    public var offset: UInt16
    /// The part.
    public var value: [UInt8]

    /// A request to queue `value` for the attribute at `handle`, at `offset`.
    public init(handle: UInt16, offset: UInt16, value: [UInt8]) {
        self.handle = handle
        self.offset = offset
        self.value = value
    }
}

/// ATT_PREPARE_WRITE_RSP (0x17, 3.4.6.2): echoes the queued part.
public struct PrepareWriteResponse: PreparedWritePDU {
    /// 0x17.
    public static var opcode: ATTOpcode { .prepareWriteResponse }
    /// The attribute the part is for.
    public var handle: UInt16
    /// Where in the value the part goes.
    public var offset: UInt16
    /// The part, as queued.
    public var value: [UInt8]

    /// A response echoing `value` for the attribute at `handle`, at `offset`.
    public init(handle: UInt16, offset: UInt16, value: [UInt8]) {
        self.handle = handle
        self.offset = offset
        self.value = value
    }
}

/// ATT_EXECUTE_WRITE_REQ (0x18, 3.4.6.3): writes or cancels the queued parts.
public struct ExecuteWriteRequest: ATTPDU {
    /// What to do with the queue.
    public enum Flags: UInt8, Sendable {
        /// 0x00: discard every queued part.
        case cancel = 0x00
        /// 0x01: write every queued part.
        case write = 0x01
    }

    /// 0x18.
    public static var opcode: ATTOpcode { .executeWriteRequest }
    /// Write or cancel.
    public var flags: Flags

    /// A request to write or cancel the queue.
    public init(flags: Flags) { self.flags = flags }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        let raw = try reader.readUInt8()
        guard let flags = Flags(rawValue: raw) else {
            throw .invalidValue(field: "Execute_Write_Req flags", value: UInt64(raw))
        }
        self.flags = flags
    }

    public func encode(to writer: inout ByteWriter) { writer.write(flags.rawValue) }
}

/// ATT_EXECUTE_WRITE_RSP (0x19, 3.4.6.4): the queue was written or cancelled. No parameters.
public struct ExecuteWriteResponse: ParameterlessPDU {
    /// 0x19.
    public static var opcode: ATTOpcode { .executeWriteResponse }

    /// The response.
    public init() {}
}
