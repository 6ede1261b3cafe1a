import Bluejay
import DiscoveryCache
import Foundation
import HCI
import HCITestSupport
import Synchronization
import Testing

/// Bluejay's own timers on the clock it is given (`StartOptions.clock`): a scan's duration,
/// the expiry of a peripheral not heard from, the delay before a lost controller is
/// reopened. A `ManualClock` moves them, so nothing here waits for real time to pass.
@Suite @MainActor
struct ClockTests {
    let advertiser = BluetoothAddress("F0:0D:B1:E7:00:01")!

    /// A Bluejay on scripted controllers (a new one each time the transport is opened),
    /// its timers on `clock`.
    final class Rig: Sendable {
        let clock = ManualClock()
        let store = NSTemporaryDirectory() + "bluejay-clock-\(UUID().uuidString)"
        private let controllers = Mutex<[FakeController]>([])

        /// Every controller opened so far, in order.
        var opened: [FakeController] { controllers.withLock { $0 } }

        func options(recovery: ControllerRecovery = .disabled) -> StartOptions {
            var options = StartOptions(transport: "fake", store: StoreDirectory(path: store), logger: .silent,
                                       openTransport: { [self] _ in
                                           let fake = FakeController()
                                           controllers.withLock { $0.append(fake) }
                                           return fake
                                       }, controllerRecovery: recovery)
            options.clock = clock
            return options
        }

        /// The advertiser is heard once, with `rssi`: a non-connectable, non-scannable
        /// advertisement, which an active scan reports at once.
        func advertise(_ address: BluetoothAddress, rssi: Int8) {
            let report = AdvertisingReport(connectable: false, scannable: false, directed: false, isScanResponse: false, legacy: true,
                                           addressType: .random, address: address, rssi: rssi, dataStatus: 0, data: [0x02, 0x01, 0x06])
            opened.last?.deliverEvent(.leMeta(AdvertisingReport.encode([report], extended: false)))
        }

        /// Waits until `count` tasks sleep on the clock (the timers Bluejay armed).
        func sleepers(_ count: Int) async -> Bool { await eventually { clock.sleeperCount == count } }

        @MainActor
        func finish(_ bluejay: Bluejay) async {
            if let host = bluejay.stopAndExtractBluetoothState().host { await Task { @BluetoothActor in host.close() }.value }
            try? FileManager.default.removeItem(atPath: store)
        }
    }

    /// What a scan told the app, in order.
    @MainActor
    final class ScanLog {
        var entries: [String] = []
    }

    /// With duplicates allowed, a peripheral is reported lost `scanExpiry` after it was last
    /// heard (a report heard meanwhile moves that deadline), and the scan stops at its
    /// duration: each at its deadline on the clock, with no timer ticking in between.
    @Test func scanExpiryAndDurationFollowTheClock() async throws {
        let rig = Rig()
        let bluejay = Bluejay()
        bluejay.start(mode: .new(rig.options()))
        try #require(await eventually { bluejay.isBluetoothAvailable })
        #expect(bluejay.scanExpiry == .seconds(15))

        let log = ScanLog()
        bluejay.scan(duration: 60, allowDuplicates: true, throttleRSSIDelta: 5, serviceIdentifiers: nil, discovery: { discovery, found in
            log.entries.append("discovered \(discovery.rssi) of \(found.count)")
            return .continue
        }, expired: { lost, found in
            log.entries.append("expired \(lost.rssi), \(found.count) left")
            return .continue
        }, stopped: { found, error in
            log.entries.append("stopped with \(found.count)\(error.map { ", \($0)" } ?? "")")
        })
        // Only the duration's deadline is armed while nothing is found.
        try #require(await rig.sleepers(1), "the scan's duration never armed")

        rig.advertise(advertiser, rssi: -50)
        try #require(await eventually { log.entries == ["discovered -50 of 1"] }, "\(log.entries)")
        // Its expiry, 15 s after it was heard, is armed as well.
        try #require(await rig.sleepers(2))

        // Heard again at 10 s (reported: the RSSI moved by 5 or more), so it is not lost at 15 s.
        rig.clock.advance(by: .seconds(10))
        rig.advertise(advertiser, rssi: -60)
        try #require(await eventually { log.entries.count == 2 }, "\(log.entries)")
        rig.clock.advance(by: .seconds(5))
        // The alarm went off early and is set again, for 25 s.
        try #require(await rig.sleepers(2))
        #expect(log.entries == ["discovered -50 of 1", "discovered -60 of 1"])

        rig.clock.advance(by: .seconds(10) - .milliseconds(1))
        #expect(rig.clock.sleeperCount == 2, "nothing is due before 25 s")
        rig.clock.advance(by: .milliseconds(1))
        try #require(await eventually { log.entries.count == 3 }, "\(log.entries)")
        #expect(log.entries.last == "expired -60, 0 left")
        #expect(bluejay.isScanning)

        // Nothing found, nothing to expire: only the duration's deadline, at 60 s.
        try #require(await rig.sleepers(1))
        rig.clock.advance(by: .seconds(35) - .milliseconds(1))
        #expect(rig.clock.sleeperCount == 1 && bluejay.isScanning, "the scan lasts its whole duration")
        rig.clock.advance(by: .milliseconds(1))
        try #require(await eventually { !bluejay.isScanning && log.entries.count == 4 }, "\(log.entries)")
        #expect(log.entries.last == "stopped with 0")
        #expect(await rig.sleepers(0), "a timer outlived the scan")
        await rig.finish(bluejay)
    }

    /// A controller lost (a Hardware Error) is reopened after the recovery's delay on the
    /// clock, not before.
    @Test func controllerRecoveryWaitsOnTheClock() async throws {
        let rig = Rig()
        let bluejay = Bluejay()
        bluejay.start(mode: .new(rig.options(recovery: ControllerRecovery(delays: [.seconds(5)]))))
        try #require(await eventually { bluejay.isBluetoothAvailable })

        rig.opened.last?.deliverEvent(.hardwareError(HardwareError(hardwareCode: 0x01)))
        try #require(await eventually { !bluejay.isBluetoothAvailable })
        #expect(bluejay.isBluetoothStateUpdateImminent)
        try #require(await rig.sleepers(1), "the recovery's delay never armed")
        rig.clock.advance(by: .seconds(5) - .milliseconds(1))
        #expect(rig.clock.sleeperCount == 1 && rig.opened.count == 1, "reopened before its delay")
        rig.clock.advance(by: .milliseconds(1))
        try #require(await eventually { bluejay.isBluetoothAvailable }, "the controller did not come back")
        #expect(rig.opened.count == 2)
        await rig.finish(bluejay)
    }
}
