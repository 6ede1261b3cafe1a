import BluetoothCore
import HCI

/// An L2CAP basic frame built in place, for sending: the protocol above writes its PDU into
/// ``writer`` after four octets kept free for the basic header (Core Vol 3, Part A, 3.1),
/// which ``L2CAPChannels`` fills in as it sends. The PDU is encoded once; the ACL packets
/// that carry it are views of this one buffer, and the transport gathers the ACL and H4
/// headers in front of each with `writev` instead of copying the data behind them.
public struct OutgoingFrame: Sendable {
    /// The basic header's length: PDU length and channel ID, two octets each.
    public static let headerLength = 4

    /// Where the PDU is written, after the header's room.
    public var writer: ByteWriter

    /// An empty frame with room for a PDU of `capacity` octets (a hint).
    public init(capacity: Int) {
        writer = ByteWriter(capacity: capacity, headroom: Self.headerLength)
    }

    /// A frame carrying a copy of `payload` (for PDUs built elsewhere).
    public init(payload: some Collection<UInt8>) {
        self.init(capacity: payload.count)
        writer.write(bytes: payload)
    }

    /// The PDU's length so far.
    public var payloadCount: Int { writer.count - Self.headerLength }

    /// The PDU written so far.
    public var payload: ArraySlice<UInt8> { writer.bytes[Self.headerLength...] }

    /// The whole frame for `channel`: the header filled in, then the PDU. Traps for a PDU
    /// longer than the length field holds (65,535 octets), which no protocol above builds.
    public consuming func sealed(for channel: ChannelIdentifier) -> [UInt8] {
        writer.overwrite(UInt16(payloadCount), at: 0)
        writer.overwrite(channel.rawValue, at: 2)
        return writer.bytes
    }
}

extension ACLDataPacket {
    /// Cuts a whole L2CAP frame into ACL packets of at most `bufferLength` octets for
    /// `handle`, each a view of `frame`, and hands them to `body` in order: the first marked
    /// as a start (non-flushable, as the specification requires from an LE host), the rest
    /// as continuations.
    public static func forEachFragment<E: Error>(
        of frame: ArraySlice<UInt8>, handle: ConnectionHandle, bufferLength: Int,
        _ body: (ACLDataPacket) throws(E) -> Void
    ) throws(E) {
        // Zero would loop forever on empty packets (a controller reporting an LE buffer
        // length of 0 means "use the shared buffers", never "0 bytes").
        precondition(bufferLength > 0, "ACL buffer length must be positive, got \(bufferLength)")
        var offset = frame.startIndex
        repeat {
            let end = min(offset + bufferLength, frame.endIndex)
            try body(
                ACLDataPacket(
                    handle: handle, boundary: offset == frame.startIndex ? .firstNonFlushable : .continuing,
                    data: frame[offset..<end]))
            offset = end
        } while offset < frame.endIndex
    }
}
