import ATT
import BluetoothCore
import HCI
import Testing

/// The Nordic UART service's RX (write) and TX (notify) characteristics, and their wire form.
let uartRX = BluetoothUUID("6E400002-B5A3-F393-E0A9-E50E24DCCA9E")!
let uartRXWire = "9e ca dc 24 0e e5 a9 e0 93 f3 a3 b5 02 00 40 6e"
let uartTX = BluetoothUUID("6E400003-B5A3-F393-E0A9-E50E24DCCA9E")!
let uartTXWire = "9e ca dc 24 0e e5 a9 e0 93 f3 a3 b5 03 00 40 6e"

/// The local server a central keeps, answering byte for byte (Core Vol 3, Part F, 3.4).
@Suite("Attribute server") @BluetoothActor
struct AttributeServerTests {
    /// A small GAP-like table:
    ///
    ///     0x0001 primary service  1800 (GAP)
    ///     0x0002 characteristic   read, 0x0003, 2A00
    ///     0x0003 device name      "Bluejay"               read
    ///     0x0004 characteristic   read, 0x0005, 2A01
    ///     0x0005 appearance       00 00                   read
    ///     0x0006 primary service  1801 (GATT)
    ///     0x0007 characteristic   indicate, 0x0008, 2A05
    ///     0x0008 service changed  01 00 ff ff             (no access)
    ///     0x0009 CCCD             00 00                   read, write
    ///     0x000A primary service  UART (128-bit)
    ///     0x000B characteristic   write, write-no-rsp, 0x000C, RX
    ///     0x000C RX                                       write, write without response
    ///     0x000D characteristic   notify, 0x000E, TX
    ///     0x000E TX                                       (no access)
    ///     0x000F CCCD             00 00                   read, write
    func gapServer() -> AttributeServer {
        let primary = BluetoothUUID(UInt16(0x2800))
        let characteristic = BluetoothUUID(UInt16(0x2803))
        let cccd = BluetoothUUID(UInt16(0x2902))
        let server = AttributeServer()
        // Added out of order on purpose: the table sorts itself.
        server.add(handle: 0x000A, type: primary, value: uartService.bytes.reversed())
        server.add(handle: 0x000B, type: characteristic, value: [0x0C, 0x0C, 0x00] + uartRX.bytes.reversed())
        server.add(handle: 0x000C, type: uartRX, value: [], permissions: [.write, .writeWithoutResponse])
        server.add(handle: 0x000D, type: characteristic, value: [0x10, 0x0E, 0x00] + uartTX.bytes.reversed())
        server.add(handle: 0x000E, type: uartTX, value: [], permissions: [])
        server.add(handle: 0x000F, type: cccd, value: [0x00, 0x00], permissions: [.read, .write])
        server.add(handle: 0x0001, type: primary, value: [0x00, 0x18])
        server.add(handle: 0x0002, type: characteristic, value: [0x02, 0x03, 0x00, 0x00, 0x2A])
        server.add(handle: 0x0003, type: BluetoothUUID(UInt16(0x2A00)), value: Array("Bluejay".utf8))
        server.add(handle: 0x0004, type: characteristic, value: [0x02, 0x05, 0x00, 0x01, 0x2A])
        server.add(handle: 0x0005, type: BluetoothUUID(UInt16(0x2A01)), value: [0x00, 0x00])
        server.add(handle: 0x0006, type: primary, value: [0x01, 0x18])
        server.add(handle: 0x0007, type: characteristic, value: [0x20, 0x08, 0x00, 0x05, 0x2A])
        server.add(
            handle: 0x0008, type: BluetoothUUID(UInt16(0x2A05)), value: [0x01, 0x00, 0xFF, 0xFF], permissions: [])
        server.add(handle: 0x0009, type: cccd, value: [0x00, 0x00], permissions: [.read, .write])
        return server
    }

    /// The server's answer to `request` (hex), as hex, or nil.
    /// Each connection's state at the table (its prepare queue), as a server keeps it on the
    /// link's bearer.
    final class Clients {
        var byConnection: [ConnectionHandle: AttributeServer.Client] = [:]
    }
    let clients = Clients()

    /// The table's answer to `pdu` from the client on `connection`.
    func respond(_ server: AttributeServer, _ pdu: ArraySlice<UInt8>, connection: ConnectionHandle = 0x0040, mtu: Int)
        -> [UInt8]?
    {
        server.respond(
            to: pdu, connection: connection, mtu: mtu, client: &clients.byConnection[connection, default: .init()])
    }

