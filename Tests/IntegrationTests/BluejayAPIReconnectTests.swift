import ATT
import Bluejay
import BluetoothCore
import DiscoveryCache
import Foundation
import HCI
import HCITestSupport
import Synchronization
import TestTraits
import Testing
import TraceDecoding

// The Bluejay API against the peer, continued (BluejayAPITests.swift): listen restoration,
// reconnection, the rest of the async mirror, and the bonded fast path (bounds on what an app
// does not consume: BluejayAPIBoundsTests.swift).

/// Takes back (or refuses) every listen offered after a restart.
@MainActor
final class Restorer: ListenRestorer {
    weak var bluejay: Bluejay?
    let accept: Bool
    var offered: [CharacteristicIdentifier] = []
    var values: [Data] = []
    var onValue: (() -> Void)?

    init(accept: Bool) { self.accept = accept }

    func willRestoreListen(on characteristic: CharacteristicIdentifier) -> Bool {
        offered.append(characteristic)
        guard accept else { return false }
        bluejay?.restoreListen(to: characteristic) { [weak self] (result: ReadResult<Data>) in
            guard case let .success(value) = result else { return }
            self?.values.append(value)
            self?.onValue?()
        }
        return true
    }
}

extension IntegrationTests.BluejayAPITests {
    /// The process "stops" while connected and listening (the host goes away without a
    /// disconnect); a new Bluejay on the same store reconnects by itself and offers the
    /// listen to its restorer, which takes it back: indications flow again. A restorer that
    /// refuses gets the listen turned off.
    @Test func bluejayListenRestorationAcrossARestart() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let store = temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store) }

        // First life: connect and listen, then vanish without disconnecting.
        let first = Bluejay()
        first.start(mode: .new(options(peer, store, restore: .enable("demo"))))
        #expect(first.isBackgroundRestorationEnabled)
        let peripheral = PeripheralIdentifier(
            address: try #require(BluetoothAddress(peer.address)), addressType: .random)
        _ = try await first.connect(peripheral)
        let subscribed: WriteResult = await withCheckedContinuation { done in
            first.listen(to: Self.indicated) { (_: ReadResult<Data>) in }
            first.write(to: Self.controlPoint, value: Data([0x04, 0x00])) { done.resume(returning: $0) }
        }
        guard case .success = subscribed else { Issue.record("first life: \(subscribed)"); return }
        let record = try String(contentsOfFile: store + "/restoration/demo.json", encoding: .utf8)
        #expect(record.contains(peer.address) && record.contains("B1E70003-9D3B-4C7A-8A5E-6F2D0C1B0A00"))
        await shutDown(first)

        // Second life: the restorer takes the listen back.
        let restorer = Restorer(accept: true)
        let second = Bluejay()
        restorer.bluejay = second
        let recorder = EventRecorder()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            recorder.onConnected = { done.resume() }
            second.start(
                connectionObserver: recorder,
                mode: .new(options(peer, store, restore: .enableWithListenRestorer("demo", restorer))))
        }
        recorder.onConnected = nil
        #expect(second.peripheral == peripheral)
        await withCheckedContinuation { done in
            restorer.onValue = { done.resume() }
            second.write(to: Self.controlPoint, value: Data([0x04, 0x5A])) { _ in }
        }
        restorer.onValue = nil
        #expect(restorer.offered == [Self.indicated])
        #expect(restorer.values == [Data([0x5A])])
        await shutDown(second)

        // Third life: a restorer that refuses; the listen is turned off, so the peer will
        // not indicate (its control point answers with an error).
        let refusing = Restorer(accept: false)
        let third = Bluejay()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            recorder.onConnected = { done.resume() }
            third.start(
                connectionObserver: recorder,
                mode: .new(options(peer, store, restore: .enableWithListenRestorer("demo", refusing))))
        }
        let refused: WriteResult = await withCheckedContinuation { done in
            third.write(to: Self.controlPoint, value: Data([0x04, 0x01])) { done.resume(returning: $0) }
        }
        #expect(refusing.offered == [Self.indicated])
        guard case .failure = refused else { Issue.record("the refused listen still indicates: \(refused)"); return }
        try await third.disconnect()
        let cleared = try String(contentsOfFile: store + "/restoration/demo.json", encoding: .utf8)
        #expect(!cleared.contains(peer.address), "an asked-for disconnect leaves nothing to restore")
        await shutDown(third)
    }
}

