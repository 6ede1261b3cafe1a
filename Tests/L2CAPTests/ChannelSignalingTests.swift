import BluetoothCore
import HCI
import L2CAP
import Testing

// The commands that open, configure and close connection-oriented channels (Core Vol 3,
// Part A, 4), and the BR/EDR C-frame that may carry several of them.

private func hexBytes(_ text: String) -> [UInt8] {
    text.split(separator: " ").map { UInt8($0, radix: 16)! }
}

/// `data` read as the data of a `PDU` command, under the tolerance rule the trace decoders use.
private func decoded<PDU: SignalingPDU>(_: PDU.Type, _ data: [UInt8]) throws -> PDU {
    try PDU.decodeCountingExtraOctets(SignalingCommand(code: PDU.code, identifier: 1, data: data)).pdu
}

@Suite("Channel signaling")
struct ChannelSignalingTests {
    @Test("A C-frame's commands are walked in order, whatever their number")
    func severalCommands() {
        // Connection_Rsp, then Configuration_Req with no option, then Information_Req.
        let payload = hexBytes("03 01 08 00 50 00 40 00 00 00 00 00 04 07 04 00 40 00 00 00 0a 03 02 00 02 00")
        let frame = ControlFrame(payload: payload[...])
        #expect(frame.commands.map(\.code) == [.connectionResponse, .configurationRequest, .informationRequest])
        #expect(frame.commands.map(\.identifier) == [1, 7, 3])
        #expect(frame.commands[2].data == [0x02, 0x00])
        #expect(frame.damaged == nil)
    }

