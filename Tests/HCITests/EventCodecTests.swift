import BluetoothCore
import HCI
import HCITestSupport
import Testing

// Every event the host decodes, against H4 bytes written out from the Core specification
// (Vol 4, Part E, 7.7): HCIEvent(packet) and .packet must be inverse, and every truncation
// of the parameters must be an error, not a trap.

/// Decodes `h4` to an HCIEvent, checks it equals `event`, and that `event` encodes to `h4`.
private func expectEvent(_ event: HCIEvent, h4 expected: [UInt8], sourceLocation: SourceLocation = #_sourceLocation)
    throws
{
    #expect(HCIPacket.event(event.packet).encodeH4().hexDump == expected.hexDump, sourceLocation: sourceLocation)
    guard case .event(let packet) = try HCIPacket(h4: expected[...]) else {
        Issue.record("not an event packet", sourceLocation: sourceLocation)
        return
    }
    let decoded = try HCIEvent(packet)
    #expect(decoded == event, sourceLocation: sourceLocation)
    #expect(decoded.packet == packet, sourceLocation: sourceLocation)
    expectEveryPrefixRejected(h4: expected, sourceLocation: sourceLocation)
}

/// Every parameter list shorter than `minimum` bytes, sent with a consistent length field,
/// must throw a DecodingError; `minimum` defaults to the whole (fixed-size) list.
private func expectShortParametersRejected(
    code: UInt8, _ parameters: [UInt8], minimum: Int? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    for length in 0..<(minimum ?? parameters.count) {
        let packet = HCIEventPacket(code: code, parameters: parameters.prefix(length))
        #expect(
            throws: DecodingError.self, "event \(hex(code, digits: 2)) with \(length) parameter bytes",
            sourceLocation: sourceLocation
        ) {
            _ = try HCIEvent(packet)
        }
    }
}

@Suite("Event codecs")
struct EventCodecTests {
    @Test("Command Complete for Reset is 04 0e 04 01 03 0c 00")
    func commandCompleteReset() throws {
        let event = CommandComplete(numHCICommandPackets: 1, opcode: Reset.opcode, returnParameters: [0x00])
        try expectEvent(.commandComplete(event), h4: bytes("04 0e 04 01 03 0c 00"))
        try expectFixedSizeRoundTrip(
            CommandStatus(status: .success, numHCICommandPackets: 1, opcode: Reset.opcode),
            bytes("00 01 03 0c"))
        // The three fixed bytes must be there; the return parameters may be empty.
        expectShortParametersRejected(code: 0x0E, bytes("01 03 0c 00"), minimum: 3)
    }

    @Test("Command Complete with opcode 0x0000 only returns credits")
    func commandCompleteCreditsOnly() throws {
        let event = CommandComplete(numHCICommandPackets: 5, opcode: HCIOpcode(rawValue: 0), returnParameters: [])
        try expectEvent(.commandComplete(event), h4: bytes("04 0e 03 05 00 00"))
    }

    @Test("Command Status: status, credits, opcode")
    func commandStatus() throws {
        let event = CommandStatus(status: .success, numHCICommandPackets: 1, opcode: HCIOpcode(rawValue: 0x200D))
        try expectEvent(.commandStatus(event), h4: bytes("04 0f 04 00 01 0d 20"))
        let refused = CommandStatus(status: .commandDisallowed, numHCICommandPackets: 1, opcode: Disconnect.opcode)
        try expectEvent(.commandStatus(refused), h4: bytes("04 0f 04 0c 01 06 04"))
        expectShortParametersRejected(code: 0x0F, bytes("00 01 0d 20"))
    }

    @Test("Disconnection Complete: status, handle, reason")
    func disconnectionComplete() throws {
        let event = DisconnectionComplete(status: .success, handle: 0x0040, reason: .remoteUserTerminatedConnection)
        try expectEvent(.disconnectionComplete(event), h4: bytes("04 05 04 00 40 00 13"))
        try expectFixedSizeRoundTrip(event, bytes("00 40 00 13"))
        expectShortParametersRejected(code: 0x05, bytes("00 40 00 13"))
    }

