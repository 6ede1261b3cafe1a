import ATT
import BluetoothCore
import Foundation
import GAP
import GATT
@testable import HCI
import L2CAP
import HCITestSupport
import Testing

// The ATT bearer and GATT client against the Bumble peer's GATT database (see
// Fixtures/peer/README.md, "GATT database" and "Control point"), over the real transport.

/// A UUID of the peer's custom family, B1E7xxxx-9D3B-4C7A-8A5E-6F2D0C1B0A00
/// (`peerUUID(1)` is the test service).
func peerUUID(_ short: UInt16) -> BluetoothUUID {
    BluetoothUUID(String(format: "B1E7%04X-9D3B-4C7A-8A5E-6F2D0C1B0A00", short))!
}

/// A SIG 16-bit UUID.
func sig(_ value: UInt16) -> BluetoothUUID { BluetoothUUID(value) }

/// Little-endian bytes of a 16- or 32-bit value.
func littleEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
    (0..<T.bitWidth / 8).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
}

/// The control point's commands (README, "Control point").
enum ControlPoint {
    static func flood(count: UInt32, length: UInt16) -> [UInt8] { [0x01] + littleEndian(count) + littleEndian(length) }
    static func disconnect(reason: UInt8) -> [UInt8] { [0x02, reason] }
    static func indicate(_ value: [UInt8]) -> [UInt8] { [0x04] + value }
    static func serviceChanged(_ range: ClosedRange<AttributeHandle>) -> [UInt8] {
        [0x06] + littleEndian(range.lowerBound.rawValue) + littleEndian(range.upperBound.rawValue)
    }
}

/// The whole stack on one link to the peer, up to a GATT client: the controller (on a
/// manual clock, so that a leftover ATT or connection timer shows), connections, L2CAP,
/// the ATT bearers with our own GATT server (as the CLI has) and the client.
@BluetoothActor
final class GATTLink {
    let controller: HCIController
    let clock: ManualClock
    let manager: ConnectionManager
    let l2cap: L2CAPChannels
    let bearers: ATTBearers
    let connection: LEConnection
    let client: GATTClient
    /// Reader threads before the controller started (for `expectNothingLeftOver`).
    let threadsBefore: Int

    init(
        controller: HCIController, clock: ManualClock, manager: ConnectionManager, l2cap: L2CAPChannels,
        bearers: ATTBearers,
        connection: LEConnection, client: GATTClient, threadsBefore: Int
    ) {
        self.controller = controller
        self.clock = clock
        self.manager = manager
        self.l2cap = l2cap
        self.bearers = bearers
        self.connection = connection
        self.client = client
        self.threadsBefore = threadsBefore
    }

    var bearer: ATTBearer { client.bearer }
    var handle: ConnectionHandle { connection.handle }

    /// A characteristic of the peer, found by lazy discovery.
    func characteristic(_ uuid: BluetoothUUID, in service: BluetoothUUID) async throws(GATTError) -> Characteristic {
        try await client.characteristic(uuid, in: service)
    }

    /// The CCCD of `characteristic`.
    func cccd(of characteristic: Characteristic) async throws -> Descriptor {
        try #require(
            try await client.descriptors(of: characteristic).first { $0.uuid == .clientCharacteristicConfiguration })
    }
}

/// Values as they arrive (notifications, indications, Service Changed ranges), with a
/// wait for a number of them.
@BluetoothActor
final class Arrivals<Value: Sendable> {
    private(set) var values: [Value] = []
    private var waiters: [(count: Int, done: BluetoothCore.Expectation<Bool>)] = []

    func append(_ value: Value) {
        values.append(value)
        for waiter in waiters where values.count >= waiter.count { waiter.done.fulfill(true) }
        waiters.removeAll { $0.done.isFulfilled }
    }

    func removeAll() { values.removeAll() }

    /// Waits until `count` values have arrived; false if they have not after `seconds`.
    /// The bound only keeps a broken stack from hanging the run: the wait ends the moment
    /// the values are there.
    func waitFor(_ count: Int) async -> Bool {
        if values.count >= count { return true }
        let done = BluetoothCore.Expectation<Bool>()
        waiters.append((count, done))
        let giveUp = Task { @BluetoothActor in
            do { try await Task.sleep(for: hangGuardWait) } catch { return }
            done.fulfill(false)
        }
        defer { giveUp.cancel() }
        return await done.value()
    }
}

/// The ATT PDUs the host sent in a capture (first fragments of ACL packets on CID 0x0004;
/// at ATT_MTU 23 every PDU fits one 27-byte ACL packet, so they are whole there).
func sentATTPDUs(_ path: String) throws -> [[UInt8]] {
    try BTSnoopFile(path: path).records.compactMap { record in
        guard record.direction == .sent, case let .packet(type, body) = record.content, type == .acl, body.count >= 9
        else { return nil }
        let bytes = Array(body)
        // Packet boundary 0b01 is a continuation: no L2CAP header in it.
        guard (bytes[1] >> 4) & 0x3 != 0b01, bytes[6] == 0x04, bytes[7] == 0x00 else { return nil }
        return Array(bytes[8...])
    }
}

