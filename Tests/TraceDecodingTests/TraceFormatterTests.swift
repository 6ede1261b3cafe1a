import BluetoothCore
import HCI
import Testing
import TraceDecoding

// The packet-by-packet trace printer: one line per record, every packet named, nothing
// hidden, nothing fatal.

/// 2017-12-13 12:34:56.123456 UTC in btsnoop's microseconds since year 0.
private let december2017: Int64 = 1_513_168_496_123_456 + 0x00DC_DDB3_0F2F_8000

@Suite("Trace formatter")
struct TraceFormatterTests {
    @Test("A short session prints one readable line per packet")
    func session() throws {
        let file = try btsnoop([
            (2, december2017, hexBytes("01 03 0c 00")),
            (3, december2017 + 1, hexBytes("04 0e 04 01 03 0c 00")),
            (3, december2017 + 2, hexBytes("04 3e 13 01 00 40 00 00 00 13 71 da 7d 1a 00 18 00 00 00 2a 00 00")),
            (0, december2017 + 3, hexBytes("02 40 00 07 00 03 00 04 00 0a 01 00")),
            (1, december2017 + 4, hexBytes("02 dc 2e 05 00 01 00 06 00 0b")),
            (3, december2017 + 5, hexBytes("04 0e 04 01 03 0c")),
            (1, december2017 + 6, hexBytes("09 01 02")),
            (1, december2017 + 7, hexBytes("02 40 20 03 00 05 00 04")),
            (1, december2017 + 8, hexBytes("02 40 10 06 00 00 1b 2a 00 01 02")),
        ])
        var formatter = TraceFormatter()
        let lines = file.records.map { formatter.format($0) }
        #expect(
            lines == [
                "#1 2017-12-13 12:34:56.123456 < HCI Command: Reset (0x0c03) plen 0",
                "#2 2017-12-13 12:34:56.123457 > HCI Event: Command_Complete (0x0e) plen 4: Reset (0x0c03) ncmd 1 status 0x00 success",
                "#3 2017-12-13 12:34:56.123458 > HCI Event: LE_Meta (0x3e) plen 19: LE_Connection_Complete (0x01) status 0x00 success handle 0x0040"
                    + " peer 00:1A:7D:DA:71:13 interval 30.0 ms, latency 0, supervision timeout 420 ms",
                "#4 2017-12-13 12:34:56.123459 < ACL TX: handle 0x0040 flags 0x00 dlen 7 | L2CAP ATT (0x0004) len 3: ATT 0x0a Read_Req [0a 01 00]",
                "#5 2017-12-13 12:34:56.123460 > ACL RX: handle 0x0edc flags 0x02 dlen 5 (handle never announced) | L2CAP SMP (0x0006) len 1: SMP 0x0b Security_Request [0b]",
                "#6 2017-12-13 12:34:56.123461 > malformed event packet (event parameter length says 4 byte(s) but 3 are present): 0e 04 01 03 0c",
                "#7 2017-12-13 12:34:56.123462 > unknown packet type 0x09: 01 02",
                "#8 2017-12-13 12:34:56.123463 > ACL RX: handle 0x0040 flags 0x02 dlen 3 (fragment)",
                "#9 2017-12-13 12:34:56.123464 > ACL RX: handle 0x0040 flags 0x01 dlen 6 | L2CAP ATT (0x0004) len 5: ATT 0x1b Handle_Value_Notification [1b 2a 00 01 02]",
            ])
    }

    @Test("The remote parameter request and both answers are named")
    func remoteConnectionParameterRequest() throws {
        let file = try btsnoop([
            (3, december2017, hexBytes("04 3e 0b 06 40 00 28 00 50 00 02 00 58 02")),
            (2, december2017 + 1, hexBytes("01 20 20 0e 40 00 28 00 50 00 02 00 58 02 00 00 00 00")),
            (3, december2017 + 2, hexBytes("04 0e 06 01 20 20 00 40 00")),
            (2, december2017 + 3, hexBytes("01 21 20 03 40 00 3b")),
            (3, december2017 + 4, hexBytes("04 0e 06 01 21 20 00 40 00")),
        ])
        var formatter = TraceFormatter()
        let lines = file.records.map { formatter.format($0) }
        #expect(lines[0].contains("LE_Meta (0x3e) plen 11: LE_Remote_Connection_Parameter_Request (0x06)"))
        #expect(lines[1].contains("HCI Command: LE_Remote_Connection_Parameter_Request_Reply (0x2020) plen 14"))
        #expect(
            lines[2].contains(
                "Command_Complete (0x0e) plen 6: LE_Remote_Connection_Parameter_Request_Reply (0x2020) ncmd 1 status 0x00 success"
            ))
        #expect(lines[3].contains("HCI Command: LE_Remote_Connection_Parameter_Request_Negative_Reply (0x2021) plen 3"))
        #expect(
            lines[4].contains(
                "LE_Remote_Connection_Parameter_Request_Negative_Reply (0x2021) ncmd 1 status 0x00 success"))
    }

    @Test("btmon records that are no packet print as monitor lines")
    func monitor() throws {
        let file = try btsnoop([(0x0001_000C, december2017, Array("note".utf8))], datalink: 2001)
        var formatter = TraceFormatter()
        #expect(
            formatter.format(file.records[0]) == "#1 2017-12-13 12:34:56.123456 > monitor opcode 12 index 1 (4 bytes)")
    }

    static let clockCases: [(Int64, String)] = [
        (0x00DC_DDB3_0F2F_8000, "1970-01-01 00:00:00.000000"),
        (0x00DC_DDB3_0F2F_8000 - 1, "1969-12-31 23:59:59.999999"),
        // btsnoop's "year 0" offset is really 719540 days before 1970, 12 more than the
        // proleptic Gregorian 0000-01-01; every tool uses that constant, so timestamp 0 is here.
        (0, "-1-12-20 00:00:00.000000"),
        (0x00DC_DDB3_0F2F_8000 + 951_782_400_000_000, "2000-02-29 00:00:00.000000"),
    ]

    @Test("Odd clocks print as proleptic Gregorian UTC dates", arguments: clockCases)
    func clocks(timestamp: Int64, date: String) throws {
        let file = try btsnoop([(2, timestamp, hexBytes("01 03 0c 00"))])
        var formatter = TraceFormatter()
        #expect(formatter.format(file.records[0]) == "#1 \(date) < HCI Command: Reset (0x0c03) plen 0")
    }

    @Test(
        "Timestamps at the ends of the 64-bit range print without trapping",
        arguments: [Int64.min, Int64.min + 1, -1, Int64.max, Int64.max - 1])
    func extremeClocks(timestamp: Int64) throws {
        let file = try btsnoop([(2, timestamp, hexBytes("01 03 0c 00"))])
        var formatter = TraceFormatter()
        let line = formatter.format(file.records[0])
        #expect(line.hasPrefix("#1 "))
        #expect(line.hasSuffix(" < HCI Command: Reset (0x0c03) plen 0"))
    }

    @Test("Every record of every real trace formats, and none is malformed", arguments: traceNames)
    func realTraces(name: String) throws {
        let file = try readTrace(name)
        var formatter = TraceFormatter()
        var malformed: [String] = []
        for record in file.records {
            let line = formatter.format(record)
            if line.contains("malformed") { malformed.append(line) }
        }
        #expect(malformed.isEmpty, "\(malformed.prefix(5).joined(separator: "\n"))")
    }
}

