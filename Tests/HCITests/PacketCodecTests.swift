import BluetoothCore
import HCI
import HCITestSupport
import Testing

// The five H4 packet types, the ACL header flags, opcodes, addresses and the byte reader,
// against the layouts of Core Vol 4, Part E, 5.4 and Part A (UART transport).

@Suite("Packet codecs")
struct PacketCodecTests {
    /// One packet of each type, with its H4 bytes typed from the specification.
    static let examples: [(HCIPacket, [UInt8])] = [
        // HCI_Reset.
        (.command(HCICommandPacket(opcode: Reset.opcode)), bytes("01 03 0c 00")),
        // Handle 0x0040, first automatically flushable (PB 0b10 → 0x2040), L2CAP ATT Read Request.
        (
            .acl(ACLDataPacket(handle: 0x0040, boundary: .firstFlushable, data: bytes("03 00 04 00 0a 01 00")[...])),
            bytes("02 40 20 07 00 03 00 04 00 0a 01 00")
        ),
        // SCO handle 0x0001, packet status flags 0, three bytes.
        (.sco(SCODataPacket(handle: 0x0001, flags: 0, data: bytes("aa bb cc")[...])), bytes("03 01 00 03 aa bb cc")),
        // Command Complete for Reset.
        (.event(HCIEventPacket(code: 0x0E, parameters: bytes("01 03 0c 00")[...])), bytes("04 0e 04 01 03 0c 00")),
        // ISO handle 0x0060, PB 0b10 (complete SDU), no timestamp: header 0x2060; 16-bit length.
        (
            .iso(ISODataPacket(handle: 0x0060, flags: 0b0010, data: bytes("01 02 03 04")[...])),
            bytes("05 60 20 04 00 01 02 03 04")
        ),
    ]

    @Test("Each packet type encodes to its H4 bytes and decodes back", arguments: 0..<5)
    func h4RoundTrip(index: Int) throws {
        let (packet, expected) = Self.examples[index]
        #expect(packet.encodeH4().hexDump == expected.hexDump)
        #expect(packet.encodeBody() == Array(expected.dropFirst()))
        #expect(packet.type.rawValue == expected[0])
        let decoded = try HCIPacket(h4: expected[...])
        #expect(decoded == packet)
        #expect(try HCIPacket(type: packet.type, body: expected.dropFirst()) == packet)
        expectEveryPrefixRejected(h4: expected)
    }

    @Test("The examples cover all five packet types")
    func allTypesCovered() {
        #expect(Set(Self.examples.map { $0.0.type }) == Set(H4PacketType.allCases))
        #expect(H4PacketType.allCases.map(\.headerLength) == [3, 4, 3, 2, 4])
        #expect(H4PacketType.allCases.map(\.description) == ["command", "acl", "sco", "event", "iso"])
    }

    @Test(
        "ACL header: 12-bit handle, 2-bit boundary, 2-bit broadcast flag",
        arguments: [ACLPacketBoundary.firstNonFlushable, .continuing, .firstFlushable, .complete], [UInt8(0), 1, 2, 3])
    func aclFlags(boundary: ACLPacketBoundary, broadcast: UInt8) throws {
        let packet = ACLDataPacket(handle: 0x0ABC, boundary: boundary, broadcast: broadcast, data: [0x5A])
        let header = UInt16(0x0ABC) | UInt16(boundary.rawValue) << 12 | UInt16(broadcast) << 14
        let expected: [UInt8] = [0x02, UInt8(header & 0xFF), UInt8(header >> 8), 0x01, 0x00, 0x5A]
        #expect(HCIPacket.acl(packet).encodeH4() == expected)
        guard case .acl(let decoded) = try HCIPacket(h4: expected[...]) else {
            Issue.record("not ACL")
            return
        }
        #expect(decoded == packet)
        #expect(decoded.handle == 0x0ABC)
        #expect(decoded.boundary == boundary)
        #expect(decoded.broadcast == broadcast)
        #expect(decoded.boundary.startsPDU == (boundary != .continuing))
    }

