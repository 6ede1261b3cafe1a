import BluetoothCore

/// Reading the packets a broker sends out of the bytes received (MQTT 3.1.1, section 2.2 and
/// each packet's section).
extension MQTTPacket {
    /// A packet the broker sent that breaks MQTT 3.1.1: the connection cannot go on.
    struct MalformedPacket: Error, Equatable, CustomStringConvertible {
        var description: String
    }

    /// The packet at the start of `bytes`, and how many bytes it took; nil while it is not
    /// all there yet.
    static func decode(_ bytes: ArraySlice<UInt8>) throws(MalformedPacket) -> (packet: MQTTPacket, size: Int)? {
        guard let first = bytes.first else { return nil }
        // The Remaining Length: at most four bytes, seven bits each (2.2.3).
        var length = 0, shift = 0, index = bytes.startIndex + 1
        while true {
            guard index < bytes.endIndex else { return nil }
            let byte = bytes[index]
            length |= Int(byte & 0x7F) << shift
            index += 1
            if byte & 0x80 == 0 { break }
            shift += 7
            guard shift < 28 else { throw MalformedPacket(description: "a Remaining Length longer than four bytes") }
        }
        guard bytes.endIndex - index >= length else { return nil }
        let body = bytes[index..<index + length]
        let packet = try decode(type: first >> 4, flags: first & 0x0F, body: body)
        return (packet, index + length - bytes.startIndex)
    }

    private static func decode(type: UInt8, flags: UInt8, body: ArraySlice<UInt8>) throws(MalformedPacket) -> MQTTPacket
    {
        var reader = ByteReader(body)
        switch type {
        case 2:
            try reader.expectCount(2, of: "CONNACK")
            return .connack(sessionPresent: try reader.field("CONNACK") & 1 != 0, code: try reader.field("CONNACK"))
        case 3:
            let qos = flags >> 1 & 3
            guard qos < 2 else {
                throw MalformedPacket(description: "a PUBLISH at QoS \(qos) (we subscribe at QoS 1 at most)")
            }
            let topic = try reader.string("PUBLISH's topic")
            let id = qos > 0 ? try reader.identifier("PUBLISH's packet identifier") : nil
            return .publish(
                Publish(
                    topic: topic, payload: Array(reader.readRest()), qos: qos, retain: flags & 1 != 0,
                    duplicate: flags & 8 != 0, id: id))
        case 4:
            try reader.expectCount(2, of: "PUBACK")
            return .puback(id: try reader.identifier("PUBACK"))
        case 9:
            let id = try reader.identifier("SUBACK's packet identifier")
            return .suback(id: id, codes: Array(reader.readRest()))
        case 11:
            try reader.expectCount(2, of: "UNSUBACK")
            return .unsuback(id: try reader.identifier("UNSUBACK"))
        case 13: return .pingresp
        default:
            throw MalformedPacket(
                description: "a control packet of type \(type), which a broker does not send to this client")
        }
    }
}

/// MQTT's fields on the stack's byte reader: big-endian, where Bluetooth's are little-endian.
extension ByteReader {
    /// One byte of `what`.
    fileprivate mutating func field(_ what: String) throws(MQTTPacket.MalformedPacket) -> UInt8 {
        do throws(DecodingError) { return try readUInt8() } catch {
            throw MQTTPacket.MalformedPacket(description: "\(what) cut short")
        }
    }

    /// A Two Byte Integer (1.5.2): most significant byte first.
    fileprivate mutating func identifier(_ what: String) throws(MQTTPacket.MalformedPacket) -> UInt16 {
        do throws(DecodingError) { return try readUInt16().byteSwapped } catch {
            throw MQTTPacket.MalformedPacket(description: "\(what) cut short")
        }
    }

    /// A UTF-8 encoded string (1.5.3); bytes that are not UTF-8 are shown as U+FFFD.
    fileprivate mutating func string(_ what: String) throws(MQTTPacket.MalformedPacket) -> String {
        let count = Int(try identifier(what))
        do throws(DecodingError) { return String(decoding: try readBytes(count), as: UTF8.self) } catch {
            throw MQTTPacket.MalformedPacket(description: "\(what) cut short")
        }
    }

    /// A packet whose body is exactly `count` bytes.
    fileprivate func expectCount(_ count: Int, of what: String) throws(MQTTPacket.MalformedPacket) {
        guard self.count == count else {
            throw MQTTPacket.MalformedPacket(description: "a \(what) of \(self.count) bytes (\(count) expected)")
        }
    }
}