extension TraceFormatterTests {
    /// A link announced by LE Enhanced Connection Complete v2 (0x29) is a known handle; a
    /// failed Disconnection Complete does not forget it, a successful one does.
    @Test func handlesAnnouncedByEnhancedConnectionCompleteV2() {
        func record(_ number: Int, _ direction: BTSnoop.Direction, _ packet: HCIPacket) -> BTSnoopRecord {
            let bytes = packet.encodeH4()
            return BTSnoopRecord(
                number: number, timestamp: BTSnoop.epochOffsetMicroseconds, direction: direction, flags: 0,
                originalLength: bytes.count, content: .packet(packet.type, bytes.dropFirst()))
        }
        let acl = HCIPacket.acl(
            ACLDataPacket(handle: 0x41, boundary: .firstFlushable, data: [0x01, 0x00, 0x04, 0x00, 0x1E][...]))
        let connected = HCIPacket.event(
            HCIEventPacket(code: 0x3E, parameters: [0x29, 0x00, 0x41, 0x00] + Array(repeating: 0, count: 30)))
        let failedDisconnect = HCIPacket.event(
            HCIEvent.disconnectionComplete(
                .init(status: .commandDisallowed, handle: 0x41, reason: .remoteUserTerminatedConnection)
            ).packet)
        let disconnected = HCIPacket.event(
            HCIEvent.disconnectionComplete(
                .init(status: .success, handle: 0x41, reason: .remoteUserTerminatedConnection)
            ).packet)
        var formatter = TraceFormatter()
        #expect(formatter.format(record(1, .received, acl)).contains("never announced"))
        #expect(formatter.format(record(2, .received, connected)).contains("LE_Enhanced_Connection_Complete_v2"))
        #expect(!formatter.format(record(3, .received, acl)).contains("never announced"))
        _ = formatter.format(record(4, .received, failedDisconnect))
        #expect(!formatter.format(record(5, .received, acl)).contains("never announced"))
        _ = formatter.format(record(6, .received, disconnected))
        #expect(formatter.format(record(7, .received, acl)).contains("never announced"))
    }
}
