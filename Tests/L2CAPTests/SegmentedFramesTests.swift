import BluetoothCore
import HCI
import L2CAP
import Testing

// The framing of connection-oriented channels beyond basic mode: K-frames (Core Vol 3,
// Part A, 3.4.3), I- and S-frames with their control field and FCS (3.3), and the SDUs
// rebuilt from them.

private func hexBytes(_ text: String) -> [UInt8] {
    text.split(separator: " ").map { UInt8($0, radix: 16)! }
}

@Suite("Segmented frames")
struct SegmentedFramesTests {
    @Test("A single K-frame SDU, and one spread over three")
    func kFrames() {
        var sdus = SDUReassembler()
        #expect(sdus.appendKFrame(hexBytes("03 00 0a 03 00")[...]) == (.complete(hexBytes("0a 03 00")[...]), nil))
        let sdu: [UInt8] = (0..<60).map { (index: Int) -> UInt8 in UInt8(index) }
        let firstFrame: [UInt8] = [60, 0] + sdu[0..<28]
        let frames: [[UInt8]] = [firstFrame, Array(sdu[28..<58]), Array(sdu[58...])]
        #expect(sdus.appendKFrame(frames[0][...]) == (.partial(received: 28, length: 60), nil))
        #expect(sdus.isCollecting)
        #expect(sdus.appendKFrame(frames[1][...]) == (.partial(received: 58, length: 60), nil))
        #expect(sdus.appendKFrame(frames[2][...]) == (.complete(sdu[...]), nil))
        #expect(!sdus.isCollecting)
        // An empty SDU is one K-frame holding only its length.
        #expect(sdus.appendKFrame([0, 0][...]) == (.complete([][...]), nil))
    }

    @Test("K-frames that break the rules cost their SDU only")
    func kFrameProblems() {
        var sdus = SDUReassembler()
        #expect(sdus.appendKFrame([0x05][...]) == (.none, .missingSDULength(1)))
        #expect(sdus.appendKFrame(hexBytes("02 00 01 02 03")[...]) == (.none, .overflow(length: 2, wouldHave: 3)))
        #expect(sdus.appendKFrame(hexBytes("04 00 01 02")[...]) == (.partial(received: 2, length: 4), nil))
        #expect(sdus.appendKFrame(hexBytes("03 04 05")[...]) == (.none, .overflow(length: 4, wouldHave: 5)))
        #expect(!sdus.isCollecting)
        #expect(sdus.appendKFrame(hexBytes("01 00 07")[...]) == (.complete([7][...]), nil))
    }