    @Test("ACL: handle 0x0EDC continuing with broadcast 0b10 is header 0x9edc")
    func aclHeaderBytes() throws {
        let packet = ACLDataPacket(handle: 0x0EDC, boundary: .continuing, broadcast: 0b10, data: [])
        #expect(HCIPacket.acl(packet).encodeH4() == bytes("02 dc 9e 00 00"))
        // Out-of-range values are cut to their field widths rather than corrupting others.
        let masked = ACLDataPacket(handle: 0xFEDC, boundary: .firstNonFlushable, broadcast: 0xFF, data: [])
        #expect(masked.handle == 0x0EDC)
        #expect(masked.broadcast == 0b11)
    }

    @Test("A 65535-byte ACL packet, the most a length field can say, round-trips")
    func largestACL() throws {
        let data = (0..<65535).map { UInt8(truncatingIfNeeded: $0) }
        let packet = HCIPacket.acl(ACLDataPacket(handle: 1, boundary: .firstNonFlushable, data: data[...]))
        let encoded = packet.encodeH4()
        #expect(Array(encoded.prefix(5)) == bytes("02 01 00 ff ff"))
        #expect(try HCIPacket(h4: encoded[...]) == packet)
    }

    @Test("Decoded packets are views: a packet inside a larger buffer decodes the same")
    func slices() throws {
        let buffer = bytes("ee ee 02 40 20 01 00 99 ee")
        let packet = try HCIPacket(h4: buffer[2..<8])
        #expect(packet == .acl(ACLDataPacket(handle: 0x40, boundary: .firstFlushable, data: [0x99])))
        #expect(packet.encodeH4() == Array(buffer[2..<8]))
    }

    @Test("Opcodes split into OGF and OCF")
    func opcodes() {
        let opcode = HCIOpcode(rawValue: 0x200B)
        #expect(opcode.ogf == 0x08)
        #expect(opcode.ocf == 0x00B)
        #expect(HCIOpcode(ogf: 0x08, ocf: 0x00B) == opcode)
        #expect(HCIOpcode(ogf: 0x3F, ocf: 0x061).rawValue == 0xFC61)
        #expect(HCIOpcode(rawValue: 0xFC61).isVendorSpecific)
        #expect(!opcode.isVendorSpecific)
        #expect(opcode.description == "0x200b LE_Set_Scan_Parameters")
    }
}

@Suite("Bluetooth addresses")
struct BluetoothAddressTests {
    @Test("Text is most significant byte first, wire bytes least significant first")
    func textAndBytes() throws {
        let address = try #require(BluetoothAddress("00:1A:7D:DA:71:13"))
        #expect(address.bytes == bytes("13 71 da 7d 1a 00"))
        #expect(address.description == "00:1A:7D:DA:71:13")
        #expect(BluetoothAddress(littleEndianBytes: bytes("13 71 da 7d 1a 00")) == address)
        #expect(BluetoothAddress("00:1a:7d:da:71:13") == address, "lower case is accepted")
        #expect(BluetoothAddress(address.description) == address)

        var writer = ByteWriter()
        address.encode(to: &writer)
        #expect(writer.bytes == address.bytes)
        var reader = ByteReader(writer.bytes + [0xFF])
        #expect(try BluetoothAddress(from: &reader) == address)
        #expect(reader.count == 1)
    }

    @Test("Every truncation of an address is an error")
    func truncated() {
        for length in 0..<6 {
            var reader = ByteReader(Array(repeating: 0x11, count: length))
            #expect(throws: DecodingError.truncated(needed: 6, available: length)) {
                _ = try BluetoothAddress(from: &reader)
            }
        }
    }

    @Test(
        "Malformed text is nil",
        arguments: [
            "", "00:1A:7D:DA:71", "00:1A:7D:DA:71:13:00", "0:1A:7D:DA:71:13", "000:1A:7D:DA:71:13",
            "00:1A:7D:DA:71:1G", "001A7DDA7113", "00-1A-7D-DA-71-13", "00:1A:7D:DA:71:13:", "+1:1A:7D:DA:71:13",
            "-0:1A:7D:DA:71:13", "00:1A:7D:DA: 1:13",
        ])
    func malformed(text: String) {
        #expect(BluetoothAddress(text) == nil)
    }
    @Test("An address with its type, as people write it: ADDRESS, ADDRESS/random, ADDRESS/public")
    func typedText() throws {
        let address = try #require(BluetoothAddress("C0:FF:EE:00:00:01"))
        #expect(try BluetoothAddress.parse(typed: "C0:FF:EE:00:00:01") == (address, nil))
        #expect(try BluetoothAddress.parse(typed: "c0:ff:ee:00:00:01/random") == (address, .random))
        #expect(try BluetoothAddress.parse(typed: "C0:FF:EE:00:00:01/Public") == (address, .public))
        #expect(throws: BluetoothAddress.TypedTextError.shape) {
            try BluetoothAddress.parse(typed: "C0:FF:EE:00:00:01/random/x")
        }
        #expect(throws: BluetoothAddress.TypedTextError.address("C0:FF:EE:00:00")) {
            try BluetoothAddress.parse(typed: "C0:FF:EE:00:00/random")
        }
        #expect(throws: BluetoothAddress.TypedTextError.type("")) {
            try BluetoothAddress.parse(typed: "C0:FF:EE:00:00:01/")
        }
        #expect(throws: BluetoothAddress.TypedTextError.type("Static")) {
            try BluetoothAddress.parse(typed: "C0:FF:EE:00:00:01/Static")
        }
    }
}

