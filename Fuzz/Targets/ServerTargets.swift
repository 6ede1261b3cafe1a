import ATT
import BluetoothCore
import HCI
import L2CAP
import TraceDecoding

extension FuzzTarget {
    /// A central's PDUs to our ATT server, one after another on one link.
    static let attServer = FuzzTarget(
        name: "att-server",
        summary:
            "A client's PDUs to our ATT server (discovery, reads, writes, prepared writes), each answered by the spec's rules",
        run: { bytes throws(FuzzFailure) in try runATTServer(bytes) },
        seeds: { _, file in
            // Each request a real client sent (what the server answers), alone and all of a
            // trace's in a row.
            let server = fuzzedServer()
            var client = AttributeServer.Client()
            let requests = file.frames.filter { $0.channel == .att }.map { Array($0.payload) }
                .filter {
                    $0.count < 256 && server.respond(to: $0[...], connection: 0x0040, mtu: 23, client: &client) != nil
                }
            let framed = requests.map { [UInt8(0x17)] + [UInt8($0.count)] + $0 }
            return framed.isEmpty ? [] : framed + [[UInt8(0x40)] + requests.flatMap { [UInt8($0.count)] + $0 }]
        },
        maximumLength: 2048)
}

/// The server the fuzzer talks to: a service, a readable and writable characteristic with a
/// CCCD, a long value and a value that needs encryption.
private func fuzzedServer() -> AttributeServer {
    let server = AttributeServer()
    server.add(handle: 0x0001, type: BluetoothUUID(UInt16(0x2800)), value: [0x0D, 0x18])
    server.add(handle: 0x0002, type: BluetoothUUID(UInt16(0x2803)), value: [0x3A, 0x03, 0x00, 0x37, 0x2A])
    server.add(
        handle: 0x0003, type: BluetoothUUID(UInt16(0x2A37)), value: [0x00, 0x48],
        permissions: [.read, .write, .writeWithoutResponse])
    server.add(handle: 0x0004, type: BluetoothUUID(UInt16(0x2902)), value: [0x00, 0x00], permissions: [.read, .write])
    server.add(handle: 0x0005, type: BluetoothUUID(UInt16(0x2801)), value: Array(repeating: 0xB1, count: 16))
    server.add(
        handle: 0x0006, type: BluetoothUUID(UInt16(0x2A00)), value: Array(repeating: 0x41, count: 300),
        permissions: [.read, .write])
    server.add(
        handle: 0x0007, type: BluetoothUUID(UInt16(0x2A01)), value: [1],
        permissions: [.read, .write, .readEncrypted, .writeEncrypted])
    server.maximumPreparedOctets = 1024
    return server
}

/// Input: an ATT_MTU octet (23 + its value), then PDUs, each a length octet and that many
/// octets. Every request must get exactly one PDU back, its own response or an Error
/// Response naming it, within ATT_MTU; a command or a non-request, none. Returns how many
/// PDUs were answered.
private func runATTServer(_ bytes: [UInt8]) throws(FuzzFailure) -> Int {
    guard let first = bytes.first else { return 0 }
    let mtu = 23 + Int(first)
    let server = fuzzedServer()
    var client = AttributeServer.Client()
    var index = 1, answered = 0
    while index < bytes.count {
        let length = Int(bytes[index])
        index += 1
        let pdu = bytes[index..<min(bytes.count, index + length)]
        index += length
        let response = server.respond(to: pdu, connection: 0x0040, mtu: mtu, client: &client)
        guard let opcode = pdu.first.map(ATTOpcode.init(rawValue:)) else {
            if response != nil { throw FuzzFailure("an empty PDU was answered") }
            continue
        }
        guard let response else { continue }
        answered += 1
        if opcode.isCommand { throw FuzzFailure("the command \(opcode.name) was answered") }
        if response.count > mtu {
            throw FuzzFailure("a \(response.count)-octet answer to \(opcode.name) past ATT_MTU \(mtu)")
        }
        if response.first == ATTOpcode.errorResponse.rawValue {
            guard let error = try? ErrorResponse(decoding: response[...]), error.requestOpcode == opcode else {
                throw FuzzFailure("an Error Response that does not name \(opcode.name)")
            }
        } else if response.first != opcode.rawValue &+ 1 {
            throw FuzzFailure("\(opcode.name) answered with opcode \(hex(response.first ?? 0, digits: 2))")
        }
        // Whatever a client sends, the values stay within the specification's limit.
        for attribute in server.attributes where attribute.value.count > AttributeServer.maximumValueLength {
            throw FuzzFailure("handle \(hex(attribute.handle, digits: 4)) grew to \(attribute.value.count) octets")
        }
    }
    return answered
}
