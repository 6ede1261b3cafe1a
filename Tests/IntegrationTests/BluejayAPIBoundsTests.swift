import Bluejay
import BluetoothCore
import DiscoveryCache
import Foundation
import HCITestSupport
import TestTraits
import Testing

// The Bluejay API against the peer, continued (BluejayAPIReconnectTests.swift): bounds on
// what an app does not consume, and on a value's length.

extension IntegrationTests.BluejayAPITests {
    /// A peer that notifies faster than the app takes values (callbacks on a slow queue of
    /// the app's, through `callbacks(on:)`): the listen's backlog stops at its limit, the listen ends once with
    /// `listenOverflow` after every value before it was delivered, its notifications are
    /// turned off, and the link and a new listen go on.
    @Test(.hangGuard) func bluejayListenOverflowEndsThatListenOnly() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let store = temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let slowApp = DispatchQueue(label: "a slow app")
        let bluejay = Bluejay()
        bluejay.start(
            mode: .new(
                StartOptions(
                    transport: peer.transport, store: StoreDirectory(path: store), logger: .silent,
                    listenBufferLimit: 64)))
        let app = bluejay.callbacks(on: slowApp)
        let peripheral = PeripheralIdentifier(
            address: try #require(BluetoothAddress(peer.address)), addressType: .random)
        let connected: ConnectionResult = await withCheckedContinuation { done in
            bluejay.connect(peripheral, timeout: .seconds(10)) { @Sendable in done.resume(returning: $0) }
        }
        guard case .success = connected else { Issue.record("connect: \(connected)"); return }

        let stream = CharacteristicIdentifier(uuid: "B1E70007-9D3B-4C7A-8A5E-6F2D0C1B0A00", service: Self.custom)
        let received = SharedCount(), ends = SharedCount()
        let ended: BluejayError? = await withCheckedContinuation { done in
            app.listen(to: stream) { (result: ReadResult<Data>) in
                switch result {
                case .success:
                    received.increment()
                    usleep(2000)  // the app's slow work
                case .cancelled:
                    ends.increment()
                    done.resume(returning: nil)
                case let .failure(error):
                    ends.increment()
                    done.resume(returning: error as? BluejayError)
                }
            }
            // Control point 01: 20000 notifications of 20 bytes, as fast as the peer can.
            bluejay.write(to: Self.controlPoint, value: Data([0x01, 0x20, 0x4E, 0x00, 0x00, 0x14, 0x00])) {
                @Sendable _ in
            }
        }
        guard case let .listenOverflow(characteristic, limit)? = ended else {
            Issue.record("the listen ended with \(String(describing: ended))"); return
        }
        #expect(characteristic == stream && limit == 64)
        #expect(
            received.value >= 64 && received.value < 20_000, "\(received.value) values delivered before the overflow")
        #expect(try bluejay.isListening(to: stream) == false)

        // The link goes on: a read, and a new listen on another characteristic.
        let location: ReadResult<UInt8> = await withCheckedContinuation { done in
            bluejay.read(from: CharacteristicIdentifier(uuid: "2A38", service: ServiceIdentifier(uuid: "180D"))) {
                @Sendable in done.resume(returning: $0)
            }
        }
        guard case .success(1) = location else { Issue.record("read after the overflow: \(location)"); return }
        let indication: Data? = await withCheckedContinuation { done in
            let once = SharedCount()
            bluejay.listen(to: Self.indicated) { @Sendable (result: ReadResult<Data>) in
                once.increment()
                guard once.value == 1 else { return }
                if case let .success(value) = result {
                    done.resume(returning: value)
                } else {
                    done.resume(returning: nil)
                }
            }
            bluejay.write(to: Self.controlPoint, value: Data([0x04, 0x5A])) { @Sendable _ in }
        }
        #expect(indication == Data([0x5A]))
        #expect(ends.value == 1, "the overflowed listen ended once")
        let done: DisconnectionResult = await withCheckedContinuation { done in
            bluejay.disconnect { @Sendable in done.resume(returning: $0) }
        }
        guard case .success = done else { Issue.record("disconnect: \(done)"); return }
        await shutDown(bluejay)
    }
}

