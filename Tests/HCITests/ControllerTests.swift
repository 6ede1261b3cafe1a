import BluetoothCore
import HCI
import HCITestSupport
import Testing

/// The HCI controller against a scripted fake: bring-up choices, command flow control and
/// timeouts, hardware errors, ACL credits. Each test can fail: it checks what went on
/// the wire and what the host concluded.
@Suite @BluetoothActor
struct ControllerTests {
    let quiet = HCIController.Configuration(logger: .silent)

    @Test func bringUpSendsTheSequenceAndLearnsTheController() async throws {
        let fake = FakeController()
        let controller = HCIController(transport: fake, configuration: quiet)
        let info = try await controller.start()
        #expect(
            fake.sentCommands == [
                Reset.opcode, ReadLocalVersionInformation.opcode, ReadLocalSupportedCommands.opcode,
                ReadLocalSupportedFeatures.opcode, LEReadLocalSupportedFeatures.opcode, ReadBDADDR.opcode,
                SetEventMask.opcode, LESetEventMask.opcode, LEReadBufferSize.opcode, LEReadMaximumDataLength.opcode,
            ])
        #expect(info.address == BluetoothAddress("C0:FF:EE:00:00:01"))
        #expect(info.aclBuffers == .init(length: 27, count: 4, source: LEReadBufferSize.opcode))
        #expect(info.maximumDataLength?.supportedMaxTxOctets == 251)
        #expect(info.coreVersion == "5.4")
        // The LE event mask follows the features: data length change and extended reports on,
        // PHY update (no 2M/coded feature) off.
        #expect(info.leEventMask.contains(.subevent(0x07)))
        #expect(info.leEventMask.contains(.subevent(0x0D)))
        #expect(!info.leEventMask.contains(.subevent(0x0C)))
        #expect(controller.state == .running(info))
        controller.close()
        #expect(fake.isClosed)
    }

    @Test func bufferSizeFallsBackFromV2ToV1ToShared() async throws {
        // v2 supported: used, with ISO buffers.
        var script = FakeController.Script()
        script.supported.append(LEReadBufferSizeV2.opcode)
        script.leBufferV2 = (251, 12, 300, 8)
        var fake = FakeController(script)
        var controller = HCIController(transport: fake, configuration: quiet)
        var info = try await controller.start()
        #expect(info.aclBuffers == .init(length: 251, count: 12, source: LEReadBufferSizeV2.opcode))
        #expect(info.isoBuffers == .init(length: 300, count: 8, source: LEReadBufferSizeV2.opcode))
        #expect(!fake.sentCommands.contains(LEReadBufferSize.opcode))
        controller.close()

        // LE reports no dedicated buffers: the shared BR/EDR ones are used.
        script = FakeController.Script()
        script.leBuffer = (0, 0)
        fake = FakeController(script)
        controller = HCIController(transport: fake, configuration: quiet)
        info = try await controller.start()
        #expect(info.aclBuffers == .init(length: 1021, count: 8, source: ReadBufferSize.opcode))
        #expect(
            fake.sentCommands.suffix(3) == [
                LEReadBufferSize.opcode, ReadBufferSize.opcode, LEReadMaximumDataLength.opcode,
            ])
        controller.close()
    }

    @Test func rejectedLEEventMaskFallsBackToTheDefault() async throws {
        var script = FakeController.Script()
        script.failures[LESetEventMask.opcode.rawValue] = .invalidHCICommandParameters
        let fake = FakeController(script)
        let controller = HCIController(transport: fake, configuration: quiet)
        // The fake rejects every LE Set Event Mask, so the retry fails too and bring-up
        // reports the controller's status by name.
        await #expect(throws: HCIError.commandFailed(LESetEventMask.opcode, .invalidHCICommandParameters)) {
            try await controller.start()
        }
        #expect(fake.sentCommands.filter { $0 == LESetEventMask.opcode }.count == 2)
        guard case .failed = controller.state else { Issue.record("state \(controller.state)"); return }
    }

    @Test func controllerWithoutLEIsRejectedClearly() async throws {
        var script = FakeController.Script()
        script.supported.removeAll { $0 == LEReadLocalSupportedFeatures.opcode }
        let controller = HCIController(transport: FakeController(script), configuration: quiet)
        do {
            try await controller.start()
            Issue.record("bring-up should fail")
        } catch {
            #expect(error.description.contains("Bluetooth Low Energy"))
        }
    }

    @Test func commandTimeoutEndsTheCommandAndTheQueueGoesOn() async throws {
        let clock = ManualClock()
        let fake = FakeController()
        let controller = HCIController(
            transport: fake, clock: clock, configuration: .init(commandTimeout: .seconds(2), logger: .silent))
        try await controller.start()
        fake.update { $0.mute = [0xFC77] }
        let stuck = Task { @BluetoothActor in
            try await controller.send(HCICommandPacket(opcode: HCIOpcode(rawValue: 0xFC77)))
        }
        // A second command waits behind the first: the controller granted one credit.
        let behind = Task { @BluetoothActor in try await controller.send(ReadBDADDR()) }
        while clock.sleeperCount == 0 { await Task.yield() }
        #expect(fake.sentCommands.last == HCIOpcode(rawValue: 0xFC77))
        #expect(controller.commandCredits == 0)
        clock.advance(by: .seconds(1))
        #expect(fake.sentCommands.last == HCIOpcode(rawValue: 0xFC77), "nothing more is sent before the timeout")
        clock.advance(by: .seconds(1))
        await #expect(throws: HCIError.commandTimeout(HCIOpcode(rawValue: 0xFC77), seconds: 2)) {
            try await stuck.value
        }
        // After the timeout the queue moves on and the waiting command completes normally.
        let address = try await behind.value
        #expect(address.address == BluetoothAddress("C0:FF:EE:00:00:01"))
        guard case .running = controller.state else { Issue.record("a timeout must not kill the controller"); return }
        controller.close()
    }

    @Test func commandsWaitForCreditsFromTheController() async throws {
        let fake = FakeController()
        let controller = HCIController(transport: fake, configuration: quiet)
        try await controller.start()
        // The controller answers with Num_HCI_Command_Packets 0: no more commands until it
        // grants a credit with a NOP Command Complete.
        fake.update { $0.credits = 0 }
        try await controller.send(ReadBDADDR())
        #expect(controller.commandCredits == 0)
        let sentBefore = fake.sentCommands.count
        fake.update { $0.credits = 1 }
        let waiting = Task { @BluetoothActor in try await controller.send(ReadLocalVersionInformation()) }
        while controller.queuedCommandCount == 0 { await Task.yield() }
        #expect(fake.sentCommands.count == sentBefore, "sent without a credit")
        fake.deliverEvent(
            .commandComplete(
                CommandComplete(numHCICommandPackets: 1, opcode: HCIOpcode(rawValue: 0), returnParameters: [])))
        let version = try await waiting.value
        #expect(version.hciVersion == 13)
        #expect(fake.sentCommands.count == sentBefore + 1)
        controller.close()
    }

    /// A running controller with Read BD_ADDR sent and never answered.
    private func startWithUnansweredCommand() async throws
        -> (FakeController, HCIController, Task<ReadBDADDR.ReturnParameters, any Error>)
    {
        let fake = FakeController()
        let controller = HCIController(transport: fake, configuration: quiet)
        try await controller.start()
        fake.update { $0.mute = [ReadBDADDR.opcode.rawValue] }
        let pending = Task { @BluetoothActor in try await controller.send(ReadBDADDR()) }
        while !fake.sentCommands.suffix(1).contains(ReadBDADDR.opcode) { await Task.yield() }
        return (fake, controller, pending)
    }

    @Test func hardwareErrorFailsEverythingAtOnce() async throws {
        let (fake, controller, pending) = try await startWithUnansweredCommand()
        var failures: [HCIError] = []
        controller.onFailure = { failures.append($0) }
        fake.deliverEvent(.hardwareError(HardwareError(hardwareCode: 0x42)))
        await #expect(throws: HCIError.hardwareError(code: 0x42)) { try await pending.value }
        #expect(failures == [.hardwareError(code: 0x42)])
        #expect(controller.state == .failed(.hardwareError(code: 0x42)))
        await #expect(throws: HCIError.hardwareError(code: 0x42)) { try await controller.send(ReadBDADDR()) }
    }

    /// A failed controller ends its links itself; their ACL credits come back and their
    /// queued packets are dropped, as after a real Disconnection Complete, so the failed
    /// host holds nothing.
    /// The controller hands each ACL packet over with its open link, found once, so the layers
    /// above need no lookup; a packet on a handle no open link has (vendor debug data) goes
    /// nowhere.
    @Test func aclDataComesWithItsLink() async throws {
        let fake = FakeController()
        let controller = HCIController(transport: fake, configuration: quiet)
        try await controller.start()
        var delivered: [(ConnectionHandle, ObjectIdentifier)] = []
        controller.onACLData = { packet, link in delivered.append((packet.handle, ObjectIdentifier(link))) }
        fake.deliverEvent(
            LEConnectionEvent.connectionComplete(
                status: .success, handle: 0x40, role: 0, peerAddressType: 1,
                peerAddress: BluetoothAddress("F0:0D:B1:E7:00:01")!,
                parameters: LEConnectionParameters(interval: 24, latency: 0, supervisionTimeout: 400)))
        for handle: ConnectionHandle in [0x40, 0x0EDC, 0x40] {
            fake.deliver(.packets([.acl(ACLDataPacket(handle: handle, boundary: .firstFlushable, data: [1]))]))
        }
        try await controller.send(ReadBDADDR())  // a round trip: every packet above was handled
        let link = try #require(controller.link(0x40))
        #expect(delivered.map(\.0) == [0x40, 0x40])
        #expect(delivered.allSatisfy { $0.1 == ObjectIdentifier(link) })
        controller.close()
    }

    @Test func hardwareErrorReleasesTheLinksBuffers() async throws {
        let fake = FakeController()
        let controller = HCIController(transport: fake, configuration: quiet)
        try await controller.start()
        fake.deliverEvent(
            LEConnectionEvent.connectionComplete(
                status: .success, handle: 0x40, role: 0, peerAddressType: 1,
                peerAddress: BluetoothAddress("F0:0D:B1:E7:00:01")!,
                parameters: LEConnectionParameters(interval: 24, latency: 0, supervisionTimeout: 400)))
        try await controller.send(ReadBDADDR())
        for number in 0..<6 {
            try controller.sendACL(ACLDataPacket(handle: 0x40, boundary: .firstNonFlushable, data: [UInt8(number)]))
        }
        #expect(controller.aclFlow?.inFlight == 4 && controller.aclFlow?.queuedCount == 2)
        var ended: [DisconnectionComplete] = []
        _ = controller.addEventObserver { if case let .disconnectionComplete(event) = $0 { ended.append(event) } }
        fake.deliverEvent(.hardwareError(HardwareError(hardwareCode: 0x42)))
        await #expect(throws: HCIError.hardwareError(code: 0x42)) { try await controller.send(ReadBDADDR()) }
        #expect(ended == [DisconnectionComplete(status: .success, handle: 0x40, reason: .unspecifiedError)])
        #expect(controller.aclFlow?.inFlight == 0 && controller.aclFlow?.queuedCount == 0)
        #expect(fake.sentACL.count == 4, "nothing more goes to a failed controller")
        controller.close()
    }

    @Test func transportLossFailsPendingCommands() async throws {
        let (fake, controller, pending) = try await startWithUnansweredCommand()
        fake.deliver(.failed(.closedByPeer(what: "fake")))
        await #expect(throws: HCIError.transport(.closedByPeer(what: "fake"))) { try await pending.value }
        #expect(controller.state == .failed(.transport(.closedByPeer(what: "fake"))))
        #expect(fake.isClosed)
    }

    @Test func aclCreditsNeverExceedTheControllerBuffers() async throws {
        let fake = FakeController()  // 4 LE buffers of 27 bytes
        let controller = HCIController(transport: fake, configuration: quiet)
        try await controller.start()
        for (handle, peer) in [(ConnectionHandle(0x40), "F0:0D:B1:E7:00:01"), (0x41, "F0:0D:B1:E7:00:02")] {
            fake.deliverEvent(
                LEConnectionEvent.connectionComplete(
                    status: .success, handle: handle, role: 0, peerAddressType: 1,
                    peerAddress: BluetoothAddress(peer)!,
                    parameters: LEConnectionParameters(interval: 24, latency: 0, supervisionTimeout: 400)))
        }
        try await controller.send(ReadBDADDR())  // a round trip: both links are up
        // ACL data needs an open link: its credits are counted there.
        #expect(throws: HCIError.noSuchConnection(0x42)) {
            try controller.sendACL(ACLDataPacket(handle: 0x42, boundary: .firstNonFlushable, data: [0]))
        }
        let burst: [ACLDataPacket] = (0..<20).map { (index: Int) -> ACLDataPacket in
            let data: [UInt8] = [UInt8(index), 1, 2]
            return ACLDataPacket(handle: index < 15 ? 0x40 : 0x41, boundary: .firstNonFlushable, data: data[...])
        }
        for packet in burst { try controller.sendACL(packet) }
        #expect(fake.sentACL == [ACLDataPacket](burst.prefix(4)))
        #expect(controller.aclFlow?.queuedCount == 16)
        #expect(controller.link(0x40)?.packetsInController == 4 && controller.link(0x41)?.packetsInController == 0)

        // Two buffers come back: exactly two more go out, in order.
        fake.deliverEvent(.numberOfCompletedPackets(NumberOfCompletedPackets(completions: [(0x40, 2)])))
        try await controller.send(ReadBDADDR())  // a round trip: the event above was handled before its answer
        #expect(fake.sentACL == [ACLDataPacket](burst.prefix(6)))
        #expect(controller.aclFlow?.inFlight == 4)

        // A controller that over-reports completions is clamped to what is outstanding, on
        // that link; a handle with no link gives nothing back at all.
        fake.deliverEvent(
            .numberOfCompletedPackets(NumberOfCompletedPackets(completions: [(0x40, 100), (0x41, 3), (0x99, 5)])))
        try await controller.send(ReadBDADDR())
        #expect(fake.sentACL == [ACLDataPacket](burst.prefix(10)))
        #expect(controller.aclFlow?.inFlight == 4)
        #expect(controller.link(0x40)?.packetsInController == 4 && controller.link(0x41)?.packetsInController == 0)

        // Handle 0x40 disconnects: its buffers come back, its queued packets are dropped,
        // and the other link's packets flow.
        fake.deliverEvent(
            .disconnectionComplete(
                DisconnectionComplete(status: .success, handle: 0x40, reason: .remoteUserTerminatedConnection)))
        try await controller.send(ReadBDADDR())
        let sentAfter = fake.sentACL
        #expect(sentAfter.count == 14)
        let lastSent: [ACLDataPacket] = Array(sentAfter.suffix(4))
        let keptFour: [ACLDataPacket] = Array(burst.suffix(5).prefix(4))
        #expect(lastSent == keptFour)
        let lastFive: [ACLDataPacket] = Array(burst.suffix(5))
        let disconnected: ConnectionHandle = 0x40
        // A closure, not a local function: Swift 6.0 takes a local function passed by name as throwing.
        let everyPacketSentBeforeOrKept = sentAfter.allSatisfy { $0.handle == disconnected || lastFive.contains($0) }
        #expect(everyPacketSentBeforeOrKept)
        #expect(controller.aclFlow?.queuedCount == 1)
        #expect(controller.aclFlow?.inFlight == 4)

        // A Disconnection Complete that reports failure (the link is still up) frees nothing.
        fake.deliverEvent(
            .disconnectionComplete(
                DisconnectionComplete(status: .commandDisallowed, handle: 0x41, reason: .remoteUserTerminatedConnection)
            ))
        try await controller.send(ReadBDADDR())
        #expect(controller.aclFlow?.inFlight == 4)
        #expect(controller.aclFlow?.queuedCount == 1)
        #expect(fake.sentACL.count == 14)

        #expect(throws: HCIError.aclPacketTooLong(length: 28, bufferLength: 27)) {
            try controller.sendACL(
                ACLDataPacket(handle: 0x41, boundary: .firstNonFlushable, data: ArraySlice(repeating: 0, count: 28)))
        }
        controller.close()
    }

    @Test func unknownVendorAndMalformedEventsAreNotFatal() async throws {
        let fake = FakeController()
        let controller = HCIController(transport: fake, configuration: quiet)
        try await controller.start()
        var seen: [HCIEvent] = []
        _ = controller.addEventObserver { seen.append($0) }
        fake.deliver(
            .packets([
                .event(HCIEventPacket(code: 0xFF, parameters: [0x01, 0x02])),  // vendor
                .event(HCIEventPacket(code: 0x7A, parameters: [0x00])),  // unknown code
                .event(HCIEventPacket(code: 0x13, parameters: [0x02, 0x40])),  // NOCP too short: malformed
                .event(HCIEventPacket(code: 0x05, parameters: [0x00, 0x40, 0x00, 0x13])),
            ]))
        try await controller.send(ReadBDADDR())
        #expect(seen.count == 3)
        #expect(seen.first == .vendorSpecific([0x01, 0x02]))
        #expect(
            seen.last
                == .disconnectionComplete(
                    DisconnectionComplete(status: .success, handle: 0x40, reason: .remoteUserTerminatedConnection)))
        guard case .running = controller.state else { Issue.record("state \(controller.state)"); return }
        controller.close()
    }
}
