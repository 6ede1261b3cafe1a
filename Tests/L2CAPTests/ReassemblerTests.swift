import BluetoothCore
import HCI
import L2CAP
import Testing

// L2CAP reassembly (Core Vol 3, Part A, 7.2): whole PDUs out of ACL fragments, and every
// rule the stream breaks reported without costing the PDUs after it.

private func start(_ data: [UInt8], handle: ConnectionHandle = 0x40) -> ACLDataPacket {
    ACLDataPacket(handle: handle, boundary: .firstFlushable, data: data[...])
}

private func continuation(_ data: [UInt8], handle: ConnectionHandle = 0x40) -> ACLDataPacket {
    ACLDataPacket(handle: handle, boundary: .continuing, data: data[...])
}

/// A 30-byte PDU: 4-byte header, 26-byte ATT notification payload.
private let frame30 = BasicFrame(channel: .att, payload: ([0x1B, 0x2A, 0x00] + (0..<23).map { UInt8($0) })[...])
/// A small PDU to check that the stream recovers.
private let readRequest = BasicFrame(channel: .att, payload: [0x0A, 0x01, 0x00])

@Suite("L2CAP reassembly")
struct ReassemblerTests {
    @Test("A PDU in a single fragment comes out at once")
    func singleFragment() {
        var reassembler = Reassembler()
        let (frame, problem) = reassembler.append(start(readRequest.encoded()))
        #expect(frame == readRequest)
        #expect(problem == nil)
        #expect(!reassembler.isCollecting)
        // Both start flags start a PDU.
        let nonFlushable = ACLDataPacket(handle: 0x40, boundary: .firstNonFlushable, data: readRequest.encoded()[...])
        #expect(reassembler.append(nonFlushable).frame == readRequest)
    }

    @Test("A 30-byte PDU split at every point reassembles", arguments: 1..<30)
    func twoFragments(split: Int) {
        let bytes = frame30.encoded()
        #expect(bytes.count == 30)
        var reassembler = Reassembler()
        let first = reassembler.append(start(Array(bytes[..<split])))
        #expect(first.frame == nil)
        #expect(first.problem == nil)
        #expect(reassembler.isCollecting)
        let second = reassembler.append(continuation(Array(bytes[split...])))
        #expect(second.problem == nil)
        #expect(second.frame == frame30)
        #expect(!reassembler.isCollecting)
        // The next PDU is unaffected.
        #expect(reassembler.append(start(readRequest.encoded())).frame == readRequest)
    }

