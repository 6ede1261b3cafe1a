import BluetoothCore
import HCI
import HCITestSupport
import TestTraits
import Testing

// H4 framing: whatever the chunking, the same packets come out; a byte that cannot start a
// packet, or a length no controller sends, stops the stream with an error that says where.

/// A framer's output as comparable values: each packet's H4 bytes.
private func h4(_ packets: [(H4PacketType, ArraySlice<UInt8>)]) -> [[UInt8]] {
    packets.map { [$0.0.rawValue] + $0.1 }
}

/// Feeds `stream` in random pieces of 1...9 bytes.
private func framedInPieces(_ stream: [UInt8], seed: UInt64, framer: H4Framer = H4Framer()) throws -> [[UInt8]] {
    var framer = framer
    var rng = SeededGenerator(seed: seed)
    var packets: [[UInt8]] = []
    var offset = 0
    while offset < stream.count {
        let end = min(stream.count, offset + Int.random(in: 1...9, using: &rng))
        packets += h4(try framer.append(stream[offset..<end]))
        offset = end
    }
    #expect(framer.pendingByteCount == 0)
    return packets
}

/// The controller→host packets of a recorded trace, as H4 packets in file order.
private func recordedControllerPackets() throws -> [[UInt8]] {
    let file = try Traces.file("android-pixel8-broadcom-pongbot-prepare-write.btsnoop")
    #expect(file.datalink == .hciUART)
    #expect(file.truncatedTail == nil)
    var packets: [[UInt8]] = []
    for record in file.records where record.direction == .received {
        guard case let .packet(type, body) = record.content else {
            Issue.record("record \(record.number) is not an HCI packet")
            continue
        }
        packets.append([type.rawValue] + body)
    }
    return packets
}

@Suite("H4 framing")
struct H4FramerTests {
    @Test("A recorded controller stream frames the same whole, byte by byte and in random pieces")
    func recordedStream() throws {
        let records = try recordedControllerPackets()
        // The capture has thousands of events and ACL packets from the controller.
        #expect(records.count > 4000)
        let stream = records.flatMap { $0 }

        var whole = H4Framer(acceptedTypes: [.acl, .sco, .event, .iso])
        let wholePackets = h4(try whole.append(stream))
        #expect(wholePackets == records)
        #expect(whole.pendingByteCount == 0)

        for seed: UInt64 in [1, 2, 3, 42, 0xDEAD_BEEF] {
            let pieces = try framedInPieces(stream, seed: seed)
            #expect(pieces == wholePackets, "seed \(seed)")
        }

        var single = H4Framer()
        var oneByOne: [[UInt8]] = []
        for byte in stream { oneByOne += h4(try single.append([byte])) }
        #expect(oneByOne == records)
    }

