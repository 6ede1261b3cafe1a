import ATT
import BluetoothCore
import HCI
import Testing

/// Writes at the table: Write Request and Write Command with their permissions and hook,
/// and each client's prepare queue (Core Vol 3, Part F, 3.4.5 and 3.4.6).
extension AttributeServerTests {
    @Test("Write Request: permissions, handle, length, then the hook; Write Response on success")
    func writeRequest() {
        let server = gapServer()
        var writes: [(ConnectionHandle, AttributeHandle, [UInt8])] = []
        server.onWrite = { connection, handle, value in
            writes.append((connection, handle, value))
            return nil
        }
        #expect(ask(server, "12 09 00 02 00", connection: 0x0041) == "13")
        #expect(server.value(of: 0x0009) == [0x02, 0x00])
        #expect(writes.count == 1)
        let written: [UInt16]? = writes.first.map { (write: (ConnectionHandle, AttributeHandle, [UInt8])) -> [UInt16] in
            [write.0.rawValue, write.1.rawValue]
        }
        #expect(written == [0x0041, 0x0009])
        #expect(writes.first?.2 == [0x02, 0x00])

        #expect(ask(server, "12 03 00 41") == "01 12 03 00 03")
        #expect(ask(server, "12 08 00 41") == "01 12 08 00 03")
        #expect(ask(server, "12 30 00 41") == "01 12 30 00 01")
        #expect(ask(server, "12 00 00 41") == "01 12 00 00 01")
        #expect(ask(server, "12 0c") == "01 12 00 00 04")
        let name: [UInt8] = Array("Bluejay".utf8)
        #expect(server.value(of: 0x0003) == name)
        #expect(writes.count == 1)

        let tooLong: [UInt8] = [0x12, 0x0C, 0x00] + [UInt8](repeating: 0x55, count: 513)
        #expect(respond(server, tooLong[...], connection: 0x40, mtu: 517)?.hexDump == "01 12 0c 00 0d")
        let longest: [UInt8] = [0x12, 0x0C, 0x00] + [UInt8](repeating: 0x55, count: 512)
        #expect(respond(server, longest[...], connection: 0x40, mtu: 517)?.hexDump == "13")
        #expect(server.value(of: 0x000C)?.count == 512)
        // An empty value is a value.
        #expect(ask(server, "12 0c 00") == "13")
        #expect(server.value(of: 0x000C) == [])
    }

    @Test("Write Request: the hook can refuse, and the value stays")
    func writeRefused() {
        let server = gapServer()
        server.onWrite = { _, handle, value in
            handle == 0x0009 && value.first.map { $0 > 0x03 } == true ? .cccdImproperlyConfigured : nil
        }
        #expect(ask(server, "12 09 00 04 00") == "01 12 09 00 fd")
        #expect(server.value(of: 0x0009) == [0x00, 0x00])
        #expect(ask(server, "12 09 00 01 00") == "13")
        #expect(server.value(of: 0x0009) == [0x01, 0x00])
        server.onWrite = { _, _, _ in ATTErrorCode(rawValue: 0x80) }
        #expect(ask(server, "12 0f 00 01 00") == "01 12 0f 00 80")
    }

    @Test("Write Command: applied when allowed, silently dropped otherwise")
    func writeCommand() {
        let server = gapServer()
        var writes: [AttributeHandle] = []
        server.onWrite = { _, handle, value in
            writes.append(handle)
            return value == [0xFF] ? .valueNotAllowed : nil
        }
        #expect(ask(server, "52 0c 00 68 69") == nil)
        #expect(server.value(of: 0x000C) == [0x68, 0x69])
        #expect(ask(server, "52 0c 00 ff") == nil)
        #expect(server.value(of: 0x000C) == [0x68, 0x69])
        // The CCCD takes Write Requests only; the name no writes at all.
        #expect(ask(server, "52 09 00 01 00") == nil)
        #expect(server.value(of: 0x0009) == [0x00, 0x00])
        #expect(ask(server, "52 03 00 41") == nil)
        #expect(ask(server, "52 30 00 41") == nil)
        #expect(ask(server, "52 0c") == nil)
        let tooLong: [UInt8] = [0x52, 0x0C, 0x00] + [UInt8](repeating: 0x55, count: 513)
        #expect(respond(server, tooLong[...], connection: 0x40, mtu: 517) == nil)
        #expect(server.value(of: 0x000C) == [0x68, 0x69])
        #expect(writes == [0x000C, 0x000C])
    }

    @Test("Prepared writes: a queue per client, checked at Execute Write, bounded (3.4.6)")
    func preparedWrites() {
        let server = gapServer()
        var applied: [[UInt8]] = []
        server.onWrite = { _, _, value in
            applied.append(value)
            return nil
        }
        // Two parts of a long write, echoed; another client's queue is its own.
        #expect(ask(server, "16 0c 00 00 00 41 42") == "17 0c 00 00 00 41 42")
        #expect(ask(server, "16 0c 00 02 00 43") == "17 0c 00 02 00 43")
        #expect(ask(server, "16 0c 00 00 00 5a", connection: 0x41) == "17 0c 00 00 00 5a")
        #expect(ask(server, "18 01") == "19")
        let executed: [UInt8] = [0x41, 0x42, 0x43]
        #expect(server.value(of: 0x000C) == executed && applied == [executed])
        #expect(ask(server, "18 00", connection: 0x41) == "19", "cancelled")
        #expect(server.value(of: 0x000C) == [0x41, 0x42, 0x43])
        // A part past the value's end: Invalid Offset at Execute, nothing applied, queue gone.
        #expect(ask(server, "16 0c 00 05 00 44") == "17 0c 00 05 00 44")
        #expect(ask(server, "18 01") == "01 18 0c 00 07")
        #expect(ask(server, "18 01") == "19")
        #expect(server.value(of: 0x000C) == [0x41, 0x42, 0x43])
        // A value past 512 octets: Invalid Attribute Value Length at Execute.
        for offset in stride(from: 0, to: 520, by: 20) {
            let header: [UInt8] = [0x16, 0x0C, 0x00, UInt8(offset & 0xFF), UInt8(offset >> 8)]
            let part: [UInt8] = header + [UInt8](repeating: 0x55, count: 20)
            _ = respond(server, part[...], connection: 0x40, mtu: 517)
        }
        #expect(ask(server, "18 01") == "01 18 0c 00 0d")
        // The queue is bounded: past it, Prepare Queue Full.
        server.maximumPreparedOctets = 4
        #expect(ask(server, "16 0c 00 00 00 01 02 03") == "17 0c 00 00 00 01 02 03")
        #expect(ask(server, "16 0c 00 03 00 04 05") == "01 16 0c 00 09")
        // Unknown handles and malformed requests.
        #expect(ask(server, "16 99 00 00 00 01") == "01 16 99 00 01")
        #expect(ask(server, "16 0c") == "01 16 00 00 04")
        #expect(ask(server, "18 02") == "01 18 00 00 04")
        // The link ends: its queue with it.
        clients.byConnection[0x40] = nil
        #expect(ask(server, "18 01") == "19")
        #expect(server.value(of: 0x000C) == [0x41, 0x42, 0x43])
    }
}