/// Records connection events and answers the disconnect handler's question.
@MainActor
final class EventRecorder: ConnectionObserver, DisconnectHandler {
    var events: [String] = []
    var onConnected: (() -> Void)?
    var reconnectError: (any Error)?

    func bluetoothAvailable(_ available: Bool) { events.append("available \(available)") }
    func connected(to peripheral: PeripheralIdentifier) {
        events.append("connected")
        onConnected?()
    }
    func disconnected(from peripheral: PeripheralIdentifier) { events.append("disconnected") }
    func reconnecting(to peripheral: PeripheralIdentifier, attempt: Int) { events.append("reconnecting \(attempt)") }
    func reconnectFailed(to peripheral: PeripheralIdentifier, error: any Error) {
        events.append("reconnect failed")
        reconnectError = error
    }
    func didDisconnect(
        from peripheral: PeripheralIdentifier, with error: (any Error)?, willReconnect autoReconnect: Bool
    ) -> AutoReconnectMode {
        events.append("handler error=\(error != nil) reconnect=\(autoReconnect)")
        return .noChange
    }
}

extension IntegrationTests.BluejayAPITests {
    /// The peer drops the link (control point 0x02): Bluejay tells the handler, reconnects
    /// with the last connect's timeout (its observers hear of the attempt), and the listen
    /// goes on delivering.
    @Test func bluejayAutoReconnectResumesListens() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let store = temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let recorder = EventRecorder()
        let bluejay = Bluejay()
        bluejay.register(connectionObserver: recorder)
        bluejay.registerDisconnectHandler(handler: recorder)
        let bluejayConnected = try await connectedBluejay(peer, store: store, bluejay: bluejay)
        #expect(bluejayConnected === bluejay)

        var values: [Data] = []
        let next = CheckedBox<CheckedContinuation<Void, Never>>()
        bluejay.listen(to: Self.indicated) { (result: ReadResult<Data>) in
            guard case let .success(value) = result else { return }
            values.append(value)
            next.value?.resume()
            next.value = nil
        }
        await withCheckedContinuation { done in
            next.value = done
            bluejay.write(to: Self.controlPoint, value: Data([0x04, 0x01])) { _ in }
        }
        // The peer drops the link; wait for the reconnection.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            recorder.onConnected = { done.resume() }
            bluejay.write(to: Self.controlPoint, value: Data([0x02, 0x13])) { _ in }
        }
        recorder.onConnected = nil
        #expect(bluejay.isConnected && bluejay.shouldAutoReconnect)
        #expect(try bluejay.isListening(to: Self.indicated))
        // The listen was resumed on the new link: an indication reaches the same callback.
        await withCheckedContinuation { done in
            next.value = done
            bluejay.write(to: Self.controlPoint, value: Data([0x04, 0x02])) { _ in }
        }
        #expect(values == [Data([0x01]), Data([0x02])])
        let recorderEvents: [String] = [
            "available true", "connected", "disconnected", "handler error=true reconnect=true", "reconnecting 1",
            "connected",
        ]
        #expect(recorder.events == recorderEvents)

        _ =
            await withCheckedContinuation { done in bluejay.disconnect { done.resume(returning: $0) } }
            as DisconnectionResult
        #expect(recorder.events.suffix(2) == ["disconnected", "handler error=false reconnect=false"])
        #expect(!bluejay.isConnected)
        await shutDown(bluejay)
    }
}

