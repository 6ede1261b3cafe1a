import BluetoothCore
import HCI
import TestTraits
import Testing

// Host-to-controller ACL flow control (Core Vol 4, Part E, 4.1.1): never more packets in
// the controller than it has buffers, release in order, and a wrong count must not let us
// overrun it later. How many packets each link has in the controller is the link's own
// count (the controller's tests, `aclCreditsNeverExceedTheControllerBuffers`).

/// A packet on `handle` whose single data byte numbers it, so order is visible.
private func packet(_ handle: ConnectionHandle, _ number: UInt8) -> ACLDataPacket {
    ACLDataPacket(handle: handle, boundary: .firstNonFlushable, data: [number])
}

private func numbers(_ packets: [ACLDataPacket]) -> [UInt8] { packets.map { $0.data.first! } }

@Suite("ACL flow control")
struct ACLFlowControlTests {
    @Test("A burst larger than the buffers sends exactly bufferCount; the rest queue in order")
    func burst() {
        var flow = ACLFlowControl(bufferCount: 4, bufferLength: 27)
        #expect(flow.available == 4)
        var sent: [ACLDataPacket] = []
        for number in 0..<10 { sent += flow.enqueue(packet(0x40, UInt8(number))) }
        #expect(numbers(sent) == [0, 1, 2, 3])
        #expect(flow.inFlight == 4)
        #expect(flow.available == 0)
        #expect(flow.queuedCount == 6)
        #expect(flow.hasQueued(0x40) && !flow.hasQueued(0x41))
    }

    @Test("Freed buffers release queued packets in FIFO order")
    func fifo() {
        var flow = ACLFlowControl(bufferCount: 3, bufferLength: 27)
        var sent: [ACLDataPacket] = []
        for number in 0..<8 { sent += flow.enqueue(packet(0x40, UInt8(number))) }
        #expect(numbers(sent) == [0, 1, 2])

        #expect(numbers(flow.released(freeing: 1)) == [3])
        #expect(numbers(flow.released(freeing: 2)) == [4, 5])
        #expect(numbers(flow.released(freeing: 3)) == [6, 7])
        #expect(flow.queuedCount == 0)
        #expect(flow.inFlight == 2)
        #expect(flow.released(freeing: 2).isEmpty)
        #expect(flow.inFlight == 0)
    }

    @Test("Random traffic on three handles never has more in flight than buffers", arguments: [UInt64(1), 2, 3, 4])
    func neverOverrun(seed: UInt64) {
        var rng = SeededGenerator(seed: seed)
        var flow = ACLFlowControl(bufferCount: 5, bufferLength: 27)
        var sentOrder: [UInt8] = []
        var inController: [ConnectionHandle: Int] = [:]
        var next: UInt8 = 0
        for _ in 0..<2000 {
            if Bool.random(using: &rng) {
                let handle = ConnectionHandle(rawValue: UInt16.random(in: 0x40...0x42, using: &rng))
                let released = flow.enqueue(packet(handle, next))
                next &+= 1
                for packet in released { inController[packet.handle, default: 0] += 1 }
                sentOrder += numbers(released)
            } else if let handle = inController.filter({ $0.value > 0 }).keys.randomElement(using: &rng) {
                let count = Int.random(in: 1...inController[handle]!, using: &rng)
                inController[handle]! -= count
                let released = flow.released(freeing: count)
                for packet in released { inController[packet.handle, default: 0] += 1 }
                sentOrder += numbers(released)
            }
            #expect(flow.inFlight <= 5)
            #expect(flow.inFlight == inController.values.reduce(0, +))
            #expect(flow.available + flow.inFlight == 5)
        }
        // Sent in exactly the order enqueued.
        #expect(sentOrder == (0..<sentOrder.count).map { UInt8(truncatingIfNeeded: $0) })
    }

    @Test("Freeing more buffers than are in use frees only those in use")
    func clamped() {
        var flow = ACLFlowControl(bufferCount: 2, bufferLength: 27)
        var sent: [ACLDataPacket] = []
        for number in 0..<5 { sent += flow.enqueue(packet(0x40, UInt8(number))) }
        #expect(numbers(flow.released(freeing: 7)) == [2, 3], "only two buffers were in use")
        #expect(flow.inFlight == 2)
        #expect(flow.available == 0)
        #expect(flow.queuedCount == 1)
    }

    @Test("Dropping a handle takes only its queued packets, in order")
    func disconnection() {
        var flow = ACLFlowControl(bufferCount: 3, bufferLength: 27)
        var sent: [ACLDataPacket] = []
        // In flight: 0 (A), 1 (B), 2 (A). Queued: 3 (B), 4 (A), 5 (B), 6 (A).
        for (number, handle) in [0x40, 0x41, 0x40, 0x41, 0x40, 0x41, 0x40].enumerated() {
            sent += flow.enqueue(packet(ConnectionHandle(rawValue: UInt16(handle)), UInt8(number)))
        }
        #expect(numbers(sent) == [0, 1, 2])
        #expect(numbers(flow.drop(handle: 0x40)) == [4, 6])
        #expect(!flow.hasQueued(0x40))
        // A's two buffers, given back by its link, go to B's queued packets, in order.
        #expect(numbers(flow.released(freeing: 2)) == [3, 5])
        #expect(flow.queuedCount == 0)
        #expect(flow.inFlight == 3)
        // Dropping a handle with nothing queued changes nothing.
        #expect(flow.drop(handle: 0x99).isEmpty)
        #expect(flow.inFlight == 3)
    }
}
