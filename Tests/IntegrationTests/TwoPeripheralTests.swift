import BluetoothCore
import Foundation
import GAP
@testable import HCI
import L2CAP
import HCITestSupport
import Testing

extension IntegrationTests {
    /// Two links up together, to two peripherals of one peer (`--peripherals 2`): each
    /// link reaches its own peripheral, one ends while the other stays usable, and when
    /// both are gone nothing is left over.
    @Test func twoSimultaneousConnectionsToTwoPeripherals() async throws {
        let peer = try await TestPeer(arguments: ["--peripherals", "2"])
        defer { peer.stop() }
        let addresses: [BluetoothAddress] = try peer.addresses.map { (text: String) throws -> BluetoothAddress in
            try #require(BluetoothAddress(text))
        }
        try #require(addresses.count == 2, "READY line: two peripheral addresses")
        #expect(addresses[0] != addresses[1])

        let clock = ManualClock()
        let threadsBefore = readerThreads()
        let controller = HCIController(
            transport: try TransportSpec(parsing: peer.transport).open(), clock: clock, configuration: quiet)
        try await controller.start()
        let manager = ConnectionManager(controller: controller, logger: .silent)
        let l2cap = L2CAPChannels(controller: controller, logger: .silent)
        var attReplies: [ConnectionHandle: BluetoothCore.Expectation<[UInt8]?>] = [:]
        l2cap.setHandler(for: .att) { link, payload in attReplies[link.handle]?.fulfill(Array(payload)) }

        // Sequential connects; the first link stays up while the second comes up.
        let first = try await manager.connect(to: addresses[0], type: .random, timeout: .seconds(10))
        let second = try await manager.connect(to: addresses[1], type: .random, timeout: .seconds(10))
        #expect(first.handle != second.handle)
        let bothHandles: [ConnectionHandle] = [first.handle, second.handle].sorted()
        #expect(manager.connections.keys.sorted() == bothHandles)
        #expect(manager.connections[first.handle]?.peerAddress == addresses[0])
        #expect(manager.connections[second.handle]?.peerAddress == addresses[1])
        // Both got the post-connect set-up on their own link.
        for connection in [first, second] {
            #expect(connection.txPHY == 2, "handle \(connection.handle)")
            #expect(connection.maxTxOctets == 251, "handle \(connection.handle)")
        }

        /// The GAP Device Name over ATT (Read By Type 0x2A00 over all handles) on `handle`.
        func deviceName(_ handle: ConnectionHandle) async throws -> String? {
            let reply = BluetoothCore.Expectation<[UInt8]?>()
            attReplies[handle] = reply
            let giveUp = Task { @BluetoothActor in
                try? await Task.sleep(for: hangGuardWait)
                reply.fulfill(nil)
            }
            defer { giveUp.cancel() }
            try l2cap.send([0x08, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x2A], on: .att, handle: handle)
            // Read By Type Response: 0x09, length, then (attribute handle, value).
            guard let payload = await reply.value(), payload.count >= 4, payload[0] == 0x09 else { return nil }
            return String(decoding: payload.dropFirst(4), as: UTF8.self)
        }
        #expect(try await deviceName(first.handle) == "Bluejay HRM")
        #expect(try await deviceName(second.handle) == "Bluejay HRM 2")

        // One link goes; the other stays up and usable.
        var ended: [ConnectionHandle] = []
        manager.onDisconnection = { connection, _ in ended.append(connection.handle) }
        let reason = try await manager.disconnect(first.handle)
        #expect(reason == .connectionTerminatedByLocalHost || reason == .remoteUserTerminatedConnection)
        #expect(ended == [first.handle])
        let secondOnly: [ConnectionHandle] = [second.handle]
        #expect(manager.connections.keys.sorted() == secondOnly)
        let applied = try await manager.updateParameters(
            second.handle, .init(intervalMin: 40, intervalMax: 40, latency: 0, supervisionTimeout: 500))
        #expect(applied.interval == 40)
        #expect(manager.connections[second.handle]?.parameters.interval == 40)
        #expect(try await deviceName(second.handle) == "Bluejay HRM 2")
        await #expect(throws: ConnectionError.notConnected(first.handle)) {
            try await manager.updateParameters(first.handle, .init())
        }

        try await manager.disconnect(second.handle)
        #expect(ended == [first.handle, second.handle])
        await expectNothingLeftOver(controller, manager, clock, l2cap: l2cap, threadsBefore: threadsBefore)
    }
}