    /// The table's answer to `pdu` from the client on `connection`, with what is `outside`.
    func answer(
        _ server: AttributeServer, _ pdu: ArraySlice<UInt8>, connection: ConnectionHandle = 0x0040, mtu: Int,
        outside: OutsideAnswers
    ) -> TableAnswer {
        guard let request = try? ATTRequest(decoding: pdu) else {
            Issue.record("not a request: \(pdu.hexDump)")
            return .response(nil)
        }
        return server.answer(
            to: request, connection: connection, mtu: mtu, outside: outside,
            client: &clients.byConnection[connection, default: .init()])
    }

    func ask(_ server: AttributeServer, _ request: String, mtu: Int = 23, connection: ConnectionHandle = 0x0040)
        -> String?
    {
        respond(server, hexBytes(request)[...], connection: connection, mtu: mtu)?.hexDump
    }

    @Test("The table is kept sorted by handle; values can be read and replaced")
    func table() {
        let server = gapServer()
        #expect(server.attributes.map(\.handle) == Array(1...15))
        let name: [UInt8] = Array("Bluejay".utf8)
        #expect(server.value(of: 0x0003) == name)
        #expect(server.value(of: 0x0010) == nil)
        #expect(server.attribute(at: 0x000C)?.permissions == [.write, .writeWithoutResponse])
        server.setValue([0x01], of: 0x0005)
        #expect(server.value(of: 0x0005) == [0x01])
        let built = AttributeServer(attributes: [
            Attribute(handle: 9, type: BluetoothUUID(UInt16(0x2A00)), value: [9]),
            Attribute(handle: 2, type: BluetoothUUID(UInt16(0x2A00)), value: [2]),
        ])
        #expect(built.attributes.map(\.handle) == [2, 9])
    }

