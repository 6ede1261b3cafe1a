import ATT
import BluetoothCore
import Foundation
import GATT
@testable import HCI
import L2CAP
import HCITestSupport
import Testing

// The GATT client against the peer, continued (GATTTests.swift): Service Changed and the
// end of a link.

extension IntegrationTests {
    // MARK: Service Changed

    /// `subscribeToServiceChanged()` finds 0x2A05 and turns its indications on; control
    /// point 0x06 makes the peer indicate a range; `onServiceChanged` gets exactly it and
    /// the lazily discovered service in it is forgotten (the others kept), then found
    /// again on next use. A change of the whole database forgets everything, and the
    /// client keeps listening after it: a second one is recognised too.
    @Test func gattServiceChangedForgetsWhatItCovers() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let link = try await openGATT(peer)
        let client = link.client
        let changes = Arrivals<ClosedRange<AttributeHandle>>()
        client.onServiceChanged = { changes.append($0) }

        #expect(try await client.subscribeToServiceChanged())
        #expect(client.serviceChangedHandle == 0x0008)
        let serviceChanged = try await link.characteristic(.serviceChanged, in: .genericAttribute)
        #expect(try await client.read(try await link.cccd(of: serviceChanged).handle) == [0x02, 0x00])

        let control = try await link.characteristic(peerUUID(6), in: peerUUID(1))
        let battery = try await client.service(sig(0x180F))
        _ = try await link.characteristic(sig(0x2A19), in: sig(0x180F))
        _ = try await link.characteristic(sig(0x2A29), in: sig(0x180A))
        #expect(client.discoveredServices.map(\.uuid) == [sig(0x1801), sig(0x180A), sig(0x180F), peerUUID(1)])

        try await client.write(control.valueHandle, ControlPoint.serviceChanged(battery.handles))
        #expect(await changes.waitFor(1))
        #expect(changes.values == [0x0019...0x001C])
        #expect(
            client.discoveredServices.map(\.uuid) == [sig(0x1801), sig(0x180A), peerUUID(1)],
            "only the battery service is forgotten")
        // Found again on the next use.
        #expect(try await link.characteristic(sig(0x2A19), in: sig(0x180F)).valueHandle == 0x001B)
        #expect(client.discoveredServices.map(\.uuid) == [sig(0x1801), sig(0x180A), sig(0x180F), peerUUID(1)])

        // The whole database, twice: everything forgotten, and the second still recognised.
        try await client.write(control.valueHandle, ControlPoint.serviceChanged(0x0001...0xFFFF))
        #expect(await changes.waitFor(2))
        #expect(client.discoveredServices.isEmpty)
        try await client.write(control.valueHandle, ControlPoint.serviceChanged(0x0001...0xFFFF))
        #expect(await changes.waitFor(3))
        #expect(changes.values == [0x0019...0x001C, 0x0001...0xFFFF, 0x0001...0xFFFF])
        await closeGATT(link)
    }

    // MARK: Disconnection

    /// A link that goes while requests wait: one sent (its ACL packet held in our queue,
    /// because the peer's controller returns no buffer credit for 60 s) and one queued
    /// behind it on the bearer. The disconnection ends both with `.disconnected`; a new
    /// request fails with `.closed(.disconnected)`; no bearer, ACL credit, ATT timer or
    /// thread is left.
    @Test func gattRequestsFailWithDisconnectedWhenTheLinkGoes() async throws {
        let peer = try await TestPeer(arguments: ["--nocp-delay-ms", "60000"])
        defer { peer.stop() }
        let link = try await openGATT(peer)
        let client = link.client
        let manufacturer = try await link.characteristic(sig(0x2A29), in: sig(0x180A))
        let control = try await link.characteristic(peerUUID(6), in: peerUUID(1))
        // Spend the remaining credits on Write Commands the control point ignores.
        while let flow = link.controller.aclFlow, flow.available > 0 {
            try client.writeWithoutResponse(control.valueHandle, [0x00])
        }
        #expect(link.controller.aclFlow?.queuedCount == 0)

        let stuck = Task { @BluetoothActor () async -> Result<[UInt8], GATTError> in
            do throws(GATTError) { return .success(try await client.read(manufacturer.valueHandle)) } catch {
                return .failure(error)
            }
        }
        let queued = Task { @BluetoothActor () async -> Result<[UInt8], GATTError> in
            do throws(GATTError) { return .success(try await client.readLong(manufacturer.valueHandle)) } catch {
                return .failure(error)
            }
        }
        for _ in 0..<100_000 where !(link.bearer.hasOutstandingRequest && link.bearer.queuedRequests == 1) {
            await Task.yield()
        }
        try #require(
            link.bearer.hasOutstandingRequest && link.bearer.queuedRequests == 1, "one request sent, one queued")
        #expect(link.controller.aclFlow?.queuedCount == 1, "the outstanding request waits for a credit")

        let reason = try await link.manager.disconnect(link.handle)
        #expect(reason == .connectionTerminatedByLocalHost || reason == .remoteUserTerminatedConnection)
        #expect(await stuck.value == .failure(.att(.disconnected(reason))))
        #expect(await queued.value == .failure(.att(.disconnected(reason))))
        let late = await failure { () async throws(GATTError) in try await client.read(manufacturer.valueHandle) }
        #expect(late == .att(.closed(.disconnected(reason))))
        #expect(late?.description.contains("disconnected") == true)
        #expect(throws: ATTError.notConnected(link.handle)) { try link.bearers.bearer(for: link.handle) }
        #expect(link.controller.aclFlow?.queuedCount == 0, "the held packet was dropped with the link")
        await closeGATT(link)
    }

    /// The peer drops the link (control point 0x02, reason 0x08 as a supervision timeout):
    /// the next request fails with `.closed(.disconnected(.connectionTimeout))`, by name,
    /// and nothing is left over.
    @Test func gattRequestAfterThePeerDisconnectsFailsByReason() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let link = try await openGATT(peer)
        let client = link.client
        let control = try await link.characteristic(peerUUID(6), in: peerUUID(1))
        let ended = BluetoothCore.Expectation<HCIStatus>()
        link.manager.onDisconnection = { connection, reason in
            if connection.handle == link.handle { ended.fulfill(reason) }
        }
        try await client.write(control.valueHandle, ControlPoint.disconnect(reason: 0x08))
        #expect(await ended.value() == .connectionTimeout)
        let error = await failure { () async throws(GATTError) in try await client.discoverPrimaryServices() }
        #expect(error == .att(.closed(.disconnected(.connectionTimeout))))
        #expect(error?.description.contains("connectionTimeout") == true, "\(String(describing: error))")
        await closeGATT(link)
    }
}
