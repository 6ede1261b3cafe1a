import BluetoothCore

/// The H4 packet indicator: the byte in front of every HCI packet on a UART, on an
/// emulator's socket, on the user channel socket and in btsnoop files of datalink 1002.
public enum H4PacketType: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// 0x01 HCI Command packet (host to controller).
    case command = 0x01
    /// 0x02 HCI ACL Data packet.
    case acl = 0x02
    /// 0x03 HCI Synchronous Data packet.
    case sco = 0x03
    /// 0x04 HCI Event packet (controller to host).
    case event = 0x04
    /// 0x05 HCI ISO Data packet.
    case iso = 0x05

    /// The size of the packet's own header after the indicator byte.
    public var headerLength: Int {
        switch self {
        case .command, .sco: 3
        case .acl, .iso: 4
        case .event: 2
        }
    }

    /// The lowercase type name: `command`, `acl`, `sco`, `event` or `iso`.
    public var description: String {
        switch self {
        case .command: "command"
        case .acl: "acl"
        case .sco: "sco"
        case .event: "event"
        case .iso: "iso"
        }
    }
}

/// A 16-bit HCI command opcode: a 6-bit group (OGF) and a 10-bit command (OCF).
public struct HCIOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The opcode as sent on the wire.
    public let rawValue: UInt16
    /// Wraps an opcode from the wire.
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    /// Builds an opcode from its group and command fields.
    public init(ogf: UInt8, ocf: UInt16) { rawValue = UInt16(ogf) << 10 | (ocf & 0x3FF) }
    /// The opcode group field.
    public var ogf: UInt8 { UInt8(rawValue >> 10) }
    /// The opcode command field.
    public var ocf: UInt16 { rawValue & 0x3FF }
    /// Whether the opcode is in the vendor-specific group 0x3F.
    public var isVendorSpecific: Bool { ogf == 0x3F }
    /// The Core specification's name (`LE_Set_Scan_Parameters`), "Vendor" or "Unknown".
    public var name: String { HCINames.command(self) }
    /// `0x200b LE_Set_Scan_Parameters`.
    public var description: String { "\(hex(rawValue, digits: 4)) \(name)" }
}

/// One HCI packet of any type. Decoded packets hold views of the received buffer.
public enum HCIPacket: Sendable, Equatable {
    /// An HCI Command packet.
    case command(HCICommandPacket)
    /// An HCI ACL Data packet.
    case acl(ACLDataPacket)
    /// An HCI Synchronous Data packet.
    case sco(SCODataPacket)
    /// An HCI Event packet.
    case event(HCIEventPacket)
    /// An HCI ISO Data packet.
    case iso(ISODataPacket)

    /// The H4 indicator of this packet.
    public var type: H4PacketType {
        switch self {
        case .command: .command
        case .acl: .acl
        case .sco: .sco
        case .event: .event
        case .iso: .iso
        }
    }

    /// Decodes a packet of a known type from its bytes (without the H4 indicator).
    public init(type: H4PacketType, body: ArraySlice<UInt8>) throws(DecodingError) {
        var reader = ByteReader(body)
        switch type {
        case .command: self = .command(try HCICommandPacket(from: &reader))
        case .acl: self = .acl(try ACLDataPacket(from: &reader))
        case .sco: self = .sco(try SCODataPacket(from: &reader))
        case .event: self = .event(try HCIEventPacket(from: &reader))
        case .iso: self = .iso(try ISODataPacket(from: &reader))
        }
        try reader.expectEnd()
    }

    /// Decodes an H4 packet: the indicator byte, then the packet.
    public init(h4 bytes: ArraySlice<UInt8>) throws(DecodingError) {
        guard let first = bytes.first else { throw .truncated(needed: 1, available: 0) }
        guard let type = H4PacketType(rawValue: first) else {
            throw .invalidValue(field: "H4 packet type", value: UInt64(first))
        }
        try self.init(type: type, body: bytes.dropFirst())
    }

    /// The packet without the H4 indicator.
    public func encodeBody() -> [UInt8] {
        var writer = ByteWriter(capacity: 260)
        encodeBody(to: &writer)
        return writer.bytes
    }

    /// The packet with its H4 indicator in front, as written to a transport.
    public func encodeH4() -> [UInt8] {
        var writer = ByteWriter(capacity: 260, prefix: [type.rawValue])
        encodeBody(to: &writer)
        return writer.bytes
    }

    private func encodeBody(to writer: inout ByteWriter) {
        switch self {
        case .command(let packet): packet.encode(to: &writer)
        case .acl(let packet): packet.encode(to: &writer)
        case .sco(let packet): packet.encode(to: &writer)
        case .event(let packet): packet.encode(to: &writer)
        case .iso(let packet): packet.encode(to: &writer)
        }
    }
}

