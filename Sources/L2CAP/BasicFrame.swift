import BluetoothCore
import HCI

/// An L2CAP channel identifier (Core Vol 3, Part A, 2.1): a fixed channel (below 0x0040), or
/// one end of a connection-oriented channel, allocated by the device that receives on it.
public struct ChannelIdentifier: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The CID as on the wire.
    public let rawValue: UInt16
    /// Wraps a CID from the wire.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// BR/EDR signaling: channel connection, configuration and disconnection on ACL-U.
    public static let signaling = ChannelIdentifier(rawValue: 0x0001)
    /// The Attribute Protocol.
    public static let att = ChannelIdentifier(rawValue: 0x0004)
    /// LE signaling: connection parameter updates, credit-based channels, command reject.
    public static let leSignaling = ChannelIdentifier(rawValue: 0x0005)
    /// The Security Manager Protocol.
    public static let smp = ChannelIdentifier(rawValue: 0x0006)

    /// Whether the CID is in the range of connection-oriented channels (0x0040 and up; LE
    /// allocates only up to 0x007F, but a trace takes what it is given).
    public var isDynamic: Bool { rawValue >= 0x0040 }

    /// The channel's name and CID, `ATT (0x0004)`, or `CID 0x0040` for others.
    public var description: String {
        switch rawValue {
        case 0x0001: "BR/EDR signaling (0x0001)"
        case 0x0002: "connectionless (0x0002)"
        case 0x0004: "ATT (0x0004)"
        case 0x0005: "LE signaling (0x0005)"
        case 0x0006: "SMP (0x0006)"
        case 0x0007: "BR/EDR SMP (0x0007)"
        default: "CID \(hex(rawValue, digits: 4))"
        }
    }
}

/// An L2CAP basic frame (B-frame): length, channel id, payload.
public struct BasicFrame: Sendable, Equatable {
    /// The channel the payload belongs to.
    public var channel: ChannelIdentifier
    /// The payload, a view of the reassembled PDU.
    public var payload: ArraySlice<UInt8>

    /// A frame carrying `payload` on `channel`.
    public init(channel: ChannelIdentifier, payload: ArraySlice<UInt8>) {
        (self.channel, self.payload) = (channel, payload)
    }

    /// Decodes a whole PDU; its length field must match the bytes present.
    public init(from reader: inout ByteReader) throws(DecodingError) {
        let length = Int(try reader.readUInt16())
        channel = ChannelIdentifier(rawValue: try reader.readUInt16())
        guard reader.count == length else {
            throw .lengthMismatch(field: "L2CAP length", declared: length, actual: reader.count)
        }
        payload = reader.readRest()
    }

    /// Writes the frame: its header, then its payload.
    public func encode(to writer: inout ByteWriter) {
        writer.write(UInt16(payload.count))
        writer.write(channel.rawValue)
        writer.write(bytes: payload)
    }

    /// The encoded frame.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: payload.count + 4)
        encode(to: &writer)
        return writer.bytes
    }

    /// Splits the frame into ACL packets of at most `bufferLength` bytes for `handle`
    /// (`ACLDataPacket.forEachFragment(of:handle:bufferLength:_:)`).
    public func fragments(handle: ConnectionHandle, bufferLength: Int) -> [ACLDataPacket] {
        var packets: [ACLDataPacket] = []
        ACLDataPacket.forEachFragment(of: encoded()[...], handle: handle, bufferLength: bufferLength) {
            packets.append($0)
        }
        return packets
    }
}
