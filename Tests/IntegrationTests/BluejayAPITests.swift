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

extension IntegrationTests {
    /// The public Bluejay API against the peer (main actor, as an app uses it). Nested in the
    /// serialized integration suite: its links and reader threads must not overlap the leak
    /// checks of the others.
    @Suite @MainActor
    struct BluejayAPITests {
        /// Bluejay's README flow against the peer, through the public API only: start, scan with
        /// `ScanAction.connect`, read, write, listen, a background task, disconnect — each
        /// callback exactly once, on the main actor.
        @Test func bluejayReadmeFlow() async throws {
            let peer = try await TestPeer()
            defer { peer.stop() }
            let store = temporaryStore()
            defer { try? FileManager.default.removeItem(atPath: store) }

            let heartRateService = ServiceIdentifier(uuid: "180D")
            let sensorLocation = CharacteristicIdentifier(uuid: "2A38", service: heartRateService)
            let custom = ServiceIdentifier(uuid: "B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A00")
            let indicated = CharacteristicIdentifier(uuid: "B1E70003-9D3B-4C7A-8A5E-6F2D0C1B0A00", service: custom)
            let controlPoint = CharacteristicIdentifier(uuid: "B1E70006-9D3B-4C7A-8A5E-6F2D0C1B0A00", service: custom)

            let bluejay = Bluejay()
            bluejay.start(mode: .new(options(peer, store)))

            // Scan and connect from the discovery callback.
            var discoveries = 0
            let connected: ConnectionResult = await withCheckedContinuation { done in
                bluejay.scan(
                    serviceIdentifiers: [heartRateService],
                    discovery: { discovery, _ in
                        discoveries += 1
                        return .connect(discovery, { done.resume(returning: $0) })
                    },
                    stopped: { _, error in
                        #expect(error == nil)
                    })
            }
            guard case let .success(peripheral) = connected else {
                Issue.record("connect failed: \(connected)")
                return
            }
            #expect(peripheral.address == BluetoothAddress(peer.address))
            #expect(discoveries == 1)
            #expect(bluejay.isConnected && !bluejay.isScanning && !bluejay.isConnecting)
            // One peripheral at a time: a second connect fails at once.
            let again: ConnectionResult = await withCheckedContinuation { done in
                bluejay.connect(peripheral) { done.resume(returning: $0) }
            }
            guard case let .failure(already) = again, case .alreadyConnected = already as? BluejayError else {
                Issue.record("second connect: \(again)"); return
            }

            // Read, write, read back.
            let location: ReadResult<UInt8> = await withCheckedContinuation { done in
                bluejay.read(from: sensorLocation) { done.resume(returning: $0) }
            }
            guard case .success(1) = location else { Issue.record("read: \(location)"); return }
            let wrote: WriteResult = await withCheckedContinuation { done in
                bluejay.write(to: sensorLocation, value: UInt8(2)) { done.resume(returning: $0) }
            }
            guard case .success = wrote else { Issue.record("write: \(wrote)"); return }

            // Listen to indications the peer sends when its control point asks it to.
            var values: [Data] = []
            let second = CheckedBox<CheckedContinuation<Void, Never>>()
            var listenEnded = 0
            bluejay.listen(to: indicated) { (result: ReadResult<Data>) in
                switch result {
                case let .success(value):
                    values.append(value)
                    if values.count == 2 { second.value?.resume() }
                case .cancelled: listenEnded += 1  // the background task below ends it
                case let .failure(error): Issue.record("listen: \(error)")
                }
            }
            #expect(try bluejay.isListening(to: indicated))
            await withCheckedContinuation { done in
                second.value = done
                bluejay.write(to: controlPoint, value: Data([0x04, 0xAB])) { _ in }
                bluejay.write(to: controlPoint, value: Data([0x04, 0xCD, 0xEF])) { _ in }
            }
            #expect(values == [Data([0xAB]), Data([0xCD, 0xEF])])

            // A background task: end the listen, reset the location, read it back.
            let run: RunResult<UInt8> = await withCheckedContinuation { done in
                bluejay.run(
                    backgroundTask: { peripheral -> UInt8 in
                        try peripheral.endListen(to: indicated)
                        try peripheral.write(to: sensorLocation, value: UInt8(0))
                        return try peripheral.read(from: sensorLocation)
                    }, completionOnMainThread: { done.resume(returning: $0) })
            }
            guard case .success(0) = run else { Issue.record("background task: \(run)"); return }
            #expect(listenEnded == 1, "the task's endListen ends the listen's callback too")
            #expect(try !bluejay.isListening(to: indicated))

            // A missing characteristic fails by name; the queue goes on.
            let missing = CharacteristicIdentifier(uuid: "2A99", service: heartRateService)
            let refused: ReadResult<UInt8> = await withCheckedContinuation { done in
                bluejay.read(from: missing) { done.resume(returning: $0) }
            }
            guard case let .failure(error) = refused, case .missingCharacteristic = error as? BluejayError else {
                Issue.record("expected missingCharacteristic, got \(refused)")
                return
            }

            let disconnected: DisconnectionResult = await withCheckedContinuation { done in
                bluejay.disconnect { done.resume(returning: $0) }
            }
            guard case .success(peripheral) = disconnected else { Issue.record("disconnect: \(disconnected)"); return }
            #expect(!bluejay.isConnected && !bluejay.shouldAutoReconnect)

            // Asked while not connected: refused at once, not hung.
            let late: ReadResult<UInt8> = await withCheckedContinuation { done in
                bluejay.read(from: sensorLocation) { done.resume(returning: $0) }
            }
            guard case let .failure(notConnected) = late, case .notConnected = notConnected as? BluejayError else {
                Issue.record("expected notConnected, got \(late)")
                return
            }
            await shutDown(bluejay)
        }
    }
}

