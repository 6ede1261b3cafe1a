import Bluejay
import BluetoothCore
import Foundation
import HCI
import HCITestSupport
import TestTraits
import Testing
import VirtualController

/// `Central` against BlueCap's `CentralManager`: what a scan reports of each advertiser and
/// connection timeouts in BlueCap's seconds (on a scripted controller), and a value stream's
/// capacity (on the virtual controller, FaceTests' peripheral).
@Suite(.hangGuard)
struct CentralReferenceTests {
    /// A report of one legacy advertising PDU (Core 6.0 Vol 4 Part E 7.7.65.2).
    static func report(_ address: BluetoothAddress, connectable: Bool, scannable: Bool, isScanResponse: Bool = false)
        -> HCIEvent
    {
        .leMeta(
            AdvertisingReport.encode(
                [
                    AdvertisingReport(
                        connectable: connectable, scannable: scannable, directed: false,
                        isScanResponse: isScanResponse, legacy: true, addressType: .random,
                        address: address, rssi: -60, data: [0x02, 0x01, 0x06])
                ], extended: false))
    }

    @Test func aScanSaysWhetherThePeripheralTakesConnections() async throws {
        let fake = FakeController()
        let store = StoreDirectory(path: NSTemporaryDirectory() + "bluejay-central-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(atPath: store.path) }
        let host = try await BluetoothHost(transport: fake, store: store, logger: .silent)
        let central = await Task { @BluetoothActor in Central(host: host) }.value
        let scan = await Task { @BluetoothActor in central.startScanning() }.value
        var found = scan.makeAsyncIterator()
        #expect(await eventually { fake.sentCommands.contains(LESetScanEnable.opcode) })

        // ADV_IND and its SCAN_RSP (connectable), then ADV_NONCONN_IND (not).
        let connectable = BluetoothAddress("F0:0D:B1:E7:00:31")!, beacon = BluetoothAddress("F0:0D:B1:E7:00:32")!
        fake.deliverEvent(Self.report(connectable, connectable: true, scannable: true))
        fake.deliverEvent(Self.report(connectable, connectable: true, scannable: true, isScanResponse: true))
        fake.deliverEvent(Self.report(beacon, connectable: false, scannable: false))
        var seen: [BluetoothAddress: Bool] = [:]
        while seen.count < 2, let discovery = try await found.next() {
            seen[discovery.peripheralIdentifier.address] = discovery.isConnectable
        }
        #expect(seen == [connectable: true, beacon: false])
        await Task { @BluetoothActor in
            await central.stopScanning()
            host.close()
        }.value
    }

    @Test func aConnectionTimeoutIsBlueCapsSecondsOrNone() async throws {
        var script = FakeController.Script()
        script.supported += [LECreateConnection.opcode, LECreateConnectionCancel.opcode]
        let fake = FakeController(script)
        let store = StoreDirectory(path: NSTemporaryDirectory() + "bluejay-central-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(atPath: store.path) }
        let host = try await BluetoothHost(transport: fake, store: store, logger: .silent)
        let peripheral = await Task { @BluetoothActor in Central(host: host).peripheral(ReferenceBehaviourTests.absent)
        }.value
        let idle = await ReferenceBehaviourTests.timers(host)

        /// Starts attempt number `attempt`, sees whether it armed a timer once it is under
        /// way, and cancels it. (A timer is waited for; its absence is checked after a job
        /// queued on the stack's actor behind the attempt's own.)
        func armsATimer(_ connect: @escaping @Sendable () async throws -> Void, attempt: Int, expected: Bool) async
            -> Bool
        {
            let task = Task { try await connect() }
            _ = await eventually { fake.sentCommands.filter { $0 == LECreateConnection.opcode }.count == attempt }
            let armed: Bool
            if expected {
                armed = await eventually { await ReferenceBehaviourTests.timers(host) == idle + 1 }
            } else {
                _ = await eventually { await Task { @BluetoothActor in host.resources.commandsOutstanding }.value == 0 }
                await Task { @BluetoothActor in await Task.yield() }.value
                armed = await ReferenceBehaviourTests.timers(host) != idle
            }
            // The attempt ends once the controller answers the cancel (with LE Connection Complete).
            let stopping = Task { await peripheral.disconnect() }
            await ReferenceBehaviourTests.answerCancel(fake, cancels: attempt)
            await stopping.value
            _ = await task.result
            return armed
        }
        #expect(
            await armsATimer({ try await peripheral.connect(connectionTimeout: 10.0) }, attempt: 1, expected: true),
            "10.0 s armed no timer")
        #expect(
            await !armsATimer(
                { try await peripheral.connect(connectionTimeout: .infinity) }, attempt: 2, expected: false),
            "TimeInterval.infinity armed a timer")
        #expect(
            await !armsATimer({ try await peripheral.connect() }, attempt: 3, expected: false),
            "the default (BlueCap's: none) armed a timer")
        await Task { @BluetoothActor in host.close() }.value
    }

    @Test @MainActor func aSlowConsumersValuesAreBoundedByTheStreamsCapacity() async throws {
        let controller = try FaceTests.controller()
        let store = FaceTests.temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store.path) }
        let host = try await BluetoothHost(transport: controller, store: store, logger: .silent)
        let peripheral = await Task { @BluetoothActor in Central(host: host).peripheral(FaceTests.identifier) }.value
        try await peripheral.connect(connectionTimeout: .seconds(30))
        // The peer notifies 1, 2 and 3 once subscribed; nothing is taken until all three came.
        let stream = try await peripheral.values(of: FaceTests.counter, capacity: 2)
        #expect(await eventually { stream.droppedCount == 1 }, "dropped \(stream.droppedCount)")
        var values = stream.makeAsyncIterator()
        #expect(try await values.next() == [2])
        #expect(try await values.next() == [3])
        #expect(stream.droppedCount == 1)
        await peripheral.disconnect()
        await Task { @BluetoothActor in host.close() }.value
    }

    @Test func aSecondScanFailsWhileOneRunsAndAScanThatCannotStartThrows() async throws {
        let fake = FakeController()
        let store = StoreDirectory(path: NSTemporaryDirectory() + "bluejay-central-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(atPath: store.path) }
        let host = try await BluetoothHost(transport: fake, store: store, logger: .silent)
        let central = await Task { @BluetoothActor in Central(host: host) }.value
        let first = await Task { @BluetoothActor in central.startScanning() }.value
        #expect(await Task { @BluetoothActor in central.isScanning }.value)

        // BlueCap's rule: the second fails with isScanning; the first goes on.
        let second = await Task { @BluetoothActor in central.startScanning() }.value
        do {
            for try await _ in second {}
            Issue.record("a second scan ran beside the first")
        } catch {
            #expect("\(error)" == "\(BluejayError.alreadyScanning)")
        }
        #expect(await Task { @BluetoothActor in central.isScanning }.value)
        await central.stopScanning()
        for try await _ in first {}
        #expect(await Task { @BluetoothActor in !central.isScanning }.value)

        // A scan the controller refuses (LE Set Scan Enable: Command Disallowed) throws why.
        fake.update { $0.failures[LESetScanEnable.opcode.rawValue] = .commandDisallowed }
        let refused = await Task { @BluetoothActor in central.startScanning() }.value
        do {
            for try await _ in refused {}
            Issue.record("a scan the controller refused ended as if stopped")
        } catch {
            #expect("\(error)".contains("commandDisallowed") || "\(error)".contains("Command Disallowed"), "\(error)")
        }
        await Task { @BluetoothActor in host.close() }.value
    }
}
