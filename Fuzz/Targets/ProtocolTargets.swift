import ATT
import BluetoothCore
import HCI
import L2CAP
import SMP

extension FuzzTarget {
    /// A peer's ACL packets on one link: L2CAP reassembly, then LE signaling commands,
    /// BR/EDR C-frames and the frames of dynamic channels (as K-frames, and as I- and
    /// S-frames). Every frame that comes out, cut again into fragments of a size the input
    /// picks, must reassemble to itself without a problem; a C-frame's commands must encode
    /// back to the octets they came from.
    static let l2cap = FuzzTarget(
        name: "l2cap",
        summary:
            "Reassembler over a run of ACL packets, signaling commands, dynamic channels' frames, re-fragmentation",
        run: { bytes throws(FuzzFailure) in
            var reassemblers: [ConnectionHandle: Reassembler] = [:]
            var sdus: [UInt16: SDUReassembler] = [:]
            let bufferLength = Int(bytes.last ?? 0) % 251 + 1
            var frames = 0
            for packet in aclPackets(bytes) {
                let (frame, problem) = reassemblers[packet.handle, default: Reassembler()].append(packet)
                _ = problem.map { "\($0)" }
                guard let frame else { continue }
                frames += 1
                try checkFrame(frame, handle: packet.handle, bufferLength: bufferLength)
                if frame.channel == .leSignaling { try checkSignaling(frame.payload) }
                if frame.channel == .signaling { try checkControlFrame(frame.payload) }
                if frame.channel.isDynamic {
                    _ = sdus[frame.channel.rawValue, default: SDUReassembler()].appendKFrame(frame.payload).problem.map
                    { "\($0)" }
                    // Either control field, with an FCS: whatever the octets, a result or a thrown error.
                    _ = try? ControlFieldFrame.decode(
                        frame, extendedControl: frame.payload.count % 2 == 0, hasFCS: true)
                }
            }
            return frames
        },
        seeds: { _, file in
            // Runs of at least 6 received packets, cut only before a start fragment, so each
            // seed holds whole PDUs however many fragments they took.
            var seeds: [[UInt8]] = []
            var run: [UInt8] = [], count = 0
            for record in file.records where record.direction == .received {
                guard let packet = record.body(of: .acl), packet.count >= 2 else { continue }
                let startsPDU = (packet[packet.startIndex + 1] >> 4) & 0b11 != ACLPacketBoundary.continuing.rawValue
                if startsPDU, count >= 6 {
                    seeds.append(run)
                    (run, count) = ([], 0)
                }
                run += packet
                count += 1
            }
            return run.isEmpty ? seeds : seeds + [run]
        },
        maximumLength: 4096)

    /// One ATT PDU from a peer, decoded by the type its opcode names.
    static let att = FuzzTarget(
        name: "att",
        summary: "Every ATT PDU type (Core Vol 3, Part F, 3.4), chosen by opcode, with round trips",
        run: { bytes throws(FuzzFailure) in
            guard let code = bytes.first, let type = ATTOpcode(rawValue: code).pduType else { return 0 }
            return try checkATT(type, bytes) ? 1 : 0
        },
        seeds: { _, file in file.frames.filter { $0.channel == .att }.map { Array($0.payload) } },
        maximumLength: 600)

    /// One SMP command from a peer. Every command has a fixed length, so a command that
    /// decodes must encode to exactly the bytes it came from.
    static let smp = FuzzTarget(
        name: "smp",
        summary: "SMPPDU decoding, exact re-encoding, and pairing-method selection from the peer's features",
        run: { bytes throws(FuzzFailure) in
            guard let pdu = try? SMPPDU(decoding: bytes) else { return 0 }
            try expect(
                pdu.encoded() == bytes, "SMP \(pdu) decoded from \(bytes.hexDump) encodes to \(pdu.encoded().hexDump)")
            guard case let .pairingResponse(response) = pdu else { return 1 }
            for capability in IOCapability.allCases {
                let initiator = PairingFeatures(
                    ioCapability: capability, authentication: [.bonding, .mitm, .secureConnections],
                    initiatorKeys: [.encryptionKey, .identityKey], responderKeys: [.encryptionKey, .identityKey])
                for secureConnections in [false, true] {
                    _ = PairingMethod.select(
                        initiator: initiator, responder: response.features, secureConnections: secureConnections)
                }
            }
            return 1
        },
        seeds: { _, file in file.frames.filter { $0.channel == .smp }.map { Array($0.payload) } },
        maximumLength: 100)
}

