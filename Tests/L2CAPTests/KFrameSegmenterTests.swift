import BluetoothCore
import HCI
import L2CAP
import Testing

/// SDUs cut into K-frames (Core Vol 3, Part A, 3.4.3) and rebuilt by `SDUReassembler`.
struct KFrameSegmenterTests {
    func frames(_ sdu: [UInt8], mps: Int) -> [[UInt8]] {
        var segmenter = KFrameSegmenter(sdu: sdu, mps: mps)
        var frames: [[UInt8]] = []
        while let frame = segmenter.next() { frames.append(Array(frame.payload)) }
        return frames
    }

    @Test func theFirstFrameCarriesTheSDULength() {
        let cut = frames(Array(0..<50), mps: 23)
        #expect(cut.map(\.count) == [23, 23, 6])  // 21 + 23 + 6 octets of the SDU
        #expect(Array(cut[0].prefix(2)) == [50, 0])
        #expect(Array(cut[0].dropFirst(2)) == Array(0..<21))
        #expect(cut[1] == Array(21..<44))
        #expect(KFrameSegmenter.frameCount(sduLength: 50, mps: 23) == 3)
    }

    @Test func anEmptySDUIsOneFrameOfItsLength() {
        #expect(frames([], mps: 23) == [[0, 0]])
        #expect(KFrameSegmenter.frameCount(sduLength: 0, mps: 23) == 1)
    }

    @Test func anSDUThatFillsTheFirstFrameExactlyTakesOne() {
        #expect(frames(Array(repeating: 7, count: 21), mps: 23).count == 1)
        #expect(frames(Array(repeating: 7, count: 22), mps: 23).count == 2)
        #expect(KFrameSegmenter.frameCount(sduLength: 22, mps: 23) == 2)
    }

    @Test(arguments: [0, 1, 21, 22, 23, 100, 2048, 65535])
    func segmentsReassembleToTheSameSDU(length: Int) {
        let sdu = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 7) }
        var reassembler = SDUReassembler()
        var rebuilt: [UInt8]?
        let cut = frames(sdu, mps: 64)
        #expect(cut.count == KFrameSegmenter.frameCount(sduLength: length, mps: 64))
        for frame in cut {
            let (progress, problem) = reassembler.appendKFrame(frame[...])
            #expect(problem == nil)
            if case let .complete(whole) = progress { rebuilt = Array(whole) }
        }
        #expect(rebuilt == sdu)
        #expect(cut.allSatisfy { $0.count <= 64 })
    }
}
