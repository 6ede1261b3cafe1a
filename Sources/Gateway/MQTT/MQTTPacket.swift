/// The MQTT 3.1.1 control packets a client sends or receives (OASIS MQTT Version 3.1.1,
/// section 3), each declared once, with their encoding and decoding. QoS 2's packets (PUBREC,
/// PUBREL, PUBCOMP) are not here: the client publishes and subscribes at QoS 1 at most, so a
/// broker never sends them (a received one is a protocol error).
enum MQTTPacket: Equatable {
    /// CONNECT (3.1): the session's start.
    case connect(Connect)
    /// CONNACK (3.2): the broker's answer; `code` 0 is accepted.
    case connack(sessionPresent: Bool, code: UInt8)
    /// PUBLISH (3.3): a message; `id` for QoS 1, nil for QoS 0.
    case publish(Publish)
    /// PUBACK (3.4): QoS 1's acknowledgement.
    case puback(id: UInt16)
    /// SUBSCRIBE (3.8): topic filters, each with its maximum QoS.
    case subscribe(id: UInt16, filters: [Subscription])
    /// SUBACK (3.9): a return code per filter (0x80 is a failure).
    case suback(id: UInt16, codes: [UInt8])
    /// UNSUBACK (3.11).
    case unsuback(id: UInt16)
    /// PINGREQ (3.12), sent when the keepalive would otherwise pass in silence.
    case pingreq
    /// PINGRESP (3.13).
    case pingresp
    /// DISCONNECT (3.14): a clean end (the broker then keeps the will to itself).
    case disconnect

    /// CONNECT's fields.
    struct Connect: Equatable {
        var clientID: String
        var cleanSession: Bool
        /// Seconds (0: none).
        var keepAlive: UInt16
        var will: Will?
        var username: String?
        var password: String?
    }

    /// The last will: published by the broker when the connection ends without DISCONNECT.
    struct Will: Equatable {
        var topic: String
        var payload: [UInt8]
        var qos: UInt8
        var retain: Bool
    }

    /// One topic filter of SUBSCRIBE, with the highest QoS it asks for.
    struct Subscription: Equatable {
        var filter: String
        var qos: UInt8
    }

    /// PUBLISH's fields.
    struct Publish: Equatable {
        var topic: String
        var payload: [UInt8]
        var qos: UInt8
        var retain: Bool
        var duplicate = false
        /// The packet identifier (QoS 1).
        var id: UInt16?
    }

    /// The largest Remaining Length (2.2.3): four bytes of seven bits.
    static let maximumRemainingLength = 268_435_455

    // MARK: Encoding

    /// Appends the packet's bytes to `out`.
    func encode(into out: inout [UInt8]) {
        switch self {
        case .connect(let connect):
            var flags: UInt8 = connect.cleanSession ? 0x02 : 0
            if let will = connect.will { flags |= 0x04 | will.qos << 3 | (will.retain ? 0x20 : 0) }
            if connect.password != nil { flags |= 0x40 }
            if connect.username != nil { flags |= 0x80 }
            var body: [UInt8] =
                [0, 4] + Array("MQTT".utf8) + [
                    4, flags, UInt8(connect.keepAlive >> 8), UInt8(connect.keepAlive & 0xFF),
                ]
            Self.append(string: connect.clientID, to: &body)
            if let will = connect.will {
                Self.append(string: will.topic, to: &body)
                Self.append(binary: will.payload, to: &body)
            }
            if let username = connect.username { Self.append(string: username, to: &body) }
            if let password = connect.password { Self.append(string: password, to: &body) }
            Self.append(type: 1, flags: 0, body: body, to: &out)
        case .publish(let publish):
            let flags = (publish.duplicate ? 0x08 : 0) | publish.qos << 1 | (publish.retain ? 1 : 0)
            let topic = publish.topic.utf8
            let length = 2 + topic.count + (publish.id == nil ? 0 : 2) + publish.payload.count
            out.append(3 << 4 | flags)
            Self.append(length: length, to: &out)
            out.append(UInt8(topic.count >> 8))
            out.append(UInt8(topic.count & 0xFF))
            out.append(contentsOf: topic)
            if let id = publish.id { Self.append(id, to: &out) }
            out.append(contentsOf: publish.payload)
        case .subscribe(let id, let filters):
            var body: [UInt8] = []
            Self.append(id, to: &body)
            for subscription in filters {
                Self.append(string: subscription.filter, to: &body)
                body.append(subscription.qos)
            }
            Self.append(type: 8, flags: 0b0010, body: body, to: &out)
        case .puback(let id): Self.append(type: 4, flags: 0, body: [UInt8(id >> 8), UInt8(id & 0xFF)], to: &out)
        case .unsuback(let id): Self.append(type: 11, flags: 0, body: [UInt8(id >> 8), UInt8(id & 0xFF)], to: &out)
        case .connack(let present, let code): Self.append(type: 2, flags: 0, body: [present ? 1 : 0, code], to: &out)
        case .suback(let id, let codes):
            Self.append(type: 9, flags: 0, body: [UInt8(id >> 8), UInt8(id & 0xFF)] + codes, to: &out)
        case .pingreq: out += [12 << 4, 0]
        case .pingresp: out += [13 << 4, 0]
        case .disconnect: out += [14 << 4, 0]
        }
    }

    private static func append(type: UInt8, flags: UInt8, body: [UInt8], to out: inout [UInt8]) {
        out.append(type << 4 | flags)
        append(length: body.count, to: &out)
        out += body
    }

    /// The Remaining Length's variable-length encoding (2.2.3).
    private static func append(length: Int, to out: inout [UInt8]) {
        var value = length
        repeat {
            var byte = UInt8(value & 0x7F)
            value >>= 7
            if value > 0 { byte |= 0x80 }
            out.append(byte)
        } while value > 0
    }

    private static func append(_ value: UInt16, to out: inout [UInt8]) {
        out.append(UInt8(value >> 8))
        out.append(UInt8(value & 0xFF))
    }

    /// A UTF-8 encoded string (1.5.3): its length in two bytes, then its bytes.
    private static func append(string: String, to out: inout [UInt8]) { append(binary: Array(string.utf8), to: &out) }

    private static func append(binary: [UInt8], to out: inout [UInt8]) {
        append(UInt16(binary.count), to: &out)
        out += binary
    }
}
