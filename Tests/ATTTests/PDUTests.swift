import ATT
import BluetoothCore
import HCI
import Testing

// Every ATT PDU (Core Vol 3, Part F, 3.4) against bytes written out by hand from the spec's
// tables, both ways.

/// A 128-bit UUID (Nordic UART service) and its wire form, least significant byte first.
let uartService = BluetoothUUID("6E400001-B5A3-F393-E0A9-E50E24DCCA9E")!
let uartServiceWire = "9e ca dc 24 0e e5 a9 e0 93 f3 a3 b5 01 00 40 6e"

@Suite("ATT PDUs")
struct PDUTests {
    @Test("The opcode comes first; a different one, missing or extra bytes are errors")
    func framing() throws {
        #expect(ReadRequest(handle: 3).encoded() == [0x0A, 0x03, 0x00])
        expectDecodeError(ReadRequest.self, "0b 03 00", .invalidValue(field: "Read_Req opcode", value: 0x0B))
        #expect(
            DecodingError.invalidValue(field: "Read_Req opcode", value: 0x0B).description
                == "invalid Read_Req opcode 0xb")
        #expect(throws: DecodingError.truncated(needed: 1, available: 0)) { try ReadRequest(decoding: [][...]) }
        expectDecodeError(ReadRequest.self, "0a 03", .truncated(needed: 2, available: 1))
        expectDecodeError(ReadRequest.self, "0a 03 00 00", .trailingBytes(1))
        expectDecodeError(ExchangeMTURequest.self, "02 05 02 00", .trailingBytes(1))
        expectDecodeError(WriteResponse.self, "13 00", .trailingBytes(1))
        // A slice that does not start at index 0.
        let buffer = hexBytes("ff ff 0a 03 00")
        #expect(try ReadRequest(decoding: buffer[2...]) == ReadRequest(handle: 3))
    }

    @Test("Error Response")
    func errorResponse() {
        let pdu = ErrorResponse(requestOpcode: .readRequest, handle: 0x0003, error: .attributeNotFound)
        expectWire(pdu, "01 0a 03 00 0a")
        #expect(pdu.description == "0x0a Read_Req handle 0x0003: 0x0A attributeNotFound")
        expectWire(
            ErrorResponse(requestOpcode: .writeRequest, handle: 0x1234, error: ATTErrorCode(rawValue: 0x80)),
            "01 12 34 12 80")
        expectDecodeError(ErrorResponse.self, "01 0a 03 00", .truncated(needed: 1, available: 0))
    }

    @Test("Exchange MTU")
    func exchangeMTU() {
        expectWire(ExchangeMTURequest(clientRxMTU: 517), "02 05 02")
        expectWire(ExchangeMTUResponse(serverRxMTU: 23), "03 17 00")
        expectDecodeError(ExchangeMTUResponse.self, "03 17", .truncated(needed: 2, available: 1))
    }

    @Test("Find Information: 16-bit format when every type has a short form, else all 128-bit")
    func findInformation() {
        expectWire(FindInformationRequest(startingHandle: 0x0001, endingHandle: 0xFFFF), "04 01 00 ff ff")
        let short = FindInformationResponse(entries: [
            .init(handle: 0x0001, type: BluetoothUUID(UInt16(0x2800))),
            .init(handle: 0x0002, type: BluetoothUUID(UInt16(0x2803))),
        ])
        #expect(short.usesShortUUIDs)
        expectWire(short, "05 01 01 00 00 28 02 00 03 28")
        expectWire(
            FindInformationResponse(entries: [.init(handle: 0x0010, type: uartService)]),
            "05 02 10 00 " + uartServiceWire)
        // One 128-bit type makes every entry 128-bit, the 16-bit one on the Base UUID.
        let mixed = FindInformationResponse(entries: [
            .init(handle: 0x0010, type: uartService),
            .init(handle: 0x0011, type: BluetoothUUID(UInt16(0x2902))),
        ])
        #expect(!mixed.usesShortUUIDs)
        expectWire(mixed, "05 02 10 00 " + uartServiceWire + " 11 00 fb 34 9b 5f 80 00 00 80 00 10 00 00 02 29 00 00")
        // A 32-bit UUID has no 16-bit form: 128-bit too.
        expectWire(
            FindInformationResponse(entries: [.init(handle: 0x0001, type: BluetoothUUID(UInt32(0x12345678)))]),
            "05 02 01 00 fb 34 9b 5f 80 00 00 80 00 10 00 00 78 56 34 12")
    }

    @Test("Find Information Response: unknown format, empty list, partial entry")
    func findInformationErrors() {
        expectDecodeError(
            FindInformationResponse.self, "05 03 01 00 00 28",
            .invalidValue(field: "Find_Information_Rsp format", value: 3))
        expectDecodeError(
            FindInformationResponse.self, "05 00 01 00 00 28",
            .invalidValue(field: "Find_Information_Rsp format", value: 0))
        expectDecodeError(FindInformationResponse.self, "05 01", .truncated(needed: 4, available: 0))
        expectDecodeError(FindInformationResponse.self, "05 02", .truncated(needed: 18, available: 0))
        expectDecodeError(
            FindInformationResponse.self, "05 01 01 00 00 28 02 00 03", .truncated(needed: 4, available: 3))
        expectDecodeError(
            FindInformationResponse.self, "05 02 10 00 " + uartServiceWire + " 11",
            .truncated(needed: 18, available: 1))
        // 16-bit entries read as 128-bit: 8 bytes are not a multiple of 18.
        expectDecodeError(
            FindInformationResponse.self, "05 02 01 00 00 28 02 00 03 28",
            .truncated(needed: 18, available: 8))
        expectDecodeError(FindInformationResponse.self, "05", .truncated(needed: 1, available: 0))
    }

    @Test("Find By Type Value")
    func findByTypeValue() {
        let request = FindByTypeValueRequest(
            startingHandle: 0x0001, endingHandle: 0xFFFF, attributeType: 0x2800,
            attributeValue: [0x0F, 0x18])
        expectWire(request, "06 01 00 ff ff 00 28 0f 18")
        expectWire(
            FindByTypeValueRequest(startingHandle: 1, endingHandle: 2, attributeType: 0x2800, attributeValue: []),
            "06 01 00 02 00 00 28")
        expectDecodeError(FindByTypeValueRequest.self, "06 01 00 ff ff 00", .truncated(needed: 2, available: 1))
        let response = FindByTypeValueResponse(entries: [
            .init(foundHandle: 0x000A, groupEndHandle: 0x000F),
            .init(foundHandle: 0x0020, groupEndHandle: 0xFFFF),
        ])
        expectWire(response, "07 0a 00 0f 00 20 00 ff ff")
        expectDecodeError(FindByTypeValueResponse.self, "07", .truncated(needed: 4, available: 0))
        expectDecodeError(FindByTypeValueResponse.self, "07 0a 00 0f 00 20", .truncated(needed: 4, available: 1))
    }

    @Test("Read By Type Request: 2-byte or 16-byte types only, 32-bit sent as 128-bit")
    func readByTypeRequest() throws {
        expectWire(
            ReadByTypeRequest(
                startingHandle: 0x0001, endingHandle: 0xFFFF,
                attributeType: BluetoothUUID(UInt16(0x2803))), "08 01 00 ff ff 03 28")
        expectWire(
            ReadByTypeRequest(startingHandle: 0x0001, endingHandle: 0x0005, attributeType: uartService),
            "08 01 00 05 00 " + uartServiceWire)
        let thirtyTwo = ReadByTypeRequest(
            startingHandle: 1, endingHandle: 2, attributeType: BluetoothUUID(UInt32(0x12345678)))
        expectWire(thirtyTwo, "08 01 00 02 00 fb 34 9b 5f 80 00 00 80 00 10 00 00 78 56 34 12")
        // A 16-bit type sent as 128-bit decodes to the same UUID.
        #expect(
            try ReadByTypeRequest(
                decoding: hexBytes("08 01 00 02 00 fb 34 9b 5f 80 00 00 80 00 10 00 00 03 28 00 00")[...])
                == ReadByTypeRequest(startingHandle: 1, endingHandle: 2, attributeType: BluetoothUUID(UInt16(0x2803))))
        let field = "Read_By_Type_Req attribute type length"
        expectDecodeError(ReadByTypeRequest.self, "08 01 00 ff ff 78 56 34 12", .invalidValue(field: field, value: 4))
        expectDecodeError(ReadByTypeRequest.self, "08 01 00 ff ff", .invalidValue(field: field, value: 0))
        expectDecodeError(ReadByTypeRequest.self, "08 01 00 ff ff 03", .invalidValue(field: field, value: 1))
        expectDecodeError(ReadByTypeRequest.self, "08 01 00 ff ff 03 28 00", .invalidValue(field: field, value: 3))
        expectDecodeError(ReadByTypeRequest.self, "08 01 00 ff", .truncated(needed: 2, available: 1))
    }

    @Test("Read By Type Response: length byte 2 + value length")
    func readByTypeResponse() throws {
        let response = ReadByTypeResponse(entries: [
            .init(handle: 0x0002, value: [0x02, 0x03, 0x00, 0x00, 0x2A]),
            .init(handle: 0x0004, value: [0x02, 0x05, 0x00, 0x01, 0x2A]),
        ])
        expectWire(response, "09 07 02 00 02 03 00 00 2a 04 00 02 05 00 01 2a")
        expectWire(ReadByTypeResponse(entries: [.init(handle: 0x0003, value: [])]), "09 02 03 00")
        let longest = ReadByTypeResponse(entries: [.init(handle: 1, value: Array(repeating: 0xAB, count: 253)[...])])
        #expect(longest.encoded().prefix(2) == [0x09, 0xFF])
        #expect(try ReadByTypeResponse(decoding: longest.encoded()[...]) == longest)
    }

    @Test("Read By Type Response: bad length byte, empty list, partial entry")
    func readByTypeResponseErrors() {
        let field = "Read_By_Type_Rsp length"
        expectDecodeError(ReadByTypeResponse.self, "09 01 03 00", .invalidValue(field: field, value: 1))
        expectDecodeError(ReadByTypeResponse.self, "09 00", .invalidValue(field: field, value: 0))
        expectDecodeError(ReadByTypeResponse.self, "09 04", .truncated(needed: 4, available: 0))
        expectDecodeError(ReadByTypeResponse.self, "09 04 01 00 aa bb 02 00 cc", .truncated(needed: 4, available: 3))
        expectDecodeError(ReadByTypeResponse.self, "09", .truncated(needed: 1, available: 0))
    }

    @Test("Read, Read Blob, Read Multiple")
    func reads() {
        expectWire(ReadRequest(handle: 0x0003), "0a 03 00")
        expectWire(ReadResponse(value: Array("Bluejay".utf8)[...]), "0b 42 6c 75 65 6a 61 79")
        expectWire(ReadResponse(value: []), "0b")
        expectWire(ReadBlobRequest(handle: 0x0003, offset: 0x0016), "0c 03 00 16 00")
        expectWire(ReadBlobResponse(value: [0x01, 0x02]), "0d 01 02")
        expectWire(ReadBlobResponse(value: []), "0d")
        expectWire(ReadMultipleRequest(handles: [0x0003, 0x0005]), "0e 03 00 05 00")
        expectWire(ReadMultipleRequest(handles: [1, 2, 0xFFFF]), "0e 01 00 02 00 ff ff")
        expectWire(ReadMultipleResponse(values: [0x64, 0x01, 0x02]), "0f 64 01 02")
        expectDecodeError(ReadBlobRequest.self, "0c 03 00 16", .truncated(needed: 2, available: 1))
    }

    @Test("Read Multiple (and Variable) Request: two or more handles, even length")
    func readMultipleErrors() {
        expectDecodeError(ReadMultipleRequest.self, "0e 03 00", .truncated(needed: 4, available: 2))
        expectDecodeError(ReadMultipleRequest.self, "0e", .truncated(needed: 4, available: 0))
        expectDecodeError(ReadMultipleRequest.self, "0e 03 00 05", .truncated(needed: 4, available: 3))
        expectDecodeError(ReadMultipleRequest.self, "0e 03 00 05 00 07", .truncated(needed: 2, available: 1))
        expectDecodeError(ReadMultipleVariableRequest.self, "20 03 00", .truncated(needed: 4, available: 2))
        expectDecodeError(ReadMultipleVariableRequest.self, "20 03 00 05 00 07", .truncated(needed: 2, available: 1))
    }

    @Test("Read By Group Type: 0x2800 over 0x0001–0xFFFF is 10 01 00 FF FF 00 28")
    func readByGroupType() {
        expectWire(
            ReadByGroupTypeRequest(
                startingHandle: 0x0001, endingHandle: 0xFFFF,
                groupType: BluetoothUUID(UInt16(0x2800))), "10 01 00 ff ff 00 28")
        expectWire(
            ReadByGroupTypeRequest(startingHandle: 0x0001, endingHandle: 0xFFFF, groupType: uartService),
            "10 01 00 ff ff " + uartServiceWire)
        expectDecodeError(
            ReadByGroupTypeRequest.self, "10 01 00 ff ff 00 28 00 00",
            .invalidValue(field: "Read_By_Group_Type_Req group type length", value: 4))
        let response = ReadByGroupTypeResponse(entries: [
            .init(handle: 0x0001, endGroupHandle: 0x0007, value: [0x00, 0x18]),
            .init(handle: 0x0008, endGroupHandle: 0x000B, value: [0x01, 0x18]),
        ])
        expectWire(response, "11 06 01 00 07 00 00 18 08 00 0b 00 01 18")
        expectWire(
            ReadByGroupTypeResponse(entries: [
                .init(
                    handle: 0x0010, endGroupHandle: 0xFFFF,
                    value: ArraySlice(uartService.bytes.reversed()))
            ]),
            "11 14 10 00 ff ff " + uartServiceWire)
    }

    @Test("Read By Group Type Response: bad length byte, empty list, partial entry")
    func readByGroupTypeErrors() throws {
        let field = "Read_By_Group_Type_Rsp length"
        expectDecodeError(ReadByGroupTypeResponse.self, "11 03 01 00 07", .invalidValue(field: field, value: 3))
        expectDecodeError(ReadByGroupTypeResponse.self, "11 06", .truncated(needed: 6, available: 0))
        expectDecodeError(
            ReadByGroupTypeResponse.self, "11 06 01 00 07 00 00 18 08 00 0b 00 01",
            .truncated(needed: 6, available: 5))
        // Length 4: values are empty.
        #expect(
            try ReadByGroupTypeResponse(decoding: hexBytes("11 04 01 00 07 00")[...]).entries
                == [.init(handle: 1, endGroupHandle: 7, value: [])])
    }

    @Test("Read Multiple Variable: length-value tuples, the last one may be truncated")
    func readMultipleVariable() {
        expectWire(ReadMultipleVariableRequest(handles: [0x0003, 0x0005]), "20 03 00 05 00")
        let response = ReadMultipleVariableResponse(entries: [
            .init(value: Array("Bluejay".utf8)[...]), .init(value: [0x64]),
            .init(value: []),
        ])
        expectWire(response, "21 07 00 42 6c 75 65 6a 61 79 01 00 64 00 00")
        // Truncated at ATT_MTU: the last value says 7 bytes, 3 are present.
        let truncated = ReadMultipleVariableResponse(entries: [
            .init(value: [0x64]), .init(length: 7, value: [0x42, 0x6C, 0x75]),
        ])
        expectWire(truncated, "21 01 00 64 07 00 42 6c 75")
        #expect(truncated.entries.map(\.isTruncated) == [false, true])
        // Even the length of the last may be all there is.
        expectWire(
            ReadMultipleVariableResponse(entries: [.init(value: [0x64]), .init(length: 9, value: [])]),
            "21 01 00 64 09 00")
        expectDecodeError(ReadMultipleVariableResponse.self, "21", .truncated(needed: 2, available: 0))
        // A partial length field is not a truncated value.
        expectDecodeError(ReadMultipleVariableResponse.self, "21 01 00 64 07", .truncated(needed: 2, available: 1))
    }

    @Test("Write Request, Response, Command, Signed Write Command")
    func writes() {
        expectWire(WriteRequest(handle: 0x000A, value: [0x01, 0x00]), "12 0a 00 01 00")
        expectWire(WriteRequest(handle: 0x000A, value: []), "12 0a 00")
        expectWire(WriteResponse(), "13")
        expectWire(WriteCommand(handle: 0x000A, value: [0x01, 0x00]), "52 0a 00 01 00")
        let signature: [UInt8] = [0x01, 0x00, 0x00, 0x00] + Array(0xA0...0xA7)
        expectWire(
            SignedWriteCommand(handle: 0x000A, value: [0x01, 0x02], signature: signature[...]),
            "d2 0a 00 01 02 01 00 00 00 a0 a1 a2 a3 a4 a5 a6 a7")
        expectWire(
            SignedWriteCommand(handle: 0x000A, value: [], signature: signature[...]),
            "d2 0a 00 01 00 00 00 a0 a1 a2 a3 a4 a5 a6 a7")
        expectDecodeError(
            SignedWriteCommand.self, "d2 0a 00 01 00 00 00 a0 a1 a2 a3 a4 a5 a6",
            .truncated(needed: 12, available: 11))
        expectDecodeError(WriteRequest.self, "12 0a", .truncated(needed: 2, available: 1))
    }

    @Test("Prepare and Execute Write")
    func queuedWrites() {
        expectWire(PrepareWriteRequest(handle: 0x0003, offset: 0x0000, value: [0x41, 0x42]), "16 03 00 00 00 41 42")
        expectWire(PrepareWriteResponse(handle: 0x0003, offset: 0x0012, value: [0x41, 0x42]), "17 03 00 12 00 41 42")
        expectWire(ExecuteWriteRequest(flags: .write), "18 01")
        expectWire(ExecuteWriteRequest(flags: .cancel), "18 00")
        expectWire(ExecuteWriteResponse(), "19")
        expectDecodeError(ExecuteWriteRequest.self, "18 02", .invalidValue(field: "Execute_Write_Req flags", value: 2))
        expectDecodeError(
            ExecuteWriteRequest.self, "18 ff", .invalidValue(field: "Execute_Write_Req flags", value: 0xFF))
        expectDecodeError(ExecuteWriteRequest.self, "18", .truncated(needed: 1, available: 0))
        expectDecodeError(PrepareWriteRequest.self, "16 03 00 00", .truncated(needed: 2, available: 1))
    }

    @Test("Notifications, indications, confirmations")
    func serverInitiated() {
        expectWire(HandleValueNotification(handle: 0x000E, value: [0x64]), "1b 0e 00 64")
        expectWire(HandleValueIndication(handle: 0x0011, value: [0x01, 0x02]), "1d 11 00 01 02")
        expectWire(HandleValueConfirmation(), "1e")
        let multiple = MultipleHandleValueNotification(entries: [
            .init(handle: 0x000E, value: [0x64]),
            .init(handle: 0x0011, value: [0x01, 0x02]),
        ])
        expectWire(multiple, "23 0e 00 01 00 64 11 00 02 00 01 02")
        expectWire(MultipleHandleValueNotification(entries: [.init(handle: 0x000E, value: [])]), "23 0e 00 00 00")
        expectDecodeError(MultipleHandleValueNotification.self, "23", .truncated(needed: 4, available: 0))
        expectDecodeError(
            MultipleHandleValueNotification.self, "23 0e 00 02 00 64", .truncated(needed: 2, available: 1))
        expectDecodeError(
            MultipleHandleValueNotification.self, "23 0e 00 01 00 64 11 00 02",
            .truncated(needed: 2, available: 1))
        expectDecodeError(HandleValueNotification.self, "1b 0e", .truncated(needed: 2, available: 1))
    }

    @Test("Every opcode constant belongs to exactly one PDU type")
    func opcodes() {
        let all: [any ATTPDU.Type] = [
            ErrorResponse.self, ExchangeMTURequest.self, ExchangeMTUResponse.self, FindInformationRequest.self,
            FindInformationResponse.self, FindByTypeValueRequest.self, FindByTypeValueResponse.self,
            ReadByTypeRequest.self, ReadByTypeResponse.self, ReadRequest.self, ReadResponse.self,
            ReadBlobRequest.self, ReadBlobResponse.self, ReadMultipleRequest.self, ReadMultipleResponse.self,
            ReadByGroupTypeRequest.self, ReadByGroupTypeResponse.self, WriteRequest.self, WriteResponse.self,
            PrepareWriteRequest.self, PrepareWriteResponse.self, ExecuteWriteRequest.self, ExecuteWriteResponse.self,
            HandleValueNotification.self, HandleValueIndication.self, HandleValueConfirmation.self,
            ReadMultipleVariableRequest.self, ReadMultipleVariableResponse.self, MultipleHandleValueNotification.self,
            WriteCommand.self, SignedWriteCommand.self,
        ]
        let opcodes = all.map { $0.opcode.rawValue }
        #expect(Set(opcodes).count == all.count)
        #expect(all.allSatisfy { $0.opcode.name != "Unknown" })
    }

    #if compiler(>=6.2)  // exit tests are Swift Testing 6.2's: on 6.0 and 6.1, no such test
        @Test(
            "Encoding traps on what the wire cannot carry: mixed lengths, a short signature, a truncated middle value")
        func encodingPreconditions() async {
            await #expect(processExitsWith: .failure) {
                _ = ReadByTypeResponse(entries: [.init(handle: 1, value: [1]), .init(handle: 2, value: [1, 2])])
                    .encoded()
            }
            await #expect(processExitsWith: .failure) {
                _ = ReadByGroupTypeResponse(entries: [
                    .init(handle: 1, endGroupHandle: 2, value: [1]),
                    .init(handle: 3, endGroupHandle: 4, value: []),
                ]).encoded()
            }
            await #expect(processExitsWith: .failure) {
                _ = SignedWriteCommand(handle: 1, value: [], signature: [1, 2, 3]).encoded()
            }
            await #expect(processExitsWith: .failure) {
                _ = ReadMultipleVariableResponse(entries: [.init(length: 3, value: [1]), .init(value: [1])]).encoded()
            }
        }
    #endif
}

