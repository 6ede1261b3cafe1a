@testable import Bluejay
import BluetoothCore
import Foundation
import HCI
import HCITestSupport
import Synchronization
import TestTraits
import Testing
import VirtualController

/// `Bluejay` as its API reference says it behaves, where Linux leaves room to: a connection
/// attempt with no timeout unless given one, `cancelEverything(error:)` with the app's own
/// error, `readRSSI()` refused while a background task runs, a lost controller reported as
/// `bluetoothUnavailable` and operations refused at once while it comes back, and the
/// README's and 0.1's observer spellings still called.
@Suite(.hangGuard) @MainActor
struct ReferenceBehaviourTests {
    /// An error of the app's own, for ``Bluejay/cancelEverything(error:shouldDisconnect:)``.
    struct AppError: Error, Equatable { let code: Int }

    /// Nobody advertises at this address: an attempt to connect to it waits.
    nonisolated static let absent = try! PeripheralIdentifier("F0:0D:B1:E7:00:99/random")

    /// A rig whose scripted controller takes connection attempts too.
    static func rig(recovery: ControllerRecovery = .disabled) -> ClockTests.Rig {
        var script = FakeController.Script()
        script.supported += [LECreateConnection.opcode, LECreateConnectionCancel.opcode]
        return ClockTests.Rig(recovery: recovery, script: script)
    }

    /// The timers the host's layers have armed (command, ATT and connection timeouts).
    static func timers(_ host: BluetoothHost) async -> Int {
        await Task { @BluetoothActor in host.resources.timersArmed }.value
    }

    /// What the fake controller answers a cancelled attempt with (Core 6.0 Vol 4 Part E
    /// 7.8.13: LE Connection Complete, Unknown Connection Identifier), once it is asked.
    static func answerCancel(_ fake: FakeController, cancels: Int) async {
        _ = await eventually { fake.sentCommands.filter { $0 == LECreateConnectionCancel.opcode }.count == cancels }
        fake.deliverEvent(
            LEConnectionEvent.connectionComplete(
                status: .unknownConnectionIdentifier, handle: 0, role: 0, peerAddressType: 0,
                peerAddress: BluetoothAddress(littleEndianBytes: [0, 0, 0, 0, 0, 0]),
                parameters: LEConnectionParameters(interval: 0, latency: 0, supervisionTimeout: 0)))
    }

    @Test func aConnectionAttemptHasNoTimeoutUnlessGivenOne() async throws {
        let rig = Self.rig()
        #expect(await rig.told() == "available")
        let host = try #require(rig.bluejay.host), fake = try #require(rig.opened.last)
        let idle = await Self.timers(host)

        // Given a timeout, the attempt arms a timer for it (what is measured here works).
        var timed: ConnectionResult?
        rig.bluejay.connect(Self.absent, timeout: .seconds(30)) { timed = $0 }
        #expect(await eventually { await Self.timers(host) == idle + 1 }, "an attempt with a timeout armed no timer")
        rig.bluejay.cancelEverything()
        await Self.answerCancel(fake, cancels: 1)
        #expect(await eventually { timed != nil && !rig.bluejay.isConnecting })
        #expect(await eventually { await Self.timers(host) == idle })

        // The default, as the reference gives it: `.none`, so no timer at all.
        var untimed: ConnectionResult?
        rig.bluejay.connect(Self.absent) { untimed = $0 }
        #expect(await eventually { fake.sentCommands.filter { $0 == LECreateConnection.opcode }.count == 2 })
        #expect(await eventually { await Task { @BluetoothActor in host.resources.commandsOutstanding }.value == 0 })
        // A job queued on the stack's actor after the attempt's own: the attempt has armed
        // whatever it arms.
        await Task { @BluetoothActor in await Task.yield() }.value
        #expect(await Self.timers(host) == idle, "a connection attempt with the default timeout armed a timer")
        #expect(untimed == nil && rig.bluejay.isConnecting)
        rig.bluejay.cancelEverything()
        await Self.answerCancel(fake, cancels: 2)
        #expect(await eventually { untimed != nil })
        await rig.finish()
    }

