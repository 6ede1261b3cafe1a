import BluetoothCore
import HCI
import HCITestSupport
import Testing

// btsnoop files: what BTSnoopWriter writes reads back; captures cut off mid-record keep
// every whole record; the 1001 and 2001 datalinks other tools write decode to the right
// packet types and directions; headers that are not btsnoop v1 are errors.

/// A btsnoop file header: magic, version, datalink (all big-endian).
private func header(version: UInt32 = 1, datalink: UInt32) -> [UInt8] {
    var writer = ByteWriter(prefix: Array("btsnoop".utf8) + [0])
    writer.writeBigEndian(version)
    writer.writeBigEndian(datalink)
    return writer.bytes
}

/// One record: original and included length, flags, drops, timestamp, then the data.
private func record(
    _ data: [UInt8], flags: UInt32, timestamp: Int64 = 0x00E2_5F9B_0A2F_4240,
    originalLength: Int? = nil
) -> [UInt8] {
    var writer = ByteWriter()
    writer.writeBigEndian(UInt32(originalLength ?? data.count))
    writer.writeBigEndian(UInt32(data.count))
    writer.writeBigEndian(flags)
    writer.writeBigEndian(UInt32(0))
    writer.writeBigEndian(timestamp)
    writer.write(bytes: data)
    return writer.bytes
}

/// The type and bytes of a record that holds a packet.
private func packet(_ record: BTSnoopRecord) -> (H4PacketType, [UInt8])? {
    if case let .packet(type, body) = record.content { (type, Array(body)) } else { nil }
}

@Suite("btsnoop")
struct BTSnoopTests {
    static let reset = HCIPacket.command(HCICommandPacket(opcode: Reset.opcode))
    static let resetComplete = HCIPacket.event(HCIEventPacket(code: 0x0E, parameters: bytes("01 03 0c 00")[...]))
    static let aclOut = HCIPacket.acl(
        ACLDataPacket(handle: 0x40, boundary: .firstNonFlushable, data: bytes("03 00 04 00 0a 01 00")[...]))
    static let aclIn = HCIPacket.acl(
        ACLDataPacket(handle: 0x40, boundary: .firstFlushable, data: bytes("03 00 04 00 0b 2a 00")[...]))

