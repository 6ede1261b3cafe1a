import ATT
import HCI
import L2CAP
import SMP

extension FuzzTarget {
    /// A peer's ACL packets on one link: L2CAP reassembly, then LE signaling commands.
    /// Every frame that comes out, cut again into fragments of a size the input picks,
    /// must reassemble to itself without a problem.
    static let l2cap = FuzzTarget(
        name: "l2cap",
        summary: "Reassembler over a run of ACL packets, LE signaling commands, re-fragmentation",
        run: { bytes throws(FuzzFailure) in
            var reader = ByteReader(bytes)
            var reassemblers: [UInt16: Reassembler] = [:]
            let bufferLength = Int(bytes.last ?? 0) % 251 + 1
            while let packet = try? ACLDataPacket(from: &reader) {
                guard let frame = reassemblers[packet.handle, default: Reassembler()].append(packet).frame else { continue }
                try checkFrame(frame, handle: packet.handle, bufferLength: bufferLength)
                if frame.channel == .leSignaling { try checkSignaling(frame.payload) }
            }
        },
        seeds: { _, file in
            let packets = file.records.filter { $0.direction == .received }.compactMap { $0.body(of: .acl).map(Array.init) }
            return stride(from: 0, to: packets.count, by: 6).map { packets[$0..<min($0 + 6, packets.count)].flatMap { $0 } }
        },
        maximumLength: 4096)

    /// One ATT PDU from a peer, decoded by the type its opcode names.
    static let att = FuzzTarget(
        name: "att",
        summary: "Every ATT PDU type (Core Vol 3, Part F, 3.4), chosen by opcode, with round trips",
        run: { bytes throws(FuzzFailure) in
            guard let code = bytes.first, let type = ATTOpcode(rawValue: code).pduType else { return }
            try checkATT(type, bytes)
        },
        seeds: { _, file in file.frames.filter { $0.channel == .att }.map { Array($0.payload) } },
        maximumLength: 600)

    /// One SMP command from a peer. Every command has a fixed length, so a command that
    /// decodes must encode to exactly the bytes it came from.
    static let smp = FuzzTarget(
        name: "smp",
        summary: "SMPPDU decoding, exact re-encoding, and pairing-method selection from the peer's features",
        run: { bytes throws(FuzzFailure) in
            guard let pdu = try? SMPPDU(bytes: bytes) else { return }
            try expect(pdu.encoded() == bytes, "SMP \(pdu) decoded from \(bytes.hexDump) encodes to \(pdu.encoded().hexDump)")
            guard case let .pairingResponse(responder) = pdu else { return }
            for capability in IOCapability.allCases {
                let initiator = PairingFeatures(ioCapability: capability, authentication: [.bonding, .mitm, .secureConnections],
                                                initiatorKeys: [.encryptionKey, .identityKey], responderKeys: [.encryptionKey, .identityKey])
                for secureConnections in [false, true] {
                    _ = PairingMethod.select(initiator: initiator, responder: responder, secureConnections: secureConnections)
                }
            }
        },
        seeds: { _, file in file.frames.filter { $0.channel == .smp }.map { Array($0.payload) } },
        maximumLength: 100)
}

/// A frame must survive encoding, and fragmenting then reassembling.
private func checkFrame(_ frame: BasicFrame, handle: UInt16, bufferLength: Int) throws(FuzzFailure) {
    try expectRoundTrip(frame, "L2CAP frame", encode: { $0.encoded() }, decode: { bytes in
        var reader = ByteReader(bytes)
        return try BasicFrame(from: &reader)
    })
    var reassembler = Reassembler()
    var rebuilt: [BasicFrame] = []
    for fragment in frame.fragments(handle: handle, bufferLength: bufferLength) {
        let (again, problem) = reassembler.append(fragment)
        try expect(problem == nil, "fragments of \(bufferLength) bytes of \(frame) reassemble with \(problem.map { "\($0)" } ?? "")")
        if let again { rebuilt.append(again) }
    }
    try expect(rebuilt == [frame], "fragments of \(bufferLength) bytes of \(frame) reassemble to \(rebuilt)")
}

/// A signaling command, and the parameters of the ones the host answers.
private func checkSignaling(_ payload: ArraySlice<UInt8>) throws(FuzzFailure) {
    guard let command = try? SignalingCommand(payload: payload) else { return }
    try expect(command.encoded()[...] == payload, "signaling command \(command) from \(payload.hexDump) encodes to \(command.encoded().hexDump)")
    _ = command.code.description
    switch command.code {
    case .connectionParameterUpdateRequest:
        guard let request = try? ConnectionParameterUpdateRequest(data: command.data) else { return }
        try expectRoundTrip(request, "Connection_Parameter_Update_Req", encode: { $0.encoded() },
                            decode: { try ConnectionParameterUpdateRequest(data: $0) })
    case .connectionParameterUpdateResponse:
        guard let response = try? ConnectionParameterUpdateResponse(data: command.data) else { return }
        try expectRoundTrip(response, "Connection_Parameter_Update_Rsp", encode: { $0.encoded() },
                            decode: { try ConnectionParameterUpdateResponse(data: $0) })
    default:
        break
    }
}

/// Decodes `bytes` as a `P` and checks the round trip.
private func checkATT<P: ATTPDU>(_: P.Type, _ bytes: [UInt8]) throws(FuzzFailure) {
    guard let pdu = try? P(pdu: bytes[...]) else { return }
    _ = "\(pdu)"
    try expectRoundTrip(pdu, P.opcode.name, encode: { $0.encoded() }, decode: { try P(pdu: $0[...]) })
}
