import Testing

@testable import Gateway

/// MQTT 3.1.1's packets as the client writes and reads them (OASIS MQTT Version 3.1.1:
/// the Remaining Length's table 2.4, each packet's figures in section 3).
struct MQTTPacketTests {
    static func bytes(_ packet: MQTTPacket) -> [UInt8] {
        var out: [UInt8] = []
        packet.encode(into: &out)
        return out
    }

    /// Table 2.4's boundaries, through a QoS 0 PUBLISH to topic "t" whose Remaining Length is
    /// each of them (2 + 1 + the payload).
    @Test(
        arguments: [
            (0x7F, [0x7F]), (0x80, [0x80, 0x01]), (16_383, [0xFF, 0x7F]), (16_384, [0x80, 0x80, 0x01]),
            (2_097_151, [0xFF, 0xFF, 0x7F]), (2_097_152, [0x80, 0x80, 0x80, 0x01]),
        ] as [(Int, [UInt8])])
    func remainingLengthFollowsTable2_4(length: Int, encoded: [UInt8]) throws {
        let publish = MQTTPacket.publish(
            .init(topic: "t", payload: [UInt8](repeating: 7, count: length - 3), qos: 0, retain: false))
        let out = Self.bytes(publish)
        #expect(out.first == 0x30)
        #expect(Array(out[1..<1 + encoded.count]) == encoded)
        #expect(out.count == 1 + encoded.count + length)
        let decoded = try #require(try MQTTPacket.decode(out[...]))
        #expect(decoded.packet == publish && decoded.size == out.count)
        #expect(try MQTTPacket.decode(out.dropLast()) == nil, "not all there yet")
    }

    /// CONNECT's layout (3.1): protocol name and level 4, the flags, the keepalive, then the
    /// client id, the will, the user name and the password, in that order.
    @Test func connectIsLaidOutAsSection3_1() {
        let connect = MQTTPacket.connect(
            .init(
                clientID: "gw", cleanSession: true, keepAlive: 60,
                will: .init(topic: "s", payload: Array("off".utf8), qos: 1, retain: true), username: "u", password: "p")
        )
        // Protocol name and level, flags (user name, password, will retain, will QoS 1, will,
        // clean session), keepalive; then client id, will topic, will message, user, password.
        // (Joined, not added: Swift 6.0 cannot type-check the sum in time.)
        let fields: [[UInt8]] = [
            [0, 4, 0x4D, 0x51, 0x54, 0x54, 4, 0b1110_1110, 0, 60], [0, 2, 0x67, 0x77], [0, 1, 0x73],
            [0, 3, 0x6F, 0x66, 0x66], [0, 1, 0x75], [0, 1, 0x70],
        ]
        let body = Array(fields.joined())
        #expect(Self.bytes(connect) == [0x10, UInt8(body.count)] + body)
        let bare = MQTTPacket.connect(.init(clientID: "", cleanSession: false, keepAlive: 5))
        #expect(Self.bytes(bare) == [0x10, 12, 0, 4, 0x4D, 0x51, 0x54, 0x54, 4, 0, 0, 5, 0, 0])
    }

    /// PUBLISH at QoS 1 with retain and DUP (3.3), SUBSCRIBE's reserved flags 0010 (3.8.1),
    /// and the two-byte packets.
    @Test func publishSubscribeAndTheShortPackets() throws {
        let publish = MQTTPacket.publish(
            .init(topic: "a/b", payload: [1, 2], qos: 1, retain: true, duplicate: true, id: 0x1234))
        #expect(Self.bytes(publish) == [0x3B, 9, 0, 3, 0x61, 0x2F, 0x62, 0x12, 0x34, 1, 2])
        #expect(try MQTTPacket.decode(Self.bytes(publish)[...])?.packet == publish)
        let subscribe = MQTTPacket.subscribe(id: 10, filters: [.init(filter: "a/#", qos: 1)])
        #expect(Self.bytes(subscribe) == [0x82, 8, 0, 10, 0, 3, 0x61, 0x2F, 0x23, 1])
        #expect(Self.bytes(.puback(id: 0x0102)) == [0x40, 2, 1, 2])
        #expect(Self.bytes(.pingreq) == [0xC0, 0])
        #expect(Self.bytes(.disconnect) == [0xE0, 0])
    }

    /// What a broker sends, several packets in one read, each taken in turn.
    @Test func packetsABrokerSendsAreReadInTurn() throws {
        let sent: [[UInt8]] = [
            [0x20, 2, 1, 5], [0x40, 2, 0, 9], [0x90, 4, 0, 10, 1, 0x80], [0xB0, 2, 0, 11], [0xD0, 0],
        ]
        let stream = Array(sent.joined())
        var rest = stream[...]
        var packets: [MQTTPacket] = []
        while let (packet, size) = try MQTTPacket.decode(rest) {
            packets.append(packet)
            rest = rest.dropFirst(size)
        }
        #expect(
            packets == [
                .connack(sessionPresent: true, code: 5), .puback(id: 9), .suback(id: 10, codes: [1, 0x80]),
                .unsuback(id: 11),
                .pingresp,
            ])
        #expect(rest.isEmpty)
    }

    /// What breaks MQTT 3.1.1 is an error, named: a fifth Remaining Length byte, a QoS 2
    /// PUBLISH (never subscribed to), a packet only a client sends, a short PUBACK.
    @Test(
        arguments: [
            ([0x30, 0xFF, 0xFF, 0xFF, 0xFF, 0x01], "Remaining Length"), ([0x34, 5, 0, 1, 0x74, 0, 1], "QoS 2"),
            ([0x10, 0], "type 1"), ([0x40, 1, 0], "PUBACK of 1 bytes"), ([0x20, 3, 0, 0, 0], "CONNACK of 3 bytes"),
            ([0x30, 3, 0, 5, 0x74], "topic cut short"),
        ] as [([UInt8], String)])
    func malformedPacketsAreNamed(bytes: [UInt8], named: String) {
        #expect {
            _ = try MQTTPacket.decode(bytes[...])
        } throws: { error in
            "\(error)".contains(named)
        }
    }
}
