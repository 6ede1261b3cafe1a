import BluetoothCore

/// Host-to-controller ACL flow control (Core Vol 4, Part E, 4.1.1): never more packets
/// outstanding than the controller has buffers. A credit is spent per packet sent and
/// comes back with Number Of Completed Packets, or when its connection ends.
///
/// A value type with no I/O: the controller feeds it and sends what it releases.
public struct ACLFlowControl: Sendable {
    /// The controller's buffer count.
    public let bufferCount: Int
    /// The longest ACL data payload one buffer holds.
    public let bufferLength: Int
    /// Buffers free right now.
    public private(set) var available: Int
    /// Packets sent and not yet completed, per connection handle.
    public private(set) var outstanding: [ConnectionHandle: Int] = [:]
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

    /// Whether everything sent on `handle` has left the host and been completed by the
    /// controller (nothing queued, nothing outstanding).
    public func isDrained(_ handle: ConnectionHandle) -> Bool {
        outstanding[handle] == nil && !queue[queueHead...].contains { $0.handle == handle }
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
        outstanding[packet.handle, default: 0] += 1
        if queueHead == queue.count {
            queue.removeAll(keepingCapacity: true)
            queueHead = 0
        }
        return packet
    }

    /// Number Of Completed Packets for `handle`. Returns what may be sent now. A count
    /// larger than what is outstanding on that handle is clamped: a controller bug must
    /// not let us overrun its buffers later.
    /// (The tests' form of ``credit(handle:count:)`` then ``nextSendable()``.)
    package mutating func completed(handle: ConnectionHandle, count: Int) -> (released: [ACLDataPacket], excess: Int) {
        let excess = credit(handle: handle, count: count)
        return (releaseAll(), excess)
    }

    /// Returns `count` credits of `handle` (Number Of Completed Packets), clamped to what
    /// is outstanding on it; returns how many more the controller claimed.
    public mutating func credit(handle: ConnectionHandle, count: Int) -> Int {
        let outstandingOnHandle = outstanding[handle, default: 0]
        let credited = min(count, outstandingOnHandle)
        outstanding[handle] = outstandingOnHandle - credited == 0 ? nil : outstandingOnHandle - credited
        available += credited
        return count - credited
    }

    /// The connection ended: its buffers are free again (the controller flushes them) and
    /// its queued packets are dropped and returned in `dropped`.
    /// (The tests' form of ``forget(handle:)`` then ``nextSendable()``.)
    package mutating func disconnected(handle: ConnectionHandle) -> (
        released: [ACLDataPacket], dropped: [ACLDataPacket]
    ) {
        let dropped = forget(handle: handle)
        return (releaseAll(), dropped)
    }

    /// The connection ended: its credits come back and its queued packets are dropped
    /// (returned).
    public mutating func forget(handle: ConnectionHandle) -> [ACLDataPacket] {
        available += outstanding.removeValue(forKey: handle) ?? 0
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
