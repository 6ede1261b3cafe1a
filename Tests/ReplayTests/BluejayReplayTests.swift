@testable import Bluejay
import BluetoothCore
import DiscoveryCache
import Foundation
import HCI
import HCITestSupport
import TestTraits
import Testing

/// The `bluejay-api-demo` recording (Bluejay's heart-rate demo on the Bluejay API)
/// replayed through the Bluejay API itself, on the main actor as an app uses it: start on
/// `replay:FILE`, scan with `ScanAction.connect`, read, write, listen, a background task
/// with a `SynchronizedPeripheral`, listen again, disconnect.
@Suite @MainActor
struct BluejayReplayTests {
    let heartRateService = ServiceIdentifier(uuid: "180D")
    var sensorLocation: CharacteristicIdentifier { CharacteristicIdentifier(uuid: "2A38", service: heartRateService) }
    var heartRate: CharacteristicIdentifier { CharacteristicIdentifier(uuid: "2A37", service: heartRateService) }
    let controlPoint = CharacteristicIdentifier(
        uuid: "B1E70006-9D3B-4C7A-8A5E-6F2D0C1B0A00",
        service: ServiceIdentifier(uuid: "B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A00"))

    struct Failed: Error, CustomStringConvertible {
        let description: String
    }

    /// What the demo saw: the sensor location before and after the background task, and
    /// the beats of both listens.
    struct Outcome: Equatable {
        var location: UInt8
        var newLocation: UInt8
        var beats: [UInt8]
    }

    /// The demo's steps on `recording`; then the replay's verdict (nil: every packet
    /// played and matched) and the first mismatch.
    func demo(_ recording: String) async -> (Result<Outcome, any Error>, verdict: ReplayMismatch?) {
        let run = await demo(recording, openTransport: nil)
        return (run.outcome, run.verdict)
    }

    /// The demo on `recording`, opened by `openTransport` when given (e.g. with a fault
    /// injector around the replay); also what the host held once closed (nil: no host came up).
    func demo(_ recording: String, openTransport: TransportOpener?, disconnectHandler: (any DisconnectHandler)? = nil)
        async -> (outcome: Result<Outcome, any Error>, verdict: ReplayMismatch?, heldAfterClose: HostResources?)
    {
        let store = NSTemporaryDirectory() + "bluejay-replay-api-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: store) }
        let bluejay = Bluejay()
        if let disconnectHandler { bluejay.registerDisconnectHandler(handler: disconnectHandler) }
        // The host, also after a lost controller took it out of Bluejay's hands.
        var started: BluetoothHost?
        bluejay.onHostUp = { started = $0 }
        bluejay.start(
            mode: .new(
                StartOptions(
                    transport: "replay:\(recording)", store: StoreDirectory(path: store), logger: .silent,
                    openTransport: openTransport, controllerRecovery: .disabled)))
        let outcome: Result<Outcome, any Error>
        do { outcome = .success(try await steps(bluejay)) } catch { outcome = .failure(error) }
        _ = bluejay.stopAndExtractBluetoothState()
        guard let host = started else { return (outcome, nil, nil) }
        let verdict = await Task { @BluetoothActor in
            defer { host.close() }
            return (host.controller.transport as? ReplayTransport)?.verdict
        }.value
        // Timers unwind in their own tasks once cancelled: give them a moment to.
        _ = await eventually { await Task { @BluetoothActor in host.resources }.value == .none }
        return (outcome, verdict, await Task { @BluetoothActor in host.resources }.value)
    }