extension IntegrationTests.BluejayAPITests {
    nonisolated static let custom = ServiceIdentifier(uuid: "B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A00")
    nonisolated static let indicated = CharacteristicIdentifier(
        uuid: "B1E70003-9D3B-4C7A-8A5E-6F2D0C1B0A00", service: custom)
    nonisolated static let controlPoint = CharacteristicIdentifier(
        uuid: "B1E70006-9D3B-4C7A-8A5E-6F2D0C1B0A00", service: custom)

    /// A store directory of the test's own.
    func temporaryStore() -> String { NSTemporaryDirectory() + "bluejay-api-\(UUID().uuidString)" }

    /// Start options for the peer, quiet, in `store`.
    func options(_ peer: TestPeer, _ store: String, restore: BackgroundRestoreMode = .disable) -> StartOptions {
        StartOptions(
            transport: peer.transport, store: StoreDirectory(path: store), logger: .silent, backgroundRestore: restore)
    }

    /// Stops Bluejay and waits until its host has closed (transport thread joined), so
    /// the next test's leak checks do not see it.
    func shutDown(_ bluejay: Bluejay) async {
        guard let host = bluejay.stopAndExtractBluetoothState().host else { return }
        await Task { @BluetoothActor in host.close() }.value
    }

    /// A started Bluejay connected to the peer's first peripheral.
    func connectedBluejay(_ peer: TestPeer, store: String, bluejay: Bluejay = Bluejay()) async throws -> Bluejay {
        bluejay.start(mode: .new(options(peer, store)))
        let peripheral = PeripheralIdentifier(
            address: try #require(BluetoothAddress(peer.address)), addressType: .random)
        let result: ConnectionResult = await withCheckedContinuation { done in
            bluejay.connect(peripheral, timeout: .seconds(10)) { done.resume(returning: $0) }
        }
        guard case .success = result else { throw TestPeerError(description: "connect: \(result)") }
        return bluejay
    }

    /// writeAndListen and writeAndAssemble: a control-point request answered by indications.
    @Test func bluejayBackgroundTaskWriteAndListenAndAssemble() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let store = temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let bluejay = try await connectedBluejay(peer, store: store)

        let run: RunResult<[Data]> = await withCheckedContinuation { done in
            bluejay.run(
                backgroundTask: { peripheral -> [Data] in
                    var got: [Data] = []
                    try peripheral.writeAndListen(
                        writeTo: Self.controlPoint, value: Data([0x04, 0x11, 0x22]), listenTo: Self.indicated,
                        timeoutInSeconds: 10
                    ) { (value: Data) -> ListenAction in
                        got.append(value)
                        return .done
                    }
                    // Two bytes asked for and one indication of two bytes: assembled to exactly two.
                    try peripheral.writeAndAssemble(
                        writeTo: Self.controlPoint, value: Data([0x04, 0x33, 0x44]), listenTo: Self.indicated,
                        expectedLength: 2, timeoutInSeconds: 10
                    ) { (value: UInt16) -> ListenAction in
                        got.append(value.toBluetoothData())
                        return .done
                    }
                    // Nothing more comes: the flush ends after its idle window.
                    var flushed = false
                    try peripheral.flushListen(to: Self.indicated, idleWindow: 1) { flushed = true }
                    if flushed { got.append(Data("flushed".utf8)) }
                    return got
                }, completionOnMainThread: { done.resume(returning: $0) })
        }
        guard case let .success(values) = run else { Issue.record("background task: \(run)"); return }
        #expect(values == [Data([0x11, 0x22]), Data([0x33, 0x44]), Data("flushed".utf8)])

        // More than expected is an error by name, not a silent truncation.
        let tooMuch: RunResult<Void> = await withCheckedContinuation { done in
            bluejay.run(
                backgroundTask: { peripheral in
                    try peripheral.writeAndAssemble(
                        writeTo: Self.controlPoint, value: Data([0x04, 1, 2, 3]), listenTo: Self.indicated,
                        expectedLength: 2, timeoutInSeconds: 10
                    ) { (_: Data) -> ListenAction in .done }
                }, completionOnMainThread: { done.resume(returning: $0) })
        }
        guard case let .failure(error) = tooMuch, case .tooMuchData(expected: 2, actual: 3) = error as? BluejayError
        else {
            Issue.record("expected tooMuchData, got \(tooMuch)")
            return
        }
        _ =
            await withCheckedContinuation { done in bluejay.disconnect { done.resume(returning: $0) } }
            as DisconnectionResult
        await shutDown(bluejay)
    }

