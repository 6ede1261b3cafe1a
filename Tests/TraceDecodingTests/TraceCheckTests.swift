import BluetoothCore
import HCI
import Testing
import TraceDecoding

// `bluejay trace --check`: what cannot be decoded fails; what the tolerance rule accepts
// (octets past an event's format) is a warning, or a failure with `strict`.

@Suite("Trace check")
struct TraceCheckTests {
    /// Reset, answered by a Command Status-shaped oddity and a padded Command Complete, then
    /// an LE Meta subevent with an octet after its format.
    /// btsnoop flags: bit 0 set for controller to host, bit 1 for commands and events.
    let padded: [(UInt32, Int64, [UInt8])] = [
        (2, 0, hexBytes("01 03 0c 00")),
        // Command Status for LE Create Connection with one octet too many (seen on a real controller).
        (3, 1, hexBytes("04 0f 05 00 01 0d 20 ee")),
        // Command Complete for Read BD_ADDR with two octets past the address.
        (3, 2, hexBytes("04 0e 0c 01 09 10 00 13 71 da 7d 1a 00 ee ee")),
        // LE Data Length Change with one octet past its format.
        (3, 3, hexBytes("04 3e 0c 07 40 00 fb 00 48 08 1b 00 48 01 ee")),
    ]

    @Test("Octets past an event's format are warnings; the check passes")
    func extraOctetsWarn() throws {
        let check = TraceCheck(file: try btsnoop(padded))
        #expect(check.failure == nil)
        #expect(check.packets == 4)
        #expect(check.warnings.map(\.recordNumber) == [2, 3, 4])
        #expect(
            check.warnings[0].description
                == "record 2: Command_Status event (0x0f) carries 1 octet past its format (ignored)")
        #expect(check.warnings[1].reason.contains("for Read_BD_ADDR carries 2 octets"))
        #expect(check.warnings[2].reason.hasPrefix("LE Meta LE_Data_Length_Change event (0x07) carries 1 octet"))
    }

    @Test("With strict, the first such record fails the check")
    func strictFails() throws {
        let check = TraceCheck(file: try btsnoop(padded), strict: true)
        let failure = try #require(check.failure)
        #expect(failure.recordNumber == 2)
        #expect(failure.reason.hasSuffix("(strict check)"))
        #expect(failure.bytes == hexBytes("04 0f 05 00 01 0d 20 ee"))
    }

    @Test("An ATT PDU with octets past its fixed format is a warning; --strict fails on it")
    func attExtraOctetsWarn() throws {
        let file = try btsnoop([
            (3, 0, hexBytes("04 3e 13 01 00 40 00 00 00 13 71 da 7d 1a 00 18 00 00 00 2a 00 00")),
            // A Write Response (0x13) with one octet past its format.
            (1, 1, hexBytes("02 40 20 06 00 02 00 04 00 13 ee")),
        ])
        let check = TraceCheck(file: file)
        #expect(check.failure == nil)
        #expect(check.warnings.map(\.description) == ["record 2: ATT 0x13 Write_Rsp carries 1 octet past its format"])
        #expect(TraceCheck(file: file, strict: true).failure?.recordNumber == 2)
    }

    @Test("A signaling command with octets past its format is a warning; --strict fails on it")
    func signalingExtraOctetsWarn() throws {
        let file = try btsnoop([
            (3, 0, hexBytes("04 3e 13 01 00 40 00 00 00 13 71 da 7d 1a 00 18 00 00 00 2a 00 00")),
            // A Connection Parameter Update Response (0x13) with two octets past its Result.
            (1, 1, hexBytes("02 40 20 0c 00 08 00 05 00 13 01 04 00 00 00 ee ee")),
        ])
        let check = TraceCheck(file: file)
        #expect(check.failure == nil)
        #expect(
            check.warnings.map(\.description) == [
                "record 2: LE signaling 0x13 Connection_Parameter_Update_Rsp carries 2 octets past its format"
            ])
        #expect(TraceCheck(file: file, strict: true).failure?.recordNumber == 2)
    }

    @Test("Too few octets fails with or without strict")
    func truncatedFails() throws {
        let file = try btsnoop([(3, 0, hexBytes("04 0f 03 00 01 0d"))])
        for strict in [false, true] {
            let failure = try #require(TraceCheck(file: file, strict: strict).failure)
            #expect(failure.reason.contains("Command_Status event: truncated"))
        }
    }

    @Test("The real traces carry nothing the tolerance rule has to accept", arguments: traceNames)
    func realTracesAreClean(name: String) throws {
        let check = TraceCheck(file: try readTrace(name), strict: true)
        #expect(check.failure == nil, "\(check.failure.map { "\($0)" } ?? "")")
        #expect(check.warnings.isEmpty)
    }
}
