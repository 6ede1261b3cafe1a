import BluetoothCore
import HCI
import TestTraits
import Testing

// Host-to-controller ACL flow control (Core Vol 4, Part E, 4.1.1): never more packets in
// the controller than it has buffers, release in order, and a controller's wrong counts
// or a disconnection must not let us overrun it later.

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
        #expect(flow.outstanding == [0x40: 4])
    }

    @Test("Completions release queued packets in FIFO order")
    func fifo() {
        var flow = ACLFlowControl(bufferCount: 3, bufferLength: 27)
        var sent: [ACLDataPacket] = []
        for number in 0..<8 { sent += flow.enqueue(packet(0x40, UInt8(number))) }
        #expect(numbers(sent) == [0, 1, 2])

        let one = flow.completed(handle: 0x40, count: 1)
        #expect(numbers(one.released) == [3])
        #expect(one.excess == 0)
        let two = flow.completed(handle: 0x40, count: 2)
        #expect(numbers(two.released) == [4, 5])
        let rest = flow.completed(handle: 0x40, count: 3)
        #expect(numbers(rest.released) == [6, 7])
        #expect(flow.queuedCount == 0)
        #expect(flow.inFlight == 2)
        let done = flow.completed(handle: 0x40, count: 2)
        #expect(done.released.isEmpty)
        #expect(flow.inFlight == 0)
        #expect(flow.outstanding.isEmpty)
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
                let result = flow.completed(handle: handle, count: count)
                #expect(result.excess == 0)
                for packet in result.released { inController[packet.handle, default: 0] += 1 }
                sentOrder += numbers(result.released)
            }
            #expect(flow.inFlight <= 5)
            #expect(flow.inFlight == inController.values.reduce(0, +))
            #expect(flow.available + flow.inFlight == 5)
            #expect(flow.outstanding.filter { $0.value > 0 } == inController.filter { $0.value > 0 })
        }
        // Sent in exactly the order enqueued.
        #expect(sentOrder == (0..<sentOrder.count).map { UInt8(truncatingIfNeeded: $0) })
    }

    @Test("A completion count larger than what is outstanding is clamped and reported as excess")
    func clamped() {
        var flow = ACLFlowControl(bufferCount: 2, bufferLength: 27)
        var sent: [ACLDataPacket] = []
        for number in 0..<5 { sent += flow.enqueue(packet(0x40, UInt8(number))) }
        let result = flow.completed(handle: 0x40, count: 7)
        #expect(result.excess == 5)
        #expect(numbers(result.released) == [2, 3], "only the two real credits come back")
        #expect(flow.inFlight == 2)

        // A handle with nothing outstanding gives nothing back at all.
        let stray = flow.completed(handle: 0x99, count: 3)
        #expect(stray.excess == 3)
        #expect(stray.released.isEmpty)
        #expect(flow.inFlight == 2)
        #expect(flow.available == 0)
        #expect(flow.queuedCount == 1)
    }

    @Test("Disconnection frees the handle's credits and drops only its queued packets")
    func disconnection() {
        var flow = ACLFlowControl(bufferCount: 3, bufferLength: 27)
        var sent: [ACLDataPacket] = []
        // In flight: 0 (A), 1 (B), 2 (A). Queued: 3 (B), 4 (A), 5 (B), 6 (A).
        for (number, handle) in [0x40, 0x41, 0x40, 0x41, 0x40, 0x41, 0x40].enumerated() {
            sent += flow.enqueue(packet(ConnectionHandle(rawValue: UInt16(handle)), UInt8(number)))
        }
        #expect(numbers(sent) == [0, 1, 2])
        #expect(flow.outstanding == [0x40: 2, 0x41: 1])

        let result = flow.disconnected(handle: 0x40)
        #expect(numbers(result.dropped) == [4, 6])
        #expect(numbers(result.released) == [3, 5], "A's two buffers go to B's queued packets, in order")
        #expect(flow.outstanding == [0x41: 3])
        #expect(flow.queuedCount == 0)
        #expect(flow.inFlight == 3)

        // A late completion for the dead handle must not free anything.
        let late = flow.completed(handle: 0x40, count: 2)
        #expect(late.excess == 2)
        #expect(flow.available == 0)
        // B's completions still work.
        #expect(flow.completed(handle: 0x41, count: 3).excess == 0)
        #expect(flow.available == 3)
    }

    @Test("Disconnecting a handle with nothing in flight keeps other handles' queue intact")
    func disconnectionIdleHandle() {
        var flow = ACLFlowControl(bufferCount: 1, bufferLength: 27)
        _ = flow.enqueue(packet(0x41, 0))
        _ = flow.enqueue(packet(0x41, 1))
        _ = flow.enqueue(packet(0x40, 2))
        _ = flow.enqueue(packet(0x41, 3))
        let result = flow.disconnected(handle: 0x40)
        #expect(numbers(result.dropped) == [2])
        #expect(result.released.isEmpty)
        #expect(flow.queuedCount == 2)
        #expect(numbers(flow.completed(handle: 0x41, count: 1).released) == [1])
        #expect(numbers(flow.completed(handle: 0x41, count: 1).released) == [3])
        // Disconnecting an unknown handle changes nothing.
        let none = flow.disconnected(handle: 0x99)
        #expect(none.dropped.isEmpty && none.released.isEmpty)
        #expect(flow.inFlight == 1)
    }
}