    /// The peer drops the link while a background task waits in a listen: the task fails
    /// with the disconnection, once, and later operations are refused, not hung.
    @Test func bluejayDisconnectDuringBackgroundTaskFailsIt() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let store = temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let bluejay = Bluejay()
        let noReconnect = NoReconnect()
        bluejay.registerDisconnectHandler(handler: noReconnect)
        _ = try await connectedBluejay(peer, store: store, bluejay: bluejay)

        var calls = 0
        let run: RunResult<Void> = await withCheckedContinuation { done in
            bluejay.run(
                backgroundTask: { peripheral in
                    // Control point 0x02: the peer disconnects (reason 0x13) while we wait for a value that never comes.
                    try peripheral.writeAndListen(
                        writeTo: Self.controlPoint, value: Data([0x02, 0x13]), listenTo: Self.indicated
                    ) { (_: Data) -> ListenAction in
                        .done
                    }
                },
                completionOnMainThread: { result in
                    calls += 1
                    done.resume(returning: result)
                })
        }
        guard case let .failure(error) = run, case .disconnected = error as? BluejayError else {
            Issue.record("expected disconnected, got \(run)")
            return
        }
        #expect(calls == 1)
        #expect(!bluejay.isConnected && !bluejay.shouldAutoReconnect)
        let late: ReadResult<UInt8> = await withCheckedContinuation { done in
            bluejay.read(from: CharacteristicIdentifier(uuid: "2A38", service: ServiceIdentifier(uuid: "180D"))) {
                done.resume(returning: $0)
            }
        }
        guard case .failure = late else { Issue.record("expected a failure, got \(late)"); return }
        await shutDown(bluejay)
    }
}

