import BluetoothCore
import HCI
import L2CAP
import Testing

// Each signaling command is declared once (its code, its channels, its fields): the names,
// the code → type table, and the two ways of reading a command's data come from that.

@Suite("Signaling declarations")
struct SignalingDeclarationTests {
    @Test("A code's names are its declaration's, on the channels the declaration names")
    func namesFromDeclarations() {
        for code in (0...0xFF).map({ SignalingCode(rawValue: UInt8($0)) }) {
            guard let type = code.pduType else { continue }
            #expect(type.code == code)
            #expect(code.name == (type.channels.contains(.le) ? type.name : "Unknown"), "\(code.rawValue)")
            #expect(code.bredrName == (type.channels.contains(.bredr) ? type.name : "Unknown"), "\(code.rawValue)")
        }
        // Every code of Table 4.2 is declared but the withdrawn Move Channel ones (0x0E–0x11).
        let declared = (0...0xFF).filter { SignalingCode(rawValue: UInt8($0)).pduType != nil }
        #expect(declared == Array(0x01...0x0D) + Array(0x12...0x1A))
    }

    @Test("A declaration lists its fields by the specification's names")
    func fieldNames() {
        let signalingCommandFields: [String] = ["Code", "Identifier", "Length, Data"]
        #expect(SignalingCommand.layout.fieldNames == signalingCommandFields)
        let connectionRequestFields: [String] = ["PSM", "Source_CID"]
        #expect(ConnectionRequest.layout.fieldNames == connectionRequestFields)
        let configurationResponseFields: [String] = ["Source_CID", "Flags", "Result", "Config"]
        #expect(ConfigurationResponse.layout.fieldNames == configurationResponseFields)
        let parameterUpdateRequestFields: [String] = ["Interval_Min", "Interval_Max", "Latency", "Timeout"]
        #expect(ConnectionParameterUpdateRequest.layout.fieldNames == parameterUpdateRequestFields)
        let creditBasedRequestFields: [String] = ["SPSM", "Source_CID", "MTU", "MPS", "Initial_Credits"]
        #expect(LECreditBasedConnectionRequest.layout.fieldNames == creditBasedRequestFields)
        let creditBasedResponseFields: [String] = ["MTU", "MPS", "Initial_Credits", "Result", "Destination_CID"]
        #expect(CreditBasedConnectionResponse.layout.fieldNames == creditBasedResponseFields)
    }

    @Test("Octets past a format are counted under the tolerance rule and refused by the strict decoder")
    func extraOctets() throws {
        let command = SignalingCommand(
            code: .disconnectionRequest, identifier: 2, data: [0x40, 0x00, 0x41, 0x00, 0xEE, 0xEE])
        let (request, extra) = try DisconnectionRequest.decodeCountingExtraOctets(command)
        #expect(request == DisconnectionRequest(destinationCID: 0x0040, sourceCID: 0x0041))
        #expect(extra == 2)
        #expect(throws: DecodingError.trailingBytes(2)) { try DisconnectionRequest(command: command) }
        // A list of CIDs ends with the last whole one; an odd octet after it is an extra one.
        let odd = SignalingCommand(
            code: .creditBasedReconfigureRequest, identifier: 3, data: [100, 0, 50, 0, 0x40, 0, 0x41])
        let (reconfigure, oddExtra) = try CreditBasedReconfigureRequest.decodeCountingExtraOctets(odd)
        #expect(reconfigure.destinationCIDs == [0x0040])
        #expect(oddExtra == 1)
    }

    @Test("The whole command round-trips, and a command of another code is refused by name")
    func wholeCommand() throws {
        let request = ConnectionRequest(psm: .sdp, sourceCID: 0x0040)
        let command = request.command(identifier: 7)
        #expect(command == SignalingCommand(code: .connectionRequest, identifier: 7, data: [0x01, 0x00, 0x40, 0x00]))
        #expect(try ConnectionRequest(command: SignalingCommand(decoding: command.encoded()[...])) == request)
        let response = SignalingCommand(code: .connectionResponse, identifier: 7, data: command.data)
        #expect(throws: DecodingError.invalidValue(field: "Connection_Req code", value: 3)) {
            try ConnectionRequest(command: response)
        }
    }

    @Test("A Command Reject's data is read as its reason declares it")
    func commandReject() throws {
        let invalidCID = try CommandReject(
            command: SignalingCommand(code: .commandReject, identifier: 4, data: [0x02, 0x00, 0x40, 0x00, 0x41, 0x00]))
        #expect(invalidCID.reason == .invalidCID)
        #expect(
            try invalidCID.reasonData(CommandReject.InvalidCID.self)
                == CommandReject.InvalidCID(localCID: 0x0040, remoteCID: 0x0041))
        let mtu = try CommandReject(
            command: SignalingCommand(code: .commandReject, identifier: 5, data: [0x01, 0x00, 0x30]))
        #expect(throws: DecodingError.truncated(needed: 2, available: 1)) {
            try mtu.reasonData(CommandReject.SignalingMTUExceeded.self)
        }
        #expect(CommandRejectReason.commandNotUnderstood.data == [0x00, 0x00])
        #expect(CommandRejectReason(rawValue: 0x0003).description == "0x0003")
    }

    @Test("Echo and Information carry data to the end of the command")
    func echoAndInformation() throws {
        let echo = EchoRequest(data: [1, 2, 3])
        #expect(try EchoRequest(command: echo.command(identifier: 1)) == echo)
        let information = InformationResponse(infoType: 0x0002, result: 0x0000, data: [0xB8, 0x02, 0x00, 0x00])
        #expect(information.encoded() == [0x02, 0x00, 0x00, 0x00, 0xB8, 0x02, 0x00, 0x00])
        #expect(try InformationResponse(command: information.command(identifier: 2)) == information)
    }
}
