import ATT
import BluetoothCore
import HCI
import Testing

/// A server that records what the bearer hands it, and answers nothing.
@BluetoothActor
private final class RecordingServer: ATTServer {
    var requests: [ATTRequest] = []

    func respond(to request: ATTRequest, on bearer: ATTBearer) -> [UInt8]? {
        requests.append(request)
        return nil
    }
}

@Suite("A client's requests, decoded once")
struct ATTRequestTests {
    @Test("Each request and command decodes to its own case, with its opcode")
    func eachCase() throws {
        let cases: [(String, ATTRequest)] = [
            ("04 01 00 ff ff", .findInformation(FindInformationRequest(startingHandle: 1, endingHandle: 0xFFFF))),
            ("0a 03 00", .read(ReadRequest(handle: 3))),
            ("0c 03 00 16 00", .readBlob(ReadBlobRequest(handle: 3, offset: 22))),
            ("0e 03 00 05 00", .readMultiple(ReadMultipleRequest(handles: [3, 5]))),
            ("20 03 00 05 00", .readMultipleVariable(ReadMultipleVariableRequest(handles: [3, 5]))),
            ("12 03 00 aa", .write(WriteRequest(handle: 3, value: [0xAA]))),
            ("52 03 00 aa", .writeCommand(WriteCommand(handle: 3, value: [0xAA]))),
            ("16 03 00 02 00 bb", .prepareWrite(PrepareWriteRequest(handle: 3, offset: 2, value: [0xBB]))),
            ("18 01", .executeWrite(ExecuteWriteRequest(flags: .write))),
        ]
        for (hex, expected) in cases {
            let request = try ATTRequest(decoding: hexBytes(hex)[...])
            #expect(request == expected, "\(hex)")
            #expect(request.opcode.rawValue == hexBytes(hex)[0], "\(hex)")
        }
        #expect(try ATTRequest(decoding: hexBytes("52 03 00 aa")[...]).isCommand)
        #expect(try !ATTRequest(decoding: hexBytes("12 03 00 aa")[...]).isCommand)
    }

    @Test("A malformed request is Invalid PDU, answered; a malformed command is answered with nothing")
    func malformed() {
        #expect(throws: ATTRequestRefusal.self) { try ATTRequest(decoding: hexBytes("0a 03")[...]) }
        do {
            _ = try ATTRequest(decoding: hexBytes("0a 03")[...])
        } catch {
            #expect(error.code == .invalidPDU)
            #expect(error.response == ErrorResponse(requestOpcode: .readRequest, handle: 0, error: .invalidPDU))
            #expect(error.reason.contains("Read_Req"))
        }
        do {
            _ = try ATTRequest(decoding: hexBytes("52 03")[...])
        } catch {
            #expect(error.opcode == .writeCommand)
            #expect(error.response == nil)
        }
    }

    @Test("An opcode no case names is Request Not Supported; a PDU that is no request gets no answer")
    func unsupported() {
        func refusal(_ hex: String) -> ATTRequestRefusal? {
            do {
                _ = try ATTRequest(decoding: hexBytes(hex)[...])
                return nil
            } catch { return error }
        }
        // Exchange MTU is the bearer's own; a server handed it would not know it.
        #expect(refusal("02 17 00")?.response?.error == .requestNotSupported)
        #expect(
            refusal("30 01")?.response
                == ErrorResponse(requestOpcode: ATTOpcode(rawValue: 0x30), handle: 0, error: .requestNotSupported))
        // An unknown command (bit 6 set) gets nothing.
        #expect(refusal("70 01")?.response == nil)
        #expect(refusal("70 01")?.opcode == ATTOpcode(rawValue: 0x70))
        // Responses, notifications, confirmations and an empty PDU are no requests.
        for hex in ["0b 00", "1b 03 00 01", "1e", "01 0a 03 00 0a"] {
            #expect(refusal(hex)?.opcode == nil, "\(hex)")
            #expect(refusal(hex)?.response == nil, "\(hex)")
        }
        #expect(throws: ATTRequestRefusal.self) { try ATTRequest(decoding: [][...]) }
    }

    @Test("The bearer hands its server the decoded request, and answers a malformed one itself")
    @BluetoothActor
    func bearerDecodesOnce() {
        var sent: [[UInt8]] = []
        let bearer = ATTBearer(connection: 0x40, logger: .silent) { (frame: [UInt8]) throws(HCIError) in
            sent.append(frame)
        }
        let server = RecordingServer()
        bearer.server = server
        bearer.receive(hexBytes("0c 03 00 16 00")[...])
        #expect(server.requests == [.readBlob(ReadBlobRequest(handle: 3, offset: 22))])
        #expect(sent.isEmpty, "the server answers nothing, so nothing is sent")

        bearer.receive(hexBytes("0c 03 00 16")[...])
        #expect(server.requests.count == 1, "a malformed request never reaches the server")
        #expect(sent == [hexBytes("01 0c 00 00 04")])

        bearer.receive(hexBytes("52 03")[...])
        #expect(server.requests.count == 1)
        #expect(sent.count == 1, "a malformed command is dropped, not answered")
        #expect(bearer.discardedPDUs == 1)

        bearer.receive(hexBytes("30 01 00")[...])
        #expect(sent.last == hexBytes("01 30 00 00 06"))
    }
}
