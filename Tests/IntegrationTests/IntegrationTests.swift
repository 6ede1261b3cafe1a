import BluetoothCore
import Foundation
@testable import HCI
import HCITestSupport
import TestTraits
import Testing

/// The stack against a real emulated controller (Bumble, over H4/TCP) and real tools
/// (tshark, btmon). Serialized: these tests count the process's reader threads.
@Suite(.serialized, .hangGuard) @BluetoothActor
struct IntegrationTests {
    let quiet = HCIController.Configuration(logger: .silent)

    @Test func bringUpAgainstTheBumbleController() async throws {
        let peer = try await TestPeer(arguments: ["--acl-count-a", "4", "--acl-len-a", "27"])
        defer { peer.stop() }
        let transport = try TransportSpec(parsing: peer.transport).open()
        let controller = HCIController(transport: transport, configuration: quiet)
        let info = try await controller.start()
        #expect(info.aclBuffers.count == 4)
        #expect(info.aclBuffers.length == 27)
        #expect(info.supportedCommands.count > 20)
        #expect(info.leFeatures.contains(.encryption))
        #expect(info.address != BluetoothAddress("00:00:00:00:00:00"))
        controller.close()
    }

    @Test func closingLeavesNoThreadOrDescriptorBehind() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let threadsBefore = readerThreads()
        let transport = try TransportSpec(parsing: peer.transport).open()
        let fdTransport = try #require(transport as? FileDescriptorTransport)
        let socketLink = try #require(fdLink(fdTransport.fd))
        #expect(socketLink.hasPrefix("socket:"))
        let controller = HCIController(transport: transport, configuration: quiet)
        try await controller.start()
        #expect(readerThreads() == threadsBefore + 1)
        controller.close()
        // close() cancelled the loop's watch and closed the descriptor before returning.
        #expect(await readerThreadsReaped(down: threadsBefore))
        #expect(fdLink(fdTransport.fd) != socketLink)
        await #expect(throws: HCIError.notRunning) { try await controller.send(ReadBDADDR()) }
    }

    @Test func commandTimeoutAgainstAControllerThatNeverAnswers() async throws {
        // The peer's controller silently drops Read Local Name (0x0C14).
        let peer = try await TestPeer(arguments: ["--mute-opcode", "0x0c14"])
        defer { peer.stop() }
        let transport = try TransportSpec(parsing: peer.transport).open()
        let controller = HCIController(
            transport: transport, configuration: .init(commandTimeout: .milliseconds(300), logger: .silent))
        try await controller.start()
        await #expect(throws: HCIError.commandTimeout(HCIOpcode(rawValue: 0x0C14), seconds: 0.3)) {
            try await controller.send(HCICommandPacket(opcode: HCIOpcode(rawValue: 0x0C14)))
        }
        // The controller is still usable after the timeout.
        let address = try await controller.send(ReadBDADDR())
        #expect(address.address == controller.info?.address)
        // An opcode the controller does not know is answered, by name, not left to hang.
        await #expect(throws: HCIError.commandFailed(HCIOpcode(rawValue: 0xFC77), .unknownHCICommand)) {
            try await controller.send(VendorCommand())
        }
        controller.close()
    }

    @Test func captureOpensInTsharkAndBtmon() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let path = NSTemporaryDirectory() + "bluejay-capture-\(UUID().uuidString).btsnoop"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try BTSnoopWriter(path: path)
        let controller = HCIController(
            transport: try TransportSpec(parsing: peer.transport).open(capture: writer), configuration: quiet)
        try await controller.start()
        controller.close()
        writer.close()

        let file = try BTSnoopFile(path: path)
        #expect(file.datalink == .hciUART)
        #expect(file.records.count == 20)
        for record in file.records {
            guard case let .packet(type, _) = record.content else {
                Issue.record("record \(record.number) is no packet"); continue
            }
            #expect(record.direction == (type == .command ? .sent : .received))
        }

        let tshark = try #require(which("tshark"), "tshark is missing: 'make test' installs it (apt tshark)")
        let frames = try await run(tshark, ["-r", path, "-T", "fields", "-e", "frame.number"])
        #expect(frames.status == 0)
        #expect(frames.stdout.split(separator: "\n").count == file.records.count)
        let malformed = try await run(tshark, ["-r", path, "-Y", "_ws.malformed || _ws.expert.severity == error"])
        #expect(malformed.status == 0)
        #expect(malformed.stdout.isEmpty, "tshark flags: \(malformed.stdout)")

        // btmon 5.66 crashes on GATT characteristic discovery (its own NULL dereference),
        // so only this bring-up capture is checked with it.
        let btmon = try #require(which("btmon"), "btmon is missing: 'make test' installs it (apt bluez)")
        let decoded = try await run(btmon, ["-r", path])
        #expect(decoded.status == 0)
        #expect(decoded.stdout.contains("LE Read Buffer Size"))
    }

    @Test func replayOfARecordedSessionMatchesTheHost() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let path = NSTemporaryDirectory() + "bluejay-replay-\(UUID().uuidString).btsnoop"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try BTSnoopWriter(path: path)
        let live = HCIController(
            transport: try TransportSpec(parsing: peer.transport).open(capture: writer), configuration: quiet)
        let liveInfo = try await live.start()
        live.close()
        writer.close()

        // The recording stands in for the controller; the host must send the same bytes.
        let replay = try ReplayTransport(path: path)
        let replayed = HCIController(transport: replay, configuration: quiet)
        let replayedInfo = try await replayed.start()
        #expect(replayedInfo == liveInfo)
        #expect(replay.isFinished)
        replayed.close()
    }

    @Test func replayDetectsAHostThatDiverges() async throws {
        // The committed recording of a bring-up against the Bumble controller, cut short:
        // the host sends a command the recording does not have.
        let fixture = Repository.root.appendingPathComponent("Fixtures/traces/bumble-bringup.btsnoop").path
        let full = try BTSnoopFile(path: fixture)
        let path = NSTemporaryDirectory() + "bluejay-cut-\(UUID().uuidString).btsnoop"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try BTSnoopWriter(path: path)
        for record in full.records.prefix(6) {
            guard case let .packet(type, body) = record.content else { continue }
            writer.write(h4: ([type.rawValue] + body)[...], direction: record.direction)
        }
        writer.close()
        let controller = HCIController(transport: try ReplayTransport(path: path), configuration: quiet)
        let outcome = await startResult(controller)
        guard case .failure(.transport(.replayMismatch(let mismatch))) = outcome else {
            Issue.record("bring-up should fail with a replay mismatch when the recording ends, got \(outcome)")
            return
        }
        #expect(mismatch.reason.contains("recording has ended"))
        #expect(mismatch.recordNumber == nil && mismatch.expected == nil)

        // The whole fixture replays cleanly: a conformance test with no peer at all.
        let replay = try ReplayTransport(path: fixture)
        let again = HCIController(transport: replay, configuration: quiet)
        try await again.start()
        #expect(replay.isFinished)
        again.close()
    }

    private func startResult(_ controller: HCIController) async -> Result<ControllerInfo, HCIError> {
        do { return .success(try await controller.start()) } catch { return .failure(error) }
    }

}