@Suite("Byte reader and writer")
struct ByteReaderTests {
    @Test("Little-endian fields of every width")
    func littleEndian() throws {
        var reader = ByteReader(bytes("01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f 10 11 12"))
        #expect(try reader.readUInt8() == 0x01)
        #expect(try reader.readUInt16() == 0x0302)
        #expect(try reader.readUInt24() == 0x06_0504)
        #expect(try reader.readUInt32() == 0x0A09_0807)
        #expect(try reader.readUInt64() == 0x1211_100F_0E0D_0C0B)
        #expect(reader.isAtEnd)
        try reader.expectEnd()

        var writer = ByteWriter()
        writer.write(UInt8(0x01))
        writer.write(UInt16(0x0302))
        writer.writeUInt24(0x06_0504)
        writer.write(UInt32(0x0A09_0807))
        writer.write(UInt64(0x1211_100F_0E0D_0C0B))
        #expect(writer.bytes == bytes("01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f 10 11 12"))
    }

    @Test("Big-endian fields (btsnoop)")
    func bigEndian() throws {
        var writer = ByteWriter()
        writer.writeBigEndian(UInt32(1002))
        writer.writeBigEndian(Int64(-2))
        #expect(writer.bytes == bytes("00 00 03 ea ff ff ff ff ff ff ff fe"))
        var reader = ByteReader(writer.bytes)
        #expect(try reader.readBigEndian(UInt32.self) == 1002)
        #expect(try reader.readBigEndian(Int64.self) == -2)
        #expect(throws: DecodingError.truncated(needed: 2, available: 0)) { try reader.readBigEndian(UInt16.self) }
    }

    @Test("Reading past the end says how much was needed and left")
    func truncation() {
        var reader = ByteReader(bytes("01 02 03"))
        #expect(throws: DecodingError.truncated(needed: 4, available: 3)) { try reader.readUInt32() }
        #expect(reader.count == 3, "a failed read consumes nothing")
        #expect(throws: DecodingError.truncated(needed: -1, available: 3)) { try reader.readBytes(-1) }
        #expect(throws: DecodingError.trailingBytes(3)) { try reader.expectEnd() }
        #expect(reader.readRest() == bytes("01 02 03")[...])
        #expect(throws: DecodingError.truncated(needed: 1, available: 0)) { try reader.readUInt8() }
    }

    @Test("Errors and hex read well")
    func descriptions() {
        #expect(DecodingError.truncated(needed: 2, available: 1).description == "truncated: needed 2 byte(s), 1 left")
        #expect(DecodingError.trailingBytes(3).description == "3 unexpected trailing byte(s)")
        #expect(
            DecodingError.invalidValue(field: "H4 packet type", value: 0x07).description == "invalid H4 packet type 0x7"
        )
        #expect(
            DecodingError.lengthMismatch(field: "L2CAP length", declared: 5, actual: 4).description
                == "L2CAP length says 5 byte(s) but 4 are present")
        #expect(bytes("00 0f a0 ff").hexDump == "00 0f a0 ff")
        #expect([UInt8]().hexDump == "")
        #expect(hex(UInt16(0x2b), digits: 4) == "0x002b")
        #expect(hex(UInt8(0xab), digits: 1) == "0xab")
    }
}
