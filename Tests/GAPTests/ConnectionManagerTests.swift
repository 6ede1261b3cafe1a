import BluetoothCore
import GAP
import HCI
import HCITestSupport
import Testing

/// The connection manager over the scripted controller: what it answers when the peer's
/// link layer asks for new parameters (LE Remote Connection Parameter Request, which
/// Bumble never generates).
@Suite @BluetoothActor
struct ConnectionManagerTests {
    let peer = BluetoothAddress("F0:0D:B1:E7:00:01")!

    /// A running controller with one connection on handle 0x0040.
    func connected() async throws -> (FakeController, HCIController, ConnectionManager) {
        let fake = FakeController()
        let controller = HCIController(transport: fake, configuration: .init(logger: .silent))
        try await controller.start()
        let manager = ConnectionManager(controller: controller, logger: .silent)
        fake.deliverEvent(
            LEConnectionEvent.connectionComplete(
                status: .success, handle: 0x40, role: 0, peerAddressType: 1, peerAddress: peer,
                parameters: LEConnectionParameters(interval: 24, latency: 0, supervisionTimeout: 400)))
        try await controller.send(ReadBDADDR())
        #expect(manager.connections.keys.sorted() == [0x40])
        return (fake, controller, manager)
    }

    /// The commands the host sent with `opcode`, once `count` of them have arrived
    /// (a bounded wait: the answer is sent from a task the event starts).
    func sent(_ fake: FakeController, _ opcode: HCIOpcode, count: Int = 1) async -> [HCICommandPacket] {
        func matching() -> [HCICommandPacket] {
            fake.sent.compactMap {
                if case let .command(command) = $0, command.opcode == opcode { command } else { nil }
            }
        }
        _ = await eventually { matching().count >= count }
        return matching()
    }

    @Test func anAcceptableParameterRequestIsRepliedToAndTheUpdateApplied() async throws {
        let (fake, controller, manager) = try await connected()
        var changed: [LEConnection] = []
        manager.onParametersChanged = { changed.append($0) }
        // Interval 40–80 (50–100 ms), latency 2, timeout 6 s.
        let request = LEConnectionRequest(intervalMin: 40, intervalMax: 80, latency: 2, supervisionTimeout: 600)
        fake.deliverEvent(LEConnectionEvent.remoteConnectionParameterRequest(handle: 0x40, parameters: request))
        let replies = await sent(fake, LERemoteConnectionParameterRequestReply.opcode)
        // Handle, interval min, max, latency, timeout, min and max CE length 0.
        let replyDumps: [String] = replies.map { (reply: HCICommandPacket) -> String in
            HCIPacket.command(reply).encodeH4().hexDump
        }
        let expectedReplies: [String] = [bytes("01 20 20 0e 40 00 28 00 50 00 02 00 58 02 00 00 00 00").hexDump]
        #expect(replyDumps == expectedReplies)
        #expect(fake.sentCommands.contains(LERemoteConnectionParameterRequestNegativeReply.opcode) == false)

        // The controller then runs the procedure and reports the outcome as usual.
        fake.deliverEvent(
            LEConnectionEvent.connectionUpdateComplete(
                status: .success, handle: 0x40,
                parameters: LEConnectionParameters(interval: 60, latency: 2, supervisionTimeout: 600)))
        try await controller.send(ReadBDADDR())
        #expect(
            manager.connections[0x40]?.parameters
                == LEConnectionParameters(interval: 60, latency: 2, supervisionTimeout: 600))
        #expect(changed.map(\.parameters.interval) == [60])
        manager.close()
        controller.close()
    }

    @Test func anInvalidParameterRequestGetsTheNegativeReply() async throws {
        let (fake, controller, manager) = try await connected()
        // Interval max below min.
        let request = LEConnectionRequest(intervalMin: 80, intervalMax: 40, latency: 0, supervisionTimeout: 600)
        fake.deliverEvent(LEConnectionEvent.remoteConnectionParameterRequest(handle: 0x40, parameters: request))
        let replies = await sent(fake, LERemoteConnectionParameterRequestNegativeReply.opcode)
        // Handle, reason 0x3B Unacceptable Connection Parameters.
        let replyDumps: [String] = replies.map { (reply: HCICommandPacket) -> String in
            HCIPacket.command(reply).encodeH4().hexDump
        }
        let expectedReplies: [String] = [bytes("01 21 20 03 40 00 3b").hexDump]
        #expect(replyDumps == expectedReplies)
        #expect(fake.sentCommands.contains(LERemoteConnectionParameterRequestReply.opcode) == false)
        #expect(manager.connections[0x40]?.parameters.interval == 24)
        manager.close()
        controller.close()
    }

    @Test func theParameterPolicyDecides() async throws {
        let (fake, controller, manager) = try await connected()
        var asked: [(ConnectionHandle, LEConnectionRequest)] = []
        manager.acceptParameters = { handle, request in
            asked.append((handle, request))
            return request.latency == 0
        }
        let valid = LEConnectionRequest(intervalMin: 40, intervalMax: 80, latency: 2, supervisionTimeout: 600)
        #expect(valid.isValid)
        fake.deliverEvent(LEConnectionEvent.remoteConnectionParameterRequest(handle: 0x40, parameters: valid))
        #expect(await sent(fake, LERemoteConnectionParameterRequestNegativeReply.opcode).count == 1)
        #expect(asked.map(\.0) == [0x40])
        #expect(asked.map(\.1) == [valid])
        // A request on a handle that is not connected is refused without asking.
        fake.deliverEvent(LEConnectionEvent.remoteConnectionParameterRequest(handle: 0x41, parameters: valid))
        let refused = await sent(fake, LERemoteConnectionParameterRequestNegativeReply.opcode, count: 2)
        #expect(
            refused.compactMap { try? LERemoteConnectionParameterRequestNegativeReply(decoding: $0.parameters).handle }
                == [0x40, 0x41])
        #expect(asked.count == 1)
        manager.close()
        controller.close()
    }

    /// The link comes up and goes at once (both events in one read, before `connect`
    /// resumes): `connect` fails with the reason the controller gave, not a made-up one.
    @Test func aLinkLostAsItComesUpFailsConnectWithItsReason() async throws {
        var script = FakeController.Script()
        script.supported.append(LECreateConnection.opcode)
        let fake = FakeController(script)
        let controller = HCIController(transport: fake, configuration: .init(logger: .silent))
        try await controller.start()
        let manager = ConnectionManager(controller: controller, logger: .silent)
        let attempt = Task { @BluetoothActor in try await manager.connect(to: peer, type: .random, setUp: false) }
        #expect(await sent(fake, LECreateConnection.opcode).count == 1)
        let up = LEConnectionEvent.connectionComplete(
            status: .success, handle: 0x40, role: 0, peerAddressType: 1, peerAddress: peer,
            parameters: LEConnectionParameters(interval: 24, latency: 0, supervisionTimeout: 400))
        let down = HCIEvent.disconnectionComplete(
            DisconnectionComplete(status: .success, handle: 0x40, reason: HCIStatus(rawValue: 0x08)))
        fake.deliver(.packets([.event(HCIEvent.leMeta(up.encoded()).packet), .event(down.packet)]))
        await #expect(throws: ConnectionError.disconnected(HCIStatus(rawValue: 0x08))) { try await attempt.value }
        #expect(manager.connections.isEmpty)
        manager.close()
        controller.close()
    }
}
