import Bluejay
import BluetoothCore
import Foundation
import TestTraits
import Testing

// The Bluejay API against the peer, continued (BluejayAPITests.swift): what an app
// observes, service changes, RSSI readings, logs and statistics, and a scan's expiry.

/// Records service changes, RSSI readings and log updates.
@MainActor
final class ObserverRecorder: ServiceObserver, RSSIObserver, LogObserver {
    var invalidated: [[ServiceIdentifier]] = []
    var rssi: [(Int, Bool)] = []
    var logUpdates = 0
    var next: CheckedContinuation<Void, Never>?

    func didModifyServices(from peripheral: PeripheralIdentifier, invalidatedServices: [ServiceIdentifier]) {
        invalidated.append(invalidatedServices)
        next?.resume()
        next = nil
    }
    func didReadRSSI(from peripheral: PeripheralIdentifier, RSSI: Int, error: (any Error)?) {
        rssi.append((RSSI, error != nil))
        next?.resume()
        next = nil
    }
    func logFileUpdated(logs: String) { logUpdates += 1 }
}

extension IntegrationTests.BluejayAPITests {
    /// Service Changed reaches the service observer with the services it invalidated; an
    /// RSSI reading (which Bumble's controller refuses) reaches the RSSI observer with its
    /// error; logs and statistics are kept.
    @Test func bluejayObserversAndStatistics() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let store = temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let recorder = ObserverRecorder()
        let bluejay = Bluejay()
        bluejay.register(serviceObserver: recorder)
        bluejay.register(rssiObserver: recorder)
        bluejay.register(logObserver: recorder)
        _ = try await connectedBluejay(peer, store: store, bluejay: bluejay)
        let peripheral = try #require(bluejay.peripheral)
        #expect(bluejay.statistics(for: peripheral).connectionCount == 1)
        #expect(bluejay.statistics(for: peripheral).connectedFor != nil)

        // Discover the heart-rate service by using it, then have the peer say it changed.
        let sensor = CharacteristicIdentifier(uuid: "2A38", service: ServiceIdentifier(uuid: "180D"))
        let location: UInt8 = try await bluejay.read(from: sensor)
        #expect(location == 1)
        await withCheckedContinuation { done in
            recorder.next = done
            // Control point 0x06: Service Changed for 0x000E…0x0013 (the heart-rate service).
            bluejay.write(to: Self.controlPoint, value: Data([0x06, 0x0E, 0x00, 0x13, 0x00])) { _ in }
        }
        #expect(recorder.invalidated == [[ServiceIdentifier(uuid: "180D")]])
        // Rediscovered on next use.
        #expect(try await bluejay.read(from: sensor) as UInt8 == 1)

        await withCheckedContinuation { done in
            recorder.next = done
            try? bluejay.readRSSI()
        }
        #expect(
            recorder.rssi.count == 1 && recorder.rssi[0].1,
            "Bumble does not support Read RSSI: the error reaches the observer")

        bluejay.log("a line from the app")
        #expect(bluejay.getLogs()?.contains("a line from the app") == true)
        let attributes = try FileManager.default.attributesOfItem(atPath: store + "/bluejay.log")
        #expect((attributes[.posixPermissions] as? Int) == 0o600, "the log file is the user's alone")
        #expect(recorder.logUpdates >= 1)
        bluejay.clearLogs()
        #expect(bluejay.getLogs() == nil)

        try await bluejay.disconnect()
        let statistics = bluejay.statistics(for: peripheral)
        #expect(
            statistics.disconnectionCount == 1 && statistics.connectedFor == nil
                && statistics.cumulativeConnected > .zero)
        await shutDown(bluejay)
    }
}

extension IntegrationTests.BluejayAPITests {
    /// With duplicates allowed, a peripheral not heard within `scanExpiry` goes to
    /// `expired` and out of the list (here the expiry is shorter than the peer's advertising
    /// interval); `.stop` from `expired` ends the scan, `stopped` once.
    @Test func bluejayScanExpiresPeripheralsNotHeard() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let store = temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let bluejay = Bluejay()
        bluejay.start(mode: .new(options(peer, store)))
        bluejay.scanExpiry = .milliseconds(1)
        var seen = 0, stoppedCalls = 0
        let lost: (ScanDiscovery, [ScanDiscovery])? = await withCheckedContinuation { done in
            var result: (ScanDiscovery, [ScanDiscovery])?
            bluejay.scan(
                duration: 20, allowDuplicates: true, serviceIdentifiers: nil,
                discovery: { _, _ in
                    seen += 1
                    return .continue
                },
                expired: { lostDiscovery, discoveries in
                    result = (lostDiscovery, discoveries)
                    return .stop
                },
                stopped: { _, error in
                    stoppedCalls += 1
                    #expect(error == nil)
                    done.resume(returning: result)
                })
        }
        let (lostDiscovery, remaining) = try #require(lost, "expired was not called before the scan ended")
        #expect(seen >= 1)
        #expect(lostDiscovery.peripheralIdentifier.address == BluetoothAddress(peer.address))
        #expect(!remaining.contains { $0.peripheralIdentifier == lostDiscovery.peripheralIdentifier })
        #expect(stoppedCalls == 1 && !bluejay.isScanning)
        await shutDown(bluejay)
    }
}