    @Test("Encryption Change v1 (0x08) has four parameter bytes")
    func encryptionChangeV1() throws {
        let event = EncryptionChange(status: .success, handle: 0x0040, encryptionEnabled: 1)
        #expect(event.code == 0x08)
        try expectEvent(.encryptionChange(event), h4: bytes("04 08 04 00 40 00 01"))
        expectShortParametersRejected(code: 0x08, bytes("00 40 00 01"))
        // An extra octet is ignored and counted (the tolerance rule).
        let padded = try HCIEvent.decode(HCIEventPacket(code: 0x08, parameters: bytes("00 40 00 01 10")[...]))
        #expect(padded.event == .encryptionChange(event) && padded.extraOctets == 1)
    }

    @Test("Encryption Change v2 (0x59) adds the key size")
    func encryptionChangeV2() throws {
        let event = EncryptionChange(status: .success, handle: 0x0040, encryptionEnabled: 1, keySize: 16)
        #expect(event.code == 0x59)
        try expectEvent(.encryptionChange(event), h4: bytes("04 59 05 00 40 00 01 10"))
        expectShortParametersRejected(code: 0x59, bytes("00 40 00 01 10"))
        let padded = try HCIEvent.decode(HCIEventPacket(code: 0x59, parameters: bytes("00 40 00 01 10 00")[...]))
        #expect(padded.event == .encryptionChange(event) && padded.extraOctets == 1)
    }

    @Test("Hardware Error carries one vendor code")
    func hardwareError() throws {
        try expectEvent(.hardwareError(HardwareError(hardwareCode: 0x2A)), h4: bytes("04 10 01 2a"))
        try expectFixedSizeRoundTrip(HardwareError(hardwareCode: 0x2A), bytes("2a"))
    }

