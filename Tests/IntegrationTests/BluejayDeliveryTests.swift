import Bluejay
import BluetoothCore
import DiscoveryCache
import Foundation
import HCI
import SMP
import Testing

/// Where callbacks run, RSSI throttling, and values nobody asked for.
extension IntegrationTests.BluejayAPITests {
    nonisolated static let heartRate = ServiceIdentifier(uuid: "180D")
    nonisolated static let heartRateMeasurement = CharacteristicIdentifier(uuid: "2A37", service: heartRate)
    nonisolated static let bodySensorLocation = CharacteristicIdentifier(uuid: "2A38", service: heartRate)

    /// The queues an app gives `callbacks(on:)`: one of its own, and the main queue, which
    /// the main actor must never wait on (a scan's answer once trapped in libdispatch there).
    enum CallbackPlace: String, CaseIterable, Sendable {
        case appQueue = "app.callbacks"
        case mainQueue = "main"
        var queue: DispatchQueue { self == .mainQueue ? .main : DispatchQueue(label: rawValue) }
    }

    /// Through `callbacks(on:)`, scan, connect, read and listen call back on the queue
    /// given (for an app queue, not on the main thread), each once and in order; the plain
    /// API still calls back on the main actor.
    @Test(arguments: CallbackPlace.allCases)
    func bluejayCallbacksRunOnTheChosenQueue(_ place: CallbackPlace) async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let store = temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        #if compiler(>=6.3)
            let key = DispatchSpecificKey<String>()
        #else
            // Not Sendable in Swift 6.0's Dispatch; here() only reads it. (6.3's is Sendable, and
            // there nonisolated(unsafe) draws a warning; 6.1 and 6.2 not tried.)
            nonisolated(unsafe) let key = DispatchSpecificKey<String>()
        #endif
        let callbacks = place.queue
        callbacks.setSpecific(key: key, value: place.rawValue)
        let elsewhere = place == .mainQueue ? "" : " main"
        /// Where a callback ran: the queue's label, and (for the app's queue) whether that
        /// was the main thread.
        @Sendable func here() -> String {
            (DispatchQueue.getSpecific(key: key) ?? "elsewhere") + (Thread.isMainThread ? elsewhere : "")
        }

        let bluejay = Bluejay()
        bluejay.start(mode: .new(options(peer, store)))
        let onQueue = bluejay.callbacks(on: callbacks)

        let scanned: [String] = await withCheckedContinuation { done in
            let places = LockedList()
            onQueue.scan(
                serviceIdentifiers: nil,
                discovery: { _, _ in
                    places.append("discovery " + here())
                    return .stop
                },
                stopped: { _, _ in
                    places.append("stopped " + here())
                    done.resume(returning: places.items)
                })
        }
        #expect(scanned == ["discovery \(place.rawValue)", "stopped \(place.rawValue)"])

        let peripheral = PeripheralIdentifier(
            address: try #require(BluetoothAddress(peer.address)), addressType: .random)
        let connected: String = await withCheckedContinuation { done in
            onQueue.connect(peripheral, timeout: .seconds(10)) { result in
                done.resume(returning: (result.isSuccess ? "connected " : "\(result) ") + here())
            }
        }
        #expect(connected == "connected \(place.rawValue)")
        let read: String = await withCheckedContinuation { done in
            onQueue.read(from: Self.bodySensorLocation) { (result: ReadResult<UInt8>) in
                done.resume(returning: "\(result) " + here())
            }
        }
        #expect(read == "success(1) \(place.rawValue)")

        // Three heart-rate values (the control point's 05 01 starts them), each on the queue.
        let values = LockedList()
        let listened: [String] = await withCheckedContinuation { done in
            onQueue.listen(to: Self.heartRateMeasurement) { (result: ReadResult<Data>) in
                values.append("\(result.isSuccess ? "value" : "\(result)") " + here())
                if values.items.count == 3 { done.resume(returning: values.items) }
            }
            bluejay.write(to: Self.controlPoint, value: Data([0x05, 0x01])) { _ in }
        }
        #expect(listened == Array(repeating: "value \(place.rawValue)", count: 3))
        let ended: String = await withCheckedContinuation { done in
            onQueue.endListen(to: Self.heartRateMeasurement) { result in done.resume(returning: "\(result) " + here()) }
        }
        #expect(ended == "success \(place.rawValue)")

        // The plain API's callback is main-actor isolated (the compiler says so): it ran
        // there, on the main actor's executor, not on the app's queue.
        if place == .appQueue {
            let plain: String = await withCheckedContinuation { done in
                bluejay.read(from: Self.bodySensorLocation) { (result: ReadResult<UInt8>) in
                    MainActor.preconditionIsolated()
                    done.resume(returning: "\(result) " + (DispatchQueue.getSpecific(key: key) ?? "elsewhere"))
                }
            }
            #expect(plain == "success(1) elsewhere")
        }
        await shutDown(bluejay)
    }

    /// With duplicates allowed, a peripheral is reported again only when its RSSI moved by
    /// `throttleRSSIDelta` or more since the last report (the peer cycles its RSSI).
    @Test func bluejayScanThrottlesRSSI() async throws {
        let pattern = [-50, -52, -49, -58, -56, -40]
        let peer = try await TestPeer(arguments: ["--rssi=" + pattern.map(String.init).joined(separator: ",")])
        defer { peer.stop() }
        let store = temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let bluejay = Bluejay()
        bluejay.start(mode: .new(options(peer, store)))
        var reported: [Int] = []
        let error: String? = await withCheckedContinuation { done in
            bluejay.scan(
                allowDuplicates: true, throttleRSSIDelta: 5, serviceIdentifiers: nil,
                discovery: { discovery, _ in
                    reported.append(discovery.rssi)
                    return reported.count == 7 ? .stop : .continue
                }, stopped: { _, error in done.resume(returning: error.map { "\($0)" }) })
        }
        #expect(error == nil)
        #expect(reported.count == 7)
        #expect(Set(reported).count >= 3, "the RSSI never updated: \(reported)")
        for (previous, next) in zip(reported, reported.dropFirst()) {
            #expect(abs(next - previous) >= 5, "reported again after an RSSI change below the delta: \(reported)")
        }
        await shutDown(bluejay)
    }

