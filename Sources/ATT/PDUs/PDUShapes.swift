import BluetoothCore
import HCI

// The parameter layouts several PDUs share, each encoded and decoded once here.

/// A PDU with no parameters (Write Response, Execute Write Response, Handle Value
/// Confirmation).
public protocol ParameterlessPDU: ATTPDU {
    /// The PDU.
    init()
}

extension ParameterlessPDU {
    public init(from reader: inout ByteReader) throws(DecodingError) { self.init() }
    public func encode(to writer: inout ByteWriter) {}
}

/// A PDU whose parameters are an attribute value filling the rest of the PDU (Read
/// Response, Read Blob Response).
public protocol ValuePDU: ATTPDU {
    /// The value.
    var value: [UInt8] { get }
    /// A PDU carrying `value`.
    init(value: [UInt8])
}

extension ValuePDU {
    public init(from reader: inout ByteReader) throws(DecodingError) { self.init(value: Array(reader.readRest())) }
    public func encode(to writer: inout ByteWriter) { writer.write(bytes: value) }
}

/// A PDU whose parameters are an attribute handle and then its value filling the rest
/// (Write Request, Write Command, Handle Value Notification and Indication).
public protocol HandleValuePDU: ATTPDU {
    /// The attribute.
    var handle: UInt16 { get }
    /// Its value.
    var value: [UInt8] { get }
    /// A PDU carrying `value` for the attribute at `handle`.
    init(handle: UInt16, value: [UInt8])
}

extension HandleValuePDU {
    public init(from reader: inout ByteReader) throws(DecodingError) {
        let handle = try reader.readUInt16()
        self.init(handle: handle, value: Array(reader.readRest()))
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(handle)
        writer.write(bytes: value)
    }
}

/// A PDU whose parameters are a handle, an offset and part of a value (Prepare Write
/// Request and its echo, the Prepare Write Response).
public protocol PreparedWritePDU: ATTPDU {
    /// The attribute.
    var handle: UInt16 { get }
    /// Where in the value the part goes.
    var offset: UInt16 { get }
    /// The part.
    var value: [UInt8] { get }
    /// A PDU carrying `value` at `offset` of the attribute at `handle`.
    init(handle: UInt16, offset: UInt16, value: [UInt8])
}

extension PreparedWritePDU {
    public init(from reader: inout ByteReader) throws(DecodingError) {
        let handle = try reader.readUInt16()
        let offset = try reader.readUInt16()
        self.init(handle: handle, offset: offset, value: Array(reader.readRest()))
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(handle)
        writer.write(offset)
        writer.write(bytes: value)
    }
}