extension IntegrationTests.BluejayAPITests {
    /// The peer drops the link and goes out of range (control point 0x0C): every attempt
    /// of the policy times out, the observers hear each attempt and the failure, the listen
    /// ends with the disconnection, and Bluejay stays disconnected.
    @Test func bluejayAutoReconnectGivesUpAfterThePolicysAttempts() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let store = temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let recorder = EventRecorder()
        let bluejay = Bluejay()
        bluejay.register(connectionObserver: recorder)
        bluejay.registerDisconnectHandler(handler: recorder)
        bluejay.autoReconnectPolicy = AutoReconnectPolicy(attempts: 2, retryDelay: .milliseconds(100))
        bluejay.start(mode: .new(options(peer, store)))
        let peripheral = PeripheralIdentifier(
            address: try #require(BluetoothAddress(peer.address)), addressType: .random)
        let connected: ConnectionResult = await withCheckedContinuation { done in
            bluejay.connect(peripheral, timeout: .seconds(1)) { done.resume(returning: $0) }
        }
        guard case .success = connected else { Issue.record("connect: \(connected)"); return }

        var ended: ReadResult<Data>?
        bluejay.listen(to: Self.indicated) { (result: ReadResult<Data>) in
            if case .success = result { return }
            ended = result
        }
        // The write's own outcome is not asserted: the drop may overtake its response.
        bluejay.write(to: Self.controlPoint, value: Data([0x0C, 0x08])) { _ in }
        let gaveUp = await eventually { recorder.events.last == "reconnect failed" && ended != nil }
        #expect(gaveUp, "events: \(recorder.events)")
        #expect(
            recorder.events == [
                "available true", "connected", "disconnected", "handler error=true reconnect=true",
                "reconnecting 1", "reconnecting 2", "reconnect failed",
            ])
        #expect("\(recorder.reconnectError.map { "\($0)" } ?? "none")" == "\(BluejayError.connectionTimedOut)")
        // The listen ends with what ended the link: the peer's supervision timeout.
        guard case let .failure(error)? = ended else {
            Issue.record("the listen ended with \(String(describing: ended))"); return
        }
        #expect("\(error)" == "\(BluejayError.disconnected(.connectionTimeout))")
        #expect(!bluejay.isConnected && !bluejay.isConnecting)
        #expect(bluejay.statistics(for: peripheral).timeoutCount == 2)
        await shutDown(bluejay)
    }
}

/// Turns auto-reconnection off at the first disconnection.
@MainActor
final class NoReconnect: DisconnectHandler {
    func didDisconnect(
        from peripheral: PeripheralIdentifier, with error: (any Error)?, willReconnect autoReconnect: Bool
    ) -> AutoReconnectMode {
        .change(shouldAutoReconnect: false)
    }
}

/// A mutable slot shared with a callback on the main actor.
@MainActor
final class CheckedBox<Value> {
    var value: Value?
}

/// A counter shared with callbacks on another queue.
final class SharedCount: Sendable {
    private let state = Mutex(0)
    var value: Int { state.withLock { $0 } }
    func increment() { state.withLock { $0 += 1 } }
}

extension IntegrationTests.BluejayAPITests {
    /// The rest of the async mirror against the peer: the state stream, discover, a
    /// background task, endListen, readRSSI (which Bumble's controller refuses).
    @Test func bluejayAsyncAPICompletesTheSet() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let store = temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let bluejay = Bluejay()
        var states = bluejay.states.makeAsyncIterator()
        bluejay.start(mode: .new(options(peer, store)))
        #expect(await states.next() == .bluetoothAvailable(true))