    /// A notification nobody listens to (a bonded peer's subscription from an earlier link):
    /// the restorer is asked once and, taking it, receives the value; without a restorer the
    /// subscription is turned off and the next such value is logged as dropped.
    @Test func bluejayUnsolicitedNotificationGoesToTheRestorer() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let store = temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store) }

        let restorer = Restorer(accept: true)
        let bluejay = Bluejay()
        restorer.bluejay = bluejay
        bluejay.start(mode: .new(options(peer, store, restore: .enableWithListenRestorer("unsolicited", restorer))))
        let peripheral = PeripheralIdentifier(
            address: try #require(BluetoothAddress(peer.address)), addressType: .random)
        _ = try await bluejay.connect(peripheral)
        // Discovers the heart-rate service, so the notification's handle has a name.
        let location: UInt8 = try await bluejay.read(from: Self.bodySensorLocation)
        #expect(location == 1)
        await withCheckedContinuation { done in
            restorer.onValue = { done.resume() }
            bluejay.write(to: Self.controlPoint, value: Data([0x07])) { _ in }
        }
        restorer.onValue = nil
        #expect(restorer.offered == [Self.heartRateMeasurement])
        #expect(restorer.values == [Data([0x00, 60])])
        #expect(try bluejay.isListening(to: Self.heartRateMeasurement))
        await shutDown(bluejay)

        let plain = try await connectedBluejay(peer, store: store)
        let _: UInt8 = try await plain.read(from: Self.bodySensorLocation)
        try await plain.write(to: Self.controlPoint, value: Data([0x07]))
        try await plain.write(to: Self.controlPoint, value: Data([0x07]))
        let deadline = ContinuousClock.now + .seconds(10)
        while !(plain.getLogs() ?? "").contains("nobody listens to was dropped"), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let logs = plain.getLogs() ?? ""
        #expect(logs.contains("\(Self.heartRateMeasurement) notifies but nobody listens: turning its subscription off"))
        #expect(logs.contains("nobody listens to was dropped"))
        #expect(try !plain.isListening(to: Self.heartRateMeasurement))
        await shutDown(plain)
    }
}

extension IntegrationTests.BluejayAPITests {
    /// A background task's `discover` lists the heart-rate service's characteristics (and
    /// every service's when asked for all); `readRSSI` reaches the controller, which in the
    /// peer does not support Read RSSI: the HCI status comes back by name.
    @Test func bluejayBackgroundTaskDiscoversAndReadsRSSI() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let store = temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let bluejay = try await connectedBluejay(peer, store: store)
        let run: RunResult<([CharacteristicIdentifier], Int, String)> = await withCheckedContinuation { done in
            bluejay.run(
                backgroundTask: { peripheral in
                    let heartRate = try peripheral.discover([Self.heartRate])
                    let all = try peripheral.discover()
                    let rssi: String
                    do { rssi = "\(try peripheral.readRSSI()) dBm" } catch { rssi = "\(error)" }
                    return (heartRate, all.count, rssi)
                }, completionOnMainThread: { done.resume(returning: $0) })
        }
        guard case let .success((heartRate, all, rssi)) = run else { Issue.record("background task: \(run)"); return }
        #expect(heartRate == [Self.heartRateMeasurement, Self.bodySensorLocation])
        #expect(all > heartRate.count && all >= 10, "every service's characteristics: \(all)")
        #expect(rssi.contains("0x01") && rssi.lowercased().contains("unknown"), "Read RSSI: \(rssi)")
        await shutDown(bluejay)
    }
}

/// A list appended to from any thread.
final class LockedList: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func append(_ item: String) { lock.withLock { list.append(item) } }
    var items: [String] { lock.withLock { list } }
}

extension ConnectionResult {
    var isSuccess: Bool { if case .success = self { true } else { false } }
}

extension ReadResult {
    var isSuccess: Bool { if case .success = self { true } else { false } }
}

extension IntegrationTests.BluejayAPITests {
    nonisolated static let encrypted = CharacteristicIdentifier(
        uuid: "B1E70004-9D3B-4C7A-8A5E-6F2D0C1B0A00", service: custom)

    /// Through the Bluejay API, a read refused with Insufficient Encryption pairs on demand
    /// and succeeds (as on iOS); with pairing turned off it fails with the ATT error by name.
    @Test func bluejayReadPairsOnDemand() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let store = temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store) }

        var refusing = options(peer, store)
        refusing.pairingPolicy.allowPairing = false
        let strict = Bluejay()
        strict.start(mode: .new(refusing))
        let peripheral = PeripheralIdentifier(
            address: try #require(BluetoothAddress(peer.address)), addressType: .random)
        _ = try await strict.connect(peripheral)
        do {
            let _: String = try await strict.read(from: Self.encrypted)
            Issue.record("read without pairing succeeded")
        } catch {
            #expect("\(error)".contains("0x0F insufficientEncryption"), "\(error)")
        }
        try await strict.disconnect()
        await shutDown(strict)

        let bluejay = try await connectedBluejay(peer, store: store)
        let secret: String = try await bluejay.read(from: Self.encrypted)
        #expect(secret == "Bluejay secret")
        #expect(BondStore(store: StoreDirectory(path: store)).all().count == 1)
        await shutDown(bluejay)
    }
}
