import Bluejay
import BluetoothCore
import DiscoveryCache
import Foundation
import GATT
import HCI
import HCITestSupport
import TestTraits
import Testing
import VirtualController

/// The two faces of the app-facing layer, each on its own, over the in-process virtual
/// controller of `mock:` serving a peripheral declared here: `Bluejay` (one peripheral, the
/// seed API, callbacks on the main actor) and `Central` (many, async). Both stand on the
/// same per-peripheral core (`Peripheral`: the link, its queue, its listens, its
/// reconnection); what is checked is what each face shows of it, including a link the peer
/// drops and the core remakes. No radio, no Python: these run with the unit tests.
@Suite(.hangGuard) @MainActor
struct FaceTests {
    nonisolated static let address = BluetoothAddress("F0:0D:B1:E7:00:21")!
    nonisolated static let identifier = try! PeripheralIdentifier("F0:0D:B1:E7:00:21/random")
    nonisolated static let service = ServiceIdentifier(uuid: "B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A21")
    /// Readable: "face".
    nonisolated static let named = CharacteristicIdentifier(
        uuid: "B1E70002-9D3B-4C7A-8A5E-6F2D0C1B0A21", service: service)
    /// Notifies 1, 2, 3 whenever a client subscribes.
    nonisolated static let counter = CharacteristicIdentifier(
        uuid: "B1E70003-9D3B-4C7A-8A5E-6F2D0C1B0A21", service: service)
    nonisolated static let values: [UInt8] = [1, 2, 3]

    /// The peripheral: one service, a readable characteristic and a notifying one (with its
    /// CCCD) that sends ``values`` each time it is subscribed.
    nonisolated static var peripheral: RecordedPeripheral {
        RecordedPeripheral(
            address: address, addressType: .random, name: "Face",
            attributes: [
                RecordedAttribute(
                    handle: 0x0010, type: .primaryService, value: service.uuid.littleEndianBytes, groupEndHandle: 0x0015
                ),
                RecordedAttribute(
                    handle: 0x0011, type: .characteristic,
                    value: CharacteristicDeclaration(properties: .read, valueHandle: 0x0012, uuid: named.uuid).value),
                RecordedAttribute(handle: 0x0012, type: named.uuid, value: Array("face".utf8)),
                RecordedAttribute(
                    handle: 0x0013, type: .characteristic,
                    value: CharacteristicDeclaration(properties: .notify, valueHandle: 0x0014, uuid: counter.uuid).value
                ),
                RecordedAttribute(handle: 0x0014, type: counter.uuid),
                RecordedAttribute(handle: 0x0015, type: .clientCharacteristicConfiguration),
            ],
            reactions: [
                RecordedReaction(
                    trigger: .subscription(handle: 0x0014),
                    notifications: values.map { RecordedNotification(handle: 0x0014, value: [$0], isIndication: false) }
                )
            ])
    }

    /// A virtual controller with the peripheral in range.
    static func controller() throws -> VirtualController { try VirtualController(peripherals: [peripheral]) }

    static func temporaryStore() -> StoreDirectory {
        StoreDirectory(path: NSTemporaryDirectory() + "bluejay-face-\(UUID().uuidString)")
    }

    // MARK: - Bluejay

    /// What Bluejay told its connection observer, in order.
    @MainActor
    final class Observer: ConnectionObserver {
        private(set) var told: [String] = []
        func bluetoothAvailable(_ available: Bool) { told.append(available ? "available" : "unavailable") }
        func connected(to peripheral: PeripheralIdentifier) { told.append("connected") }
        func disconnected(from peripheral: PeripheralIdentifier) { told.append("disconnected") }
        func reconnecting(to peripheral: PeripheralIdentifier, attempt: Int) { told.append("reconnecting \(attempt)") }
    }