        var found: ScanDiscovery?
        for try await discovery in bluejay.discoveries(serviceIdentifiers: [ServiceIdentifier(uuid: "180D")]) {
            found = discovery
            break
        }
        let peripheral = try await bluejay.connect(try #require(found).peripheralIdentifier)
        #expect(await states.next() == .connected(peripheral))

        let characteristics = try await bluejay.discover([ServiceIdentifier(uuid: "180D")])
        #expect(characteristics.map(\.uuid).contains(BluetoothUUID("2A38")!), "\(characteristics)")
        #expect(characteristics.allSatisfy { $0.service.uuid == BluetoothUUID("180D") })

        let sensor = CharacteristicIdentifier(uuid: "2A38", service: ServiceIdentifier(uuid: "180D"))
        let location = try await bluejay.run { peripheral -> UInt8 in
            try peripheral.write(to: sensor, value: UInt8(5))
            return try peripheral.read(from: sensor)
        }
        #expect(location == 5)

        // The queue is FIFO: the listen is on by the time the endListen behind it runs.
        bluejay.listen(to: Self.indicated) { (_: ReadResult<Data>) in }
        try await bluejay.endListen(to: Self.indicated)
        #expect(try bluejay.isListening(to: Self.indicated) == false)

        do {
            _ = try await bluejay.readRSSI()
            Issue.record("Bumble's controller answered Read RSSI")
        } catch {
            guard case .connection = error as? BluejayError else {
                Issue.record("expected a connection error, got \(error)"); return
            }
        }

        #expect(try await bluejay.disconnect() == peripheral)
        #expect(await states.next() == .disconnected(peripheral))
        await shutDown(bluejay)
    }
}

extension IntegrationTests.BluejayAPITests {
    /// Issue #25 item 3 through the public API (`BluetoothHost.client(for:identity:)`): the
    /// first connection pairs on demand (the encrypted characteristic); the second, bonded,
    /// checks the hash and subscribes to Service Changed on the bonded link; the third reads
    /// its first value after only the MTU exchange: no hash read, no CCCD write.
    @Test func bluejayBondedReconnectSkipsTheDatabaseHash() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let store = temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let custom = ServiceIdentifier(uuid: "B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A00")
        let secret = CharacteristicIdentifier(uuid: "B1E70004-9D3B-4C7A-8A5E-6F2D0C1B0A00", service: custom)
        let readOnly = CharacteristicIdentifier(uuid: "B1E70008-9D3B-4C7A-8A5E-6F2D0C1B0A00", service: custom)
        let identifier = PeripheralIdentifier(
            address: try #require(BluetoothAddress(peer.address)), addressType: .random)

        var counts: [[String: Int]] = []
        for run in 1...3 {
            let capture = store + "-run\(run).btsnoop"
            defer { try? FileManager.default.removeItem(atPath: capture) }
            var options = options(peer, store)
            options.capture = capture
            let bluejay = Bluejay()
            bluejay.start(mode: .new(options))
            _ = try await bluejay.connect(identifier)
            if run == 1 {
                let value: Data = try await bluejay.read(from: secret)
                #expect(value == Data("Bluejay secret".utf8))
            }
            let value: Data = try await bluejay.read(from: readOnly)
            #expect(value == Data("Bluejay read-only".utf8))
            _ = try await bluejay.disconnect()
            await shutDown(bluejay)
            counts.append(TraceSummary(file: try BTSnoopFile(path: capture)).att)
        }
        let hashRead = ATTOpcode.readByTypeRequest.description, write = ATTOpcode.writeRequest.description
        #expect(counts[1][hashRead] == 1, "the first bonded connection checks the hash: \(counts[1])")
        #expect(counts[1][write] == 1, "and subscribes to Service Changed on the bonded link: \(counts[1])")
        let requests = counts[2].filter { $0.key.hasSuffix("Request") || $0.key.hasSuffix("_Req") }
        #expect(
            requests == [ATTOpcode.exchangeMTURequest.description: 1, ATTOpcode.readRequest.description: 1],
            "a trusted bonded reconnection: the MTU exchange and the read: \(counts[2])")
    }
}
