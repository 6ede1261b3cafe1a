import Bluejay
import BluetoothCore
import Foundation
import HCI
import DiscoveryCache
import GATT
import HCITestSupport
import Testing

extension IntegrationTests {
    static let custom = ServiceIdentifier(uuid: "B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A00")
    static let floodCharacteristic = CharacteristicIdentifier(
        uuid: "B1E70007-9D3B-4C7A-8A5E-6F2D0C1B0A00", service: custom)
    static let controlPoint = CharacteristicIdentifier(uuid: "B1E70006-9D3B-4C7A-8A5E-6F2D0C1B0A00", service: custom)

    /// The peer's flood command: `count` notifications on …0007 carrying sequence numbers.
    static func flood(_ count: UInt32, length: UInt16 = 20) -> [UInt8] {
        [0x01] + withUnsafeBytes(of: count.littleEndian, Array.init)
            + withUnsafeBytes(of: length.littleEndian, Array.init)
    }

    /// The sequence numbers of flood values.
    static func sequence(_ values: [[UInt8]]) -> [UInt32] {
        values.map { UInt32($0[0]) | UInt32($0[1]) << 8 | UInt32($0[2]) << 16 | UInt32($0[3]) << 24 }
    }

    /// A central on the peer's four peripherals: all connected at once; each floods a
    /// different count at the same time and every value arrives on its own peripheral's
    /// stream, complete and in order (interleaved on the controller, none lost or
    /// misattributed); an app that does not keep up with one does not hold up the others.
    @Test func centralStreamsFromFourPeripheralsAtOnce() async throws {
        let peer = try await TestPeer(arguments: ["--peripherals", "4"])
        defer { peer.stop() }
        let store = StoreDirectory(path: NSTemporaryDirectory() + "bluejay-central-\(UUID().uuidString)")
        let central = try await Central(transport: peer.transport, store: store, logger: .silent)
        defer { central.close() }
        // The scan finds all four (each once: duplicates filtered).
        var found: [String] = []
        for try await discovery in central.startScanning(forServiceUUIDs: [BluetoothUUID(UInt16(0x180D))]) {
            found.append(discovery.peripheralIdentifier.address.description)
            if found.count == 4 { break }
        }
        await central.stopScanning()
        #expect(found.sorted() == peer.addresses.sorted())
        let peripherals = try peer.addresses.map { central.peripheral(try PeripheralIdentifier("\($0)/random")) }
        try #require(peripherals.count == 4)
        for peripheral in peripherals { try await peripheral.connect(connectionTimeout: .seconds(10)) }
        #expect(central.retrieveConnectedPeripherals().count == 4)

        let counts: [UInt32] = [300, 400, 500, 600]
        var streams: [PeripheralValues] = []
        for peripheral in peripherals { streams.append(try await peripheral.values(of: Self.floodCharacteristic)) }
        for (index, peripheral) in peripherals.enumerated() {
            try await peripheral.write(to: Self.controlPoint, bytes: Self.flood(counts[index]))
        }
        // Peripheral 1's app is stuck: nothing reads its stream until the other three have
        // all of theirs, so they cannot have waited for it; then it reads slowly (a
        // millisecond a value) and still gets every value.
        var received: [Int: [[UInt8]]] = [:]
        for index in [1, 2, 3, 0] {
            var values: [[UInt8]] = []
            for try await value in streams[index] {
                values.append(value)
                if index == 0 { try await Task.sleep(for: .milliseconds(1)) }
                if values.count == Int(counts[index]) { break }
            }
            received[index] = values
        }
        for (index, count) in counts.enumerated() {
            let values = try #require(received[index])
            #expect(
                Self.sequence(values) == Array(0..<count),
                "peripheral \(index + 1): every value, in order, and only its own")
        }
    }

    /// A gateway whose app's main thread is busy: with the main actor blocked until the
    /// central's work is done (or the hang guard gives up), four peripherals connect,
    /// answer a read and stream every value, in order. Nothing of a ``Central`` may wait for
    /// the main actor; if anything did, this would stall until the guard and fail.
    @Test func centralKeepsWorkingWhileTheMainActorIsBlocked() async throws {
        let peer = try await TestPeer(arguments: ["--peripherals", "4"])
        defer { peer.stop() }
        let store = StoreDirectory(path: NSTemporaryDirectory() + "bluejay-central-\(UUID().uuidString)")
        let central = try await Central(transport: peer.transport, store: store, logger: .silent)
        defer { central.close() }

        let blocked = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let mainActor = Task { @MainActor () -> Bool in
            blocked.signal()
            // Released by the test once the central's work is done; a timeout is a stall.
            return release.wait(timeout: .now() + .seconds(Int(hangGuardWait.components.seconds))) == .success
        }
        await blocking { blocked.wait() }

        let peripherals = try peer.addresses.map { central.peripheral(try PeripheralIdentifier("\($0)/random")) }
        for peripheral in peripherals { try await peripheral.connect(connectionTimeout: .seconds(10)) }
        let deviceName = CharacteristicIdentifier(
            uuid: BluetoothUUID(UInt16(0x2A00)), service: ServiceIdentifier(uuid: BluetoothUUID(UInt16(0x1800))))
        let name = String(decoding: try await peripherals[1].read(from: deviceName), as: UTF8.self)
        var streams: [PeripheralValues] = []
        for peripheral in peripherals { streams.append(try await peripheral.values(of: Self.floodCharacteristic)) }
        let count: UInt32 = 400
        for peripheral in peripherals { try await peripheral.write(to: Self.controlPoint, bytes: Self.flood(count)) }
        var received: [[UInt32]] = []
        for stream in streams {
            var values: [[UInt8]] = []
            for try await value in stream {
                values.append(value)
                if values.count == Int(count) { break }
            }
            received.append(Self.sequence(values))
        }
        release.signal()
        #expect(await mainActor.value, "the central's work finished while the main actor was still blocked")
        #expect(name == "Bluejay HRM 2")
        for (index, sequence) in received.enumerated() {
            #expect(sequence == Array(0..<count), "peripheral \(index + 1): every value, in order")
        }
    }

    /// A characteristic of a secondary service (reachable only through an include) is found
    /// by its ``ServiceIdentifier`` like any other: lazily on one link (the primary lookup
    /// finds nothing, the secondary sweep finds it), and from the cache a full discovery
    /// filled on the next.
    @Test func aSecondaryServiceIsReachableFromTheAPI() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let store = StoreDirectory(path: NSTemporaryDirectory() + "bluejay-secondary-\(UUID().uuidString)")
        let included = CharacteristicIdentifier(
            uuid: "B1E70202-9D3B-4C7A-8A5E-6F2D0C1B0A00",
            service: ServiceIdentifier(uuid: "B1E70201-9D3B-4C7A-8A5E-6F2D0C1B0A00"))
        let central = try await Central(transport: peer.transport, store: store, logger: .silent)
        defer { central.close() }
        let peripheral = central.peripheral(try PeripheralIdentifier("\(peer.address)/random"))
        try await peripheral.connect(connectionTimeout: .seconds(10))
        #expect(try await peripheral.read(from: included) == Array("Bluejay included".utf8))
        // A full discovery lists it (marked secondary) and the cache keeps it.
        let all = try await peripheral.discoverServices()
        #expect(all.contains(included))
        await peripheral.disconnect()
        try await peripheral.connect(connectionTimeout: .seconds(10))
        #expect(try await peripheral.read(from: included) == Array("Bluejay included".utf8))
        let cached = try #require(DiscoveryCache(store: store).entry(for: "\(peer.address)/random"))
        #expect(cached.database.services.contains { !$0.isPrimary && $0.uuid == included.service.uuid })
    }

    /// BlueCap's `CentralManager`, name for name with async/await: the state stream, a scan
    /// with a capacity and a timeout that ends it, discovery of chosen services and
    /// characteristics, the connected peripherals by service and the known ones by UUID, a
    /// read that times out (the peer goes silent), `forcedDisconnect` and `terminate()`.
    @Test func centralManagerAsBlueCapNamesIt() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let store = StoreDirectory(path: NSTemporaryDirectory() + "bluejay-manager-\(UUID().uuidString)")
        let manager: CentralManager = try await CentralManager(transport: peer.transport, store: store, logger: .silent)
        var states = manager.whenStateChanges().makeAsyncIterator()
        #expect(await states.next() == .poweredOn)
        #expect(manager.state == .poweredOn)

        let heartRate = BluetoothUUID(UInt16(0x180D))
        // The loop ends only because the scan's timeout ends the stream (no break, no
        // stopScanning); what it found, if anything on a busy machine, is the peer alone.
        var found: [PeripheralIdentifier] = []
        for try await discovery in manager.startScanning(
            forServiceUUIDs: [heartRate], capacity: 10, timeout: .seconds(2))
        {
            found.append(discovery.peripheral)
        }
        let peerAddress: String = peer.address
        #expect(
            found.allSatisfy { (identifier: PeripheralIdentifier) -> Bool in
                identifier.address.description == peerAddress
            }, "\(found)")

        let peripheral = manager.peripheral(try PeripheralIdentifier("\(peer.address)/random"))
        try await peripheral.connect(connectionTimeout: .seconds(10))
        #expect(manager.retrieveConnectedPeripherals(withServices: [heartRate]).isEmpty, "not discovered yet")
        let services = try await peripheral.discoverServices(
            [heartRate, BluetoothUUID(UInt16(0x1812))], timeout: hangGuardWait)
        let heartRateService = ServiceIdentifier(uuid: heartRate)
        #expect(services == [heartRateService])
        let connected: [PeripheralIdentifier] = manager.retrieveConnectedPeripherals(withServices: [heartRate]).map(
            \.identifier)
        #expect(connected == [peripheral.identifier])
        let bodySensorLocation = BluetoothUUID(UInt16(0x2A38))
        let characteristics = try await peripheral.discoverCharacteristics([bodySensorLocation], of: heartRateService)
        #expect(characteristics == [CharacteristicIdentifier(uuid: bodySensorLocation, service: heartRateService)])
        let retrieved: [PeripheralIdentifier] = manager.retrievePeripherals(withIdentifiers: [
            peripheral.identifier.uuid
        ]).map(\.identifier)
        #expect(retrieved == [peripheral.identifier])
        #expect(manager.retrievePeripherals(withIdentifiers: [UUID()]).isEmpty)

        // The peer stops answering: a read with a timeout gives up, by name.
        try await peripheral.write(to: Self.controlPoint, bytes: [0x0A])
        do {
            _ = try await peripheral.read(from: characteristics[0], timeout: .milliseconds(300))
            Issue.record("a read the peer never answers returned")
        } catch {
            guard case .operationTimedOut = error else { Issue.record("\(error)"); return }
        }

        let events = peripheral.connectionEvents()
        await peripheral.terminate()
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next() == .forcedDisconnect)
        #expect(manager.retrievePeripherals().isEmpty, "terminate() forgets the peripheral")
        manager.close()
        #expect(await states.next() == .poweredOff)
        #expect(await states.next() == nil)
        #expect(manager.state == .poweredOff)
    }

    /// One peripheral dropped by the peer reconnects under the policy (events: disconnected,
    /// reconnecting, connected), its listen restored, while another keeps streaming.
    @Test func centralReconnectsADroppedPeripheralWhileOthersStream() async throws {
        let peer = try await TestPeer(arguments: ["--peripherals", "2"])
        defer { peer.stop() }
        let store = StoreDirectory(path: NSTemporaryDirectory() + "bluejay-central-\(UUID().uuidString)")
        let central = try await Central(transport: peer.transport, store: store, logger: .silent)
        defer { central.close() }
        let dropped = central.peripheral(try PeripheralIdentifier("\(peer.addresses[0])/random"))
        let steady = central.peripheral(try PeripheralIdentifier("\(peer.addresses[1])/random"))
        let events = dropped.connectionEvents()
        try await dropped.connect(disconnectRetries: 3, reconnectDelay: .milliseconds(50))
        try await steady.connect()
        let droppedValues = try await dropped.values(of: Self.floodCharacteristic)
        let steadyValues = try await steady.values(of: Self.floodCharacteristic)

        // The peer ends the first link (control point 02, reason 0x13) while the second floods.
        try await steady.write(to: Self.controlPoint, bytes: Self.flood(2000))
        try await dropped.write(to: Self.controlPoint, bytes: [0x02, 0x13])
        var seen: [PeripheralEvent] = []
        for await event in events {
            seen.append(event)
            if seen.count >= 2, event == .connected { break }
        }
        #expect(seen.first == .connected)
        #expect(seen.contains(.disconnected(.remoteUserTerminatedConnection)))
        #expect(seen.contains(.reconnecting(attempt: 1, delay: .milliseconds(50))))
        #expect(dropped.state == .connected)

        // The restored listen carries a new flood; the steady stream lost nothing meanwhile.
        try await dropped.write(to: Self.controlPoint, bytes: Self.flood(100))
        var afterReconnect: [[UInt8]] = []
        for try await value in droppedValues {
            afterReconnect.append(value)
            if afterReconnect.count == 100 { break }
        }
        #expect(Self.sequence(afterReconnect) == Array(0..<100))
        var steadyReceived: [[UInt8]] = []
        for try await value in steadyValues {
            steadyReceived.append(value)
            if steadyReceived.count == 2000 { break }
        }
        #expect(Self.sequence(steadyReceived) == Array(0..<2000))

        // A disconnection asked for ends the value streams without an error, and no
        // reconnection follows it.
        let another = try await dropped.values(of: Self.floodCharacteristic)
        await dropped.disconnect()
        var ended = false
        do {
            for try await _ in another {}
            ended = true
        } catch {
            Issue.record("the stream of a peripheral disconnected on purpose threw \(error)")
        }
        #expect(ended && dropped.state == .disconnected)
    }
}