    @Test(
        "Reading into the framer frames a recorded stream the same as appending, whatever the read sizes",
        arguments: [1, 7, 300, 4096, 65536])
    func readIntoTheFramer(largestRead: Int) throws {
        let records = try recordedControllerPackets()
        let stream = records.flatMap { $0 }
        var framer = H4Framer(acceptedTypes: [.acl, .sco, .event, .iso])
        var rng = SeededGenerator(seed: UInt64(largestRead))
        var offset = 0
        var packets: [[UInt8]] = []
        while offset < stream.count {
            // A read returns anything from one byte to all the room it is given.
            let (count, framed) = try framer.read(maximum: largestRead) { buffer in
                let count = min(Int.random(in: 1...buffer.count, using: &rng), stream.count - offset)
                stream.withUnsafeBytes {
                    buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + count)]))
                }
                offset += count
                return count
            }
            #expect(count > 0)
            packets += h4(framed)
        }
        #expect(packets == records)
        #expect(framer.pendingByteCount == 0)
    }

    @Test("A read that ends the stream or fails changes nothing and returns its count")
    func readEndAndError() throws {
        var framer = H4Framer()
        #expect(try framer.append(bytes("04 0e")).isEmpty)
        for result in [0, -1] {
            let (count, packets) = try framer.read(maximum: 64) { _ in result }
            #expect(count == result)
            #expect(packets.isEmpty)
            #expect(framer.pendingByteCount == 2)
        }
        // The bytes kept from before are still in front of the next read.
        let (count, packets) = try framer.read(maximum: 64) { buffer in
            let rest = bytes("04 01 03 0c 00")
            buffer.copyBytes(from: rest)
            return rest.count
        }
        #expect(count == 5)
        #expect(h4(packets) == [bytes("04 0e 04 01 03 0c 00")])
    }

    @Test("A partial packet stays pending until its last byte")
    func pending() throws {
        var framer = H4Framer()
        #expect(try framer.append(bytes("04 0e")).isEmpty)
        #expect(framer.pendingByteCount == 2)
        #expect(try framer.append(bytes("04 01 03 0c")).isEmpty)
        #expect(framer.pendingByteCount == 6)
        let packets = try framer.append(bytes("00 04"))
        #expect(h4(packets) == [bytes("04 0e 04 01 03 0c 00")])
        #expect(framer.pendingByteCount == 1)
        #expect(try framer.append([]).isEmpty)
    }

    @Test("Zero-length packets of every type frame", arguments: H4PacketType.allCases)
    func empty(type: H4PacketType) throws {
        var framer = H4Framer()
        let packet = [type.rawValue] + [UInt8](repeating: 0, count: type.headerLength)
        #expect(h4(try framer.append(packet + packet)) == [packet, packet])
    }

    @Test(
        "A bad packet-type byte is reported at its offset after the whole packets before it",
        arguments: [UInt8(0x00), 0x07, 0xFF, 0x01])
    func badPacketType(byte: UInt8) throws {
        let good = [bytes("04 0e 04 01 03 0c 00"), bytes("02 40 20 01 00 99")]
        let offset = good[0].count + good[1].count
        let stream = good.flatMap { $0 } + [byte] + bytes("03 0c 00")
        let expected = H4FramingError.badPacketType(byte, offset: offset)
        let fromController: Set<H4PacketType> = [.acl, .sco, .event, .iso]

        // All at once: the good packets first, then the error on the next call, and forever.
        var framer = H4Framer(acceptedTypes: fromController)
        #expect(h4(try framer.append(stream)) == good)
        #expect(throws: expected) { try framer.append([]) }
        #expect(throws: expected) { try framer.append(bytes("04 0e 04 01 03 0c 00")) }

        // In pieces: the same packets, then the same error with the same offset.
        for seed: UInt64 in [7, 8, 9] {
            var pieces = H4Framer(acceptedTypes: fromController)
            var rng = SeededGenerator(seed: seed)
            var packets: [[UInt8]] = []
            var offset = 0
            var failure: H4FramingError?
            while offset < stream.count, failure == nil {
                let end = min(stream.count, offset + Int.random(in: 1...9, using: &rng))
                do { packets += h4(try pieces.append(stream[offset..<end])) } catch { failure = error }
                offset = end
            }
            if failure == nil {
                do { _ = try pieces.append([]) } catch { failure = error }
            }
            #expect(packets == good, "seed \(seed)")
            #expect(failure == expected, "seed \(seed)")
        }
    }

    @Test("A command indicator is a packet when commands are accepted")
    func commandsAccepted() throws {
        var framer = H4Framer()
        #expect(h4(try framer.append(bytes("01 03 0c 00"))) == [bytes("01 03 0c 00")])
        var controllerSide = H4Framer(acceptedTypes: [.command])
        #expect(throws: H4FramingError.badPacketType(0x04, offset: 0)) { try controllerSide.append(bytes("04 0e 00")) }
    }

    @Test("The error offset counts every byte consumed before it, across many appends")
    func offsetAcrossAppends() throws {
        var framer = H4Framer()
        let packet = bytes("02 40 20 10 00") + [UInt8](repeating: 0xAB, count: 16)
        for _ in 0..<500 { #expect(try framer.append(packet).count == 1) }
        #expect(throws: H4FramingError.badPacketType(0x00, offset: 500 * packet.count)) {
            try framer.append(bytes("00"))
        }
    }

    @Test("An ACL length over the limit is impossible")
    func impossibleACLLength() throws {
        var framer = H4Framer(maximumACLDataLength: 4096)
        // 0x1001 = 4097 bytes: the header alone is enough to know.
        #expect(try framer.append(bytes("04 0e 04 01 03 0c 00")).count == 1)
        #expect(throws: H4FramingError.impossibleLength(type: .acl, length: 4097, limit: 4096, offset: 7)) {
            try framer.append(bytes("02 40 20 01 10"))
        }
        var atLimit = H4Framer(maximumACLDataLength: 4096)
        #expect(try atLimit.append(bytes("02 40 20 00 10")).isEmpty, "4096 bytes is allowed: wait for them")
        #expect(atLimit.pendingByteCount == 5)
    }

    @Test("An ISO length with the reserved top bits set is impossible")
    func isoReservedBits() throws {
        var framer = H4Framer()
        #expect(throws: H4FramingError.impossibleLength(type: .iso, length: 0x4004, limit: 0x3FFF, offset: 0)) {
            try framer.append(bytes("05 60 20 04 40 01 02 03 04"))
        }
        var high = H4Framer()
        #expect(throws: H4FramingError.impossibleLength(type: .iso, length: 0x8000, limit: 0x3FFF, offset: 0)) {
            try high.append(bytes("05 60 20 00 80"))
        }
        var largest = H4Framer()
        #expect(try largest.append(bytes("05 60 20 ff 3f")).isEmpty, "0x3fff is the largest ISO length")
    }

    @Test("Framing errors explain themselves")
    func descriptions() {
        let bad = H4FramingError.badPacketType(0x07, offset: 12).description
        #expect(bad.contains("offset 12"))
        #expect(bad.contains("0x07"))
        let long = H4FramingError.impossibleLength(type: .acl, length: 4097, limit: 4096, offset: 3).description
        #expect(long.contains("acl packet claims 4097 bytes"))
        #expect(long.contains("4096"))
    }
}