/// An HCI command packet: opcode, then up to 255 bytes of parameters.
public struct HCICommandPacket: Sendable, Equatable {
    /// The command's opcode (OGF and OCF).
    public var opcode: HCIOpcode
    /// The command's parameters, at most 255 bytes.
    public var parameters: ArraySlice<UInt8>

    /// A command packet; traps if `parameters` is longer than 255 bytes.
    public init(opcode: HCIOpcode, parameters: ArraySlice<UInt8> = []) {
        precondition(parameters.count <= 255, "HCI command parameters are at most 255 bytes")
        self.opcode = opcode
        self.parameters = parameters
    }

    /// Decodes the packet (its header, then exactly the length it declares).
    public init(from reader: inout ByteReader) throws(DecodingError) {
        opcode = HCIOpcode(rawValue: try reader.readUInt16())
        let length = Int(try reader.readUInt8())
        guard reader.count == length else {
            throw .lengthMismatch(field: "command parameter length", declared: length, actual: reader.count)
        }
        parameters = try reader.readBytes(length)
    }

    /// Writes the packet: its header, then its payload.
    public func encode(to writer: inout ByteWriter) {
        writer.write(opcode.rawValue)
        writer.write(UInt8(parameters.count))
        writer.write(bytes: parameters)
    }
}

/// An HCI event packet: event code, then up to 255 bytes of parameters.
public struct HCIEventPacket: Sendable, Equatable {
    /// The event code (0x0E Command Complete, 0x3E LE Meta, …).
    public var code: UInt8
    /// The event's parameters, at most 255 bytes.
    public var parameters: ArraySlice<UInt8>

    /// An event packet; traps if `parameters` is longer than 255 bytes.
    public init(code: UInt8, parameters: ArraySlice<UInt8>) {
        precondition(parameters.count <= 255, "HCI event parameters are at most 255 bytes")
        self.code = code
        self.parameters = parameters
    }

    /// Decodes the packet (its header, then exactly the length it declares).
    public init(from reader: inout ByteReader) throws(DecodingError) {
        code = try reader.readUInt8()
        let length = Int(try reader.readUInt8())
        guard reader.count == length else {
            throw .lengthMismatch(field: "event parameter length", declared: length, actual: reader.count)
        }
        parameters = try reader.readBytes(length)
    }

    /// Writes the packet: its header, then its payload.
    public func encode(to writer: inout ByteWriter) {
        writer.write(code)
        writer.write(UInt8(parameters.count))
        writer.write(bytes: parameters)
    }
}

/// Packet_Boundary_Flag of an ACL data packet (Core Vol 4, Part E, 5.4.2).
public enum ACLPacketBoundary: UInt8, Sendable {
    /// First packet of a non-automatically-flushable L2CAP PDU (host to controller).
    case firstNonFlushable = 0b00
    /// Continuing fragment of a higher-layer PDU.
    case continuing = 0b01
    /// First packet of an automatically flushable L2CAP PDU (controller to host on LE).
    case firstFlushable = 0b10
    /// A complete L2CAP PDU, automatically flushable (BR/EDR only; deprecated).
    case complete = 0b11

    /// Whether this packet starts a new L2CAP PDU.
    public var startsPDU: Bool { self != .continuing }
}

/// An HCI ACL data packet: 12-bit connection handle, boundary and broadcast flags, data.
public struct ACLDataPacket: Sendable, Equatable {
    /// Connection_Handle (12 bits).
    public var handle: ConnectionHandle
    /// PB_Flag: whether this packet starts or continues an L2CAP PDU.
    public var boundary: ACLPacketBoundary
    /// BC_Flag (2 bits): 0b00, point-to-point, is the only value LE uses.
    public var broadcast: UInt8
    /// The data: an L2CAP PDU or a fragment of one.
    public var data: ArraySlice<UInt8>

    /// An ACL packet; `handle` is cut to 12 bits and `broadcast` to 2.
    public init(handle: ConnectionHandle, boundary: ACLPacketBoundary, broadcast: UInt8 = 0, data: ArraySlice<UInt8>) {
        self.handle = handle
        self.boundary = boundary
        self.broadcast = broadcast & 0b11
        self.data = data
    }

    /// Decodes the packet (its header, then exactly the length it declares).
    public init(from reader: inout ByteReader) throws(DecodingError) {
        let header = try reader.readUInt16()
        handle = ConnectionHandle(rawValue: header)
        boundary = ACLPacketBoundary(rawValue: UInt8((header >> 12) & 0b11))!
        broadcast = UInt8(header >> 14)
        let length = Int(try reader.readUInt16())
        guard reader.count == length else {
            throw .lengthMismatch(field: "ACL data length", declared: length, actual: reader.count)
        }
        data = try reader.readBytes(length)
    }

