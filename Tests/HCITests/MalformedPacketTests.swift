import BluetoothCore
import HCI
import HCITestSupport
import TestTraits
import Testing

// Bad bytes from a controller or a capture must give a DecodingError that names the
// problem, never a trap.

@Suite("Malformed packets")
struct MalformedPacketTests {
    @Test("An empty buffer and an unknown indicator are errors")
    func indicator() {
        #expect(throws: DecodingError.truncated(needed: 1, available: 0)) { _ = try HCIPacket(h4: []) }
        for byte: UInt8 in [0x00, 0x06, 0x07, 0xFF] {
            #expect(throws: DecodingError.invalidValue(field: "H4 packet type", value: UInt64(byte))) {
                _ = try HCIPacket(h4: [byte, 0x03, 0x0C, 0x00])
            }
        }
    }

    @Test("A command whose length field disagrees with its bytes")
    func commandLength() {
        #expect(throws: DecodingError.lengthMismatch(field: "command parameter length", declared: 5, actual: 4)) {
            _ = try HCIPacket(h4: bytes("01 01 20 05 1f 00 00 00")[...])
        }
        #expect(throws: DecodingError.lengthMismatch(field: "command parameter length", declared: 0, actual: 1)) {
            _ = try HCIPacket(h4: bytes("01 03 0c 00 00")[...])
        }
    }

    @Test("An event whose length field disagrees with its bytes")
    func eventLength() {
        #expect(throws: DecodingError.lengthMismatch(field: "event parameter length", declared: 4, actual: 3)) {
            _ = try HCIPacket(h4: bytes("04 0e 04 01 03 0c")[...])
        }
        #expect(throws: DecodingError.lengthMismatch(field: "event parameter length", declared: 4, actual: 5)) {
            _ = try HCIPacket(h4: bytes("04 0e 04 01 03 0c 00 00")[...])
        }
    }

    @Test("ACL, SCO and ISO packets whose length fields disagree with their bytes")
    func dataLengths() {
        #expect(throws: DecodingError.lengthMismatch(field: "ACL data length", declared: 7, actual: 6)) {
            _ = try HCIPacket(h4: bytes("02 40 20 07 00 03 00 04 00 0a 01")[...])
        }
        #expect(throws: DecodingError.lengthMismatch(field: "ACL data length", declared: 0, actual: 1)) {
            _ = try HCIPacket(h4: bytes("02 40 20 00 00 99")[...])
        }
        #expect(throws: DecodingError.lengthMismatch(field: "SCO data length", declared: 3, actual: 2)) {
            _ = try HCIPacket(h4: bytes("03 01 00 03 aa bb")[...])
        }
        #expect(throws: DecodingError.lengthMismatch(field: "ISO data length", declared: 4, actual: 5)) {
            _ = try HCIPacket(h4: bytes("05 60 20 04 00 01 02 03 04 05")[...])
        }
    }

    @Test("Return parameters: the strict decoder refuses extra octets, the controller's ignores and counts them")
    func trailingReturnParameters() throws {
        let answer = HCIController.CommandResult.complete(bytes("00 1b 00 10 00")[...])
        let (parameters, extra) = try answer.returnParametersCountingExtraOctets(of: LEReadBufferSize.self)
        #expect(
            parameters == LEReadBufferSize.ReturnParameters(leACLDataPacketLength: 27, totalNumLEACLDataPackets: 16))
        #expect(extra == 1)
        #expect(try answer.returnParameters(of: LEReadBufferSize.self) == parameters)
        #expect(throws: DecodingError.trailingBytes(1)) {
            _ = try LEReadBufferSize.ReturnParameters(decoding: bytes("1b 00 10 00")[...])
        }
        #expect(throws: DecodingError.trailingBytes(2)) {
            _ = try ReadLocalVersionInformation.ReturnParameters(decoding: bytes("0d 34 12 0d 0f 00 78 56 00 00")[...])
        }
        #expect(throws: DecodingError.trailingBytes(1)) {
            _ = try ReadBDADDR.ReturnParameters(decoding: bytes("13 71 da 7d 1a 00 00")[...])
        }
        #expect(throws: DecodingError.truncated(needed: 64, available: 63)) {
            _ = try ReadLocalSupportedCommands.ReturnParameters(decoding: [UInt8](repeating: 0, count: 63)[...])
        }
        #expect(throws: DecodingError.trailingBytes(1)) {
            _ = try ReadLocalSupportedCommands.ReturnParameters(decoding: [UInt8](repeating: 0, count: 65)[...])
        }
    }

    @Test("Fixed-size command parameters reject extra bytes")
    func trailingCommandParameters() {
        #expect(throws: DecodingError.trailingBytes(1)) {
            _ = try Disconnect(decoding: bytes("40 00 13 00")[...])
        }
        #expect(throws: DecodingError.trailingBytes(1)) {
            _ = try SetEventMask(decoding: bytes("ff ff fb ff 07 f8 bf 3d 00")[...])
        }
        #expect(throws: DecodingError.truncated(needed: 8, available: 7)) {
            _ = try LESetEventMask(decoding: bytes("1f 00 00 00 00 00 00")[...])
        }
    }

    @Test("Random garbage never traps the decoders")
    func fuzz() {
        var rng = SeededGenerator(seed: 0xB1E_7A1)
        for _ in 0..<20_000 {
            let count = Int.random(in: 0...12, using: &rng)
            var garbage = (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
            // Keep the indicator and length plausible often enough to reach the inner decoders.
            if !garbage.isEmpty, Bool.random(using: &rng) { garbage[0] = UInt8.random(in: 1...5, using: &rng) }
            if let packet = try? HCIPacket(h4: garbage[...]) {
                // (ISO is exempt: its decoder ignores the length field's two reserved bits.)
                if packet.type != .iso {
                    #expect(packet.encodeH4() == garbage, "a packet that decodes re-encodes to the same bytes")
                }
                if case .event(let event) = packet { _ = try? HCIEvent(event) }
            }
            _ = try? HCIEvent(HCIEventPacket(code: garbage.first ?? 0, parameters: garbage.dropFirst()))
            _ = try? NumberOfCompletedPackets(decoding: garbage[...])
        }
    }
}