    @Test func cancelEverythingHandsEachCompletionTheAppsOwnError() async throws {
        let rig = Self.rig()
        #expect(await rig.told() == "available")
        let fake = try #require(rig.opened.last)
        // One running (the attempt), one waiting behind it.
        var connected: ConnectionResult?
        var read: ReadResult<Data>?
        rig.bluejay.connect(Self.absent) { connected = $0 }
        rig.bluejay.read(from: FaceTests.named) { read = $0 }
        #expect(await eventually { fake.sentCommands.contains(LECreateConnection.opcode) })

        rig.bluejay.cancelEverything(error: AppError(code: 7))
        #expect(await eventually { connected != nil && read != nil })
        guard case let .failure(connectError)? = connected, case let .failure(readError)? = read else {
            Issue.record("connect \(String(describing: connected)), read \(String(describing: read))")
            return
        }
        #expect(connectError as? AppError == AppError(code: 7), "\(connectError)")
        #expect(readError as? AppError == AppError(code: 7), "\(readError)")
        await Self.answerCancel(fake, cancels: 1)

        // Bluejay's own cancellation is still each completion's `.cancelled`.
        var again: ConnectionResult?
        #expect(await eventually { !rig.bluejay.isConnecting })
        rig.bluejay.connect(Self.absent) { again = $0 }
        #expect(await eventually { fake.sentCommands.filter { $0 == LECreateConnection.opcode }.count == 2 })
        rig.bluejay.cancelEverything()
        #expect(await eventually { again != nil })
        guard case .cancelled? = again else {
            Issue.record("cancelled with the default: \(String(describing: again))"); return
        }
        await Self.answerCancel(fake, cancels: 2)
        await rig.finish()
    }

    /// Collects Bluejay's log.
    @MainActor
    final class LogCollector: LogObserver {
        private(set) var logs = ""
        func logFileUpdated(logs: String) { self.logs = logs }
    }

    @Test func aLostControllerIsBluetoothUnavailableAndRecoveryRefusesOperationsAtOnce() async throws {
        let rig = Self.rig(recovery: ControllerRecovery(delays: [.seconds(5)]))
        let log = LogCollector()
        rig.bluejay.register(logObserver: log)
        #expect(await rig.told() == "available")
        let fake = try #require(rig.opened.last)
        var interrupted: ConnectionResult?
        rig.bluejay.connect(Self.absent) { interrupted = $0 }
        #expect(await eventually { fake.sentCommands.contains(LECreateConnection.opcode) })

        fake.deliverEvent(.hardwareError(HardwareError(hardwareCode: 0x01)))
        #expect(await rig.told() == "unavailable")
        #expect(await eventually { interrupted != nil })
        guard case let .failure(error)? = interrupted else {
            Issue.record("the attempt ended with \(String(describing: interrupted))"); return
        }
        #expect("\(error)" == "\(BluejayError.bluetoothUnavailable)")
        #expect(
            await eventually { log.logs.contains("controller lost: the controller reported Hardware Error 0x01") },
            "the log does not name the failure: \(log.logs)")

        // The controller is being reopened (its delay has not passed on the clock): an
        // operation asked for meanwhile fails at once, as on iOS while Bluetooth is off.
        try #require(await rig.sleepers(1), "the recovery's delay never armed")
        #expect(rig.bluejay.isBluetoothStateUpdateImminent)
        var during: ReadResult<Data>?
        rig.bluejay.read(from: FaceTests.named) { during = $0 }
        #expect(await eventually { during != nil }, "an operation asked for during recovery waited for it")
        guard case let .failure(refused)? = during else {
            Issue.record("during recovery: \(String(describing: during))"); return
        }
        #expect("\(refused)" == "\(BluejayError.bluetoothUnavailable)")