    @Test("I-frame segments: unsegmented, start, continuation, end, and out of order")
    func segments() {
        var sdus = SDUReassembler()
        #expect(
            sdus.appendSegment(.unsegmented, sduLength: nil, information: [1, 2][...]) == (.complete([1, 2][...]), nil))
        #expect(
            sdus.appendSegment(.start, sduLength: 6, information: [1, 2][...]) == (
                .partial(received: 2, length: 6), nil
            ))
        #expect(
            sdus.appendSegment(.continuation, sduLength: nil, information: [3, 4][...]) == (
                .partial(received: 4, length: 6), nil
            ))
        #expect(
            sdus.appendSegment(.end, sduLength: nil, information: [5, 6][...]) == (
                .complete([1, 2, 3, 4, 5, 6][...]), nil
            ))
        #expect(
            sdus.appendSegment(.end, sduLength: nil, information: [9][...]) == (.none, .continuationWithoutStart(1)))
        #expect(
            sdus.appendSegment(.start, sduLength: 4, information: [1][...]) == (.partial(received: 1, length: 4), nil))
        #expect(
            sdus.appendSegment(.end, sduLength: nil, information: [2][...]) == (
                .none, .endedShort(received: 2, length: 4)
            ))
        #expect(
            sdus.appendSegment(.start, sduLength: 2, information: [1][...]) == (.partial(received: 1, length: 2), nil))
        #expect(
            sdus.appendSegment(.continuation, sduLength: nil, information: [2][...]) == (.none, .endMissing(length: 2)))
        #expect(
            sdus.appendSegment(.start, sduLength: 3, information: [1][...]) == (.partial(received: 1, length: 3), nil))
        #expect(
            sdus.appendSegment(.unsegmented, sduLength: nil, information: [8][...])
                == (.complete([8][...]), .abandoned(received: 1, length: 3)))
    }

    @Test("The FCS of the specification's two examples (Core Vol 3, Part A, 3.3.5)")
    func frameCheckSequence() {
        #expect(FrameCheckSequence.compute(hexBytes("0e 00 40 00 02 00 00 01 02 03 04 05 06 07 08 09")) == 0x6138)
        #expect(FrameCheckSequence.compute(hexBytes("04 00 40 00 01 01")) == 0x14D4)
    }

    @Test("The specification's I-frame and RR S-frame decode, FCS checked")
    func standardControlField() throws {
        // Example 1: an I-frame, TxSeq 1, unsegmented, ten octets of information.
        let iFrame = BasicFrame(
            channel: ChannelIdentifier(rawValue: 0x40),
            payload: hexBytes("02 00 00 01 02 03 04 05 06 07 08 09 38 61")[...])
        let (decoded, fcsValid) = try ControlFieldFrame.decode(iFrame, extendedControl: false, hasFCS: true)
        #expect(fcsValid == true)
        guard case let .information(information) = decoded else { Issue.record("not an I-frame: \(decoded)"); return }
        #expect(information.txSeq == 1)
        #expect(information.reqSeq == 0)
        #expect(information.sar == .unsegmented)
        #expect(information.sduLength == nil)
        let tenOctets: [UInt8] = (0..<10).map { (index: Int) -> UInt8 in UInt8(index) }
        #expect(information.information == tenOctets[...])
        // Example 2: an RR S-frame acknowledging up to 1; then with a wrong FCS.
        let rr = BasicFrame(channel: ChannelIdentifier(rawValue: 0x40), payload: hexBytes("01 01 d4 14")[...])
        let (acknowledgement, rrValid) = try ControlFieldFrame.decode(rr, extendedControl: false, hasFCS: true)
        #expect(rrValid == true)
        guard case let .supervisory(supervisory) = acknowledgement else {
            Issue.record("not an S-frame: \(acknowledgement)"); return
        }
        #expect(supervisory.function == .receiverReady)
        #expect(supervisory.reqSeq == 1)
        #expect(!supervisory.poll && !supervisory.final)
        let damaged = BasicFrame(channel: rr.channel, payload: hexBytes("01 01 d4 15")[...])
        #expect(try ControlFieldFrame.decode(damaged, extendedControl: false, hasFCS: true).fcsValid == false)
    }

    @Test("A start I-frame carries the SDU length; the extended control field moves every field")
    func startAndExtended() throws {
        // SAR start (0b01 in bits 14-15), TxSeq 2, ReqSeq 5, no FCS.
        let start = BasicFrame(channel: ChannelIdentifier(rawValue: 0x41), payload: hexBytes("04 45 08 00 61 62")[...])
        guard
            case let .information(information) = try ControlFieldFrame.decode(
                start, extendedControl: false, hasFCS: false
            ).frame
        else {
            Issue.record("not an I-frame"); return
        }
        #expect(information.sar == .start)
        #expect(information.sduLength == 8)
        #expect(information.txSeq == 2)
        #expect(information.reqSeq == 5)
        #expect(information.information == [0x61, 0x62][...])
        // Extended: F bit 1, ReqSeq bits 2-15 (= 3), SAR bits 16-17 (= end), TxSeq bits 18-31 (= 7).
        let control: UInt32 = 0b10 | 3 << 2 | 2 << 16 | 7 << 18
        let controlOctets: [UInt8] = [
            UInt8(control & 0xFF), UInt8(control >> 8 & 0xFF), UInt8(control >> 16 & 0xFF), UInt8(control >> 24),
        ]
        let payload: [UInt8] = controlOctets + [9]
        let extended = BasicFrame(channel: ChannelIdentifier(rawValue: 0x41), payload: payload[...])
        guard
            case let .information(last) = try ControlFieldFrame.decode(extended, extendedControl: true, hasFCS: false)
                .frame
        else {
            Issue.record("not an I-frame"); return
        }
        #expect(last.final)
        #expect(last.reqSeq == 3)
        #expect(last.sar == .end)
        #expect(last.txSeq == 7)
        #expect(last.information == [9][...])
        // Too short for the control field, or for the FCS.
        #expect(throws: DecodingError.self) {
            try ControlFieldFrame.decode(
                BasicFrame(channel: start.channel, payload: [0x02][...]), extendedControl: false, hasFCS: false)
        }
        #expect(throws: DecodingError.self) {
            try ControlFieldFrame.decode(
                BasicFrame(channel: start.channel, payload: [0x02][...]), extendedControl: false, hasFCS: true)
        }
    }
}