    func steps(_ bluejay: Bluejay) async throws -> Outcome {
        let connected: ConnectionResult = await withCheckedContinuation { done in
            bluejay.scan(
                duration: 15, serviceIdentifiers: [heartRateService],
                discovery: { discovery, _ in
                    .connect(discovery, { done.resume(returning: $0) })
                },
                stopped: { discoveries, error in
                    if let error {
                        done.resume(returning: .failure(error))
                    } else if discoveries.isEmpty {
                        done.resume(returning: .failure(Failed(description: "nothing found")))
                    }
                })
        }
        guard case .success = connected else { throw Failed(description: "connect: \(connected)") }
        let location: ReadResult<UInt8> = await withCheckedContinuation { done in
            bluejay.read(from: sensorLocation) { done.resume(returning: $0) }
        }
        guard case let .success(before) = location else { throw Failed(description: "read: \(location)") }
        let started: WriteResult = await withCheckedContinuation { done in
            bluejay.write(to: controlPoint, value: Data([0x05, 0x01])) { done.resume(returning: $0) }
        }
        guard case .success = started else { throw Failed(description: "write: \(started)") }
        var beats = try await listen(bluejay, count: 2)
        let rate = heartRate, bodySensor = sensorLocation
        let reset: RunResult<UInt8> = await withCheckedContinuation { done in
            bluejay.run(
                backgroundTask: { peripheral -> UInt8 in
                    try peripheral.endListen(to: rate)
                    try peripheral.write(to: bodySensor, value: UInt8(0))
                    return try peripheral.read(from: bodySensor)
                }, completionOnMainThread: { done.resume(returning: $0) })
        }
        guard case let .success(after) = reset else { throw Failed(description: "background task: \(reset)") }
        beats += try await listen(bluejay, count: 2)
        let ended: DisconnectionResult = await withCheckedContinuation { done in
            bluejay.disconnect { done.resume(returning: $0) }
        }
        guard case .success = ended else { throw Failed(description: "disconnect: \(ended)") }
        return Outcome(location: before, newLocation: after, beats: beats)
    }

    /// The heart rate (flags 00, one octet of bpm) of `count` notifications.
    func listen(_ bluejay: Bluejay, count: Int) async throws -> [UInt8] {
        var beats: [UInt8] = []
        let failure: (any Error)? = await withCheckedContinuation { done in
            bluejay.listen(to: heartRate, multipleListenOption: .replaceable) { (result: ReadResult<Data>) in
                switch result {
                case let .success(value):
                    beats.append(value.count >= 2 ? value[value.startIndex + 1] : 0)
                    if beats.count == count { done.resume(returning: nil) }
                case .cancelled:
                    if beats.count < count { done.resume(returning: Failed(description: "listen cancelled")) }
                case let .failure(error):
                    if beats.count < count { done.resume(returning: error) }
                }
            }
        }
        if let failure { throw failure }
        return beats
    }

    @Test func theDemoReplaysThroughTheBluejayAPI() async throws {
        let (outcome, verdict) = await demo(Repository.trace("bluejay-api-demo"))
        #expect(verdict == nil, "\(verdict.map(String.init(describing:)) ?? "")")
        #expect(try outcome.get() == Outcome(location: 1, newLocation: 0, beats: [60, 61, 62, 63]))
    }

    /// Every host packet of the demo broken in turn: each replay stops at that record,
    /// and every Bluejay operation still ends (the failed controller ends the link).
    @Test(.hangGuard) func everyHostPacketOfTheDemoIsChecked() async throws {
        let path = Repository.trace("bluejay-api-demo")
        for record in try hostRecords(path) {
            let corrupt = try corruptedCopy(of: path, record: record.number, octet: record.length - 1)
            defer { try? FileManager.default.removeItem(atPath: corrupt) }
            let (outcome, verdict) = await demo(corrupt)
            if let verdict {
                #expect(verdict.recordNumber == record.number, "record \(record.number): \(verdict)")
            } else {
                // Broken in bring-up: start failed, so no host was made; the error says where.
                guard case let .failure(error) = outcome else {
                    Issue.record("record \(record.number): no mismatch, outcome \(outcome)"); continue
                }
                #expect(
                    "\(error)".contains("replay mismatch at record \(record.number): "),
                    "record \(record.number): \(error)")
            }
        }
    }
}