    @Test("Read By Group Type: primary services with group ends, one value length per response")
    func readByGroupType() {
        let server = gapServer()
        // 16-bit services first; the 128-bit one has another length, so it waits.
        #expect(ask(server, "10 01 00 ff ff 00 28") == "11 06 01 00 05 00 00 18 06 00 09 00 01 18")
        // The last service's group runs to the last attribute.
        #expect(ask(server, "10 0a 00 ff ff 00 28") == "11 14 0a 00 0f 00 " + uartServiceWire)
        #expect(ask(server, "10 10 00 ff ff 00 28") == "01 10 10 00 0a")
        // The group type as a 128-bit UUID is the same type.
        #expect(
            ask(server, "10 01 00 ff ff fb 34 9b 5f 80 00 00 80 00 10 00 00 00 28 00 00")
                == "11 06 01 00 05 00 00 18 06 00 09 00 01 18")
        // A range ending inside a group still reports the whole group.
        #expect(ask(server, "10 01 00 03 00 00 28") == "11 06 01 00 05 00 00 18")
        // No secondary services here.
        #expect(ask(server, "10 01 00 ff ff 01 28") == "01 10 01 00 0a")
    }

    @Test("Read By Group Type: only 0x2800 and 0x2801 group; bad ranges are Invalid Handle")
    func readByGroupTypeErrors() {
        let server = gapServer()
        #expect(ask(server, "10 01 00 ff ff 03 28") == "01 10 01 00 10")
        #expect(ask(server, "10 01 00 ff ff " + uartServiceWire) == "01 10 01 00 10")
        #expect(ask(server, "10 00 00 ff ff 00 28") == "01 10 00 00 01")
        #expect(ask(server, "10 05 00 04 00 00 28") == "01 10 05 00 01")
        #expect(ask(server, "10 01 00 ff ff 00") == "01 10 00 00 04")
    }

    @Test("A secondary service ends the group before it")
    func secondaryServices() {
        let server = gapServer()
        server.add(handle: 0x0020, type: BluetoothUUID(UInt16(0x2801)), value: [0x0F, 0x18])
        server.add(handle: 0x0021, type: BluetoothUUID(UInt16(0x2A19)), value: [0x64])
        #expect(ask(server, "10 0a 00 ff ff 00 28") == "11 14 0a 00 0f 00 " + uartServiceWire)
        #expect(ask(server, "10 01 00 ff ff 01 28") == "11 06 20 00 21 00 0f 18")
    }

    @Test("Read By Type: same-length values, as many as fit in the MTU")
    func readByType() {
        let server = gapServer()
        // 2 + 3 × 7 = 23: three declarations fill the MTU exactly.
        #expect(
            ask(server, "08 01 00 ff ff 03 28")
                == "09 07 02 00 02 03 00 00 2a 04 00 02 05 00 01 2a 07 00 20 08 00 05 2a")
        // The 128-bit declarations are longer: one per 23-byte PDU, both in a larger MTU.
        #expect(ask(server, "08 08 00 ff ff 03 28") == "09 15 0b 00 0c 0c 00 " + uartRXWire)
        #expect(
            ask(server, "08 08 00 ff ff 03 28", mtu: 64)
                == "09 15 0b 00 0c 0c 00 " + uartRXWire + " 0d 00 10 0e 00 " + uartTXWire)
        #expect(ask(server, "08 01 00 ff ff 00 2a") == "09 09 03 00 42 6c 75 65 6a 61 79")
        #expect(ask(server, "08 01 00 ff ff 02 29") == "09 04 09 00 00 00 0f 00 00 00")
        // A 128-bit attribute type.
        #expect(ask(server, "08 01 00 ff ff " + uartServiceWire) == "01 08 01 00 0a")
        // The type as 128 bits is the same type.
        #expect(
            ask(server, "08 01 00 ff ff fb 34 9b 5f 80 00 00 80 00 10 00 00 00 2a 00 00")
                == "09 09 03 00 42 6c 75 65 6a 61 79")
        #expect(ask(server, "08 01 00 ff ff 19 2a") == "01 08 01 00 0a")
    }

    @Test("Read By Type: values cut to ATT_MTU - 4, and never past 253 bytes")
    func readByTypeTruncation() {
        let server = gapServer()
        let name = (0..<300).map { UInt8(truncatingIfNeeded: $0) }
        server.setValue(name, of: 0x0003)
        let answer23 = respond(server, hexBytes("08 01 00 ff ff 00 2a")[...], connection: 0x40, mtu: 23)
        #expect(answer23 == [0x09, 21, 0x03, 0x00] + name.prefix(19))
        let answer512 = respond(server, hexBytes("08 01 00 ff ff 00 2a")[...], connection: 0x40, mtu: 512)
        #expect(answer512 == [0x09, 255, 0x03, 0x00] + name.prefix(253))
        let answer100 = respond(server, hexBytes("08 01 00 ff ff 00 2a")[...], connection: 0x40, mtu: 100)
        #expect(answer100?.count == 100)
        #expect(answer100.map { Array($0.prefix(2)) } == [0x09, 98])
    }

    @Test("Read By Type: an unreadable first match is Read Not Permitted; a later one ends the list")
    func readByTypePermissions() {
        let server = gapServer()
        #expect(ask(server, "08 01 00 ff ff 05 2a") == "01 08 08 00 02")
        server.setValue([0x00, 0x00], of: 0x0003)
        server.add(handle: 0x0010, type: BluetoothUUID(UInt16(0x2A00)), value: [1, 2], permissions: [])
        server.add(handle: 0x0011, type: BluetoothUUID(UInt16(0x2A00)), value: [3, 4])
        #expect(ask(server, "08 01 00 ff ff 00 2a") == "09 04 03 00 00 00")
        #expect(ask(server, "08 04 00 ff ff 00 2a") == "01 08 10 00 02")
        #expect(ask(server, "08 00 00 ff ff 00 2a") == "01 08 00 00 01")
        #expect(ask(server, "08 09 00 08 00 00 2a") == "01 08 09 00 01")
        #expect(ask(server, "08 01 00 ff ff 00 2a 00") == "01 08 00 00 04")
    }

    @Test("Find Information: one UUID size per response, as many as fit")
    func findInformation() {
        let server = gapServer()
        // 2 + 5 × 4 = 22: a sixth would not fit in 23.
        #expect(ask(server, "04 01 00 ff ff") == "05 01 01 00 00 28 02 00 03 28 03 00 00 2a 04 00 03 28 05 00 01 2a")
        #expect(
            ask(server, "04 01 00 ff ff", mtu: 512)
                == "05 01 01 00 00 28 02 00 03 28 03 00 00 2a 04 00 03 28 05 00 01 2a 06 00 00 28 07 00 03 28 "
                + "08 00 05 2a 09 00 02 29 0a 00 00 28 0b 00 03 28")
        #expect(ask(server, "04 0c 00 ff ff") == "05 02 0c 00 " + uartRXWire)
        #expect(ask(server, "04 0e 00 0e 00") == "05 02 0e 00 " + uartTXWire)
        #expect(ask(server, "04 0f 00 0f 00") == "05 01 0f 00 02 29")
        #expect(ask(server, "04 10 00 ff ff") == "01 04 10 00 0a")
        #expect(ask(server, "04 00 00 ff ff") == "01 04 00 00 01")
        #expect(ask(server, "04 03 00 02 00") == "01 04 03 00 01")
        #expect(ask(server, "04 01 00") == "01 04 00 00 04")
    }

    @Test("Find By Type Value: services by UUID with their group ends, other attributes alone")
    func findByTypeValue() {
        let server = gapServer()
        #expect(ask(server, "06 01 00 ff ff 00 28 01 18") == "07 06 00 09 00")
        #expect(ask(server, "06 01 00 ff ff 00 28 00 18") == "07 01 00 05 00")
        #expect(ask(server, "06 01 00 ff ff 00 28 " + uartServiceWire) == "07 0a 00 0f 00")
        #expect(ask(server, "06 01 00 ff ff 00 28 0f 18") == "01 06 01 00 0a")
        #expect(ask(server, "06 01 00 ff ff 02 29 00 00") == "07 09 00 09 00 0f 00 0f 00")
        // Unreadable values are not compared.
        #expect(ask(server, "06 01 00 ff ff 05 2a 01 00 ff ff") == "01 06 01 00 0a")
        #expect(ask(server, "06 00 00 ff ff 00 28 01 18") == "01 06 00 00 01")
        #expect(ask(server, "06 01 00 ff ff 00") == "01 06 00 00 04")
    }

    @Test("Find By Type Value: as many ranges as fit in the MTU")
    func findByTypeValueMTU() {
        let server = AttributeServer()
        for handle in AttributeHandle(1)...10 {
            server.add(handle: handle, type: BluetoothUUID(UInt16(0x2902)), value: [0, 0])
        }
        // 1 + 5 × 4 = 21: a sixth would not fit in 23.
        #expect(
            ask(server, "06 01 00 ff ff 02 29 00 00")
                == "07 01 00 01 00 02 00 02 00 03 00 03 00 04 00 04 00 05 00 05 00")
    }

    @Test("Read and Read Blob: values cut to ATT_MTU - 1, offsets up to the length")
    func reads() {
        let server = gapServer()
        #expect(ask(server, "0a 03 00") == "0b 42 6c 75 65 6a 61 79")
        #expect(ask(server, "0a 0c 00") == "01 0a 0c 00 02")
        #expect(ask(server, "0a 08 00") == "01 0a 08 00 02")
        #expect(ask(server, "0a 10 00") == "01 0a 10 00 01")
        #expect(ask(server, "0a 00 00") == "01 0a 00 00 01")
        #expect(ask(server, "0a 03") == "01 0a 00 00 04")
        #expect(ask(server, "0a 03 00 00") == "01 0a 00 00 04")

        let long: [UInt8] = (0..<30).map { (index: Int) -> UInt8 in UInt8(index) }
        server.setValue(long, of: 0x0003)
        let readCut: [UInt8] = [0x0B] + long.prefix(22)
        #expect(respond(server, hexBytes("0a 03 00")[...], connection: 0x40, mtu: 23) == readCut)
        let readWhole: [UInt8] = [0x0B] + long
        #expect(respond(server, hexBytes("0a 03 00")[...], connection: 0x40, mtu: 100) == readWhole)
        let blobRest: [UInt8] = [0x0D] + long[22...]
        #expect(respond(server, hexBytes("0c 03 00 16 00")[...], connection: 0x40, mtu: 23) == blobRest)
        let blobCut: [UInt8] = [0x0D] + long[1..<23]
        #expect(respond(server, hexBytes("0c 03 00 01 00")[...], connection: 0x40, mtu: 23) == blobCut)
        #expect(ask(server, "0c 03 00 1e 00") == "0d")
        #expect(ask(server, "0c 03 00 1f 00") == "01 0c 03 00 07")
        #expect(ask(server, "0c 08 00 00 00") == "01 0c 08 00 02")
        #expect(ask(server, "0c 10 00 00 00") == "01 0c 10 00 01")
        #expect(ask(server, "0c 03 00 00") == "01 0c 00 00 04")
    }

    @Test("Read Multiple: values concatenated; the first bad handle fails them all")
    func readMultiple() {
        let server = gapServer()
        #expect(ask(server, "0e 03 00 05 00") == "0f 42 6c 75 65 6a 61 79 00 00")
        #expect(ask(server, "0e 05 00 03 00 09 00") == "0f 00 00 42 6c 75 65 6a 61 79 00 00")
        #expect(ask(server, "0e 03 00 08 00 20 00") == "01 0e 08 00 02")
        #expect(ask(server, "0e 03 00 20 00 08 00") == "01 0e 20 00 01")
        #expect(ask(server, "0e 03 00") == "01 0e 00 00 04")
        server.setValue(Array(repeating: 0xAA, count: 20), of: 0x0003)
        let both: [UInt8] = [0x0F] + [UInt8](repeating: 0xAA, count: 20) + [0x00, 0x00]
        #expect(respond(server, hexBytes("0e 03 00 05 00")[...], connection: 0x40, mtu: 23) == both)
        let cut: [UInt8] = [0x0F] + [UInt8](repeating: 0xAA, count: 22)
        #expect(respond(server, hexBytes("0e 03 00 03 00")[...], connection: 0x40, mtu: 23) == cut)
    }

    @Test("Read Multiple Variable: each value with its whole length; the list ends at ATT_MTU - 1 (3.4.4.11)")
    func readMultipleVariable() {
        let server = gapServer()
        #expect(ask(server, "20 03 00 05 00") == "21 07 00 42 6c 75 65 6a 61 79 02 00 00 00")
        #expect(ask(server, "20 05 00 09 00") == "21 02 00 00 00 02 00 00 00")
        // The first handle that cannot be read refuses them all, with its own code.
        #expect(ask(server, "20 03 00 08 00 20 00") == "01 20 08 00 02")
        #expect(ask(server, "20 03 00 20 00 08 00") == "01 20 20 00 01")
        #expect(ask(server, "20 03 00") == "01 20 00 00 04")
        // 18 octets and their length fill 20 of 22: the next tuple keeps its length, not its value.
        server.setValue(Array(repeating: 0xAA, count: 18), of: 0x0003)
        let cut: [UInt8] = [0x21, 0x12, 0x00] + [UInt8](repeating: 0xAA, count: 18) + [0x02, 0x00]
        #expect(respond(server, hexBytes("20 03 00 05 00")[...], connection: 0x40, mtu: 23) == cut)
        // 20 octets fill 22 of 22: no room for another length.
        server.setValue(Array(repeating: 0xAA, count: 21), of: 0x0003)
        let whole: [UInt8] = [0x21, 0x15, 0x00] + [UInt8](repeating: 0xAA, count: 20)
        #expect(respond(server, hexBytes("20 03 00 05 00")[...], connection: 0x40, mtu: 23) == whole)
    }

    @Test("Values and write decisions kept outside the table are asked for, in handle order, once each")
    func outsideAnswers() {
        let server = gapServer()
        var outside = OutsideAnswers(readHandled: [0x0003, 0x0005], writeHandled: [0x000C])
        // Read By Type on 2A00 reaches 0x0003 only.
        #expect(
            answer(server, hexBytes("08 01 00 ff ff 00 2a")[...], connection: 0x40, mtu: 23, outside: outside)
                == .needsRead(0x0003, offset: 0))
        outside.reads[0x0003] = .success([0x31, 0x32])
        #expect(
            answer(server, hexBytes("08 01 00 ff ff 00 2a")[...], connection: 0x40, mtu: 23, outside: outside)
                == .response(hexBytes("09 04 03 00 31 32")))
        // Read Multiple asks for the next value; a refusal names its handle.
        #expect(
            answer(server, hexBytes("0e 03 00 05 00")[...], connection: 0x40, mtu: 23, outside: outside)
                == .needsRead(0x0005, offset: 0))
        outside.reads[0x0005] = .failure(.insufficientResources)
        #expect(
            answer(server, hexBytes("0e 03 00 05 00")[...], connection: 0x40, mtu: 23, outside: outside)
                == .response(hexBytes("01 0e 05 00 11")))
        // Read Blob passes its offset; the table cuts the whole value there.
        var blob = OutsideAnswers(readHandled: [0x0003], writeHandled: [])
        #expect(
            answer(server, hexBytes("0c 03 00 01 00")[...], connection: 0x40, mtu: 23, outside: blob)
                == .needsRead(0x0003, offset: 1))
        blob.reads[0x0003] = .success([0x31, 0x32, 0x33])
        #expect(
            answer(server, hexBytes("0c 03 00 01 00")[...], connection: 0x40, mtu: 23, outside: blob)
                == .response(hexBytes("0d 32 33")))
        // A write is decided outside after the table's own checks; nothing is stored before.
        #expect(
            answer(server, hexBytes("12 0c 00 41")[...], connection: 0x40, mtu: 23, outside: outside)
                == .needsWriteDecision(0x000C, value: [0x41], withResponse: true))
        #expect(server.value(of: 0x000C) == [])
        outside.writes[0x000C] = .refused(.valueNotAllowed)
        #expect(
            answer(server, hexBytes("12 0c 00 41")[...], connection: 0x40, mtu: 23, outside: outside)
                == .response(hexBytes("01 12 0c 00 13")))
        #expect(
            answer(server, hexBytes("52 0c 00 41")[...], connection: 0x40, mtu: 23, outside: outside) == .response(nil))
        #expect(server.value(of: 0x000C) == [])
        outside.writes[0x000C] = .accepted
        var written: [[UInt8]] = []
        server.onWritten = { _, _, value, _ in written.append(value) }
        #expect(
            answer(server, hexBytes("12 0c 00 41")[...], connection: 0x40, mtu: 23, outside: outside)
                == .response(hexBytes("13")))
        #expect(server.value(of: 0x000C) == [0x41])
        #expect(written == [[0x41]])
    }

    @Test("Other requests are Request Not Supported; commands and non-requests get no answer")
    func unsupported() {
        let server = gapServer()
        #expect(ask(server, "02 17 00") == "01 02 00 00 06")
        // Prepared writes are served (below): a read-only value refuses its part, an empty
        // queue executes to nothing.
        #expect(ask(server, "16 03 00 00 00 41") == "01 16 03 00 03")
        #expect(ask(server, "18 01") == "19")
        #expect(ask(server, "30 01 02") == "01 30 00 00 06")
        #expect(ask(server, "3f") == "01 3f 00 00 06")
        // Commands: the 0x40 bit.
        #expect(ask(server, "70 01 02") == nil)
        #expect(ask(server, "d2 0c 00 41 01 00 00 00 a0 a1 a2 a3 a4 a5 a6 a7") == nil)
        #expect(server.value(of: 0x000C) == [])
        // Responses, notifications, indications and confirmations are the client side's.
        for opcode: UInt8 in [
            0x01, 0x03, 0x05, 0x07, 0x09, 0x0B, 0x0D, 0x0F, 0x11, 0x13, 0x17, 0x19, 0x1B, 0x1D,
            0x1E, 0x21, 0x23,
        ] {
            #expect(respond(server, [opcode, 0x01, 0x00][...], connection: 0x40, mtu: 23) == nil, "\(opcode)")
        }
        #expect(respond(server, [][...], connection: 0x40, mtu: 23) == nil)
    }

    @Test("An empty table finds nothing")
    func emptyTable() {
        let server = AttributeServer()
        #expect(ask(server, "10 01 00 ff ff 00 28") == "01 10 01 00 0a")
        #expect(ask(server, "08 01 00 ff ff 03 28") == "01 08 01 00 0a")
        #expect(ask(server, "04 01 00 ff ff") == "01 04 01 00 0a")
        #expect(ask(server, "06 01 00 ff ff 00 28 00 18") == "01 06 01 00 0a")
        #expect(ask(server, "0a 01 00") == "01 0a 01 00 01")
    }

    @Test("Works through the ATTServer protocol")
    func existential() throws {
        let server: any ATTServer = gapServer()
        let bearer = ATTBearer(connection: 0x40, logger: .silent) { (_: [UInt8]) throws(HCIError) in }
        #expect(
            server.respond(to: try ATTRequest(decoding: hexBytes("0a 05 00")[...]), on: bearer) == [0x0B, 0x00, 0x00])
    }
}