    @Test("A 30-byte PDU in three fragments, at every pair of split points, reassembles")
    func threeFragments() {
        let bytes = frame30.encoded()
        for first in 1..<29 {
            for second in (first + 1)..<30 {
                var reassembler = Reassembler()
                let a = reassembler.append(start(Array(bytes[..<first])))
                let b = reassembler.append(continuation(Array(bytes[first..<second])))
                let c = reassembler.append(continuation(Array(bytes[second...])))
                #expect(
                    a.frame == nil && b.frame == nil && a.problem == nil && b.problem == nil,
                    "splits \(first), \(second)")
                #expect(c.frame == frame30, "splits \(first), \(second)")
                #expect(c.problem == nil, "splits \(first), \(second)")
            }
        }
    }

    @Test("A start fragment shorter than the length field waits for the rest of it", arguments: [0, 1])
    func shortStart(length: Int) {
        let bytes = frame30.encoded()
        var reassembler = Reassembler()
        #expect(reassembler.append(start(Array(bytes[..<length]))) == (nil, nil))
        #expect(reassembler.isCollecting)
        // The length field completes in the next fragment, the PDU in the one after.
        #expect(reassembler.append(continuation(Array(bytes[length..<3]))) == (nil, nil))
        #expect(reassembler.append(continuation(Array(bytes[3...]))) == (frame30, nil))
    }

    @Test("A PDU abandoned before its length field arrived says so")
    func abandonedBeforeLength() {
        var reassembler = Reassembler()
        _ = reassembler.append(start([0x03]))
        let next = reassembler.append(start(readRequest.encoded()))
        #expect(next == (readRequest, .abandoned(received: 1, expected: nil)))
        #expect(next.problem?.description == "incomplete L2CAP PDU abandoned after 1 byte(s), before its length field")
    }

    @Test("A continuation that completes the length field and overflows is dropped")
    func overflowAfterLength() {
        var reassembler = Reassembler()
        _ = reassembler.append(start([0x03]))
        let result = reassembler.append(continuation([0x00, 0x04, 0x00, 0x0A, 0x01, 0x00, 0xEE]))
        #expect(result == (nil, .overflow(expected: 7, wouldHave: 8)))
        // The dropped fragment is not kept: the right one completes the PDU.
        #expect(reassembler.append(continuation([0x00, 0x04, 0x00, 0x0A, 0x01, 0x00])) == (readRequest, nil))
    }

    @Test("A continuation without a start is reported and the next PDU still decodes")
    func continuationWithoutStart() {
        var reassembler = Reassembler()
        let orphan = reassembler.append(continuation([0x01, 0x02, 0x03]))
        #expect(orphan.frame == nil)
        #expect(orphan.problem == .continuationWithoutStart(3))
        let next = reassembler.append(start(readRequest.encoded()))
        #expect(next.frame == readRequest)
        #expect(next.problem == nil)
        // An empty continuation with nothing in progress is harmless.
        #expect(reassembler.append(continuation([])) == (nil, nil))
    }

    @Test("A new start while a PDU is incomplete abandons it; the new PDU is fine")
    func abandoned() {
        var reassembler = Reassembler()
        let bytes = frame30.encoded()
        _ = reassembler.append(start(Array(bytes[..<10])))
        let next = reassembler.append(start(readRequest.encoded()))
        #expect(next.frame == readRequest)
        #expect(next.problem == .abandoned(received: 10, expected: 30))
        #expect(!reassembler.isCollecting)

        // Abandoned by a start that itself needs more fragments.
        _ = reassembler.append(start(Array(bytes[..<10])))
        let again = reassembler.append(start(Array(bytes[..<12])))
        #expect(again.frame == nil)
        #expect(again.problem == .abandoned(received: 10, expected: 30))
        #expect(reassembler.append(continuation(Array(bytes[12...]))) == (frame30, nil))
    }

    @Test("A start fragment longer than its length field declares is reported")
    func longerThanDeclared() {
        var reassembler = Reassembler()
        let result = reassembler.append(start(readRequest.encoded() + [0xEE]))
        #expect(result.frame == nil)
        #expect(result.problem == .longerThanDeclared(declared: 7, actual: 8))
        #expect(!reassembler.isCollecting)
        #expect(reassembler.append(start(readRequest.encoded())) == (readRequest, nil))
    }

    @Test("A continuation that overflows the PDU is dropped and reported")
    func overflow() {
        var reassembler = Reassembler()
        let bytes = frame30.encoded()
        _ = reassembler.append(start(Array(bytes[..<20])))
        let result = reassembler.append(continuation(Array(bytes[20...]) + [0xEE]))
        #expect(result.frame == nil)
        #expect(result.problem == .overflow(expected: 30, wouldHave: 31))
        // The next good PDU still decodes (the broken one is reported as abandoned).
        let next = reassembler.append(start(readRequest.encoded()))
        #expect(next.frame == readRequest)
        #expect(next.problem == .abandoned(received: 20, expected: 30))
    }

    @Test("Fragments from BasicFrame.fragments reassemble", arguments: [1, 2, 3, 4, 5, 8, 23, 27, 29, 251])
    func fragmentsRoundTrip(bufferLength: Int) {
        for payloadLength in [0, 1, 3, 26, 100, 600] {
            let frame = BasicFrame(
                channel: .smp, payload: (0..<payloadLength).map { UInt8(truncatingIfNeeded: $0) }[...])
            var reassembler = Reassembler()
            var frames: [BasicFrame] = []
            for packet in frame.fragments(handle: 0x40, bufferLength: bufferLength) {
                let (out, problem) = reassembler.append(packet)
                #expect(problem == nil, "buffer \(bufferLength), payload \(payloadLength)")
                if let out { frames.append(out) }
            }
            #expect(frames == [frame], "buffer \(bufferLength), payload \(payloadLength)")
            #expect(!reassembler.isCollecting)
        }
    }

    @Test("Problems read well")
    func descriptions() {
        #expect(
            ReassemblyProblem.abandoned(received: 10, expected: 30).description
                == "incomplete L2CAP PDU abandoned after 10 of 30 bytes")
        #expect(
            ReassemblyProblem.continuationWithoutStart(3).description
                == "continuation fragment of 3 byte(s) with no PDU in progress")
        #expect(
            ReassemblyProblem.longerThanDeclared(declared: 7, actual: 8).description
                == "L2CAP PDU declares 7 bytes but the fragment has 8")
        #expect(
            ReassemblyProblem.overflow(expected: 30, wouldHave: 31).description
                == "continuation overflows the L2CAP PDU: 31 of 30 bytes")
    }
}