    /// Writes the packet: its header, then its payload.
    public func encode(to writer: inout ByteWriter) {
        writer.write(headerField)
        writer.write(UInt16(data.count))
        writer.write(bytes: data)
    }

    /// The first header field: the handle with the PB and BC flags above it.
    private var headerField: UInt16 {
        handle.rawValue | UInt16(boundary.rawValue) << 12 | UInt16(broadcast & 0b11) << 14
    }

    /// The H4 indicator and the ACL header, five octets in a value that lives on the stack:
    /// what a transport writes in front of ``data`` to send the packet without copying it.
    public var h4Header: (UInt8, UInt8, UInt8, UInt8, UInt8) {
        let field = headerField, length = UInt16(data.count)
        return (
            H4PacketType.acl.rawValue, UInt8(truncatingIfNeeded: field), UInt8(field >> 8),
            UInt8(truncatingIfNeeded: length), UInt8(length >> 8)
        )
    }
}

/// An HCI synchronous (SCO) data packet; carried for completeness of traces only.
public struct SCODataPacket: Sendable, Equatable {
    /// Connection_Handle (12 bits).
    public var handle: ConnectionHandle
    /// The header's top four bits: Packet_Status_Flag (bits 0–1) and two reserved bits.
    public var flags: UInt8
    /// The synchronous data.
    public var data: ArraySlice<UInt8>

    /// A SCO packet from its fields.
    public init(handle: ConnectionHandle, flags: UInt8, data: ArraySlice<UInt8>) {
        (self.handle, self.flags, self.data) = (handle, flags, data)
    }

    /// Decodes the packet (its header, then exactly the length it declares).
    public init(from reader: inout ByteReader) throws(DecodingError) {
        (handle, flags, data) = try readSynchronousPacket(&reader, wideLength: false, "SCO data length")
    }

    /// Writes the packet: its header, then its payload.
    public func encode(to writer: inout ByteWriter) {
        writeSynchronousPacket(&writer, handle, flags, data, wideLength: false)
    }
}

/// An HCI isochronous (ISO) data packet; carried for completeness of traces only.
public struct ISODataPacket: Sendable, Equatable {
    /// Connection_Handle (12 bits).
    public var handle: ConnectionHandle
    /// The header's top four bits: PB_Flag (bits 0–1), TS_Flag (bit 2) and a reserved bit.
    public var flags: UInt8
    /// ISO_Data_Load: the optional time stamp, sequence number and SDU length, then SDU data.
    public var data: ArraySlice<UInt8>

    /// An ISO packet from its fields.
    public init(handle: ConnectionHandle, flags: UInt8, data: ArraySlice<UInt8>) {
        (self.handle, self.flags, self.data) = (handle, flags, data)
    }

    /// Decodes the packet (its header, then exactly the length it declares).
    public init(from reader: inout ByteReader) throws(DecodingError) {
        (handle, flags, data) = try readSynchronousPacket(&reader, wideLength: true, "ISO data length")
    }

    /// Writes the packet: its header, then its payload.
    public func encode(to writer: inout ByteWriter) {
        writeSynchronousPacket(&writer, handle, flags, data, wideLength: true)
    }
}

/// Reads what SCO and ISO packets share: Connection_Handle and four flag bits in two octets,
/// then the payload's length (one octet; or, `wideLength`, the low 14 bits of two) and
/// exactly that payload: a mismatch is an error about `lengthField`.
private func readSynchronousPacket(_ reader: inout ByteReader, wideLength: Bool, _ lengthField: String)
    throws(DecodingError) -> (ConnectionHandle, UInt8, ArraySlice<UInt8>)
{
    let header = try reader.readUInt16()
    let length = wideLength ? Int(try reader.readUInt16() & 0x3FFF) : Int(try reader.readUInt8())
    guard reader.count == length else {
        throw .lengthMismatch(field: lengthField, declared: length, actual: reader.count)
    }
    return (ConnectionHandle(rawValue: header), UInt8(header >> 12), try reader.readBytes(length))
}

/// Writes an SCO or ISO packet as `readSynchronousPacket` reads it.
private func writeSynchronousPacket(
    _ writer: inout ByteWriter, _ handle: ConnectionHandle, _ flags: UInt8, _ data: ArraySlice<UInt8>, wideLength: Bool
) {
    writer.write(handle.rawValue | UInt16(flags) << 12)
    if wideLength { writer.write(UInt16(data.count)) } else { writer.write(UInt8(data.count)) }
    writer.write(bytes: data)
}
