@testable import Bluejay
import BluetoothCore
import Foundation
@testable import HCI
import HCITestSupport
import TestTraits
import Testing

extension IntegrationTests {
    /// A link torn down while an L2CAP credit based channel opens and in the middle of a
    /// notification flood (the steps ``FaultInjectionTests``' session does not reach), by each
    /// fault: the peer disconnects, the supervision timeout expires, the transport ends, the
    /// controller reports a Hardware Error. Afterwards no layer holds anything of the lost link:
    /// once Bluejay is back on a link it holds that one link and nothing under way, and once it
    /// stops every host holds nothing, every transport is closed and no reader thread is left.
    @Suite @MainActor
    struct LinkTeardownTests {
        nonisolated static let custom = ServiceIdentifier(uuid: "B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A00")
        nonisolated static let stream = CharacteristicIdentifier(
            uuid: "B1E70007-9D3B-4C7A-8A5E-6F2D0C1B0A00", service: custom)
        nonisolated static let controlPoint = CharacteristicIdentifier(
            uuid: "B1E70006-9D3B-4C7A-8A5E-6F2D0C1B0A00", service: custom)
        /// The peer's echo server (Fixtures/peer/README.md, "L2CAP channels").
        nonisolated static let echoPSM: UInt16 = 0x0080

        /// Where the link goes.
        enum Step: String, CaseIterable, Sendable, CustomStringConvertible {
            case cocOpen = "CoC open"
            case midFlood = "mid-flood"

            var description: String { rawValue }

            /// The packet the fault goes off at: our LE (or Enhanced) Credit Based Connection
            /// Request, or the peer's 200th notification of the flood.
            var trigger: FaultTrigger {
                switch self {
                case .cocOpen:
                    FaultTrigger("LE Credit Based Connection Request", .sent) { packet in
                        let code = FaultTrigger.firstFragmentPayload(packet, channel: 0x0005)?.first
                        return code == 0x14 || code == 0x17
                    }
                case .midFlood:
                    FaultTrigger.received(200, "notifications") { packet in
                        guard case let .acl(acl) = packet, acl.boundary.startsPDU, acl.data.count > 4 else {
                            return false
                        }
                        let data = acl.data
                        let channel = UInt16(data[data.startIndex + 2]) | UInt16(data[data.startIndex + 3]) << 8
                        return channel == 0x0004 && data[data.startIndex + 4] == 0x1B
                    }
                }
            }
        }

        /// A fault at a step.
        struct Case: Sendable, CustomStringConvertible {
            let step: Step
            let fault: InjectedFault
            var description: String { "\(fault) at \(step)" }

            static let all: [Case] = Step.allCases.flatMap { step in
                FaultCase.faults.map { Case(step: step, fault: $0) }
            }
        }