/// Services, characteristics and descriptors as one comparable value.
struct DiscoveredTree: Equatable {
    var services: [Service] = []
    var characteristics: [AttributeHandle: [Characteristic]] = [:]
    var descriptors: [AttributeHandle: [Descriptor]] = [:]

    var allCharacteristics: [Characteristic] { services.flatMap { characteristics[$0.handle] ?? [] } }
    var allDescriptors: [Descriptor] { allCharacteristics.flatMap { descriptors[$0.valueHandle] ?? [] } }
}

extension IntegrationTests {
    /// Connects to the peer's (first) peripheral with the whole stack and exchanges MTUs
    /// (unless `exchangeMTU` is false). Whatever fails on the way is closed again.
    func openGATT(
        _ peer: TestPeer, preferredMTU: UInt16 = ATTBearer.maximumMTU, exchangeMTU: Bool = true,
        capture: BTSnoopWriter? = nil
    ) async throws -> GATTLink {
        let threadsBefore = readerThreads()
        let clock = ManualClock()
        let controller = HCIController(
            transport: try TransportSpec(parsing: peer.transport).open(capture: capture), clock: clock,
            configuration: quiet)
        let manager = ConnectionManager(controller: controller, logger: .silent)
        let l2cap = L2CAPChannels(controller: controller, logger: .silent)
        let bearers = ATTBearers(
            controller: controller, channels: l2cap, preferredMTU: preferredMTU, logger: .silent)
        bearers.server = LocalGATTServer()
        do {
            try await controller.start()
            let connection = try await manager.connect(
                to: try #require(BluetoothAddress(peer.address)), type: .random, timeout: .seconds(10))
            let client = GATTClient(bearer: try bearers.bearer(for: connection.handle))
            if exchangeMTU { try await client.exchangeMTU() }
            return GATTLink(
                controller: controller, clock: clock, manager: manager, l2cap: l2cap, bearers: bearers,
                connection: connection, client: client, threadsBefore: threadsBefore)
        } catch {
            bearers.close()
            l2cap.close()
            manager.close()
            controller.close()
            throw error
        }
    }

    /// Ends the link if it is still up and checks that nothing of it is left: no bearer, no
    /// request waiting, no PDU dropped or discarded on the way, then everything
    /// ``expectNothingLeftOver(_:_:_:l2cap:threadsBefore:sourceLocation:)`` checks. Closes
    /// everything.
    func closeGATT(_ link: GATTLink, sourceLocation: SourceLocation = #_sourceLocation) async {
        if link.manager.connections[link.handle] != nil {
            do { try await link.manager.disconnect(link.handle) } catch {
                Issue.record("disconnect: \(error)", sourceLocation: sourceLocation)
            }
        }
        #expect(link.bearers.bearers.isEmpty, "no bearer left", sourceLocation: sourceLocation)
        #expect(!link.bearer.isOpen, "the link's bearer closed with it", sourceLocation: sourceLocation)
        #expect(
            !link.bearer.hasOutstandingRequest && link.bearer.queuedRequests == 0, "no ATT request left",
            sourceLocation: sourceLocation)
        #expect(link.bearer.discardedPDUs == 0, "no ATT PDU discarded", sourceLocation: sourceLocation)
        #expect(link.l2cap.droppedFrames == 0, "no L2CAP frame dropped", sourceLocation: sourceLocation)
        link.bearers.close()
        await expectNothingLeftOver(
            link.controller, link.manager, link.clock, l2cap: link.l2cap, threadsBefore: link.threadsBefore,
            sourceLocation: sourceLocation)
    }

    /// Every service, characteristic and descriptor, with the client's procedures.
    func discoverTree(_ client: GATTClient) async throws(GATTError) -> DiscoveredTree {
        var tree = DiscoveredTree()
        tree.services = try await client.discoverPrimaryServices()
        for service in tree.services {
            let characteristics = try await client.discoverCharacteristics(in: service)
            tree.characteristics[service.handle] = characteristics
            for characteristic in characteristics {
                tree.descriptors[characteristic.valueHandle] = try await client.discoverDescriptors(of: characteristic)
            }
        }
        return tree
    }

    /// Waits until the peer's log contains `text`; false after `seconds`. For facts only
    /// the peer knows (how many notifications a flood really sent); the wait ends as soon
    /// as the line is there.
    func peerLogs(_ peer: TestPeer, _ text: String, seconds: Int = 10) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if peer.log.contains(text) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return peer.log.contains(text)
    }

    /// The error `body` fails with, or nil (and an issue) if it succeeds.
    func failure<T: Sendable>(
        _ body: () async throws(GATTError) -> T, sourceLocation: SourceLocation = #_sourceLocation
    ) async -> GATTError? {
        do {
            let value = try await body()
            Issue.record("expected an error, got \(value)", sourceLocation: sourceLocation)
            return nil
        } catch {
            return error
        }
    }
}
