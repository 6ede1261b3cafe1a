import ATT
import BluetoothCore
import Foundation
import GAP
import GATT
@testable import HCI
import HCITestSupport
import L2CAP
import Testing

extension IntegrationTests {
    /// A misbehaving server on one link of two (the peer's control point 08/09 sends raw
    /// ATT PDUs): a response to no request and a truncated notification are dropped and
    /// counted, and the link goes on; a response with the wrong opcode while a request is
    /// outstanding fails that request with a protocol error and drops that link only. The
    /// other link keeps being served throughout.
    @Test func misbehavingServerEndsItsOwnLinkOnly() async throws {
        let rig = try await TwoPeripheralRig(quiet)
        defer { rig.peer.stop() }
        let (addresses, clock, manager, bearers) = (rig.addresses, rig.clock, rig.manager, rig.bearers)
        let bad = try await manager.connect(to: addresses[0], type: .random, timeout: .seconds(10))
        let good = try await manager.connect(to: addresses[1], type: .random, timeout: .seconds(10))
        let badClient = GATTClient(bearer: try bearers.bearer(for: bad.handle))
        let goodClient = GATTClient(bearer: try bearers.bearer(for: good.handle))
        let controlPoint: AttributeHandle = 0x0029, deviceName: AttributeHandle = 0x0003

        // After the Write Response: a Read Response nobody asked for, a notification cut short.
        // (Each waits for its stray PDU to arrive before the next request goes out: one
        // arriving while a request is outstanding would be a wrong response instead.)
        try await badClient.write(controlPoint, [0x09, 0x0B, 0x41, 0x42])
        #expect(await eventually { badClient.bearer.discardedPDUs == 1 }, "the stray Read Response is dropped")
        try await badClient.write(controlPoint, [0x09, 0x1B, 0x2B])
        #expect(await eventually { badClient.bearer.discardedPDUs == 2 }, "the truncated notification is dropped")
        #expect(try await badClient.read(deviceName) == Array("Bluejay HRM".utf8), "the link goes on")
        #expect(try await goodClient.read(deviceName) == Array("Bluejay HRM 2".utf8))

        // Before the Write Response: a Read Response while the Write Request is outstanding.
        do {
            try await badClient.write(controlPoint, [0x08, 0x0B, 0x41])
            Issue.record("a Read Response to a Write Request was accepted")
        } catch {
            #expect("\(error)".contains("Read_Rsp received while Write_Req was outstanding"), "\(error)")
        }
        #expect(await rig.nextLinkEnd() == bad.handle, "the misbehaving link is dropped")
        #expect(try await goodClient.read(deviceName) == Array("Bluejay HRM 2".utf8), "the other link is still served")

        try await manager.disconnect(good.handle)
        bearers.close()
        await expectNothingLeftOver(rig.controller, manager, clock, l2cap: rig.l2cap, threadsBefore: rig.threadsBefore)
    }
}