    @Test("What BTSnoopWriter writes, BTSnoopFile reads back (datalink 1002)")
    func writeAndRead() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove(files: ["capture.btsnoop"]) }
        let path = directory.file("capture.btsnoop")

        let before = btsnoopNow()
        let writer = try BTSnoopWriter(path: path)
        #expect(writer.path == path)
        writer.write(Self.reset, direction: .sent)
        writer.write(Self.resetComplete, direction: .received)
        writer.write(Self.aclOut, direction: .sent)
        writer.write(Self.aclIn, direction: .received)
        writer.write(h4: bytes("04 10 01 2a")[...], direction: .received, timestamp: 0x00E2_5F9B_0A2F_4240)
        let after = btsnoopNow()
        writer.close()
        writer.write(Self.reset, direction: .sent)  // ignored after close

        let file = try BTSnoopFile(path: path)
        #expect(file.datalink == .hciUART)
        #expect(file.truncatedTail == nil)
        #expect(file.records.count == 5)
        let numbers: [Int] = [1, 2, 3, 4, 5]
        #expect(file.records.map(\.number) == numbers)
        let directions: [BTSnoop.Direction] = [.sent, .received, .sent, .received, .received]
        #expect(file.records.map(\.direction) == directions)
        // Bit 0: received; bit 1: command or event.
        let flags: [UInt32] = [2, 3, 0, 1, 3]
        #expect(file.records.map(\.flags) == flags)
        let packets: [(H4PacketType, [UInt8])] = file.records.compactMap(packet)
        let types: [H4PacketType] = [.command, .event, .acl, .acl, .event]
        #expect(packets.map(\.0) == types)
        let written: [HCIPacket] = [Self.reset, Self.resetComplete, Self.aclOut, Self.aclIn]
        for (index, original) in written.enumerated() {
            #expect(try HCIPacket(type: packets[index].0, body: packets[index].1[...]) == original)
            #expect(file.records[index].originalLength == original.encodeH4().count)
        }
        let earliest: Int64 = before - 1_000_000, latest: Int64 = after + 1_000_000
        for record in file.records.prefix(4) {
            #expect(
                record.timestamp >= earliest && record.timestamp <= latest,
                "timestamp \(record.timestamp) within a second of now")
        }
        #expect(file.records[4].timestamp == 0x00E2_5F9B_0A2F_4240)

        // The header, byte for byte: "btsnoop\0", version 1, datalink 1002.
        let raw = try readWholeFile(path)
        let fileHeader: [UInt8] = bytes("62 74 73 6e 6f 6f 70 00 00 00 00 01 00 00 03 ea")
        #expect(Array(raw.prefix(16)) == fileHeader)
        let recordHeader: [UInt8] = bytes("00 00 00 04 00 00 00 04 00 00 00 02")
        #expect(Array(raw[16..<40].prefix(12)) == recordHeader)
    }

    @Test("A capture cut off anywhere keeps every whole record and says it was cut")
    func truncatedCapture() throws {
        let records = [
            record(Self.reset.encodeH4(), flags: 2),
            record(Self.resetComplete.encodeH4(), flags: 3),
            record(Self.aclIn.encodeH4(), flags: 1),
        ]
        let whole = header(datalink: 1002) + records.flatMap { $0 }
        var boundaries: [Int: Int] = [16: 0]  // file length → whole records in it
        var end = 16
        for (index, record) in records.enumerated() {
            end += record.count
            boundaries[end] = index + 1
        }
        var wholeCount = 0
        for length in 16...whole.count {
            let file = try BTSnoopFile(bytes: Array(whole.prefix(length)))
            if let count = boundaries[length] {
                wholeCount = count
                #expect(file.truncatedTail == nil, "cut at a record boundary (\(length) bytes)")
            } else {
                #expect(file.truncatedTail != nil, "cut inside a record (\(length) bytes)")
            }
            #expect(file.records.count == wholeCount, "\(length) bytes")
        }
        let cut = try BTSnoopFile(bytes: Array(whole.dropLast(3)))
        #expect(cut.truncatedTail == "record 3: 12 byte(s) announced, 9 left")
        let cutInHeader = try BTSnoopFile(bytes: Array(whole.prefix(16 + records[0].count + 10)))
        #expect(cutInHeader.truncatedTail == "record 2: 10 byte(s) left, a record header has 24")
    }

    @Test("Datalink 1001: no indicator; flags give direction and command/event vs ACL")
    func datalink1001() throws {
        let file = try BTSnoopFile(
            bytes: header(datalink: 1001)
                + record(bytes("03 0c 00"), flags: 2)
                + record(bytes("0e 04 01 03 0c 00"), flags: 3)
                + record(bytes("40 00 07 00 03 00 04 00 0a 01 00"), flags: 0)
                + record(bytes("40 20 07 00 03 00 04 00 0b 2a 00"), flags: 1))
        #expect(file.datalink == .hciUnencapsulated)
        #expect(file.records.map(\.direction) == [.sent, .received, .sent, .received])
        let packets = file.records.compactMap(packet)
        #expect(packets.map(\.0) == [.command, .event, .acl, .acl])
        #expect(
            packets.map(\.1) == [
                bytes("03 0c 00"), bytes("0e 04 01 03 0c 00"),
                bytes("40 00 07 00 03 00 04 00 0a 01 00"), bytes("40 20 07 00 03 00 04 00 0b 2a 00"),
            ])
        for (type, body) in packets { _ = try HCIPacket(type: type, body: body[...]) }
    }

    @Test("Datalink 2001 (btmon): the opcode in the flags gives type and direction")
    func datalink2001() throws {
        let file = try BTSnoopFile(
            bytes: header(datalink: 2001)
                + record(bytes("03 0c 00"), flags: 2)  // command
                + record(bytes("0e 04 01 03 0c 00"), flags: 3)  // event
                + record(bytes("40 00 01 00 99"), flags: 4)  // ACL TX
                + record(bytes("40 20 01 00 98"), flags: 0x0001_0005)  // ACL RX on hci1
                + record(Array("Bluetooth subsystem".utf8), flags: 0x0001_000C))  // system note on hci1
        #expect(file.datalink == .linuxMonitor)
        #expect(file.records.map(\.direction) == [.sent, .received, .sent, .received, .received])
        let packets = file.records.compactMap(packet)
        #expect(packets.map(\.0) == [.command, .event, .acl, .acl])
        #expect(packets[3].1 == bytes("40 20 01 00 98"))
        guard case let .monitor(opcode, index, data) = file.records[4].content else {
            Issue.record("the system note is not a monitor record")
            return
        }
        #expect(opcode == 12)
        #expect(index == 1)
        #expect(String(decoding: data, as: UTF8.self) == "Bluetooth subsystem")
    }

    @Test("Datalink 1002: a first byte that is no packet type is kept, not dropped")
    func unknownType() throws {
        let file = try BTSnoopFile(
            bytes: header(datalink: 1002) + record(bytes("09 01 02"), flags: 1) + record([], flags: 0))
        guard case let .unknownType(byte, rest) = file.records[0].content,
            case .unknownType(0, let empty) = file.records[1].content
        else {
            Issue.record("expected unknown types")
            return
        }
        #expect(byte == 0x09)
        #expect(Array(rest) == bytes("01 02"))
        #expect(empty.isEmpty)
    }

    @Test("Timestamps are microseconds since year 0")
    func timestamps() throws {
        // 2017-12-13 00:00:00 UTC is Unix 1513123200.
        let unix: Int64 = 1_513_123_200_000_000
        let file = try BTSnoopFile(
            bytes: header(datalink: 1002)
                + record(bytes("01 03 0c 00"), flags: 2, timestamp: unix + 0x00DC_DDB3_0F2F_8000, originalLength: 9))
        #expect(file.records[0].unixMicroseconds == unix)
        #expect(file.records[0].originalLength == 9)
    }

    @Test("A corrupt timestamp with its top bit set converts without trapping")
    func corruptTimestamp() throws {
        let file = try BTSnoopFile(
            bytes: header(datalink: 1002)
                + record(bytes("01 03 0c 00"), flags: 2, timestamp: .min)
                + record(bytes("01 03 0c 00"), flags: 2, timestamp: .max))
        #expect(file.records[0].timestamp == .min)
        #expect(file.records[0].unixMicroseconds == .min)
        #expect(file.records[1].unixMicroseconds == .max - 0x00DC_DDB3_0F2F_8000)
    }

    @Test("Bad magic, version or datalink are errors that say which")
    func badHeaders() {
        #expect(throws: BTSnoopError.notBTSnoop("only 0 bytes, a header has 16")) { try BTSnoopFile(bytes: []) }
        #expect(throws: BTSnoopError.notBTSnoop("only 15 bytes, a header has 16")) {
            try BTSnoopFile(bytes: Array(header(datalink: 1002).prefix(15)))
        }
        var magic = header(datalink: 1002)
        magic[6] = UInt8(ascii: "q")
        #expect(throws: BTSnoopError.notBTSnoop("bad magic 62 74 73 6e 6f 6f 71 00")) { try BTSnoopFile(bytes: magic) }
        #expect(throws: BTSnoopError.unsupportedVersion(2)) {
            try BTSnoopFile(bytes: header(version: 2, datalink: 1002))
        }
        #expect(throws: BTSnoopError.unsupportedDatalink(1003)) { try BTSnoopFile(bytes: header(datalink: 1003)) }
        #expect(throws: BTSnoopError.unsupportedDatalink(201)) { try BTSnoopFile(bytes: header(datalink: 201)) }
        #expect(BTSnoopError.unsupportedDatalink(1003).description.contains("1003"))
    }

    @Test("A missing file is unreadable with ENOENT")
    func missingFile() {
        #expect(throws: BTSnoopError.unreadable(path: "/nonexistent/x.btsnoop", errno: 2)) {
            try BTSnoopFile(path: "/nonexistent/x.btsnoop")
        }
        #expect(BTSnoopError.unreadable(path: "/x", errno: 2).description.hasPrefix("cannot read /x: ENOENT"))
    }

    @Test("An empty btsnoop file has no records and no truncation")
    func headerOnly() throws {
        let file = try BTSnoopFile(bytes: header(datalink: 1002))
        #expect(file.records.isEmpty)
        #expect(file.truncatedTail == nil)
    }

    @Test("The writer reports a path it cannot create")
    func unwritable() {
        #expect(throws: TransportError.captureFailed(path: "/nonexistent/dir/x.btsnoop", errno: 2)) {
            _ = try BTSnoopWriter(path: "/nonexistent/dir/x.btsnoop")
        }
    }
}