    @Test("Number Of Completed Packets with two handles")
    func numberOfCompletedPackets() throws {
        let event = NumberOfCompletedPackets(completions: [(0x0040, 1), (0x0041, 3)])
        try expectEvent(.numberOfCompletedPackets(event), h4: bytes("04 13 09 02 40 00 01 00 41 00 03 00"))
        let parameters = bytes("02 40 00 01 00 41 00 03 00")
        expectShortParametersRejected(code: 0x13, parameters)
        // Zero handles is one byte. Octets after the last handle are past the format: the
        // strict decoder refuses them, the event decoder ignores and counts them.
        #expect(NumberOfCompletedPackets(completions: []).encoded() == [0x00])
        #expect(try NumberOfCompletedPackets(decoding: [0x00]) == NumberOfCompletedPackets(completions: []))
        #expect(throws: DecodingError.trailingBytes(1)) {
            _ = try NumberOfCompletedPackets(decoding: (parameters + [0x00])[...])
        }
        let padded = try HCIEvent.decode(HCIEventPacket(code: 0x13, parameters: (parameters + [0x00])[...]))
        #expect(padded.event == .numberOfCompletedPackets(event) && padded.extraOctets == 1)
        #expect(event != NumberOfCompletedPackets(completions: [(0x0040, 1), (0x0041, 2)]))
        #expect(event != NumberOfCompletedPackets(completions: [(0x0040, 1)]))
    }

    @Test("Number Of Completed Packets whose handle count disagrees with its length is rejected")
    func numberOfCompletedPacketsBadCount() {
        // Says two handles, carries one.
        #expect(
            throws: DecodingError.lengthMismatch(field: "Number_Of_Completed_Packets handles", declared: 8, actual: 4)
        ) {
            _ = try NumberOfCompletedPackets(decoding: bytes("02 40 00 01 00")[...])
        }
        // Says one handle, carries one and a half.
        #expect(throws: DecodingError.self) {
            _ = try NumberOfCompletedPackets(decoding: bytes("01 40 00 01 00 41 00")[...])
        }
    }

    @Test("Number Of Completed Packets ignores the reserved top bits of a handle")
    func numberOfCompletedPacketsHandleBits() throws {
        let event = try NumberOfCompletedPackets(decoding: bytes("01 40 30 02 00")[...])
        #expect(event.completions.map { $0.handle } == [0x0040])
        #expect(event.completions.map { $0.count } == [2])
    }

    @Test("Data Buffer Overflow carries the link type")
    func dataBufferOverflow() throws {
        try expectEvent(.dataBufferOverflow(DataBufferOverflow(linkType: 1)), h4: bytes("04 1a 01 01"))
        try expectFixedSizeRoundTrip(DataBufferOverflow(linkType: 1), bytes("01"))
    }

    @Test("LE Meta: LE Connection Complete keeps its 18 parameter bytes")
    func leMeta() throws {
        // Status 0, handle 0x0040, central, public peer 00:1A:7D:DA:71:13, interval 0x18,
        // latency 0, timeout 0x2a, clock accuracy 0.
        let parameters = bytes("00 40 00 00 00 13 71 da 7d 1a 00 18 00 00 00 2a 00 00")
        let event = LEMetaEvent(subeventCode: 0x01, parameters: parameters[...])
        #expect(event.name == "LE_Connection_Complete")
        try expectEvent(.leMeta(event), h4: bytes("04 3e 13 01") + parameters)
        expectShortParametersRejected(code: 0x3E, [0x01] + parameters, minimum: 1)
        #expect(LEMetaEvent(subeventCode: 0x7F, parameters: []).name == "Unknown")
    }

    @Test("LE Remote Connection Parameter Request (7.7.65.6): handle, interval range, latency, timeout")
    func leRemoteConnectionParameterRequest() throws {
        // Handle 0x0040, interval 0x0028-0x0050, latency 2, timeout 0x0258.
        let parameters = bytes("40 00 28 00 50 00 02 00 58 02")
        let meta = LEMetaEvent(subeventCode: 0x06, parameters: parameters[...])
        #expect(meta.name == "LE_Remote_Connection_Parameter_Request")
        try expectEvent(.leMeta(meta), h4: bytes("04 3e 0b 06") + parameters)
        let request = LEConnectionEvent.remoteConnectionParameterRequest(
            handle: 0x40, parameters: .init(intervalMin: 40, intervalMax: 80, latency: 2, supervisionTimeout: 600))
        #expect(try LEConnectionEvent.decode(meta) == request)
        #expect(request.encoded() == meta)
        #expect(request.handle == 0x40)
        for length in 0..<parameters.count {
            #expect(throws: DecodingError.self) {
                try LEConnectionEvent.decode(LEMetaEvent(subeventCode: 0x06, parameters: parameters.prefix(length)))
            }
        }
        // An octet past the subevent's format is ignored and counted.
        let padded = LEMetaEvent(subeventCode: 0x06, parameters: (parameters + [0])[...])
        #expect(try LEConnectionEvent.decode(padded) == request)
        #expect(try LEConnectionEvent.decodeCountingExtraOctets(padded)?.extraOctets == 1)
        #expect(HCIEventPacket(code: 0x3E, parameters: ([0x06] + parameters + [0])[...]).extraOctets == 1)
    }

    @Test("Every LE connection subevent encodes to what it decodes from")
    func leConnectionEventsRoundTrip() throws {
        let address = try #require(BluetoothAddress("F0:0D:B1:E7:00:01"))
        let parameters = LEConnectionParameters(interval: 24, latency: 0, supervisionTimeout: 42)
        let events: [LEConnectionEvent] = [
            .connectionComplete(
                status: .success, handle: 0x40, role: 0, peerAddressType: 1, peerAddress: address,
                parameters: parameters),
            .connectionUpdateComplete(status: .success, handle: 0x41, parameters: parameters),
            .remoteFeaturesComplete(status: .success, handle: 0x42, features: [.encryption, .twoMegabitPHY]),
            .remoteConnectionParameterRequest(handle: 0x43, parameters: .init()),
            .dataLengthChange(handle: 0x44, maxTxOctets: 251, maxTxTime: 2120, maxRxOctets: 27, maxRxTime: 328),
            .phyUpdateComplete(status: .success, handle: 0x45, txPHY: 2, rxPHY: 1),
        ]
        for event in events {
            #expect(try LEConnectionEvent.decode(event.encoded()) == event)
        }
        // LE Connection Complete as the spec lays it out (7.7.65.1).
        #expect(
            events[0].encoded()
                == LEMetaEvent(
                    subeventCode: 0x01,
                    parameters: bytes("00 40 00 00 01 01 00 e7 b1 0d f0 18 00 00 00 2a 00 00")[...]))
    }

    @Test("Vendor-specific and unhandled events are kept raw")
    func rawEvents() throws {
        try expectEvent(.vendorSpecific(bytes("01 02 03")[...]), h4: bytes("04 ff 03 01 02 03"))
        // Read Remote Version Information Complete (0x0c) is not decoded by the host.
        let remoteVersion = HCIEventPacket(code: 0x0C, parameters: bytes("00 40 00 0b 0f 00 34 12")[...])
        try expectEvent(.other(remoteVersion), h4: bytes("04 0c 08 00 40 00 0b 0f 00 34 12"))
    }

    @Test("A known event with octets past its format is accepted and they are counted; too few stays an error")
    func extraOctets() throws {
        let cases: [(code: UInt8, parameters: String, extra: Int, event: HCIEvent)] = [
            (
                0x05, "00 40 00 13 00", 1,
                .disconnectionComplete(
                    DisconnectionComplete(status: .success, handle: 0x40, reason: .remoteUserTerminatedConnection))
            ),
            // Command Status with one octet too many, as a real controller sent it: the
            // command it answers must still complete.
            (
                0x0F, "00 01 0d 20 00", 1,
                .commandStatus(
                    CommandStatus(status: .success, numHCICommandPackets: 1, opcode: HCIOpcode(rawValue: 0x200D)))
            ),
            (0x10, "2a 00", 1, .hardwareError(HardwareError(hardwareCode: 0x2A))),
            (0x1A, "01 00 00", 2, .dataBufferOverflow(DataBufferOverflow(linkType: 1))),
            (
                0x30, "00 40 00 ee", 1,
                .encryptionKeyRefreshComplete(EncryptionKeyRefreshComplete(status: .success, handle: 0x40))
            ),
        ]
        for (code, parameters, extra, event) in cases {
            let packet = HCIEventPacket(code: code, parameters: bytes(parameters)[...])
            let decoded = try HCIEvent.decode(packet)
            #expect(decoded.event == event)
            #expect(decoded.extraOctets == extra)
            #expect(packet.extraOctets == extra)
            #expect(try HCIEvent(packet) == event)
        }
        // Too few octets is still an error.
        #expect(throws: DecodingError.truncated(needed: 2, available: 1)) {
            _ = try HCIEvent(HCIEventPacket(code: 0x0F, parameters: bytes("00 01 0d")[...]))
        }
        #expect(HCIEventPacket(code: 0x0F, parameters: bytes("00 01 0d")[...]).extraOctets == nil)
        // An event this stack does not decode has no format to be past.
        let unknown = HCIEventPacket(code: 0x57, parameters: bytes("40 00 ff")[...])
        #expect(try HCIEvent(unknown) == .other(unknown))
        #expect(unknown.extraOctets == 0)
        // Command Complete: octets past the return parameters of a command the stack knows.
        let bdAddr = HCIEventPacket(code: 0x0E, parameters: bytes("01 09 10 00 13 71 da 7d 1a 00 ee ee")[...])
        #expect(bdAddr.extraOctets == 2)
        let unknownCommand = HCIEventPacket(code: 0x0E, parameters: bytes("01 14 0c 00 41 42 00")[...])
        #expect(unknownCommand.extraOctets == 0)
        // An advertising report with an octet after its last report.
        let report = AdvertisingReport.encode(
            [
                AdvertisingReport(
                    connectable: true, scannable: true, directed: false, isScanResponse: false,
                    legacy: true, addressType: .random,
                    address: try #require(BluetoothAddress("F0:0D:B1:E7:00:01")),
                    rssi: -50, data: [2, 1, 6])
            ], extended: false)
        let paddedReport = LEMetaEvent(
            subeventCode: report.subeventCode, parameters: (Array(report.parameters) + [0xEE])[...])
        #expect(try AdvertisingReport.decode(paddedReport) == AdvertisingReport.decode(report))
        #expect(HCIEventPacket(code: 0x3E, parameters: paddedReport.encoded()[...]).extraOctets == 1)
    }

}