extension IntegrationTests.BluejayAPITests {
    /// The async mirror keeps the same bound: an iteration slower than the peer gets every
    /// value up to the limit, then `listenOverflow`, and the listen is turned off.
    @Test(.hangGuard) func bluejayValuesStreamOverflowsInsteadOfGrowing() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let store = temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let bluejay = Bluejay()
        bluejay.start(
            mode: .new(
                StartOptions(
                    transport: peer.transport, store: StoreDirectory(path: store), logger: .silent,
                    listenBufferLimit: 32)))
        let peripheral = PeripheralIdentifier(
            address: try #require(BluetoothAddress(peer.address)), addressType: .random)
        _ = try await bluejay.connect(peripheral)
        let stream = CharacteristicIdentifier(uuid: "B1E70007-9D3B-4C7A-8A5E-6F2D0C1B0A00", service: Self.custom)
        let values: AsyncThrowingStream<Data, any Error> = bluejay.values(of: stream)
        // 20000 notifications of 20 bytes.
        try await bluejay.write(to: Self.controlPoint, value: Data([0x01, 0x20, 0x4E, 0x00, 0x00, 0x14, 0x00]))
        var taken = 0
        do {
            for try await _ in values {
                taken += 1
                try await Task.sleep(for: .milliseconds(2))  // the app's slow work
            }
            Issue.record("the stream ended without an error after \(taken) values")
        } catch {
            guard case .listenOverflow(stream, limit: 32)? = error as? BluejayError else {
                Issue.record("ended with \(error)"); return
            }
        }
        #expect(taken >= 32 && taken < 20_000, "\(taken) values taken")
        let listening = await eventually { (try? bluejay.isListening(to: stream)) == false }
        #expect(listening, "the listen was turned off")
        #expect(
            try await bluejay.read(
                from: CharacteristicIdentifier(uuid: "2A38", service: ServiceIdentifier(uuid: "180D"))) as UInt8 == 1)
        try await bluejay.disconnect()
        await shutDown(bluejay)
    }

    /// A value longer than the specification's 512 octets (the peer's tolerance service
    /// serves 600) reads back whole; with `maxValueLength` below its length the read fails
    /// by name, and the link goes on.
    @Test func bluejayReadsAValuePast512OctetsUpToItsLimit() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let store = temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let oversized = CharacteristicIdentifier(
            uuid: "B1E70203-9D3B-4C7A-8A5E-6F2D0C1B0A00",
            service: ServiceIdentifier(uuid: "B1E70200-9D3B-4C7A-8A5E-6F2D0C1B0A00"))
        let expectedBytes: [UInt8] = (0..<600).map { (index: Int) -> UInt8 in UInt8((index * 7 + 3) % 256) }
        let expected = Data(expectedBytes)
        let peripheral = PeripheralIdentifier(
            address: try #require(BluetoothAddress(peer.address)), addressType: .random)
        for limit in [StartOptions.defaultMaxValueLength, 599] {
            let bluejay = Bluejay()
            bluejay.start(
                mode: .new(
                    StartOptions(
                        transport: peer.transport, store: StoreDirectory(path: store), logger: .silent,
                        maxValueLength: limit)))
            _ = try await bluejay.connect(peripheral)
            do {
                let value: Data = try await bluejay.read(from: oversized)
                #expect(limit >= 600, "read \(value.count) octets past a limit of \(limit)")
                #expect(value == expected)
            } catch {
                #expect(limit < 600, "\(error)")
                #expect("\(error)".contains("longer than the 599-octet limit"), "\(error)")
            }
            // The link is still good.
            let bodySensorLocation = CharacteristicIdentifier(uuid: "2A38", service: ServiceIdentifier(uuid: "180D"))
            let location: UInt8 = try await bluejay.read(from: bodySensorLocation)
            #expect(location == 1)
            try await bluejay.disconnect()
            await shutDown(bluejay)
        }
    }
}
