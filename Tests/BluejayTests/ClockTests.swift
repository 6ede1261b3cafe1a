import Bluejay
import BluetoothCore
import DiscoveryCache
import Foundation
import HCI
import HCITestSupport
import Synchronization
import TestTraits
import Testing

/// Bluejay's own timers on the clock it is given (`StartOptions.clock`): a scan's duration,
/// the expiry of a peripheral not heard from, the delay before a lost controller is
/// reopened. A `ManualClock` moves them, so nothing here waits for real time to pass, and
/// nothing waits on the wall clock either: each step waits for the callback or the armed
/// timer it expects (the whole suite in parallel can hold a test up for many seconds).
@Suite(.hangGuard) @MainActor
struct ClockTests {
    let advertiser = BluetoothAddress("F0:0D:B1:E7:00:01")!

    /// A Bluejay on scripted controllers (a new one each time the transport is opened),
    /// its timers on `clock`.
    @MainActor
    final class Rig: ConnectionObserver {
        let clock = ManualClock()
        let store = NSTemporaryDirectory() + "bluejay-clock-\(UUID().uuidString)"
        let bluejay = Bluejay()
        private let controllers: Controllers
        /// What Bluejay told: availability, and what the scan's callbacks saw.
        private let (events, record) = AsyncStream.makeStream(of: String.self)
        private var next: AsyncStream<String>.Iterator

        init(recovery: ControllerRecovery = .disabled, script: FakeController.Script = .init()) {
            controllers = Controllers(script)
            next = events.makeAsyncIterator()
            var options = StartOptions(
                transport: "fake", store: StoreDirectory(path: store), logger: .silent,
                openTransport: { [controllers] _ in controllers.open() }, controllerRecovery: recovery)
            options.clock = clock
            bluejay.start(connectionObserver: self, mode: .new(options))
        }

        /// Every controller opened so far, in order.
        var opened: [FakeController] { controllers.all }

        func bluetoothAvailable(_ available: Bool) { record.yield(available ? "available" : "unavailable") }

        /// Notes what a callback saw.
        func note(_ event: String) { record.yield(event) }

        /// The next thing Bluejay told.
        func told() async -> String? {
            var iterator = next
            defer { next = iterator }
            return await iterator.next(isolation: MainActor.shared)
        }

        /// The advertiser is heard once, with `rssi`: a non-connectable, non-scannable
        /// advertisement, which an active scan reports at once.
        func advertise(_ address: BluetoothAddress, rssi: Int8) {
            let report = AdvertisingReport(
                connectable: false, scannable: false, directed: false, isScanResponse: false, legacy: true,
                addressType: .random, address: address, rssi: rssi, dataStatus: 0, data: [0x02, 0x01, 0x06])
            opened.last?.deliverEvent(.leMeta(AdvertisingReport.encode([report], extended: false)))
        }

        /// Waits until `count` tasks sleep on the clock (the timers Bluejay armed). The
        /// limit only bounds a bug: the count is reached as soon as Bluejay runs.
        func sleepers(_ count: Int) async -> Bool { await eventually { clock.sleeperCount == count } }

        func finish() async {
            if let host = bluejay.stopAndExtractBluetoothState().host {
                await Task { @BluetoothActor in host.close() }.value
            }
            try? FileManager.default.removeItem(atPath: store)
        }
    }

    /// The scripted controllers a rig opened.
    final class Controllers: Sendable {
        private let list = Mutex<[FakeController]>([])
        private let script: FakeController.Script

        init(_ script: FakeController.Script) { self.script = script }

        func open() -> FakeController {
            let fake = FakeController(script)
            list.withLock { $0.append(fake) }
            return fake
        }

        var all: [FakeController] { list.withLock { $0 } }
    }

    /// With duplicates allowed, a peripheral is reported lost `scanExpiry` after it was last
    /// heard (a report heard meanwhile moves that deadline), and the scan stops at its
    /// duration: each at its deadline on the clock, with no timer ticking in between.
    @Test func scanExpiryAndDurationFollowTheClock() async throws {
        let rig = Rig()
        let bluejay = rig.bluejay
        #expect(await rig.told() == "available")
        #expect(bluejay.scanExpiry == .seconds(15))

        bluejay.scan(
            duration: 60, allowDuplicates: true, throttleRSSIDelta: 5, serviceIdentifiers: nil,
            discovery: { discovery, found in
                rig.note("discovered \(discovery.rssi) of \(found.count)")
                return .continue
            },
            expired: { lost, found in
                rig.note("expired \(lost.rssi), \(found.count) left")
                return .continue
            },
            stopped: { found, error in
                rig.note("stopped with \(found.count)\(error.map { ", \($0)" } ?? "")")
            })
        // Only the duration's deadline is armed while nothing is found.
        try #require(await rig.sleepers(1), "the scan's duration never armed")

        rig.advertise(advertiser, rssi: -50)
        #expect(await rig.told() == "discovered -50 of 1")
        // Its expiry, 15 s after it was heard, is armed as well.
        try #require(await rig.sleepers(2))

        // Heard again at 10 s (reported: the RSSI moved by 5 or more), so it is not lost at 15 s.
        rig.clock.advance(by: .seconds(10))
        rig.advertise(advertiser, rssi: -60)
        #expect(await rig.told() == "discovered -60 of 1")
        rig.clock.advance(by: .seconds(5))
        // The alarm went off early and is set again, for 25 s.
        try #require(await rig.sleepers(2))

        rig.clock.advance(by: .seconds(10) - .milliseconds(1))
        #expect(rig.clock.sleeperCount == 2, "nothing is due before 25 s")
        rig.clock.advance(by: .milliseconds(1))
        #expect(await rig.told() == "expired -60, 0 left")
        #expect(bluejay.isScanning)

        // Nothing found, nothing to expire: only the duration's deadline, at 60 s.
        try #require(await rig.sleepers(1))
        rig.clock.advance(by: .seconds(35) - .milliseconds(1))
        #expect(rig.clock.sleeperCount == 1 && bluejay.isScanning, "the scan lasts its whole duration")
        rig.clock.advance(by: .milliseconds(1))
        #expect(await rig.told() == "stopped with 0")
        #expect(!bluejay.isScanning)
        #expect(await rig.sleepers(0), "a timer outlived the scan")
        await rig.finish()
    }

    /// A controller lost (a Hardware Error) is reopened after the recovery's delay on the
    /// clock, not before.
    @Test func controllerRecoveryWaitsOnTheClock() async throws {
        let rig = Rig(recovery: ControllerRecovery(delays: [.seconds(5)]))
        #expect(await rig.told() == "available")

        rig.opened.last?.deliverEvent(.hardwareError(HardwareError(hardwareCode: 0x01)))
        #expect(await rig.told() == "unavailable")
        #expect(rig.bluejay.isBluetoothStateUpdateImminent)
        try #require(await rig.sleepers(1), "the recovery's delay never armed")
        rig.clock.advance(by: .seconds(5) - .milliseconds(1))
        #expect(rig.clock.sleeperCount == 1 && rig.opened.count == 1, "reopened before its delay")
        rig.clock.advance(by: .milliseconds(1))
        #expect(await rig.told() == "available")
        #expect(rig.opened.count == 2)
        await rig.finish()
    }
}
