import Bluejay
import BluetoothCore
import Foundation
import HCI
import HCITestSupport
import TestTraits
import Testing
import VirtualController

/// `Central`'s peripheral statistics and discovered services, as BlueCap's `Peripheral`
/// keeps them (on the virtual controller, FaceTests' peripheral), and `reset()` after a lost
/// controller (on scripted controllers, a new one each time the transport opens).
@Suite(.hangGuard)
struct CentralLifecycleTests {
    @Test @MainActor func aPeripheralCountsItsConnectionsAndKeepsWhatDiscoveryFound() async throws {
        let controller = try FaceTests.controller()
        let store = FaceTests.temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store.path) }
        let host = try await BluetoothHost(transport: controller, store: store, logger: .silent)
        let central = await Task { @BluetoothActor in Central(host: host) }.value
        let never = try PeripheralIdentifier("F0:0D:B1:E7:00:99/random")

        // Discovered by a scan: the peripheral made afterwards knows when.
        let scanned = Date()
        for try await discovery in await central.startScanning()
        where discovery.peripheralIdentifier == FaceTests.identifier { break }
        await central.stopScanning()
        let peripheral = await central.peripheral(FaceTests.identifier)
        let discoveredAt = try #require(await peripheral.discoveredAt, "a scanned peripheral has no discoveredAt")
        #expect(discoveredAt.timeIntervalSince(scanned) > -1 && discoveredAt <= Date())
        #expect(await central.peripheral(never).discoveredAt == nil, "a peripheral never scanned for was 'discovered'")
        let before = await Task { @BluetoothActor in
            (peripheral.connectionCount, peripheral.connectedAt, peripheral.services)
        }.value
        #expect(before.0 == 0 && before.1 == nil && before.2.isEmpty)

        try await peripheral.connect(connectionTimeout: .seconds(30))
        let up = await Task { @BluetoothActor in
            (
                peripheral.connectionCount, peripheral.disconnectionCount, peripheral.connectedAt,
                peripheral.disconnectedAt
            )
        }.value
        #expect(up.0 == 1 && up.1 == 0 && up.2 != nil && up.3 == nil)
        #expect(try await peripheral.discoverServices(nil).contains(FaceTests.service))
        #expect(await peripheral.services.contains(FaceTests.service))
        #expect(Set(await peripheral.characteristics(of: FaceTests.service)) == [FaceTests.named, FaceTests.counter])
        while await peripheral.secondsConnected == 0 { await Task.yield() }
        #expect(await peripheral.totalSecondsConnected == 0, "the current connection counted as a past one")
        #expect(await peripheral.cumlativeSecondsConnected > 0)

        await peripheral.disconnect()
        let statistics = await peripheral.statistics
        #expect(statistics.connectionCount == 1 && statistics.disconnectionCount == 1 && statistics.timeoutCount == 0)
        let connected = try #require(statistics.connectedAt), disconnected = try #require(statistics.disconnectedAt)
        #expect(disconnected > connected)
        // Disconnected: the last connection's length, all of it among the past connections.
        let length = disconnected - connected
        let seconds = Double(length.components.seconds) + Double(length.components.attoseconds) / 1e18
        let after = await Task { @BluetoothActor in
            (
                peripheral.secondsConnected, peripheral.totalSecondsConnected, peripheral.cumlativeSecondsConnected,
                peripheral.cumlativeSecondsDisconnected, peripheral.services
            )
        }.value
        #expect(
            after.0 == seconds && after.1 == seconds && after.2 == seconds, "\(after) for a connection of \(seconds) s")
        #expect(after.3 > 0)
        #expect(after.4.isEmpty, "services kept after the link ended")
        await Task { @BluetoothActor in host.close() }.value
    }

    @Test func aResetBringsALostControllerBack() async throws {
        let controllers = ClockTests.Controllers(.init())
        let store = StoreDirectory(path: NSTemporaryDirectory() + "bluejay-central-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(atPath: store.path) }
        let central = try await Central(
            transport: "fake", store: store, logger: .silent, openTransport: { _ in controllers.open() })
        let states = await central.whenStateChanges()
        var heard = states.makeAsyncIterator()
        #expect(await heard.next() == .poweredOn)
        let lost = await central.peripheral(FaceTests.identifier)
        let scan = await central.startScanning()

        controllers.all.last?.deliverEvent(.hardwareError(HardwareError(hardwareCode: 0x01)))
        #expect(await heard.next() == .poweredOff)
        do {
            for try await _ in scan {}
            Issue.record("the scan ended as if stopped when its controller was lost")
        } catch {
            #expect("\(error)" == "\(BluejayError.bluetoothUnavailable)")
        }

        let old = await central.host
        try await central.reset()
        #expect(await heard.next() == .resetting)
        #expect(await heard.next() == .poweredOn)
        #expect(await central.state == .poweredOn)
        #expect(controllers.all.count == 2)
        #expect(await central.host !== old)
        #expect(await old.isClosed)
        // The old controller's peripheral is over; the new stack's is a new object.
        #expect(await central.peripheral(FaceTests.identifier) !== lost)
        do {
            try await lost.connect()
            Issue.record("a peripheral of the lost controller connected")
        } catch {
            #expect("\(error)" == "\(BluejayError.bluetoothUnavailable)")
        }
        // The new controller scans.
        let again = await central.startScanning()
        #expect(await eventually { controllers.all.last?.sentCommands.contains(LESetScanEnable.opcode) == true })
        await central.stopScanning()
        for try await _ in again {}

        // Closed for good: the state stream ends, and a reset is refused.
        await central.close()
        #expect(await heard.next() == .poweredOff)
        #expect(await heard.next() == nil)
        await #expect(throws: BluejayError.self) { try await central.reset() }
    }

    @Test func aCentralHandedItsHostCannotReset() async throws {
        let fake = FakeController()
        let store = StoreDirectory(path: NSTemporaryDirectory() + "bluejay-central-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(atPath: store.path) }
        let host = try await BluetoothHost(transport: fake, store: store, logger: .silent)
        let central = await Task { @BluetoothActor in Central(host: host) }.value
        do {
            try await central.reset()
            Issue.record("a central that did not open its transport reopened it")
        } catch {
            #expect("\(error)" == "\(BluejayError.bluetoothUnavailable)")
        }
        let kept = await Task { @BluetoothActor in central.host === host && central.state == .poweredOn }.value
        #expect(kept)
        await Task { @BluetoothActor in host.close() }.value
    }
}