/// Cuts a run of HCI ACL data packets as a transport delivers them, one after another, each
/// its 4-octet header and the data its length field gives; stops where one is cut short.
private func aclPackets(_ bytes: [UInt8]) -> [ACLDataPacket] {
    var packets: [ACLDataPacket] = []
    var start = 0
    while bytes.count - start >= 4 {
        let end = start + 4 + (Int(bytes[start + 2]) | Int(bytes[start + 3]) << 8)
        guard end <= bytes.count else { break }
        var reader = ByteReader(bytes[start..<end])
        guard let packet = try? ACLDataPacket(from: &reader) else { break }
        packets.append(packet)
        start = end
    }
    return packets
}

/// A frame must survive encoding, and fragmenting then reassembling.
private func checkFrame(_ frame: BasicFrame, handle: ConnectionHandle, bufferLength: Int) throws(FuzzFailure) {
    try expectRoundTrip(
        frame, "L2CAP frame", encode: { $0.encoded() },
        decode: { bytes in
            var reader = ByteReader(bytes)
            return try BasicFrame(from: &reader)
        })
    var reassembler = Reassembler()
    var rebuilt: [BasicFrame] = []
    for fragment in frame.fragments(handle: handle, bufferLength: bufferLength) {
        let (again, problem) = reassembler.append(fragment)
        try expect(
            problem == nil,
            "fragments of \(bufferLength) bytes of \(frame) reassemble with \(problem.map { "\($0)" } ?? "")")
        if let again { rebuilt.append(again) }
    }
    try expect(rebuilt == [frame], "fragments of \(bufferLength) bytes of \(frame) reassemble to \(rebuilt)")
}

/// A signaling command, and the parameters of the ones the host answers.
private func checkSignaling(_ payload: ArraySlice<UInt8>) throws(FuzzFailure) {
    guard let command = try? SignalingCommand(decoding: payload) else { return }
    try expect(
        command.encoded()[...] == payload,
        "signaling command \(command) from \(payload.hexDump) encodes to \(command.encoded().hexDump)")
    try checkCommand(command)
}

/// A BR/EDR C-frame: its whole commands encode back to the frame's first octets, and each
/// decodes as its code says.
private func checkControlFrame(_ payload: ArraySlice<UInt8>) throws(FuzzFailure) {
    let frame = ControlFrame(payload: payload)
    let encoded = frame.commands.flatMap { $0.encoded() }
    try expect(
        encoded[...] == payload.prefix(encoded.count),
        "C-frame \(payload.hexDump) walks to commands encoding to \(encoded.hexDump)")
    try expect(
        frame.damaged != nil || encoded.count == payload.count,
        "C-frame \(payload.hexDump) leaves octets with no damage reported")
    for command in frame.commands {
        _ = command.code.bredrDescription
        try checkCommand(command)
    }
}

/// The data of a signaling command, as its code's declaration reads it, with a round trip.
private func checkCommand(_ command: SignalingCommand) throws(FuzzFailure) {
    _ = command.code.description
    guard let type = command.code.pduType else { return }
    try checkSignalingPDU(type, command)
}

/// Decodes `command` as a `P` under the tolerance rule, and checks that the whole command
/// it encodes to decodes strictly to the same.
private func checkSignalingPDU<P: SignalingPDU>(_: P.Type, _ command: SignalingCommand) throws(FuzzFailure) {
    guard let (pdu, _) = try? P.decodeCountingExtraOctets(command) else { return }
    _ = "\(pdu)"
    try expectRoundTrip(
        pdu, P.name, encode: { $0.command(identifier: command.identifier).encoded() },
        decode: { try P(command: SignalingCommand(decoding: $0[...])) })
}

/// Decodes `bytes` as a `P` and checks the round trip; returns whether it decoded.
private func checkATT<P: ATTPDU>(_: P.Type, _ bytes: [UInt8]) throws(FuzzFailure) -> Bool {
    guard let pdu = try? P(decoding: bytes[...]) else { return false }
    _ = "\(pdu)"
    try expectRoundTrip(pdu, P.opcode.name, encode: { $0.encoded() }, decode: { try P(decoding: $0[...]) })
    return true
}
