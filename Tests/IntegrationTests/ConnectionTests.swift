@testable import BluetoothCore
import Foundation
import GAP
@testable import HCI
import HCITestSupport
import L2CAP
import Testing

extension IntegrationTests {
    @Test func connectRaisesDataLengthAndPHYThenDisconnects() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let controller = HCIController(
            transport: try TransportSpec(parsing: peer.transport).open(), configuration: quiet)
        try await controller.start()
        let manager = ConnectionManager(controller: controller, logger: .silent)
        let connection = try await manager.connect(
            to: BluetoothAddress(peer.address)!, type: .random, timeout: .seconds(10))
        #expect(connection.role == 0)
        #expect(connection.peerAddress == BluetoothAddress(peer.address))
        #expect(connection.remoteFeatures?.contains(.twoMegabitPHY) == true)
        #expect(connection.txPHY == 2 && connection.rxPHY == 2)
        #expect(connection.maxTxOctets == 251 && connection.maxRxOctets == 251)
        #expect(manager.connections.count == 1)
        var ended: [HCIStatus] = []
        manager.onDisconnection = { ended.append($1) }
        let reason = try await manager.disconnect(connection.handle)
        #expect(reason == .connectionTerminatedByLocalHost || reason == .remoteUserTerminatedConnection)
        #expect(ended == [reason])
        #expect(manager.connections.isEmpty)
        await #expect(throws: ConnectionError.notConnected(connection.handle)) {
            try await manager.disconnect(connection.handle)
        }
        manager.close()
        controller.close()
    }

    @Test func connectingToNobodyTimesOutAndTheControllerStaysUsable() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let clock = ManualClock()
        let controller = HCIController(
            transport: try TransportSpec(parsing: peer.transport).open(), clock: clock, configuration: quiet)
        try await controller.start()
        let manager = ConnectionManager(controller: controller, logger: .silent)
        let attempt = Task { @BluetoothActor in
            try await manager.connect(to: BluetoothAddress("C0:00:00:00:00:09")!, type: .random, timeout: .seconds(3))
        }
        // Wait for the connect timer itself: the create command answered (credit back, its
        // command timeout gone) and exactly one sleeper on the clock.
        while !(manager.isConnecting && controller.commandCredits > 0 && clock.sleeperCount == 1) { await Task.yield() }
        clock.advance(by: .seconds(2))
        #expect(manager.isConnecting, "not before the timeout")
        clock.advance(by: .seconds(1))
        await #expect(throws: ConnectionError.connectionTimeout) { try await attempt.value }
        #expect(!manager.isConnecting)
        // Usable at once: a command and a real connection.
        _ = try await controller.send(ReadBDADDR())
        let connection = try await manager.connect(to: BluetoothAddress(peer.address)!, type: .random, setUp: false)
        try await manager.disconnect(connection.handle)
        manager.close()
        controller.close()
    }

    @Test func hundredConnectDisconnectCyclesLeaveNothingBehind() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let clock = ManualClock()
        let threadsBefore = readerThreads()
        let controller = HCIController(
            transport: try TransportSpec(parsing: peer.transport).open(), clock: clock, configuration: quiet)
        try await controller.start()
        let manager = ConnectionManager(controller: controller, logger: .silent)
        let address = BluetoothAddress(peer.address)!
        var reasons: [HCIStatus] = []
        for cycle in 0..<100 {
            let connection = try await manager.connect(to: address, type: .random, setUp: cycle % 10 == 0)
            #expect(manager.connections.keys.sorted() == [connection.handle], "cycle \(cycle): exactly one live link")
            reasons.append(try await manager.disconnect(connection.handle))
        }
        // Every cycle ended with a host-initiated disconnection (Bumble reports 0x13 where
        // a real controller reports 0x16).
        #expect(reasons.count == 100)
        #expect(Set(reasons).isSubset(of: [.connectionTerminatedByLocalHost, .remoteUserTerminatedConnection]))
        await expectNothingLeftOver(controller, manager, clock, threadsBefore: threadsBefore)
    }

    /// After every link has ended: no connection handle, ACL credit, queued command,
    /// timer or event observer is left, and closing the manager (and `l2cap`, if any) and
    /// the controller leaves no reader thread. Closes them all.
    func expectNothingLeftOver(
        _ controller: HCIController, _ manager: ConnectionManager, _ clock: ManualClock,
        l2cap: L2CAPChannels? = nil, threadsBefore: Int,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        #expect(manager.connections.isEmpty, "no connection handle left", sourceLocation: sourceLocation)
        #expect(controller.aclFlow?.inFlight == 0, "no ACL credit left", sourceLocation: sourceLocation)
        #expect(controller.aclFlow?.queuedCount == 0, sourceLocation: sourceLocation)
        #expect(controller.queuedCommandCount == 0, sourceLocation: sourceLocation)
        #expect(clock.sleeperCount == 0, "no timer left", sourceLocation: sourceLocation)
        // A sleep cancelled before it began leaves a mark that its task clears when it runs,
        // which on a loaded machine may be a moment after the cancel.
        #expect(await eventually { clock.entryCount == 0 }, "no stale timer entry left", sourceLocation: sourceLocation)
        if let l2cap {
            #expect(l2cap.pendingReassemblies == 0, "no half-received PDU left", sourceLocation: sourceLocation)
            #expect(l2cap.trackedLinks == 0, "no link's L2CAP state left", sourceLocation: sourceLocation)
            l2cap.close()
        }
        #expect(controller.eventObserverCount == 1, sourceLocation: sourceLocation)
        manager.close()
        #expect(controller.eventObserverCount == 0, sourceLocation: sourceLocation)
        #expect(readerThreads() == threadsBefore + 1, sourceLocation: sourceLocation)
        controller.close()
        #expect(await readerThreadsReaped(down: threadsBefore), "no thread left", sourceLocation: sourceLocation)
    }
}
