import BluetoothCore
import HCI
import HCITestSupport
import L2CAP
import Testing

/// The L2CAP layer over the scripted controller: fragments of several links interleaved,
/// broken frames dropped without losing the next, signaling answered.
@Suite @BluetoothActor
struct L2CAPChannelsTests {
    struct Link {
        let fake: FakeController
        let controller: HCIController
        let l2cap: L2CAPChannels
    }

    /// A running controller with connections on handles 0x40 and 0x41 (announced by LE
    /// Connection Complete) and an ATT handler that records what it gets.
    func link(_ received: @escaping (ConnectionHandle, [UInt8]) -> Void) async throws -> Link {
        let fake = FakeController()
        let controller = HCIController(transport: fake, configuration: .init(logger: .silent))
        try await controller.start()
        let l2cap = L2CAPChannels(controller: controller, logger: .silent)
        l2cap.setHandler(for: .att) { link, payload in received(link.handle, Array(payload)) }
        for handle: ConnectionHandle in [0x40, 0x41] {
            let parameters: [UInt8] =
                [0x00, UInt8(handle.rawValue), 0x00, 0x00, 0x01] + BluetoothAddress("F0:0D:B1:E7:00:01")!.bytes
                + [0x18, 0x00, 0x00, 0x00, 0x90, 0x01, 0x00]
            fake.deliverEvent(.leMeta(LEMetaEvent(subeventCode: 0x01, parameters: parameters[...])))
        }
        try await controller.send(ReadBDADDR())
        #expect(controller.links.count == 2)
        return Link(fake: fake, controller: controller, l2cap: l2cap)
    }

    func acl(_ handle: ConnectionHandle, _ boundary: ACLPacketBoundary, _ bytes: [UInt8]) -> HCIPacket {
        .acl(ACLDataPacket(handle: handle, boundary: boundary, data: bytes[...]))
    }

    /// Delivers packets and waits until they are handled (a command round trip).
    func deliver(_ link: Link, _ packets: [HCIPacket]) async throws {
        link.fake.deliver(.packets(packets))
        try await link.controller.send(ReadBDADDR())
    }

    @Test func interleavedHandlesReassembleSeparately() async throws {
        var got: [(ConnectionHandle, [UInt8])] = []
        let link = try await link { got.append(($0, $1)) }
        let a = BasicFrame(channel: .att, payload: Array(0..<40)[...]).fragments(handle: 0x40, bufferLength: 16)
        let b = BasicFrame(channel: .att, payload: Array(100..<130)[...]).fragments(handle: 0x41, bufferLength: 20)
        #expect(a.count == 3 && b.count == 2)
        // a0 b0 a1 b1 a2: each handle's PDU completes only with its own fragments.
        try await deliver(link, [.acl(a[0]), .acl(b[0]), .acl(a[1]), .acl(b[1]), .acl(a[2])])
        #expect(got.count == 2)
        #expect(got.first { $0.0 == 0x40 }?.1 == Array(0..<40))
        #expect(got.first { $0.0 == 0x41 }?.1 == Array(100..<130))
        link.controller.close()
    }

    @Test func badFramesAreDroppedAndTheNextOneArrives() async throws {
        var got: [[UInt8]] = []
        let link = try await link { got.append($1) }
        try await deliver(
            link,
            [
                acl(0x40, .continuing, [0x01, 0x02]),  // continuation without start
                acl(0x40, .firstFlushable, [0x02, 0x00, 0x04, 0x00, 0x0A, 0x0B, 0x0C]),  // longer than declared
                acl(0x40, .firstFlushable, [0x05, 0x00, 0x04, 0x00, 0x01]),  // start of 5 ...
                acl(0x40, .continuing, [0x02, 0x03, 0x04, 0x05, 0x06]),  // ... overflowed by 5 more
                // a good frame abandons the partial one
                acl(0x40, .firstFlushable, [0x02, 0x00, 0x04, 0x00, 0xAA, 0xBB]),
                acl(0x0EDC, .firstFlushable, [0x01, 0x00, 0x04, 0x00, 0x0A]),  // never connected: ignored
            ])
        #expect(got == [[0xAA, 0xBB]])
        #expect(link.l2cap.droppedFrames == 4)
        #expect(link.l2cap.pendingReassemblies == 0)
        link.controller.close()
    }

    @Test func outgoingFramesAreFragmentedToTheBufferSize() async throws {
        let link = try await link { _, _ in }
        try link.l2cap.send(Array(repeating: 0x5A, count: 60), on: .att, handle: 0x40)
        let sent = link.fake.sentACL
        #expect(sent.map(\.data.count) == [27, 27, 10])
        #expect(sent.map(\.boundary) == [.firstNonFlushable, .continuing, .continuing])
        var reassembler = Reassembler()
        let frame = sent.compactMap { reassembler.append($0).frame }.first
        #expect(frame == BasicFrame(channel: .att, payload: ArraySlice(repeating: 0x5A, count: 60)))
        link.controller.close()
    }

