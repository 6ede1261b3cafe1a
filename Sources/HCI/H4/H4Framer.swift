import BluetoothCore

/// Cuts an H4 byte stream (UART, emulator socket) into whole HCI packets.
///
/// Bytes may arrive in any chunking — one byte at a time or many packets at once — and
/// the packets that come out are the same. A byte that is not a packet indicator, or a
/// length no controller can send, means the stream has lost framing; H4 has no way to
/// resynchronise, so the framer reports ``H4FramingError`` and stops accepting input.
public struct H4Framer: Sendable {
    /// Packet types accepted from this stream (from a controller: ACL, SCO, event, ISO).
    public let acceptedTypes: Set<H4PacketType>
    /// Longest ACL data length accepted. Larger claims mean a desynchronised stream: no
    /// controller buffer is that large.
    public let maximumACLDataLength: Int
    /// ``acceptedTypes`` as one bit per indicator value, tested for every packet without hashing.
    private let acceptedIndicators: UInt64

    /// The bytes of a packet not yet whole, kept for the next read.
    private var pending: [UInt8] = []
    /// Where ``read(maximum:_:)`` reads into, kept between reads while small reads leave it.
    private var readBuffer: [UInt8] = []
    private var failure: H4FramingError?
    /// Stream bytes before `pending[0]`, so errors can say where the stream went wrong.
    private var consumedBefore = 0

    /// Creates a framer for a stream that carries `acceptedTypes`.
    public init(acceptedTypes: Set<H4PacketType> = Set(H4PacketType.allCases), maximumACLDataLength: Int = 4096) {
        self.acceptedTypes = acceptedTypes
        self.maximumACLDataLength = maximumACLDataLength
        acceptedIndicators = acceptedTypes.reduce(0) { $0 | 1 << $1.rawValue }
    }

    /// Bytes received but not yet part of a whole packet.
    public var pendingByteCount: Int { pending.count }

    /// Appends bytes from the stream and returns every packet they complete, in order.
    /// Each packet is `(type, body)` where `body` excludes the indicator byte.
    ///
    /// The bodies are views into one buffer per call, holding this read's bytes (and the
    /// start of a packet the previous read cut): read once from the transport, they travel
    /// up the stack without another copy.
    public mutating func append(_ bytes: some Collection<UInt8>) throws(H4FramingError) -> [(
        H4PacketType, ArraySlice<UInt8>
    )] {
        if let failure { throw failure }
        // Accumulated in place until a packet completes (a UART may deliver a few bytes a read).
        pending.append(contentsOf: bytes)
        return try frameWholePackets()
    }

    /// Reads from the stream straight into the framer's buffer and returns the packets the
    /// bytes complete: `read` is given room for up to `maximum` bytes and returns how many
    /// it wrote (0 at the end of the stream, negative on error; then nothing changes and
    /// that count is returned with no packets).
    ///
    /// This is the receive path's one copy: the bytes go from the kernel into the buffer the
    /// packets are views of, and that buffer is handed over to them. A small read (the user
    /// channel returns one packet per read) is copied to an array of its own size instead
    /// and the read buffer kept for the next read, so a packet an app holds on to never
    /// keeps a large buffer alive.
    public mutating func read(maximum: Int, _ read: (UnsafeMutableRawBufferPointer) -> Int)
        throws(H4FramingError) -> (count: Int, packets: [(H4PacketType, ArraySlice<UInt8>)])
    {
        if let failure { throw failure }
        let carried = pending.count
        let size = carried + maximum
        if readBuffer.count < size {
            // Room for a few more reads' growth of a packet that arrives in small pieces.
            // Every byte is written by the read or the copy below before the framer looks at it.
            let capacity = size + maximum
            readBuffer = [UInt8](unsafeUninitializedCapacity: capacity) { _, initialized in initialized = capacity }
        }
        // The read lands after room for the bytes carried over; they are copied in front of
        // it only when the buffer is handed over, so a packet that arrives a few bytes a read
        // is copied once, not again at every read.
        let count = readBuffer.withUnsafeMutableBytes { storage in
            read(UnsafeMutableRawBufferPointer(rebasing: storage[carried..<size]))
        }
        guard count > 0 else { return (count, []) }
        let filled = carried + count
        if filled >= maximum / 4 {
            // Handed over whole: the packets become views of it, the next read gets a new one.
            if carried > 0 {
                readBuffer.withUnsafeMutableBytes { storage in pending.withUnsafeBytes { storage.copyMemory(from: $0) }
                }
            }
            swap(&pending, &readBuffer)
            readBuffer = []
            pending.removeLast(pending.count - filled)
        } else {
            pending.append(contentsOf: readBuffer[carried..<filled])
        }
        return (count, try frameWholePackets())
    }