extension IntegrationTests {
    /// Two more ways a server misbehaves, each on one link of two: a response cut short
    /// (an Error Response missing its code, while a Write Request is outstanding) and a
    /// server that stops answering (control point 0A: the next request is never answered,
    /// so the 30 s ATT transaction timeout runs out, on the injected clock). Each fails its
    /// request with a clear error and drops that link only; the other link is served.
    @Test func truncatedResponseAndSilenceEndTheirLinkOnly() async throws {
        let rig = try await TwoPeripheralRig(quiet)
        defer { rig.peer.stop() }
        let (addresses, clock, manager, bearers) = (rig.addresses, rig.clock, rig.manager, rig.bearers)
        let good = try await manager.connect(to: addresses[1], type: .random, timeout: .seconds(10))
        let goodClient = GATTClient(bearer: try bearers.bearer(for: good.handle))
        let controlPoint: AttributeHandle = 0x0029, deviceName: AttributeHandle = 0x0003

        // An Error Response of 4 octets instead of 5 while the Write Request is outstanding.
        let first = try await manager.connect(to: addresses[0], type: .random, timeout: .seconds(10))
        let firstClient = GATTClient(bearer: try bearers.bearer(for: first.handle))
        do {
            try await firstClient.write(controlPoint, [0x08, 0x01, 0x12, 0x29, 0x00])
            Issue.record("a truncated Error Response was accepted")
        } catch {
            #expect("\(error)".contains("malformed Error Response"), "the error names what was malformed: \(error)")
        }
        #expect(await rig.nextLinkEnd() == first.handle, "the link that sent it is dropped")
        #expect(try await goodClient.read(deviceName) == Array("Bluejay HRM 2".utf8), "the other link is still served")

        // Silence: the next request is never answered; 30 s on the clock end it.
        let second = try await manager.connect(to: addresses[0], type: .random, timeout: .seconds(10))
        let secondClient = GATTClient(bearer: try bearers.bearer(for: second.handle))
        try await secondClient.write(controlPoint, [0x0A])
        let unanswered = Task { @BluetoothActor in try await secondClient.read(deviceName) }
        while !secondClient.bearer.hasOutstandingRequest { await Task.yield() }
        #expect(
            try await goodClient.read(deviceName) == Array("Bluejay HRM 2".utf8), "served while the other link waits")
        clock.advance(by: .seconds(29))
        #expect(secondClient.bearer.hasOutstandingRequest, "not before 30 s")
        clock.advance(by: .seconds(1))
        do {
            _ = try await unanswered.value
            Issue.record("a request nobody answered succeeded")
        } catch {
            #expect("\(error)".contains("no ATT response in 30 s"), "\(error)")
        }
        #expect(await rig.nextLinkEnd() == second.handle, "the silent link is dropped")
        #expect(try await goodClient.read(deviceName) == Array("Bluejay HRM 2".utf8), "the other link is still served")

        try await manager.disconnect(good.handle)
        bearers.close()
        await expectNothingLeftOver(rig.controller, manager, clock, l2cap: rig.l2cap, threadsBefore: rig.threadsBefore)
    }
}

/// The peer with two peripherals, and a controller (on a manual clock), connections, L2CAP
/// and ATT bearers over it: one link to misbehave on, one to keep serving.
@BluetoothActor
struct TwoPeripheralRig {
    let peer: TestPeer
    let addresses: [BluetoothAddress]
    let clock = ManualClock()
    /// Reader threads before the controller started (for `expectNothingLeftOver`).
    let threadsBefore: Int
    let controller: HCIController
    let manager: ConnectionManager
    let l2cap: L2CAPChannels
    let bearers: ATTBearers
    /// Each link's handle as it ends, in order.
    private let linkEnds: AsyncStream<ConnectionHandle>

    init(_ configuration: HCIController.Configuration) async throws {
        peer = try await TestPeer(arguments: ["--peripherals", "2"])
        addresses = try peer.addresses.map { (text: String) throws -> BluetoothAddress in
            try #require(BluetoothAddress(text))
        }
        threadsBefore = readerThreads()
        controller = HCIController(
            transport: try TransportSpec(parsing: peer.transport).open(), clock: clock, configuration: configuration)
        try await controller.start()
        manager = ConnectionManager(controller: controller, logger: .silent)
        l2cap = L2CAPChannels(controller: controller, logger: .silent)
        bearers = ATTBearers(controller: controller, channels: l2cap, logger: .silent)
        let (ends, feed) = AsyncStream.makeStream(of: ConnectionHandle.self)
        manager.onDisconnection = { connection, _ in feed.yield(connection.handle) }
        linkEnds = ends
    }

    /// The handle of the next link to end, waiting for it: the rig sees every end, so a
    /// link of the other peripheral ending first would show here.
    func nextLinkEnd() async -> ConnectionHandle? {
        for await handle in linkEnds { return handle }
        return nil
    }
}
