import BluetoothCore
import HCI
import L2CAP
import Testing

// L2CAP basic frames (Core Vol 3, Part A, 3.1): a 2-byte length of the payload, a 2-byte
// channel id, the payload.

private func hexBytes(_ text: String) -> [UInt8] {
    text.split(separator: " ").map { UInt8($0, radix: 16)! }
}

@Suite("Basic frames")
struct BasicFrameTests {
    @Test("An ATT Read Request on CID 4 is 03 00 04 00 0a 01 00")
    func encoding() throws {
        let frame = BasicFrame(channel: .att, payload: hexBytes("0a 01 00")[...])
        let expected = hexBytes("03 00 04 00 0a 01 00")
        #expect(frame.encoded() == expected)
        var reader = ByteReader(expected)
        #expect(try BasicFrame(from: &reader) == frame)
        #expect(reader.isAtEnd)
    }

    @Test("Empty and large payloads round-trip", arguments: [0, 1, 23, 251, 517, 65535])
    func sizes(count: Int) throws {
        let payload: [UInt8] = (0..<count).map { (index: Int) -> UInt8 in UInt8(truncatingIfNeeded: index * 7) }
        let frame = BasicFrame(channel: ChannelIdentifier(rawValue: 0x0040), payload: payload[...])
        let encoded = frame.encoded()
        #expect(encoded.count == count + 4)
        let header: [UInt8] = [UInt8(count & 0xFF), UInt8(count >> 8), 0x40, 0x00]
        #expect(Array(encoded.prefix(4)) == header)
        var reader = ByteReader(encoded)
        #expect(try BasicFrame(from: &reader) == frame)
    }

    @Test("Every truncation of a frame is a DecodingError")
    func truncations() {
        let encoded = hexBytes("05 00 06 00 01 03 00 01 10")
        for length in 0..<encoded.count {
            var reader = ByteReader(Array(encoded.prefix(length)))
            #expect(throws: DecodingError.self, "\(length) bytes") { try BasicFrame(from: &reader) }
        }
    }

    @Test("A length field that disagrees with the bytes is a length mismatch")
    func lengthMismatch() {
        var short = ByteReader(hexBytes("04 00 04 00 0a 01 00"))
        #expect(throws: DecodingError.lengthMismatch(field: "L2CAP length", declared: 4, actual: 3)) {
            try BasicFrame(from: &short)
        }
        var long = ByteReader(hexBytes("02 00 04 00 0a 01 00"))
        #expect(throws: DecodingError.lengthMismatch(field: "L2CAP length", declared: 2, actual: 3)) {
            try BasicFrame(from: &long)
        }
    }

    @Test(
        "Fragments: the first is a non-flushable start, the rest continuations, none longer than the buffer",
        arguments: [1, 2, 3, 4, 5, 7, 27, 251, 1000])
    func fragments(bufferLength: Int) {
        let frame = BasicFrame(channel: .att, payload: Array(repeating: 0x5A, count: 40)[...])
        let fragments = frame.fragments(handle: 0x0041, bufferLength: bufferLength)
        #expect(fragments.count == (44 + bufferLength - 1) / bufferLength)
        #expect(fragments.first?.boundary == .firstNonFlushable)
        #expect(fragments.dropFirst().allSatisfy { $0.boundary == .continuing })
        #expect(fragments.allSatisfy { $0.handle == 0x0041 && $0.data.count <= bufferLength && !$0.data.isEmpty })
        #expect(fragments.flatMap { $0.data } == frame.encoded())
    }

    #if compiler(>=6.2)  // exit tests are Swift Testing 6.2's: on 6.0 and 6.1, no such test
        @Test("Fragmenting into zero-byte buffers is a programming error, not a hang")
        func zeroBufferLength() async {
            await #expect(processExitsWith: .failure) {
                _ = BasicFrame(channel: .att, payload: [0x0A, 0x01, 0x00]).fragments(handle: 1, bufferLength: 0)
            }
        }
    #endif

    @Test("Fixed channels print by name")
    func channelNames() {
        #expect(ChannelIdentifier.att.rawValue == 0x0004)
        #expect(ChannelIdentifier.leSignaling.rawValue == 0x0005)
        #expect(ChannelIdentifier.smp.rawValue == 0x0006)
        #expect(ChannelIdentifier.att.description == "ATT (0x0004)")
        #expect(ChannelIdentifier.leSignaling.description == "LE signaling (0x0005)")
        #expect(ChannelIdentifier.smp.description == "SMP (0x0006)")
        #expect(ChannelIdentifier(rawValue: 1).description == "BR/EDR signaling (0x0001)")
        #expect(ChannelIdentifier(rawValue: 0x0040).description == "CID 0x0040")
    }

    @Test(
        "LE signaling codes print in trace spelling",
        arguments: [
            (UInt8(0x01), "Command_Reject"), (0x06, "Disconnection_Req"), (0x07, "Disconnection_Rsp"),
            (0x12, "Connection_Parameter_Update_Req"), (0x13, "Connection_Parameter_Update_Rsp"),
            (0x14, "LE_Credit_Based_Connection_Req"), (0x15, "LE_Credit_Based_Connection_Rsp"),
            (0x16, "Flow_Control_Credit_Ind"), (0x17, "Credit_Based_Connection_Req"),
            (0x18, "Credit_Based_Connection_Rsp"), (0x19, "Credit_Based_Reconfigure_Req"),
            (0x1A, "Credit_Based_Reconfigure_Rsp"), (0x02, "Unknown"), (0x00, "Unknown"), (0xFF, "Unknown"),
        ])
    func signalingNames(code: UInt8, name: String) {
        #expect(SignalingCode(rawValue: code).name == name)
        #expect(SignalingCode(rawValue: code).description == "\(hex(code, digits: 2)) \(name)")
    }

    @Test("Signaling constants carry their spec codes")
    func signalingConstants() {
        #expect(SignalingCode.commandReject.rawValue == 0x01)
        #expect(SignalingCode.connectionParameterUpdateRequest.rawValue == 0x12)
        #expect(SignalingCode.connectionParameterUpdateResponse.rawValue == 0x13)
        #expect(SignalingCode.leCreditBasedConnectionRequest.rawValue == 0x14)
        #expect(SignalingCode.flowControlCreditIndication.rawValue == 0x16)
    }
}