    /// Cuts every whole packet off the front of `pending`.
    private mutating func frameWholePackets() throws(H4FramingError) -> [(H4PacketType, ArraySlice<UInt8>)] {
        var packets: [(H4PacketType, ArraySlice<UInt8>)] = []
        // Counted first, so the array is allocated once rather than grown a dozen times
        // over a read of a few hundred packets.
        packets.reserveCapacity(wholePacketCount())
        var readIndex = 0
        framing: while true {
            switch packet(at: readIndex) {
            case .incomplete:
                break framing
            case let .whole(type, total):
                packets.append((type, pending[(readIndex + 1)..<(readIndex + total)]))
                readIndex += total
            case let .badPacketType(indicator):
                return try fail(.badPacketType(indicator, offset: consumedBefore + readIndex), after: packets)
            case let .impossibleLength(type, length, limit):
                return try fail(
                    .impossibleLength(type: type, length: length, limit: limit, offset: consumedBefore + readIndex),
                    after: packets)
            }
        }
        guard readIndex > 0 else { return packets }
        // The packets keep this buffer; the start of the next packet, if any, moves to a
        // new one.
        consumedBefore += readIndex
        pending = readIndex < pending.count ? Array(pending[readIndex...]) : []
        return packets
    }

    /// What starts at `index` of `pending`.
    private enum PacketAt {
        /// Not all of it has arrived.
        case incomplete
        /// A whole packet of `total` bytes, its indicator included.
        case whole(H4PacketType, total: Int)
        /// An indicator this stream does not carry: framing is lost.
        case badPacketType(UInt8)
        /// A length longer than any controller sends: framing is lost.
        case impossibleLength(H4PacketType, length: Int, limit: Int)
    }

    private func packet(at index: Int) -> PacketAt {
        let available = pending.count - index
        guard available >= 1 else { return .incomplete }
        let indicator = pending[index]
        guard indicator < 64, acceptedIndicators & 1 << indicator != 0, let type = H4PacketType(rawValue: indicator)
        else {
            return .badPacketType(indicator)
        }
        guard available >= 1 + type.headerLength else { return .incomplete }
        let length = Self.bodyLength(pending, type: type, headerStart: index + 1)
        if let limit = limit(for: type), length > limit { return .impossibleLength(type, length: length, limit: limit) }
        let total = 1 + type.headerLength + length
        return available >= total ? .whole(type, total: total) : .incomplete
    }

    /// How many whole packets start `pending`, up to the first that is not whole or cannot be.
    private func wholePacketCount() -> Int {
        var count = 0, index = 0
        while case let .whole(_, total) = packet(at: index) {
            count += 1
            index += total
        }
        return count
    }

    private static func bodyLength(_ buffer: [UInt8], type: H4PacketType, headerStart: Int) -> Int {
        switch type {
        case .command, .sco: Int(buffer[headerStart + 2])
        case .event: Int(buffer[headerStart + 1])
        case .acl: Int(buffer[headerStart + 2]) | Int(buffer[headerStart + 3]) << 8
        // The top two bits of the ISO length field are reserved; a set bit is impossible.
        case .iso: Int(buffer[headerStart + 2]) | Int(buffer[headerStart + 3]) << 8
        }
    }

    private func limit(for type: H4PacketType) -> Int? {
        switch type {
        case .acl: maximumACLDataLength
        case .iso: 0x3FFF
        case .command, .sco, .event: nil  // a one-byte length is always possible
        }
    }

    private mutating func fail(_ error: H4FramingError, after packets: [(H4PacketType, ArraySlice<UInt8>)])
        throws(H4FramingError)
        -> [(H4PacketType, ArraySlice<UInt8>)]
    {
        failure = error
        // Whole packets before the bad byte are still good; the caller gets them first and
        // the error on the next call.
        if packets.isEmpty { throw error }
        return packets
    }

}

/// The H4 stream lost framing.
public enum H4FramingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A byte where a packet indicator should be is not one of the accepted types.
    case badPacketType(UInt8, offset: Int)
    /// A header claims more data than any controller sends.
    case impossibleLength(type: H4PacketType, length: Int, limit: Int, offset: Int)

    /// Where in the stream framing was lost, and why.
    public var description: String {
        switch self {
        case let .badPacketType(byte, offset):
            "H4 framing lost at stream offset \(offset): \(hex(byte, digits: 2)) is not a packet type "
                + "(expected 0x02 ACL, 0x03 SCO, 0x04 event or 0x05 ISO); is the baud rate or the port right?"
        case let .impossibleLength(type, length, limit, offset):
            "H4 framing lost at stream offset \(offset): \(type) packet claims \(length) bytes, more than the "
                + "\(limit) any controller sends"
        }
    }
}