    @Test("Bluejay connects, reads and listens; its link is what the peripheral's core says")
    func bluejayConnectsReadsAndListens() async throws {
        let controller = try Self.controller()
        let store = Self.temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store.path) }
        let bluejay = Bluejay()
        bluejay.start(
            mode: .new(
                StartOptions(transport: "virtual", store: store, logger: .silent, openTransport: { _ in controller })))

        #expect(!bluejay.isConnected && !bluejay.isConnecting)
        let connected: ConnectionResult = await withCheckedContinuation { done in
            bluejay.connect(Self.identifier, timeout: .seconds(30)) { done.resume(returning: $0) }
            // Asked for: connecting at once, before any of it has run.
            #expect(bluejay.isConnecting)
        }
        guard case .success = connected else { Issue.record("connect: \(connected)"); return }
        #expect(bluejay.isConnected && !bluejay.isConnecting)
        #expect(bluejay.peripheral == Self.identifier)

        let read: ReadResult<Data> = await withCheckedContinuation { done in
            bluejay.read(from: Self.named) { done.resume(returning: $0) }
        }
        guard case let .success(name) = read else { Issue.record("read: \(read)"); return }
        #expect(Array(name) == Array("face".utf8))

        var values: [UInt8] = []
        bluejay.listen(to: Self.counter, multipleListenOption: .trap) { (result: ReadResult<UInt8>) in
            if case let .success(value) = result { values.append(value) }
        }
        #expect(await eventually { values == Self.values })
        #expect(try bluejay.isListening(to: Self.counter))

        let disconnected: DisconnectionResult = await withCheckedContinuation { done in
            bluejay.disconnect { done.resume(returning: $0) }
        }
        guard case .success = disconnected else { Issue.record("disconnect: \(disconnected)"); return }
        #expect(!bluejay.isConnected && !bluejay.isConnecting && !bluejay.isDisconnecting)
        #expect(bluejay.peripheral == nil)
        #expect(bluejay.statistics(for: Self.identifier).connectionCount == 1)
        #expect(bluejay.statistics(for: Self.identifier).disconnectionCount == 1)
        if let host = bluejay.stopAndExtractBluetoothState().host {
            await Task { @BluetoothActor in host.close() }.value
        }
    }

    @Test("Bluejay's link dropped by the peer is remade by the core; the listen goes on")
    func bluejayReconnectsAfterADrop() async throws {
        let controller = try Self.controller()
        let store = Self.temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store.path) }
        let bluejay = Bluejay()
        let observer = Observer()
        bluejay.start(
            connectionObserver: observer,
            mode: .new(
                StartOptions(transport: "virtual", store: store, logger: .silent, openTransport: { _ in controller })))
        let connected: ConnectionResult = await withCheckedContinuation { done in
            bluejay.connect(Self.identifier, timeout: .seconds(30)) { done.resume(returning: $0) }
        }
        guard case .success = connected else { Issue.record("connect: \(connected)"); return }

        var values: [UInt8] = []
        var ended: BluejayError?
        bluejay.listen(to: Self.counter, multipleListenOption: .trap) { (result: ReadResult<UInt8>) in
            switch result {
            case let .success(value): values.append(value)
            case let .failure(error): ended = error as? BluejayError
            case .cancelled: ended = .cancelled
            }
        }
        #expect(await eventually { values == Self.values })

        controller.dropLinks()
        // The core subscribes the listen again before the link counts as up: the peer's
        // answer to the new subscription reaches the same callback.
        #expect(await eventually { values == Self.values + Self.values })
        #expect(await eventually { bluejay.isConnected })
        #expect(ended == nil)
        // The link's state is published at once; the observers hear of it in their turn on
        // the main actor, a moment later.
        let told = ["connected", "disconnected", "reconnecting 1", "connected"]
        #expect(await eventually { observer.told.filter { $0 != "available" } == told }, "\(observer.told)")
        #expect(bluejay.statistics(for: Self.identifier).connectionCount == 2)

        // Asked for this time: no reconnection, the listen ends.
        let disconnected: DisconnectionResult = await withCheckedContinuation { done in
            bluejay.disconnect { done.resume(returning: $0) }
        }
        guard case .success = disconnected else { Issue.record("disconnect: \(disconnected)"); return }
        #expect(!bluejay.isConnected && !bluejay.isConnecting)
        #expect(await eventually { ended != nil })
        if let host = bluejay.stopAndExtractBluetoothState().host {
            await Task { @BluetoothActor in host.close() }.value
        }
    }

    // MARK: - Central

    @Test("Central's peripheral connects, reads, streams, and is remade after a drop")
    func centralConnectsReadsStreamsAndReconnects() async throws {
        let controller = try Self.controller()
        let store = Self.temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store.path) }
        let host = try await BluetoothHost(transport: controller, store: store, logger: .silent)
        let central = await Task { @BluetoothActor in Central(host: host) }.value
        let (peripheral, events) = await Task { @BluetoothActor in
            let peripheral = central.peripheral(Self.identifier)
            return (peripheral, peripheral.connectionEvents())
        }.value
        try await peripheral.connect(
            disconnectRetries: 3, connectionTimeout: .seconds(30), reconnectDelay: .milliseconds(10))
        #expect(await peripheral.state == .connected)
        #expect(try await peripheral.read(from: Self.named) == Array("face".utf8))

        var stream = try await peripheral.values(of: Self.counter).makeAsyncIterator()
        for expected in Self.values { #expect(try await stream.next() == [expected]) }

        controller.dropLinks()
        // The same stream goes on on the new link.
        for expected in Self.values { #expect(try await stream.next() == [expected]) }
        #expect(await peripheral.state == .connected)

        await peripheral.disconnect()
        #expect(try await stream.next() == nil)
        #expect(await peripheral.state == .disconnected)
        await central.close()
        var seen: [PeripheralEvent] = []
        for await event in events { seen.append(event) }
        #expect(
            seen == [
                .connected, .disconnected(.connectionTimeout), .reconnecting(attempt: 1, delay: .milliseconds(10)),
                .connected,
                .forcedDisconnect, .disconnected(.connectionTerminatedByLocalHost),
            ])
    }
}
