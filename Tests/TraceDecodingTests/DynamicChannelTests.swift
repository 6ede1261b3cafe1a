import BluetoothCore
import HCI
import Testing
import TraceDecoding

// `trace` follows dynamic L2CAP channels (issue 20): the captures of Fixtures/traces/l2cap
// (written by its make-fixtures.py), summarised, printed and checked.
//
// Each expectation was compared with tshark 4.0.17 on the same file (`tshark -r F -q -z
// io,phs`, `-T fields -e btatt.opcode`, `-e btl2cap.cid -e btl2cap.cmd_code`, `-Y
// btl2cap.psm`); the comments say what it reported and where it differs, and why.

/// Every line of `file` as `bluejay trace` prints it.
private func lines(_ file: BTSnoopFile) -> [String] {
    var formatter = TraceFormatter(file: file)
    return file.records.map { formatter.format($0) }
}

/// Line `number` (from 1) without its number and time.
private func line(_ lines: [String], _ number: Int) -> String {
    let text = lines[number - 1]
    // "#12 2024-01-01 00:00:00.011000 > …": drop the first three fields.
    return text.split(separator: " ", maxSplits: 3).dropFirst(3).joined()
}

@Suite("Dynamic L2CAP channels in traces")
struct DynamicChannelTests {
    @Test("A BR/EDR SDP channel: opened after a pending response, data both ways, closed")
    func bredrSDP() throws {
        let file = try readFixture("bredr-sdp.btsnoop")
        let summary = TraceSummary(file: file)
        // tshark: btsdp 2 frames; cmd_code on CID 0x0001: 0x02 ×1, 0x03 ×2, 0x04 ×2, 0x05 ×2, 0x06 ×1, 0x07 ×1.
        #expect(summary.l2cap == ["PSM 0x0001 SDP": 2])
        #expect(
            summary.signaling == [
                "0x02 Connection_Req": 1, "0x03 Connection_Rsp": 2, "0x04 Configuration_Req": 2,
                "0x05 Configuration_Rsp": 2, "0x06 Disconnection_Req": 1, "0x07 Disconnection_Rsp": 1,
            ])
        #expect(summary.att.isEmpty && summary.malformed.isEmpty)
        let printed = lines(file)
        #expect(
            line(printed, 3) == "> HCI Event: Connection_Complete (0x03) plen 11: status 0x00 success, handle 0x000b, "
                + "peer 11:22:33:44:55:66, link type ACL, encryption off")
        #expect(
            line(printed, 4) == "< ACL TX: handle 0x000b flags 0x02 dlen 12 | L2CAP BR/EDR signaling (0x0001) len 8: "
                + "0x02 Connection_Req id 1: PSM 0x0001 SDP, scid 0x0040 [02 01 04 00 01 00 40 00]")
        #expect(
            line(printed, 5).contains(
                "0x03 Connection_Rsp id 1: dcid 0x0070, scid 0x0040, result 0x0001 pending, "
                    + "status 0x0002 authorization pending"))
        #expect(line(printed, 7).contains("0x04 Configuration_Req id 2: dcid 0x0070, MTU 672"))
        #expect(
            line(printed, 11)
                == "< ACL TX: handle 0x000b flags 0x02 dlen 24 | L2CAP CID 0x0070 (PSM 0x0001 SDP) len 20: "
                + "SDP [06 00 01 00 0f 35 03 19 11 0b ff ff 35 05 0a 00 00 ff ff 00]")
        #expect(
            line(printed, 14)
                == "> ACL RX: handle 0x000b flags 0x01 dlen 2 | L2CAP CID 0x0040 (PSM 0x0001 SDP) len 10: "
                + "SDP [07 00 01 00 05 00 02 35 00 00]")
        #expect(line(printed, 16).contains("0x07 Disconnection_Rsp id 4: dcid 0x0070, scid 0x0040"))
        #expect(TraceCheck(file: file).failure == nil)
    }

    @Test("ATT over BR/EDR (PSM 0x001F) is ATT: the peer's CID maps what the host sends")
    func bredrATT() throws {
        let file = try readFixture("bredr-att.btsnoop")
        let summary = TraceSummary(file: file)
        // tshark: btatt 5 frames, opcodes 0x0a 0x0b 0x10 0x11 0x1b once each.
        #expect(
            summary.att == [
                "0x0a Read_Req": 1, "0x0b Read_Rsp": 1, "0x10 Read_By_Group_Type_Req": 1,
                "0x11 Read_By_Group_Type_Rsp": 1, "0x1b Handle_Value_Notification": 1,
            ])
        #expect(summary.l2cap.isEmpty)
        #expect(summary.signaling["0x02 Connection_Req"] == 1)
        let printed = lines(file)
        #expect(
            line(printed, 1)
                == "> HCI Event: Connection_Request (0x04) plen 10: peer 11:22:33:44:55:66, class 0x5a020c, link type ACL"
        )
        #expect(
            line(printed, 12)
                == "> ACL RX: handle 0x000c flags 0x02 dlen 11 | L2CAP CID 0x0042 (PSM 0x001f ATT) len 7: "
                + "ATT 0x10 Read_By_Group_Type_Req [10 01 00 ff ff 00 28]")
        #expect(
            line(printed, 15) == "< ACL TX: handle 0x000c flags 0x02 dlen 7 | L2CAP CID 0x0041 (PSM 0x001f ATT) len 3: "
                + "ATT 0x0b Read_Rsp [0b 41 42]")
        let check = TraceCheck(file: file)
        #expect(check.failure == nil)
        #expect(check.attPDUs == 5)
    }

    @Test("EATT: two bearers asked for, one refused; an SDU over two K-frames is one ATT PDU")
    func eatt() throws {
        let file = try readFixture("le-eatt.btsnoop")
        let summary = TraceSummary(file: file)
        // tshark 4.0.17 reads 0x17 and 0x18 as "Unknown command" and so knows no EATT
        // channel: its btatt is only the 2 PDUs on CID 0x0004. Ours adds the three EATT
        // SDUs (Core Vol 3, Part A, 4.25 and 4.26; Part G, 5.3.2).
        #expect(
            summary.att == [
                "0x02 Exchange_MTU_Req": 1, "0x03 Exchange_MTU_Rsp": 1, "0x0a Read_Req": 1, "0x0b Read_Rsp": 1,
                "0x1b Handle_Value_Notification": 1,
            ])
        let summaryAttMTU: [String] = ["req 512", "rsp 247"]
        #expect(summary.attMTU == summaryAttMTU)
        #expect(
            summary.leSignaling == [
                "0x16 Flow_Control_Credit_Ind": 1, "0x17 Credit_Based_Connection_Req": 1,
                "0x18 Credit_Based_Connection_Rsp": 1,
            ])
        // The refused CID opened nothing: the peer's frame to it has no PSM (tshark: one
        // "Connection oriented channel" frame on 0x0041).
        #expect(summary.l2cap == ["CID 0x0041 (no PSM seen)": 1])
        let printed = lines(file)
        #expect(
            line(printed, 3).contains(
                "LE signaling 0x18 Credit_Based_Connection_Rsp id 1: MTU 64, MPS 23, credits 10, "
                    + "result 0x0004 some refused, insufficient resources, dcids 0x0060 0x0000 (refused)"))
        #expect(
            line(printed, 4) == "< ACL TX: handle 0x0040 flags 0x02 dlen 9 | L2CAP CID 0x0060 (PSM 0x0027 EATT) len 5: "
                + "K-frame, ATT 0x0a Read_Req [0a 03 00]")
        #expect(
            line(printed, 7).hasSuffix(
                "| L2CAP CID 0x0040 (PSM 0x0027 EATT) len 23: K-frame, SDU 21 of 40 octets "
                    + "[28 00 0b 30 31 32 33 34 35 36 37 38 39 3a 3b 3c 3d 3e 3f 40 41 42 43]"))
        #expect(
            line(printed, 8).contains("L2CAP CID 0x0040 (PSM 0x0027 EATT) len 19: K-frame, ATT 0x0b Read_Rsp [0b 30 31")
        )
        let check = TraceCheck(file: file)
        #expect(check.failure == nil)
        #expect(check.attPDUs == 5)
    }

    @Test("An LE credit based channel on a dynamic PSM counts SDUs, not K-frames")
    func leCreditBased() throws {
        let file = try readFixture("le-credit-based.btsnoop")
        let summary = TraceSummary(file: file)
        // tshark: 4 K-frames with btl2cap.psm 0x0080, 2 SDUs (one whole, one reassembled in
        // frame 7 from frames 5, 6 and 7); cmd_code on 0x0005: 0x06 0x07 0x14 0x15 0x16 once each.
        #expect(summary.l2cap == ["PSM 0x0080": 2])
        #expect(
            summary.leSignaling == [
                "0x06 Disconnection_Req": 1, "0x07 Disconnection_Rsp": 1, "0x14 LE_Credit_Based_Connection_Req": 1,
                "0x15 LE_Credit_Based_Connection_Rsp": 1, "0x16 Flow_Control_Credit_Ind": 1,
            ])
        #expect(summary.signaling.isEmpty)
        let printed = lines(file)
        #expect(
            line(printed, 2).contains(
                "LE signaling 0x14 LE_Credit_Based_Connection_Req id 1: PSM 0x0080, scid 0x0040, MTU 100, "
                    + "MPS 30, credits 5"))
        #expect(
            line(printed, 3).contains(
                "0x15 LE_Credit_Based_Connection_Rsp id 1: dcid 0x0045, MTU 200, MPS 30, credits 3, "
                    + "result 0x0000 success"))
        #expect(
            line(printed, 4) == "< ACL TX: handle 0x0041 flags 0x02 dlen 16 | L2CAP CID 0x0045 (PSM 0x0080) len 12: "
                + "K-frame, SDU of 10 octets [30 31 32 33 34 35 36 37 38 39]")
        #expect(line(printed, 6).contains("L2CAP CID 0x0040 (PSM 0x0080) len 30: K-frame, SDU 58 of 60 octets"))
        #expect(line(printed, 7).contains("L2CAP CID 0x0040 (PSM 0x0080) len 2: K-frame, SDU of 60 octets [00 01 02"))
        #expect(TraceCheck(file: file).failure == nil)
    }

    @Test("A CID closed and opened again for another PSM takes the new PSM")
    func reuse() throws {
        let file = try readFixture("bredr-reuse.btsnoop")
        let summary = TraceSummary(file: file)
        // tshark: btsdp 2 frames, btrfcomm 2 frames.
        #expect(summary.l2cap == ["PSM 0x0001 SDP": 2, "PSM 0x0003 RFCOMM": 2])
        #expect(
            summary.signaling == [
                "0x02 Connection_Req": 2, "0x03 Connection_Rsp": 2, "0x06 Disconnection_Req": 1,
                "0x07 Disconnection_Rsp": 1,
            ])
        let printed = lines(file)
        #expect(line(printed, 5).contains("L2CAP CID 0x0040 (PSM 0x0001 SDP) len 10: SDP"))
        #expect(line(printed, 11).contains("L2CAP CID 0x0040 (PSM 0x0003 RFCOMM) len 4: RFCOMM [03 73 01 d7]"))
    }

    @Test("Every command of a C-frame is counted and printed")
    func multipleCommands() throws {
        let file = try readFixture("bredr-multiple-commands.btsnoop")
        let summary = TraceSummary(file: file)
        // tshark: the same cmd_code counts on CID 0x0001, btavdtp 2 frames. It also flags the
        // Echo Response as malformed because it has no data; the data is optional (Core Vol
        // 3, Part A, 4.9), so ours does not.
        #expect(
            summary.signaling == [
                "0x02 Connection_Req": 1, "0x03 Connection_Rsp": 1, "0x04 Configuration_Req": 2,
                "0x05 Configuration_Rsp": 2, "0x08 Echo_Req": 1, "0x09 Echo_Rsp": 1, "0x0a Information_Req": 1,
                "0x0b Information_Rsp": 1,
            ])
        #expect(summary.l2cap == ["PSM 0x0019 AVDTP": 2])
        #expect(summary.malformed.isEmpty)
        let printed = lines(file)
        #expect(
            line(printed, 3).contains(
                "len 20: 0x03 Connection_Rsp id 1: dcid 0x0050, scid 0x0040, result 0x0000 success; "
                    + "0x04 Configuration_Req id 7: dcid 0x0040 ["))
        #expect(
            line(printed, 4).contains(
                "0x05 Configuration_Rsp id 7: scid 0x0050, result 0x0000 success; 0x04 Configuration_Req id 2: "
                    + "dcid 0x0050, MTU 895; 0x0a Information_Req id 3: type 0x0002 extended features mask ["))
        #expect(line(printed, 6).hasSuffix("L2CAP CID 0x0050 (PSM 0x0019 AVDTP) len 2: AVDTP [00 01]"))
        #expect(TraceCheck(file: file).failure == nil)
    }

    @Test("A capture started mid-connection: link kinds inferred, a channel it never saw open")
    func unannounced() throws {
        let file = try readFixture("unannounced.btsnoop")
        let summary = TraceSummary(file: file)
        // tshark: 2 "Connection oriented channel" frames on 0x0041, no PSM; btatt 3 frames
        // (it reads CID 0x0004 as ATT on the BR/EDR link too); cmd_code 0x08, 0x09 on 0x0001
        // and 0x12 on 0x0005. It flags both empty echoes as malformed (see above).
        #expect(summary.l2cap == ["CID 0x0041 (no PSM seen)": 2])
        #expect(summary.att == ["0x0a Read_Req": 2, "0x1b Handle_Value_Notification": 1])
        #expect(summary.signaling == ["0x08 Echo_Req": 1, "0x09 Echo_Rsp": 1])
        #expect(summary.leSignaling == ["0x12 Connection_Parameter_Update_Req": 1])
        #expect(summary.malformed.isEmpty)
        let printed = lines(file)
        #expect(
            line(printed, 1) == "> ACL RX: handle 0x0001 flags 0x02 dlen 9 (handle never announced) | "
                + "L2CAP CID 0x0041 (no PSM seen) len 5 [01 02 03 04 05]")
        // Handle 0x0001 used BR/EDR signaling, so CID 0x0004 is a reserved one there.
        #expect(line(printed, 5).contains("L2CAP ATT (0x0004) len 3 [reserved on BR/EDR]: ATT 0x0a Read_Req"))
        #expect(line(printed, 8).contains("L2CAP ATT (0x0004) len 3: ATT 0x0a Read_Req"))
        #expect(TraceCheck(file: file).failure == nil)
    }

    @Test("Enhanced Retransmission mode: I-frames rebuilt into SDUs, S-frames, ATT not misread")
    func enhancedRetransmission() throws {
        let file = try readFixture("bredr-ertm.btsnoop")
        let summary = TraceSummary(file: file)
        // tshark: btatt 2 frames (it reassembles I-frames too); the PSM 0x1001 SDUs are the
        // unsegmented frame 8 and the start and end frames 9 and 10, which tshark 4.0.17
        // flags as malformed (an exception on a start I-frame with an FCS; the frame is
        // as Core Vol 3, Part A, 3.3.2 lays it out, and its FCS matches).
        #expect(summary.att == ["0x0a Read_Req": 1, "0x0b Read_Rsp": 1])
        #expect(summary.l2cap == ["PSM 0x1001": 2])
        #expect(summary.malformed.isEmpty)
        let printed = lines(file)
        #expect(
            line(printed, 4).contains(
                "0x04 Configuration_Req id 2: dcid 0x0080, mode 0x03 enhanced retransmission, tx window 10, "
                    + "max transmit 3, retransmission time-out 2000 ms, monitor time-out 12000 ms, MPS 600"))
        #expect(
            line(printed, 8).hasSuffix(
                "L2CAP CID 0x0080 (PSM 0x1001) len 9: I-frame txseq 0 reqseq 0 unsegmented, "
                    + "SDU of 5 octets [68 65 6c 6c 6f]"))
        #expect(
            line(printed, 9).contains(
                "L2CAP CID 0x0040 (PSM 0x1001) len 10: I-frame txseq 0 reqseq 1 start, SDU 4 of 8 octets"))
        #expect(line(printed, 10).hasSuffix("I-frame txseq 1 reqseq 1 end, SDU of 8 octets [61 62 63 64 65 66 67 68]"))
        #expect(line(printed, 11).hasSuffix("L2CAP CID 0x0080 (PSM 0x1001) len 4: S-frame RR reqseq 2"))
        #expect(
            line(printed, 18).hasSuffix(
                "L2CAP CID 0x0081 (PSM 0x001f ATT) len 7: I-frame txseq 0 reqseq 0 unsegmented, "
                    + "ATT 0x0a Read_Req [0a 03 00]"))
        #expect(TraceCheck(file: file).failure == nil)
    }

    @Test("The JSON has l2cap and signaling only when they are not empty")
    func jsonKeys() throws {
        guard case let .object(withChannels) = TraceSummary(file: try readFixture("bredr-sdp.btsnoop")).json,
            case let .object(without) = TraceSummary(file: try readFixture("le-credit-based.btsnoop")).json
        else {
            Issue.record("a summary is not a JSON object")
            return
        }
        let expectedKeys = [
            "att", "att_mtu", "commands", "events", "le_signaling", "le_subevents", "malformed", "packet_types",
            "records", "smp",
        ]
        #expect(withChannels.keys.sorted() == (expectedKeys + ["l2cap", "signaling"]).sorted())
        #expect(without.keys.sorted() == (expectedKeys + ["l2cap"]).sorted())
        #expect(withChannels["l2cap"] == .object(["PSM 0x0001 SDP": .number(2)]))
    }
}