    @Test("A command cut short keeps the ones before it and names its code")
    func damagedCommand() {
        let lengthPastEnd = ControlFrame(payload: hexBytes("08 01 00 00 04 02 08 00 70 00")[...])
        #expect(lengthPastEnd.commands.map(\.code) == [.echoRequest])
        #expect(lengthPastEnd.damaged?.code == .configurationRequest)
        #expect(
            lengthPastEnd.damaged?.error == .lengthMismatch(field: "signaling command length", declared: 8, actual: 2))
        let shortHeader = ControlFrame(payload: hexBytes("09 01 00 00 06 02")[...])
        #expect(shortHeader.commands.map(\.code) == [.echoResponse])
        #expect(shortHeader.damaged?.code == .disconnectionRequest)
        #expect(shortHeader.damaged?.error == .truncated(needed: 4, available: 2))
        let empty = ControlFrame(payload: [][...])
        #expect(empty.commands.isEmpty && empty.damaged == nil)
    }

    @Test("Connection Request and Response, as on the wire")
    func connection() throws {
        let request = ConnectionRequest(psm: .sdp, sourceCID: 0x0040)
        #expect(request.encoded() == hexBytes("01 00 40 00"))
        #expect(try decoded(ConnectionRequest.self, request.encoded()) == request)
        let create = CreateChannelRequest(ConnectionRequest(psm: .avdtp, sourceCID: 0x0041), controllerID: 0)
        #expect(try decoded(CreateChannelRequest.self, create.encoded()) == create)

        let pending = try decoded(ConnectionResponse.self, hexBytes("70 00 40 00 01 00 02 00"))
        #expect(
            pending
                == ConnectionResponse(
                    destinationCID: 0x0070, sourceCID: 0x0040, result: .pending,
                    status: ConnectionStatus(rawValue: 2)))
        #expect(pending.result.description == "0x0001 pending")
        #expect(pending.status.description == "0x0002 authorization pending")
        #expect(ConnectionResult(rawValue: 0x0007).description == "0x0007 refused, Source CID already allocated")
        #expect(ConnectionResult(rawValue: 0x0005).description == "0x0005")
        // Octets a later version may append are accepted; too few are not.
        #expect(try decoded(ConnectionResponse.self, pending.encoded() + [0xEE]) == pending)
        #expect(throws: DecodingError.self) { try decoded(ConnectionResponse.self, hexBytes("70 00 40 00 01 00")) }
        #expect(
            try decoded(DisconnectionRequest.self, hexBytes("70 00 40 00"))
                == DisconnectionRequest(destinationCID: 0x70, sourceCID: 0x40))
    }

    @Test("Configuration options: MTU, modes, FCS, and anything else kept raw")
    func configuration() throws {
        let ertm = RetransmissionAndFlowControl(
            mode: .enhancedRetransmission, transmitWindow: 10, maxTransmit: 3,
            retransmissionTimeout: 2000, monitorTimeout: 12000, mps: 600)
        let request = ConfigurationRequest(
            destinationCID: 0x0080,
            options: [
                .mtu(672), .retransmissionAndFlowControl(ertm), .frameCheckSequence(0), .extendedWindowSize(100),
                .other(type: 0x83, value: [1, 2, 3]),
            ])
        let encoded = request.encoded()
        #expect(
            encoded
                == hexBytes(
                    "80 00 00 00 01 02 a0 02 04 09 03 0a 03 d0 07 e0 2e 58 02 05 01 00 07 02 64 00 83 03 01 02 03"))
        #expect(try decoded(ConfigurationRequest.self, encoded) == request)
        // A hinted MTU option is still the MTU; an MTU option of the wrong length is kept raw.
        #expect(ConfigurationOption(type: 0x81, value: [0xA0, 0x02]) == .mtu(672))
        #expect(ConfigurationOption(type: 0x01, value: [0xA0]) == .other(type: 0x01, value: [0xA0]))
        #expect(ertm.description.hasPrefix("mode 0x03 enhanced retransmission, tx window 10"))
        #expect(throws: DecodingError.self) { try decoded(ConfigurationRequest.self, hexBytes("80 00 00 00 01 02 a0")) }

        let response = ConfigurationResponse(
            sourceCID: 0x0040, result: ConfigurationResult(rawValue: 1), options: [.mtu(48)])
        #expect(try decoded(ConfigurationResponse.self, response.encoded()) == response)
        #expect(response.result.description == "0x0001 failure, unacceptable parameters")
    }

    @Test("LE credit based connection, as on the wire")
    func leCreditBased() throws {
        let request = LECreditBasedConnectionRequest(
            psm: PSM(rawValue: 0x0080), sourceCID: 0x0040, mtu: 100, mps: 30, initialCredits: 5)
        #expect(request.encoded() == hexBytes("80 00 40 00 64 00 1e 00 05 00"))
        #expect(try decoded(LECreditBasedConnectionRequest.self, request.encoded()) == request)
        let response = try decoded(LECreditBasedConnectionResponse.self, hexBytes("45 00 c8 00 1e 00 03 00 00 00"))
        #expect(response.destinationCID == 0x0045)
        #expect(response.result.isSuccess)
        #expect(try decoded(LECreditBasedConnectionResponse.self, response.encoded()) == response)
        #expect(
            CreditBasedConnectionResult(rawValue: 0x0004, enhanced: false).description
                == "0x0004 refused, no resources available")
        #expect(
            try decoded(FlowControlCreditIndication.self, hexBytes("40 00 03 00"))
                == FlowControlCreditIndication(cid: 0x40, credits: 3))
    }

    @Test("Enhanced credit based connection: several channels, each answered or refused")
    func enhancedCreditBased() throws {
        let request = CreditBasedConnectionRequest(
            psm: .eatt, mtu: 64, mps: 23, initialCredits: 10, sourceCIDs: [0x0040, 0x0041])
        #expect(request.encoded() == hexBytes("27 00 40 00 17 00 0a 00 40 00 41 00"))
        #expect(try decoded(CreditBasedConnectionRequest.self, request.encoded()) == request)
        let response = try decoded(CreditBasedConnectionResponse.self, hexBytes("40 00 17 00 0a 00 04 00 60 00 00 00"))
        #expect(response.destinationCIDs == [0x0060, 0x0000])
        #expect(response.result.description == "0x0004 some refused, insufficient resources")
        #expect(!response.result.isSuccess && !response.result.isPending)
        #expect(CreditBasedConnectionResult(rawValue: 0x000E, enhanced: true).isPending)
        #expect(!CreditBasedConnectionResult(rawValue: 0x000E, enhanced: false).isPending)
        #expect(try decoded(CreditBasedConnectionResponse.self, response.encoded()) == response)
        let reconfigure = CreditBasedReconfigureRequest(mtu: 100, mps: 50, destinationCIDs: [0x40])
        #expect(try decoded(CreditBasedReconfigureRequest.self, reconfigure.encoded()) == reconfigure)
        #expect(
            try decoded(CreditBasedReconfigureResponse.self, [1, 0]).result.description
                == "0x0001 failure, reduction in size of MTU not allowed")
    }
}
