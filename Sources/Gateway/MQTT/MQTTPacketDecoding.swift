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
        var reader = Reader(bytes: body)
        switch type {
        case 2:
            guard body.count == 2 else {
                throw MalformedPacket(description: "a CONNACK of \(body.count) bytes (2 expected)")
            }
            return .connack(sessionPresent: body[body.startIndex] & 1 != 0, code: body[body.startIndex + 1])
        case 3:
            let qos = flags >> 1 & 3
            guard qos < 2 else {
                throw MalformedPacket(description: "a PUBLISH at QoS \(qos) (we subscribe at QoS 1 at most)")
            }
            let topic = try reader.string("PUBLISH's topic")
            let id = qos > 0 ? try reader.uint16("PUBLISH's packet identifier") : nil
            return .publish(
                Publish(
                    topic: topic, payload: Array(reader.rest), qos: qos, retain: flags & 1 != 0,
                    duplicate: flags & 8 != 0, id: id))
        case 4: return .puback(id: try reader.only16("PUBACK"))
        case 9:
            let id = try reader.uint16("SUBACK's packet identifier")
            return .suback(id: id, codes: Array(reader.rest))
        case 11: return .unsuback(id: try reader.only16("UNSUBACK"))
        case 13: return .pingresp
        default:
            throw MalformedPacket(
                description: "a control packet of type \(type), which a broker does not send to this client")
        }
    }

    /// Reads a packet's fields in order.
    private struct Reader {
        var bytes: ArraySlice<UInt8>

        var rest: ArraySlice<UInt8> { bytes }

        mutating func uint16(_ what: String) throws(MalformedPacket) -> UInt16 {
            guard bytes.count >= 2 else { throw MalformedPacket(description: "\(what) cut short") }
            let value = UInt16(bytes[bytes.startIndex]) << 8 | UInt16(bytes[bytes.startIndex + 1])
            bytes = bytes.dropFirst(2)
            return value
        }

        /// A packet that is a packet identifier and nothing else.
        mutating func only16(_ what: String) throws(MalformedPacket) -> UInt16 {
            guard bytes.count == 2 else {
                throw MalformedPacket(description: "a \(what) of \(bytes.count) bytes (2 expected)")
            }
            return try uint16(what)
        }

        /// A UTF-8 encoded string (1.5.3); bytes that are not UTF-8 are shown as U+FFFD.
        mutating func string(_ what: String) throws(MalformedPacket) -> String {
            let count = Int(try uint16(what))
            guard bytes.count >= count else { throw MalformedPacket(description: "\(what) cut short") }
            let text = String(decoding: bytes.prefix(count), as: UTF8.self)
            bytes = bytes.dropFirst(count)
            return text
        }
    }
}
