import BluetoothCore

/// Host-to-controller ACL flow control (Core Vol 4, Part E, 4.1.1): never more packets
/// outstanding than the controller has buffers. A credit is spent per packet sent and
/// comes back with Number Of Completed Packets, or when its connection ends.
///
/// A value type with no I/O: the controller feeds it and sends what it releases. It keeps
/// what is shared by every link (the free buffers and the queue, in order); how many of a
/// link's packets sit in the controller is the link's own count (``Link/packetsInController``).
public struct ACLFlowControl: Sendable {
    /// The controller's buffer count.
    public let bufferCount: Int
    /// The longest ACL data payload one buffer holds.
    public let bufferLength: Int
    /// Buffers free right now.
    public private(set) var available: Int
    private var queue: [ACLDataPacket] = []
    private var queueHead = 0

    /// Starts with every buffer free.
    public init(bufferCount: Int, bufferLength: Int) {
        self.bufferCount = bufferCount
        self.bufferLength = bufferLength
        available = bufferCount
    }

    /// Packets waiting for a credit.
    public var queuedCount: Int { queue.count - queueHead }

    /// Packets in the controller's buffers.
    public var inFlight: Int { bufferCount - available }

    /// Whether a packet on `handle` waits for a credit.
    public func hasQueued(_ handle: ConnectionHandle) -> Bool {
        queue[queueHead...].contains { $0.handle == handle }
    }

    /// Queues a packet; returns the packets that may be sent now, in order. (The tests'
    /// form of ``append(_:)`` then ``nextSendable()``; the controller uses those.)
    package mutating func enqueue(_ packet: ACLDataPacket) -> [ACLDataPacket] {
        append(packet)
        return releaseAll()
    }

    /// Queues a packet; ``nextSendable()`` gives it back once a credit allows.
    public mutating func append(_ packet: ACLDataPacket) {
        queue.append(packet)
    }

    /// The next queued packet if a buffer is free (spending its credit), else nil: the
    /// controller's send loop, which allocates nothing per packet.
    public mutating func nextSendable() -> ACLDataPacket? {
        guard available > 0, queueHead < queue.count else { return nil }
        let packet = queue[queueHead]
        queueHead += 1
        available -= 1
        if queueHead == queue.count {
            queue.removeAll(keepingCapacity: true)
            queueHead = 0
        }
        return packet
    }

    /// `count` buffers are free again: what a link's owner took back from it (Number Of
    /// Completed Packets, clamped to what the link had in the controller; or the link's
    /// end). More than are in use is clamped: a caller's slip must not let us overrun the
    /// controller later.
    public mutating func free(_ count: Int) {
        available = min(bufferCount, available + count)
    }

    /// `count` buffers are free again; returns what may be sent now. (The tests' form of
    /// ``free(_:)`` then ``nextSendable()``.)
    package mutating func released(freeing count: Int) -> [ACLDataPacket] {
        free(count)
        return releaseAll()
    }

    /// The connection ended: its queued packets are dropped (returned). Its buffers are the
    /// link's to give back (``free(_:)``), as the link knows how many it holds.
    public mutating func drop(handle: ConnectionHandle) -> [ACLDataPacket] {
        let pending = queue[queueHead...]
        let dropped = pending.filter { $0.handle == handle }
        queue = pending.filter { $0.handle != handle }
        queueHead = 0
        return dropped
    }

    private mutating func releaseAll() -> [ACLDataPacket] {
        var sendable: [ACLDataPacket] = []
        while let packet = nextSendable() { sendable.append(packet) }
        return sendable
    }
}