extension IntegrationTests.BluejayAPITests {
    /// Connect, cancel, disconnect, connect — rapidly and repeatedly: no crash, no hang, and
    /// every completion called exactly once.
    @Test func bluejayConnectCancelDisconnectStorm() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let store = temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let bluejay = Bluejay()
        bluejay.start(mode: .new(options(peer, store)))
        let peripheral = PeripheralIdentifier(
            address: try #require(BluetoothAddress(peer.address)), addressType: .random)

        var calls: [String: Int] = [:]
        for round in 0..<15 {
            let expected = 3
            var ended = 0
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                func end(_ name: String) {
                    calls[name, default: 0] += 1
                    ended += 1
                    if ended == expected { done.resume() }
                }
                bluejay.connect(peripheral, timeout: .seconds(10)) { _ in end("connect \(round)") }
                if round.isMultiple(of: 2) { bluejay.cancelEverything() }
                bluejay.disconnect { _ in end("disconnect \(round)") }
                bluejay.read(from: CharacteristicIdentifier(uuid: "2A38", service: ServiceIdentifier(uuid: "180D"))) {
                    (_: ReadResult<UInt8>) in
                    end("read \(round)")
                }
            }
        }
        #expect(calls.count == 45)
        #expect(calls.values.allSatisfy { $0 == 1 }, "every completion exactly once: \(calls.filter { $0.value != 1 })")
        // Whatever state the storm left, Bluejay still works.
        if bluejay.isConnected {
            _ =
                await withCheckedContinuation { done in bluejay.disconnect { done.resume(returning: $0) } }
                as DisconnectionResult
        }
        let result: ConnectionResult = await withCheckedContinuation { done in
            bluejay.connect(peripheral, timeout: .seconds(10)) { done.resume(returning: $0) }
        }
        guard case .success = result else { Issue.record("connect after the storm: \(result)"); return }
        let location: ReadResult<UInt8> = await withCheckedContinuation { done in
            bluejay.read(from: CharacteristicIdentifier(uuid: "2A38", service: ServiceIdentifier(uuid: "180D"))) {
                done.resume(returning: $0)
            }
        }
        guard case .success(1) = location else { Issue.record("read after the storm: \(location)"); return }
        _ =
            await withCheckedContinuation { done in bluejay.disconnect { done.resume(returning: $0) } }
            as DisconnectionResult
        await shutDown(bluejay)
    }
}

extension IntegrationTests.BluejayAPITests {
    /// The async mirror: connect, read, write, a stream of indications, disconnect; and a
    /// cancelled task cancels its connect.
    @Test func bluejayAsyncAPI() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let store = temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let bluejay = Bluejay()
        bluejay.start(mode: .new(options(peer, store)))

        // A connect to nobody, cancelled by its task, ends with cancelled (not the 60 s timeout).
        let nobody = PeripheralIdentifier(
            address: try #require(BluetoothAddress("C0:FF:EE:C0:FF:EE")), addressType: .random)
        let attempt = Task { @MainActor in try await bluejay.connect(nobody, timeout: .seconds(60)) }
        while !bluejay.isConnecting { await Task.yield() }
        attempt.cancel()
        do {
            _ = try await attempt.value
            Issue.record("a connect to nobody succeeded")
        } catch {
            guard case .cancelled = error as? BluejayError else {
                Issue.record("expected cancelled, got \(error)"); return
            }
        }
        while bluejay.isConnecting { await Task.yield() }

        var found: ScanDiscovery?
        for try await discovery in bluejay.discoveries(serviceIdentifiers: [ServiceIdentifier(uuid: "180D")]) {
            found = discovery
            break
        }
        let peripheral = try await bluejay.connect(try #require(found).peripheralIdentifier)
        #expect(peripheral.address == BluetoothAddress(peer.address))
        let sensor = CharacteristicIdentifier(uuid: "2A38", service: ServiceIdentifier(uuid: "180D"))
        try await bluejay.write(to: sensor, value: UInt8(3))
        let location: UInt8 = try await bluejay.read(from: sensor)
        #expect(location == 3)

        let stream: AsyncThrowingStream<Data, any Error> = bluejay.values(of: Self.indicated)
        try await bluejay.write(to: Self.controlPoint, value: Data([0x04, 0x0A]))
        try await bluejay.write(to: Self.controlPoint, value: Data([0x04, 0x0B]))
        var received: [Data] = []
        for try await value in stream {
            received.append(value)
            if received.count == 2 { break }
        }
        #expect(received == [Data([0x0A]), Data([0x0B])])
        #expect(try await bluejay.disconnect() == peripheral)
        await shutDown(bluejay)
    }
}