    @Test func signalingAnswersParameterRequestsAndRejectsTheUnknown() async throws {
        let link = try await link { _, _ in }
        let request = SignalingCommand(
            code: .connectionParameterUpdateRequest, identifier: 7,
            data: ConnectionParameterUpdateRequest(
                parameters: .init(intervalMin: 80, intervalMax: 80, latency: 0, supervisionTimeout: 600)
            ).encoded())
        let invalid = SignalingCommand(
            code: .connectionParameterUpdateRequest, identifier: 8,
            data: ConnectionParameterUpdateRequest(
                parameters: .init(intervalMin: 80, intervalMax: 40, latency: 0, supervisionTimeout: 600)
            ).encoded())
        let unknown = SignalingCommand(code: SignalingCode(rawValue: 0x7E), identifier: 9, data: [1, 2])
        for command in [request, invalid, unknown] {
            let frame = BasicFrame(channel: .leSignaling, payload: command.encoded()[...])
            try await deliver(link, frame.fragments(handle: 0x40, bufferLength: 27).map { .acl($0) })
        }
        try await link.controller.send(ReadBDADDR())
        var reassembler = Reassembler()
        let replies = link.fake.sentACL.compactMap { reassembler.append($0).frame }.map {
            try? SignalingCommand(decoding: $0.payload)
        }
        #expect(
            replies == [
                SignalingCommand(code: .connectionParameterUpdateResponse, identifier: 7, data: [0x00, 0x00]),
                SignalingCommand(code: .connectionParameterUpdateResponse, identifier: 8, data: [0x01, 0x00]),
                SignalingCommand(code: .commandReject, identifier: 9, data: [0x00, 0x00]),
            ])
        // Only the accepted request became an LE Connection Update, with its parameters.
        let updates = link.fake.sent.filter {
            if case let .command(command) = $0 { command.opcode == LEConnectionUpdate.opcode } else { false }
        }
        #expect(
            updates == [
                .command(
                    LEConnectionUpdate(
                        handle: 0x40,
                        parameters: .init(intervalMin: 80, intervalMax: 80, latency: 0, supervisionTimeout: 600)
                    ).packet)
            ])
        link.controller.close()
    }

    @Test func signalingAsksTheParameterPolicy() async throws {
        let link = try await link { _, _ in }
        var asked: [ConnectionHandle] = []
        link.l2cap.acceptParameters = { handle, _ in
            asked.append(handle)
            return false
        }
        let request = SignalingCommand(
            code: .connectionParameterUpdateRequest, identifier: 7,
            data: ConnectionParameterUpdateRequest(
                parameters: .init(intervalMin: 80, intervalMax: 80, latency: 0, supervisionTimeout: 600)
            ).encoded())
        let frame = BasicFrame(channel: .leSignaling, payload: request.encoded()[...])
        try await deliver(link, frame.fragments(handle: 0x41, bufferLength: 27).map { .acl($0) })
        try await link.controller.send(ReadBDADDR())
        var reassembler = Reassembler()
        let replies = link.fake.sentACL.compactMap { reassembler.append($0).frame }.map {
            try? SignalingCommand(decoding: $0.payload)
        }
        #expect(asked == [0x41])
        #expect(
            replies == [SignalingCommand(code: .connectionParameterUpdateResponse, identifier: 7, data: [0x01, 0x00])])
        #expect(!link.fake.sentCommands.contains(LEConnectionUpdate.opcode))
        link.controller.close()
    }

    @Test func signalingCodecsRoundTrip() throws {
        let request = ConnectionParameterUpdateRequest(
            parameters: .init(intervalMin: 6, intervalMax: 3200, latency: 499, supervisionTimeout: 3200))
        #expect(request.encoded() == [0x06, 0x00, 0x80, 0x0C, 0xF3, 0x01, 0x80, 0x0C])
        #expect(try ConnectionParameterUpdateRequest(command: request.command(identifier: 3)) == request)
        #expect(
            try ConnectionParameterUpdateResponse(
                command: SignalingCommand(code: .connectionParameterUpdateResponse, identifier: 3, data: [0x01, 0x00]))
                == ConnectionParameterUpdateResponse(accepted: false))
        let command = SignalingCommand(code: .connectionParameterUpdateRequest, identifier: 3, data: request.encoded())
        #expect(try SignalingCommand(decoding: command.encoded()[...]) == command)
        #expect(throws: DecodingError.self) { try SignalingCommand(decoding: command.encoded().dropLast()) }
        #expect(throws: DecodingError.self) {
            try ConnectionParameterUpdateResponse(
                command: SignalingCommand(code: .connectionParameterUpdateResponse, identifier: 3, data: [0x02, 0x00]))
        }
        // The timeout must exceed (1 + latency) × interval × 2.
        #expect(
            !LEConnectionRequest(intervalMin: 3200, intervalMax: 3200, latency: 499, supervisionTimeout: 3200).isValid)
        #expect(LEConnectionRequest().isValid)
    }
}
