import BluetoothCore
import HCI
import L2CAP
import Testing

// A frame built in place: the upper layer writes after four octets of headroom, sealing
// fills the basic header, and the ACL packets are views of that one buffer.

@Suite("OutgoingFrame")
struct OutgoingFrameTests {
    @Test("Sealing an ATT Read Request gives the same bytes as BasicFrame encodes", arguments: [0, 1, 3, 517])
    func sealedMatchesBasicFrame(length: Int) {
        let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        var frame = OutgoingFrame(capacity: 8)  // smaller than the payload: the writer grows
        frame.writer.write(bytes: payload)
        #expect(frame.payloadCount == length)
        #expect(Array(frame.payload) == payload)
        #expect(frame.sealed(for: .att) == BasicFrame(channel: .att, payload: payload[...]).encoded())
        #expect(
            OutgoingFrame(payload: payload).sealed(for: .smp)
                == BasicFrame(channel: .smp, payload: payload[...]).encoded())
    }

    @Test(
        "Fragments are views of the sealed frame, in order, the first a start",
        arguments: [1, 4, 5, 27, 251, 1000])
    func fragmentsAreViews(bufferLength: Int) {
        let sealed = OutgoingFrame(payload: [UInt8](repeating: 0x5A, count: 40)).sealed(for: .att)
        var fragments: [ACLDataPacket] = []
        ACLDataPacket.forEachFragment(of: sealed[...], handle: 0x0041, bufferLength: bufferLength) {
            fragments.append($0)
        }
        #expect(fragments.count == (44 + bufferLength - 1) / bufferLength)
        #expect(fragments.first?.boundary == .firstNonFlushable)
        #expect(fragments.dropFirst().allSatisfy { $0.boundary == .continuing })
        #expect(fragments.flatMap(\.data) == sealed)
        // Views: each fragment's indices are where its bytes sit in the sealed buffer.
        var expectedStart = 0
        for fragment in fragments {
            #expect(fragment.data.startIndex == expectedStart)
            expectedStart = fragment.data.endIndex
        }
    }
}