@Suite("ATT error codes")
struct ATTErrorCodeTests {
    @Test("Named codes: name and `0xNN name`")
    func named() {
        let expected: [(ATTErrorCode, UInt8, String)] = [
            (.invalidHandle, 0x01, "invalidHandle"), (.readNotPermitted, 0x02, "readNotPermitted"),
            (.writeNotPermitted, 0x03, "writeNotPermitted"), (.invalidPDU, 0x04, "invalidPDU"),
            (.insufficientAuthentication, 0x05, "insufficientAuthentication"),
            (.requestNotSupported, 0x06, "requestNotSupported"), (.invalidOffset, 0x07, "invalidOffset"),
            (.insufficientAuthorization, 0x08, "insufficientAuthorization"),
            (.prepareQueueFull, 0x09, "prepareQueueFull"), (.attributeNotFound, 0x0A, "attributeNotFound"),
            (.attributeNotLong, 0x0B, "attributeNotLong"),
            (.encryptionKeySizeTooShort, 0x0C, "encryptionKeySizeTooShort"),
            (.invalidAttributeValueLength, 0x0D, "invalidAttributeValueLength"),
            (.unlikelyError, 0x0E, "unlikelyError"), (.insufficientEncryption, 0x0F, "insufficientEncryption"),
            (.unsupportedGroupType, 0x10, "unsupportedGroupType"),
            (.insufficientResources, 0x11, "insufficientResources"),
            (.databaseOutOfSync, 0x12, "databaseOutOfSync"), (.valueNotAllowed, 0x13, "valueNotAllowed"),
            (.writeRequestRejected, 0xFC, "writeRequestRejected"),
            (.cccdImproperlyConfigured, 0xFD, "cccdImproperlyConfigured"),
            (.procedureAlreadyInProgress, 0xFE, "procedureAlreadyInProgress"), (.outOfRange, 0xFF, "outOfRange"),
        ]
        for (code, raw, name) in expected {
            #expect(code.rawValue == raw)
            #expect(code.name == name)
            #expect(!code.isApplicationError)
        }
        #expect(ATTErrorCode.insufficientEncryption.description == "0x0F insufficientEncryption")
        #expect(ATTErrorCode.attributeNotFound.description == "0x0A attributeNotFound")
        #expect(ATTErrorCode.outOfRange.description == "0xFF outOfRange")
    }

    @Test("Ranges: application 0x80–0x9F, profile 0xE0–0xFB, the rest reserved")
    func ranges() {
        for raw in UInt8(0x80)...0x9F {
            let code = ATTErrorCode(rawValue: raw)
            #expect(code.isApplicationError && code.name == "applicationError")
        }
        for raw in UInt8(0xE0)...0xFB {
            #expect(ATTErrorCode(rawValue: raw).name == "profileError")
            #expect(!ATTErrorCode(rawValue: raw).isApplicationError)
        }
        for raw: UInt8 in [0x00, 0x14, 0x7F, 0xA0, 0xDF] {
            #expect(ATTErrorCode(rawValue: raw).name == "reserved")
            #expect(!ATTErrorCode(rawValue: raw).isApplicationError)
        }
        #expect(ATTErrorCode(rawValue: 0x85).description == "0x85 applicationError")
        #expect(ATTErrorCode(rawValue: 0xE0).description == "0xE0 profileError")
        #expect(ATTErrorCode(rawValue: 0x00).description == "0x00 reserved")
    }
}
