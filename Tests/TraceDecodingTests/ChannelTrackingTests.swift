import BluetoothCore
import HCI
import Testing
import TraceDecoding

// The rules of following dynamic channels that the fixtures do not show: what is malformed,
// what a link's end forgets, which handles are followed at all, and responses that open
// nothing (yet).

/// `[code, identifier, length, data]`: one signaling command.
private func command(_ code: UInt8, _ identifier: UInt8, _ data: [UInt8]) -> [UInt8] {
    [code, identifier, UInt8(data.count), 0] + data
}

private func lines(_ file: BTSnoopFile) -> [String] {
    var formatter = TraceFormatter(file: file)
    return file.records.map { formatter.format($0) }
}

@Suite("Following dynamic channels")
struct ChannelTrackingTests {
    @Test("A C-frame ending inside a command: the commands before it count, it counts by code, and it is malformed")
    func damagedCFrame() throws {
        var capture = CaptureBuilder()
        capture.connectionComplete(handle: 0x000B)
        // An Echo Request, then a Configuration Request whose length runs past the frame.
        capture.l2cap(
            handle: 0x000B, cid: 0x0001, command(0x08, 1, []) + [0x04, 0x02, 0x08, 0x00, 0x70, 0x00], received: true)
        let file = try capture.file()
        let summary = TraceSummary(file: file)
        #expect(summary.signaling == ["0x08 Echo_Req": 1, "0x04 Configuration_Req": 1])
        #expect(summary.malformed == ["l2cap signaling length_mismatch": 1])
        #expect(
            lines(file)[1].contains(
                "0x08 Echo_Req id 1; 0x04 Configuration_Req (damaged: signaling command length says 8"))
        #expect(
            TraceCheck(file: file).failure?.reason.hasPrefix(
                "BR/EDR signaling C-frame ends inside 0x04 Configuration_Req") == true)
    }

    @Test("A command whose data is too short prints malformed and fails the check, but counts")
    func shortCommandData() throws {
        var capture = CaptureBuilder()
        capture.connectionComplete(handle: 0x000B)
        capture.l2cap(handle: 0x000B, cid: 0x0001, command(0x02, 1, [0x01, 0x00]), received: false)
        let file = try capture.file()
        #expect(TraceSummary(file: file).signaling == ["0x02 Connection_Req": 1])
        #expect(lines(file)[1].contains("0x02 Connection_Req id 1 (malformed: "))
        #expect(TraceCheck(file: file).failure?.reason.hasPrefix("BR/EDR signaling 0x02 Connection_Req: ") == true)
    }

    @Test("K-frames that overflow their SDU are malformed; the next SDU is whole again")
    func kFrameOverflow() throws {
        var capture = CaptureBuilder()
        capture.leConnectionComplete(handle: 0x0040)
        capture.l2cap(
            handle: 0x0040, cid: 0x0005, command(0x14, 1, [0x81, 0, 0x40, 0, 100, 0, 30, 0, 5, 0]), received: false)
        capture.l2cap(
            handle: 0x0040, cid: 0x0005, command(0x15, 1, [0x50, 0, 100, 0, 30, 0, 5, 0, 0, 0]), received: true)
        capture.l2cap(handle: 0x0040, cid: 0x0040, [4, 0, 1, 2], received: true)  // SDU of 4: 2 so far
        capture.l2cap(handle: 0x0040, cid: 0x0040, [3, 4, 5], received: true)  // 3 more: 5 of 4
        capture.l2cap(handle: 0x0040, cid: 0x0040, [1, 0, 9], received: true)  // a whole SDU of 1
        let file = try capture.file()
        let summary = TraceSummary(file: file)
        #expect(summary.l2cap == ["PSM 0x0081": 1])
        #expect(summary.malformed == ["l2cap sdu length_mismatch": 1])
        #expect(lines(file)[4].contains("K-frame [segments overflow the SDU: 5 of 4 octets]"))
        #expect(
            TraceCheck(file: file).failure?.reason
                == "CID 0x0040 (PSM 0x0081): segments overflow the SDU: 5 of 4 octets")
    }

    @Test("An I-frame whose FCS does not match is shown as such and fails the check")
    func fcsMismatch() throws {
        var capture = CaptureBuilder()
        capture.connectionComplete(handle: 0x000B)
        capture.l2cap(handle: 0x000B, cid: 0x0001, command(0x02, 1, [0x01, 0x10, 0x40, 0x00]), received: false)
        capture.l2cap(
            handle: 0x000B, cid: 0x0001, command(0x03, 1, [0x80, 0x00, 0x40, 0x00, 0, 0, 0, 0]), received: true)
        let streaming: [UInt8] = [0x04, 0x09, 0x04, 0, 0, 0, 0, 0, 0, 0x58, 0x02]
        capture.l2cap(handle: 0x000B, cid: 0x0001, command(0x04, 2, [0x80, 0, 0, 0] + streaming), received: false)
        capture.l2cap(handle: 0x000B, cid: 0x0001, command(0x05, 2, [0x40, 0, 0, 0, 0, 0]), received: true)
        // The specification's I-frame (3.3.5, example 1) on CID 0x0040, its FCS broken.
        capture.l2cap(
            handle: 0x000B, cid: 0x0040, [0x02, 0x00] + (0..<10).map { UInt8($0) } + [0x38, 0x62], received: true)
        let file = try capture.file()
        #expect(TraceSummary(file: file).l2cap == ["PSM 0x1001": 1])
        #expect(lines(file)[5].contains("I-frame txseq 1 reqseq 0 unsegmented, SDU of 10 octets [FCS mismatch]"))
        #expect(TraceCheck(file: file).failure?.reason == "CID 0x0040 (PSM 0x1001): FCS mismatch")
    }

    @Test("A refused configuration changes nothing: the mode is the accepted one's (seen in a real A2DP capture)")
    func refusedConfiguration() throws {
        var capture = CaptureBuilder()
        capture.connectionComplete(handle: 0x0002)
        capture.l2cap(handle: 0x0002, cid: 0x0001, command(0x02, 6, [0x17, 0x00, 0xC1, 0x04]), received: true)
        capture.l2cap(
            handle: 0x0002, cid: 0x0001, command(0x03, 6, [0x44, 0x00, 0xC1, 0x04, 0, 0, 0, 0]), received: false)
        // The peer asks for Enhanced Retransmission; refused as unacceptable, it asks again
        // with no mode, which is basic, and that is accepted.
        let ertm: [UInt8] = [0x04, 0x09, 0x03, 5, 10, 0, 0, 0, 0, 0xB6, 0x0F]
        capture.l2cap(handle: 0x0002, cid: 0x0001, command(0x04, 10, [0x44, 0, 0, 0] + ertm), received: true)
        capture.l2cap(handle: 0x0002, cid: 0x0001, command(0x05, 10, [0xC1, 0x04, 0, 0, 1, 0]), received: false)
        capture.l2cap(
            handle: 0x0002, cid: 0x0001, command(0x04, 11, [0x44, 0, 0, 0, 0x01, 0x02, 0xA0, 0x02]), received: true)
        capture.l2cap(handle: 0x0002, cid: 0x0001, command(0x05, 11, [0xC1, 0x04, 0, 0, 0, 0]), received: false)
        // AVCTP in a B-frame: an AV/C command for the A/V Remote Control profile.
        capture.l2cap(handle: 0x0002, cid: 0x0044, [0x10, 0x11, 0x0E, 0x01, 0x48, 0x00], received: true)
        let file = try capture.file()
        #expect(TraceSummary(file: file).l2cap == ["PSM 0x0017 AVCTP": 1])
        #expect(lines(file)[7].hasSuffix("L2CAP CID 0x0044 (PSM 0x0017 AVCTP) len 6: AVCTP [10 11 0e 01 48 00]"))
        #expect(TraceCheck(file: file).failure == nil)
    }

    @Test("After a Disconnection Request, what still arrives on the channel is discarded, as in a real A2DP capture")
    func disconnecting() throws {
        var capture = CaptureBuilder()
        capture.connectionComplete(handle: 0x0002)
        capture.l2cap(handle: 0x0002, cid: 0x0001, command(0x02, 1, [0x19, 0x00, 0x41, 0x00]), received: false)
        capture.l2cap(
            handle: 0x0002, cid: 0x0001, command(0x03, 1, [0xB3, 0x01, 0x41, 0x00, 0, 0, 0, 0]), received: true)
        capture.l2cap(handle: 0x0002, cid: 0x01B3, [0x40, 0x08, 0x04], received: false)  // AVDTP Close
        capture.l2cap(handle: 0x0002, cid: 0x0001, command(0x06, 2, [0xB3, 0x01, 0x41, 0x00]), received: false)
        capture.l2cap(handle: 0x0002, cid: 0x0041, [0x42, 0x08], received: true)  // its answer, too late
        capture.l2cap(handle: 0x0002, cid: 0x0001, command(0x07, 2, [0xB3, 0x01, 0x41, 0x00]), received: true)
        capture.l2cap(handle: 0x0002, cid: 0x0041, [0x42, 0x08], received: true)
        let file = try capture.file()
        // tshark, on the capture this comes from: the late answer is L2CAP only, not AVDTP.
        #expect(TraceSummary(file: file).l2cap == ["PSM 0x0019 AVDTP": 1, "CID 0x0041 (no PSM seen)": 1])
        #expect(lines(file)[5].hasSuffix("L2CAP CID 0x0041 (PSM 0x0019 AVDTP) len 2: disconnecting, discarded [42 08]"))
        #expect(TraceCheck(file: file).failure == nil)
    }

    @Test("A link's end forgets its channels; a refused connection opens none")
    func disconnectionAndRefusal() throws {
        var capture = CaptureBuilder()
        capture.connectionComplete(handle: 0x000B)
        capture.l2cap(handle: 0x000B, cid: 0x0001, command(0x02, 1, [0x19, 0x00, 0x40, 0x00]), received: false)
        capture.l2cap(
            handle: 0x000B, cid: 0x0001, command(0x03, 1, [0x50, 0x00, 0x40, 0x00, 0, 0, 0, 0]), received: true)
        capture.l2cap(handle: 0x000B, cid: 0x0040, [0x02, 0x01], received: true)
        capture.event(0x05, [0x00, 0x0B, 0x00, 0x13])
        capture.connectionComplete(handle: 0x000B)
        capture.l2cap(handle: 0x000B, cid: 0x0040, [0x02, 0x01], received: true)
        // Refused: PSM not supported.
        capture.l2cap(handle: 0x000B, cid: 0x0001, command(0x02, 2, [0x03, 0x00, 0x41, 0x00]), received: false)
        capture.l2cap(
            handle: 0x000B, cid: 0x0001, command(0x03, 2, [0x00, 0x00, 0x41, 0x00, 2, 0, 0, 0]), received: true)
        capture.l2cap(handle: 0x000B, cid: 0x0041, [0x01], received: true)
        let summary = TraceSummary(file: try capture.file())
        #expect(summary.l2cap == ["PSM 0x0019 AVDTP": 1, "CID 0x0040 (no PSM seen)": 1, "CID 0x0041 (no PSM seen)": 1])
    }

    @Test("Enhanced credit based channels on BR/EDR signaling, after a pending response")
    func enhancedOnBREDR() throws {
        var capture = CaptureBuilder()
        capture.connectionComplete(handle: 0x000C)
        // Peer asks for two EATT channels (its CIDs 0x0070, 0x0071); pending, then both granted.
        capture.l2cap(
            handle: 0x000C, cid: 0x0001, command(0x17, 5, [0x27, 0, 64, 0, 64, 0, 5, 0, 0x70, 0, 0x71, 0]),
            received: true)
        capture.l2cap(
            handle: 0x000C, cid: 0x0001, command(0x18, 5, [64, 0, 64, 0, 5, 0, 0x0E, 0, 0, 0, 0, 0]), received: false)
        capture.l2cap(
            handle: 0x000C, cid: 0x0001, command(0x18, 5, [64, 0, 64, 0, 5, 0, 0, 0, 0x40, 0, 0x41, 0]), received: false
        )
        capture.l2cap(handle: 0x000C, cid: 0x0040, [3, 0, 0x0A, 0x03, 0x00], received: true)  // to the host's 0x0040
        capture.l2cap(handle: 0x000C, cid: 0x0071, [3, 0, 0x0B, 0x41, 0x42], received: false)  // to the peer's 0x0071
        let file = try capture.file()
        let summary = TraceSummary(file: file)
        #expect(summary.att == ["0x0a Read_Req": 1, "0x0b Read_Rsp": 1])
        #expect(summary.signaling == ["0x17 Credit_Based_Connection_Req": 1, "0x18 Credit_Based_Connection_Rsp": 2])
        #expect(lines(file)[2].contains("result 0x000e all pending, authentication pending"))
        #expect(TraceCheck(file: file).failure == nil)
    }

    @Test("In a capture that announces connections, a handle none announced is vendor data: no channels, no signaling")
    func vendorHandle() throws {
        var capture = CaptureBuilder()
        capture.leConnectionComplete(handle: 0x0040)
        capture.l2cap(handle: 0x0EDC, cid: 0x0001, command(0x08, 1, [1]), received: true)
        capture.l2cap(handle: 0x0EDC, cid: 0x0041, [1, 2, 3], received: true)
        capture.l2cap(handle: 0x0EDC, cid: 0x0004, [0x1B, 0x03, 0x00], received: true)
        let summary = TraceSummary(file: try capture.file())
        #expect(summary.signaling.isEmpty)
        #expect(summary.l2cap.isEmpty)
        // The fixed LE channels count as before, as Wireshark counts them.
        #expect(summary.att == ["0x1b Handle_Value_Notification": 1])
    }

    @Test(
        "The printer follows what the summary follows: a file's vendor handle is not signaling, even before the first connection"
    )
    func printerFollowsLikeSummary() throws {
        var capture = CaptureBuilder()
        capture.l2cap(handle: 0x0EDC, cid: 0x0001, [0x0A, 0x00, 0x00, 0x00], received: true)
        capture.leConnectionComplete(handle: 0x0040)
        let file = try capture.file()
        #expect(
            lines(file)[0].hasSuffix("| L2CAP BR/EDR signaling (0x0001) len 4: BR/EDR signaling (0x0001) [0a 00 00 00]")
        )
        // A capture that announces no link is followed everywhere by the file's printer; a
        // printer without the file follows only the handles announced as it goes.
        let midConnection = try readFixture("unannounced.btsnoop")
        #expect(lines(midConnection)[0].hasSuffix("L2CAP CID 0x0041 (no PSM seen) len 5 [01 02 03 04 05]"))
        var streaming = TraceFormatter()
        #expect(
            streaming.format(midConnection.records[0]).hasSuffix("L2CAP CID 0x0041 len 5: CID 0x0041 [01 02 03 04 05]"))
    }
}