extension IntegrationTests {
    /// `bluejay monitor` on two peripherals: both connect, values of both arrive as
    /// `{"address", "handle", "value"}` lines, and Ctrl-C (SIGINT) ends it with status 0
    /// after unsubscribing and disconnecting.
    @Test func monitorStreamsUntilInterrupted() async throws {
        let peer = try await TestPeer(arguments: ["--peripherals", "2", "--heart-rate-on-subscribe"])
        defer { peer.stop() }
        let process = Process()
        process.executableURL = Repository.bluejay
        process.arguments =
            ["monitor"] + peer.addresses.map { "\($0)/random" }
            + ["--service", "180D", "--characteristic", "2A37", "--json", "--transport", peer.transport]
        var environment = ProcessInfo.processInfo.environment
        environment["BLUEJAY_STORE"] = NSTemporaryDirectory() + "bluejay-monitor-\(UUID().uuidString)"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()

        // Read lines until each peripheral has given two values.
        var lines: [[String: Any]] = []
        var pending = [UInt8]()
        let reader = output.fileHandleForReading
        func values(from address: String) -> Int {
            lines.filter { $0["address"] as? String == address && $0["value"] != nil }.count
        }
        while peer.addresses.contains(where: { values(from: $0) < 2 }) {
            let chunk = await availableData(reader)
            if chunk.isEmpty { break }
            pending += chunk
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Data(pending[..<newline])
                pending.removeSubrange(...newline)
                lines.append(try #require(try JSONSerialization.jsonObject(with: line) as? [String: Any]))
            }
        }
        kill(process.processIdentifier, SIGINT)
        await waitUntilExit(process)
        #expect(process.terminationStatus == 0)
        for address in peer.addresses {
            #expect(lines.contains { $0["address"] as? String == address && $0["event"] as? String == "connected" })
            #expect(values(from: address) >= 2, "\(address)")
            let first = try #require(lines.first { $0["address"] as? String == address && $0["value"] != nil })
            #expect(first["handle"] as? Int != nil && (first["value"] as? String)?.hasPrefix("00") == true)
        }
    }
}