        // Back: operations run again (this one fails only for want of a link).
        rig.clock.advance(by: .seconds(5))
        #expect(await rig.told() == "available")
        var after: ReadResult<Data>?
        rig.bluejay.read(from: FaceTests.named) { after = $0 }
        #expect(await eventually { after != nil })
        guard case let .failure(notConnected)? = after else {
            Issue.record("after recovery: \(String(describing: after))"); return
        }
        #expect("\(notConnected)" == "\(BluejayError.notConnected)")
        await rig.finish()
    }

    /// The callback API's `readRSSI()` (an async context would pick the `async` one).
    static func readRSSI(_ bluejay: Bluejay) throws { try bluejay.readRSSI() }

    @Test func readRSSIThrowsWhileABackgroundTaskRuns() async throws {
        let controller = try FaceTests.controller()
        let store = FaceTests.temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store.path) }
        let bluejay = Bluejay()
        bluejay.start(
            mode: .new(
                StartOptions(transport: "virtual", store: store, logger: .silent, openTransport: { _ in controller })))
        let connected: ConnectionResult = await withCheckedContinuation { done in
            bluejay.connect(FaceTests.identifier, timeout: .seconds(30)) { done.resume(returning: $0) }
        }
        guard case .success = connected else { Issue.record("connect: \(connected)"); return }
        #expect(throws: Never.self) { try Self.readRSSI(bluejay) }

        // A task that holds the queue until told to end.
        let release = DispatchSemaphore(value: 0)
        var ran: RunResult<Int>?
        // The task's completion may ask at once: the task has ended, whether or not the
        // queue has moved on yet.
        var askedInCompletion: String?
        bluejay.run(
            backgroundTask: { peripheral in
                release.wait()
                return try peripheral.readRSSI()
            },
            completionOnMainThread: {
                ran = $0
                do { try Self.readRSSI(bluejay) } catch { askedInCompletion = "\(error)" }
            })
        #expect(await eventually { bluejay.queue.running?.kind == .backgroundTask })
        do {
            try Self.readRSSI(bluejay)
            Issue.record("readRSSI() did not throw while a background task ran")
        } catch {
            #expect("\(error)" == "\(BluejayError.backgroundTaskRunning)")
        }
        do {
            _ = try await bluejay.readRSSI()
            Issue.record("readRSSI() async did not throw while a background task ran")
        } catch {
            #expect("\(error)" == "\(BluejayError.backgroundTaskRunning)")
        }
        release.signal()
        #expect(await eventually { ran != nil })
        guard case .success? = ran else { Issue.record("the task's own Read RSSI: \(String(describing: ran))"); return }
        #expect(askedInCompletion == nil, "readRSSI() in the task's completion: \(askedInCompletion ?? "")")
        // The task over, the app may ask again.
        _ = try await bluejay.readRSSI()
        if let host = bluejay.stopAndExtractBluetoothState().host {
            await Task { @BluetoothActor in host.close() }.value
        }
    }

    /// An observer written against Bluejay's README (`connected(to: Peripheral)`) and 0.1
    /// (`connected(_:)`, `disconected()`), beside today's spelling.
    @MainActor
    final class EarlierObserver: ConnectionObserver {
        private(set) var told: [String] = []
        func connected(to peripheral: PeripheralIdentifier) { told.append("connected(to: PeripheralIdentifier)") }
        func disconnected(from peripheral: PeripheralIdentifier) {
            told.append("disconnected(from: PeripheralIdentifier)")
        }
        func connected(to peripheral: Peripheral) { told.append("connected(to: Peripheral) \(peripheral.identifier)") }
        func disconnected(from peripheral: Peripheral) {
            told.append("disconnected(from: Peripheral) \(peripheral.identifier)")
        }
        func connected(_ peripheral: Peripheral) { told.append("connected(_:) \(peripheral.identifier)") }
        func disconected() { told.append("disconected()") }
    }

    @Test func theReadmesAndEarlierObserverSpellingsAreCalled() async throws {
        let controller = try FaceTests.controller()
        let store = FaceTests.temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store.path) }
        let bluejay = Bluejay()
        let observer = EarlierObserver()
        bluejay.start(
            connectionObserver: observer,
            mode: .new(
                StartOptions(transport: "virtual", store: store, logger: .silent, openTransport: { _ in controller })))
        let connected: ConnectionResult = await withCheckedContinuation { done in
            bluejay.connect(FaceTests.identifier, timeout: .seconds(30)) { done.resume(returning: $0) }
        }
        guard case .success = connected else { Issue.record("connect: \(connected)"); return }
        let disconnected: DisconnectionResult = await withCheckedContinuation { done in
            bluejay.disconnect { done.resume(returning: $0) }
        }
        guard case .success = disconnected else { Issue.record("disconnect: \(disconnected)"); return }
        let id = FaceTests.identifier
        let told = [
            "connected(to: PeripheralIdentifier)", "connected(to: Peripheral) \(id)", "connected(_:) \(id)",
            "disconnected(from: PeripheralIdentifier)", "disconnected(from: Peripheral) \(id)", "disconected()",
        ]
        #expect(await eventually { observer.told == told }, "\(observer.told)")
        if let host = bluejay.stopAndExtractBluetoothState().host {
            await Task { @BluetoothActor in host.close() }.value
        }
    }
}