        @Test(.hangGuard, arguments: Case.all)
        func aLinkTornDownLeavesNothingBehind(_ teardown: Case) async throws {
            let threadsBefore = readerThreads()
            let run = try await FaultInjectionTests.Run()
            defer { run.finish() }
            let up = await eventually { run.bluejay.isBluetoothAvailable }
            try #require(up, "\(teardown): Bluejay did not start")
            let connected: ConnectionResult = await withCheckedContinuation { done in
                run.bluejay.connect(run.peripheral, timeout: .seconds(15)) { done.resume(returning: $0) }
            }
            guard case .success = connected else { Issue.record("\(teardown): connecting: \(connected)"); return }
            let injector = try #require(run.opened.all.first?.injector)
            injector.arm(teardown.fault, on: teardown.step.trigger)

            switch teardown.step {
            case .cocOpen:
                do {
                    _ = try await run.bluejay.openL2CAPChannel(psm: Self.echoPSM)
                    Issue.record("\(teardown): a channel opened on a link that went")
                } catch {
                    // The open ends with the link's end, with its reason: the fault's for a lost
                    // link, Unspecified Error for a lost controller (the controller ends its links so).
                    let expected: HCIStatus
                    if case let .linkLost(reason) = teardown.fault {
                        expected = reason
                    } else {
                        expected = .unspecifiedError
                    }
                    #expect("\(error)" == "link lost: \(expected)", "\(teardown): the open ended with \(error)")
                }
            case .midFlood:
                // The values themselves are not the point: the flood keeps the link's ACL
                // buffers, reassembly and bearer busy when it goes.
                run.bluejay.listen(to: Self.stream) { (_: ReadResult<Data>) in }
                // Control point 01: 100,000 notifications of 20 octets on the stream.
                let flood =
                    Data([0x01]) + withUnsafeBytes(of: UInt32(100_000).littleEndian) { Data($0) }
                    + withUnsafeBytes(of: UInt16(20).littleEndian) { Data($0) }
                let asked: WriteResult = await withCheckedContinuation { done in
                    run.bluejay.write(to: Self.controlPoint, value: flood) { done.resume(returning: $0) }
                }
                #expect(describe(asked) == "success", "\(teardown): asking for the flood: \(asked)")
                _ = await eventually { injector.fired }
            }
            #expect(injector.fired, "\(teardown): the trigger never fired")

            // Bluejay comes back on a link by itself (auto-reconnect), on a reopened controller
            // when the controller went.
            let back = await eventually { run.recorder.connections == 2 && run.bluejay.isConnected }
            try #require(
                back,
                "\(teardown): Bluejay did not reconnect (connections \(run.recorder.connections), availability \(run.recorder.availability))"
            )
            #expect(run.hosts.count == (teardown.fault.needsLink ? 1 : 2), "\(teardown): \(run.hosts.count) hosts")

            // Back and idle, the live host holds its one link and nothing of the lost one; a
            // host the controller's loss replaced holds nothing at all.
            let host = try #require(run.hosts.last)
            let idle = await eventually { () async -> Bool in
                let held = await Task { @BluetoothActor in host.resources }.value
                return held.links == 1 && held.l2capChannels == 0 && held.attRequestsPending == 0
                    && held.commandsOutstanding == 0
                    && held.aclPacketsQueued == 0 && held.aclPacketsInController == 0 && held.pairings == 0
                    && held.timersArmed == 0
            }
            let heldWhenIdle = await Task { @BluetoothActor in host.resources }.value
            #expect(idle, "\(teardown): back on a link the host holds \(heldWhenIdle)")
            #expect(
                heldWhenIdle.l2capLinks <= 1 && heldWhenIdle.attBearers <= 1 && heldWhenIdle.gattClients <= 1
                    && heldWhenIdle.smpLinks <= 1,
                "\(teardown): state of the lost link is left: \(heldWhenIdle)")
            for (index, replaced) in run.hosts.dropLast().enumerated() {
                let held = await Task { @BluetoothActor in replaced.resources }.value
                #expect(held == .none, "\(teardown): host \(index + 1), replaced, still holds \(held)")
            }

            // Stopped, nothing is left anywhere.
            let disconnected: DisconnectionResult = await withCheckedContinuation { done in
                run.bluejay.disconnect { done.resume(returning: $0) }
            }
            guard case .success = disconnected else { Issue.record("\(teardown): disconnect: \(disconnected)"); return }
            guard let last = run.bluejay.stopAndExtractBluetoothState().host else {
                Issue.record("\(teardown): no host to stop"); return
            }
            await Task { @BluetoothActor in last.close() }.value
            for (index, host) in run.hosts.enumerated() {
                let empty = await eventually { await Task { @BluetoothActor in host.resources }.value == .none }
                let held = await Task { @BluetoothActor in host.resources }.value
                #expect(empty, "\(teardown): host \(index + 1) still holds \(held)")
            }
            let closed = await eventually { run.opened.allClosed }
            #expect(closed, "\(teardown): a transport's descriptors are still open")
            let joined = await eventually { readerThreads() == threadsBefore }
            #expect(joined, "\(teardown): \(readerThreads() - threadsBefore) reader thread(s) left")
        }
    }
}