/// Whether the count of live transports' watches comes down to `count` (a close on the
/// stack's thread removes its watch at once; one on another thread waits for a read under
/// way, so the count is watched rather than read once).
func readerThreadsReaped(down count: Int) async -> Bool {
    await eventually { readerThreads() == count }
}

/// A vendor-specific opcode no controller here knows.
struct VendorCommand: HCICommand {
    static let opcode = HCIOpcode(rawValue: 0xFC77)
    init() {}
    static let layout = MessageLayout("Vendor", Self.init)
}

extension IntegrationTests {
    @Test func aTransportStartsOnce() throws {
        let fixture = Repository.root.appendingPathComponent("Fixtures/traces/bumble-bringup.btsnoop").path
        let replay = try ReplayTransport(path: fixture)
        try replay.start { _ in }
        #expect(throws: TransportError.closed) { try replay.start { _ in } }
        replay.close()
        #expect(throws: TransportError.closed) { try replay.start { _ in } }
    }
}

/// What a descriptor refers to (`socket:[123]`), or nil if it is closed.
func fdLink(_ fd: Int32) -> String? {
    try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)")
}

/// How many live transports the stack's event loop watches (a descriptor transport's
/// watch carries FileDescriptorTransport's name; the unit tests', running beside these,
/// carry another).
func readerThreads() -> Int {
    EventLoop.stack.watchCount(named: FileDescriptorTransport.watchName)
}
