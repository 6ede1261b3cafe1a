@testable import Bluejay
import BluetoothCore
import DiscoveryCache
import Foundation
@testable import HCI
import HCITestSupport
import TestTraits
import Testing

extension IntegrationTests {
    /// Fault injection against the Bumble peer: the link is lost (the peer disconnects, the
    /// supervision timeout expires), the transport ends, or the controller reports a Hardware
    /// Error, at every step of a scripted Bluejay session. After each, every operation that was
    /// running or queued ended exactly once with an error, none twice; auto-reconnect brings
    /// the link back (after reopening the controller when it was the controller that went) and
    /// earlier listens resume; and when it is all over nothing is left: no link, timer, ATT
    /// request, command, ACL credit, thread or descriptor.
    @Suite @MainActor
    struct FaultInjectionTests {
        nonisolated static let heartRate = ServiceIdentifier(uuid: "180D")
        nonisolated static let sensorLocation = CharacteristicIdentifier(uuid: "2A38", service: heartRate)
        nonisolated static let manufacturer = CharacteristicIdentifier(
            uuid: "2A29", service: ServiceIdentifier(uuid: "180A"))
        nonisolated static let custom = ServiceIdentifier(uuid: "B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A00")
        nonisolated static let longValue = CharacteristicIdentifier(
            uuid: "B1E70002-9D3B-4C7A-8A5E-6F2D0C1B0A00", service: custom)
        nonisolated static let indicated = CharacteristicIdentifier(
            uuid: "B1E70003-9D3B-4C7A-8A5E-6F2D0C1B0A00", service: custom)
        nonisolated static let encrypted = CharacteristicIdentifier(
            uuid: "B1E70004-9D3B-4C7A-8A5E-6F2D0C1B0A00", service: custom)
        nonisolated static let controlPoint = CharacteristicIdentifier(
            uuid: "B1E70006-9D3B-4C7A-8A5E-6F2D0C1B0A00", service: custom)

        /// What one run holds: the peer, Bluejay, the transports it opened and what it saw.
        @MainActor
        final class Run {
            let peer: TestPeer
            let store = NSTemporaryDirectory() + "bluejay-faults-\(UUID().uuidString)"
            let bluejay = Bluejay()
            let ledger = Ledger()
            let recorder = AvailabilityRecorder()
            let peripheral: PeripheralIdentifier
            /// Every transport Bluejay opened, in order (the first carries the fault), with what
            /// its descriptors referred to when it opened.
            let opened = OpenedTransports()
            /// Every host Bluejay brought up.
            var hosts: [BluetoothHost] = []

            init() async throws {
                // A peripheral that offers only ATT_MTU 23, so a 512-byte value takes Read Blob
                // and Prepare Write.
                peer = try await TestPeer(arguments: ["--att-mtu", "23"])
                peripheral = PeripheralIdentifier(
                    address: try #require(BluetoothAddress(peer.address)), addressType: .random)
                let transport = peer.transport, opened = opened
                bluejay.onHostUp = { [weak self] in self?.hosts.append($0) }
                bluejay.register(connectionObserver: recorder)
                bluejay.start(
                    mode: .new(
                        StartOptions(
                            transport: transport, store: StoreDirectory(path: store), logger: .silent,
                            openTransport: { capture throws(TransportError) in
                                try opened.open(transport, capture: capture)
                            },
                            controllerRecovery: ControllerRecovery(delays: [
                                .milliseconds(50), .milliseconds(200), .milliseconds(500), .seconds(1),
                            ]))))
            }

            func finish() {
                peer.stop()
                try? FileManager.default.removeItem(atPath: store)
            }
        }

        /// The transports a run opened: each live one wrapped in a fault injector.
        final class OpenedTransports: @unchecked Sendable {
            struct Entry {
                let injector: FaultInjectingTransport
                let inner: FileDescriptorTransport
                let fdLink: String?
            }

            private let lock = NSLock()
            private var entries: [Entry] = []

            func open(_ transport: String, capture: BTSnoopWriter?) throws(TransportError) -> any HCITransport {
                let inner = try TransportSpec(parsing: transport).open(capture: capture)
                guard let descriptors = inner as? FileDescriptorTransport else { return inner }
                let injector = FaultInjectingTransport(wrapping: descriptors, controller: .live)
                lock.withLock {
                    entries.append(Entry(injector: injector, inner: descriptors, fdLink: fdLink(descriptors.fd)))
                }
                return injector
            }

            var all: [Entry] { lock.withLock { entries } }

            /// Whether every descriptor the transports opened is closed (or reused for something else).
            var allClosed: Bool { all.allSatisfy { fdLink($0.inner.fd) != $0.fdLink } }

        }

        @Test(.hangGuard, arguments: FaultCase.all)
        func faultAtEveryStep(_ faultCase: FaultCase) async throws {
            let threadsBefore = readerThreads()
            let run = try await Run()
            defer { run.finish() }
            let step = faultCase.step
            let up = await eventually { run.bluejay.isBluetoothAvailable }
            try #require(up, "\(faultCase): Bluejay did not start: \(run.recorder.availability)")

            // The phases before the step run to completion, as a normal session.
            for phase in SessionPhase.allCases where phase < step.phase {
                let operations = ask(phase, run)
                guard await run.ledger.waitUntilEnded(operations) else {
                    Issue.record("\(faultCase): \(phase) did not end before the fault; \(run.ledger.outcomes)")
                    return
                }
                for operation in operations where run.ledger.outcome(operation)?.hasPrefix("success") != true {
                    Issue.record("\(faultCase): \(operation) before the fault: \(run.ledger.outcome(operation) ?? "")")
                    return
                }
            }
            let listenedBefore = step.phase > .listen
            let wasConnected = run.bluejay.isConnected

            // Armed as the step's phase starts; that phase and every later one asked for at once.
            let injector = try #require(run.opened.all.first?.injector)
            injector.arm(faultCase.fault, on: step.trigger(faultCase.fault))
            var asked: [String] = []
            for phase in SessionPhase.allCases where phase >= step.phase {
                asked += ask(phase, run)
            }
            let ended = await run.ledger.waitUntilEnded(asked)
            #expect(injector.fired, "\(faultCase): the trigger never fired")
            #expect(ended, "\(faultCase): operations left hanging: \(asked.filter { run.ledger.outcome($0) == nil })")
            for operation in asked {
                let outcome = run.ledger.outcome(operation) ?? "none"
                #expect(outcome.hasPrefix("failure"), "\(faultCase): \(operation) ended with \(outcome), not an error")
            }
            // The operation the fault interrupted says what happened.
            let interrupted = run.ledger.outcome(asked[0]) ?? "none"
            #expect(
                interrupted.contains(faultCase.fault.interruptedWith),
                "\(faultCase): \(asked[0]) ended with \(interrupted)")
            if !faultCase.fault.needsLink {
                let named = await eventually { run.bluejay.getLogs()?.contains("controller lost: ") == true }
                let logged = run.bluejay.getLogs() ?? ""
                #expect(
                    named && logged.contains(faultCase.fault.expectedError),
                    "\(faultCase): the log does not name the fault: \(logged.suffix(2000))")
            }

            // Auto-reconnect: a link that was up comes back (on a reopened controller when the
            // controller went), and a listen from before resumes.
            if wasConnected {
                let back = await eventually { run.recorder.connections == 2 && run.bluejay.isConnected }
                #expect(
                    back,
                    "\(faultCase): Bluejay did not reconnect (connections \(run.recorder.connections), availability \(run.recorder.availability))"
                )
                guard back else { return }
                if listenedBefore {
                    let before = run.ledger.values["listen"]?.count ?? 0
                    await written(Data([0x04, 0xB2]), run)
                    let resumed = await eventually { (run.ledger.values["listen"]?.count ?? 0) > before }
                    let resumedValue = Data([0xB2])
                    #expect(
                        resumed && run.ledger.values["listen"]?.last == resumedValue,
                        "\(faultCase): the listen did not resume")
                }
            } else {
                // While a lost controller is reopened, operations fail at once (Bluejay's
                // reference: Bluetooth is unavailable); the app connects once it is back.
                let available = await eventually { run.bluejay.isBluetoothAvailable }
                #expect(
                    available,
                    "\(faultCase): the controller never came back (availability \(run.recorder.availability))")
                let reconnected: ConnectionResult = await withCheckedContinuation { done in
                    run.bluejay.connect(run.peripheral, timeout: .seconds(15)) { done.resume(returning: $0) }
                }
                guard case .success = reconnected else {
                    Issue.record("\(faultCase): connecting after the fault: \(reconnected)"); return
                }
            }
            if !faultCase.fault.needsLink {
                let downAndUp: [Bool] = [true, false, true]
                #expect(
                    run.recorder.availability == downAndUp, "\(faultCase): availability \(run.recorder.availability)")
                #expect(run.hosts.count == 2, "\(faultCase): the controller was reopened once")
            }

            // Idle and connected, the live host holds one link and nothing else under way.
            let host = try #require(run.hosts.last)
            let idle = await eventually { () async -> Bool in
                let held = await Task { @BluetoothActor in host.resources }.value
                let nothingUnderWay: Bool =
                    held.commandsOutstanding == 0 && held.attRequestsPending == 0 && held.timersArmed == 0
                let nothingQueued: Bool = held.pairings == 0 && held.aclPacketsQueued == 0
                return held.links == 1 && nothingUnderWay && nothingQueued
            }
            let heldWhenIdle = await Task { @BluetoothActor in host.resources }.value
            #expect(idle, "\(faultCase): after the reconnection the host holds \(heldWhenIdle)")

            // Bluejay still works, and its last callbacks come once.
            let location: ReadResult<UInt8> = await withCheckedContinuation { done in
                run.bluejay.read(from: Self.sensorLocation) { done.resume(returning: $0) }
            }
            #expect(describe(location) == "success", "\(faultCase): read after the fault: \(location)")
            let disconnected: DisconnectionResult = await withCheckedContinuation { done in
                run.bluejay.disconnect { done.resume(returning: $0) }
            }
            guard case .success = disconnected else {
                Issue.record("\(faultCase): disconnect: \(disconnected)"); return
            }
            if listenedBefore {
                let listenEnded = await run.ledger.waitUntilEnded(["listen end"])
                #expect(listenEnded, "\(faultCase): the listen never ended")
            }
            #expect(
                run.ledger.outcomes.filter { $0.value.count != 1 }.isEmpty,
                "\(faultCase): callbacks that did not fire exactly once: \(run.ledger.outcomes.filter { $0.value.count != 1 })"
            )

            // Nothing left: every host holds nothing, every transport is closed, no thread remains.
            guard let last = run.bluejay.stopAndExtractBluetoothState().host else {
                Issue.record("\(faultCase): no host to stop"); return
            }
            await Task { @BluetoothActor in last.close() }.value
            for (index, host) in run.hosts.enumerated() {
                let empty = await eventually { await Task { @BluetoothActor in host.resources }.value == .none }
                let held = await Task { @BluetoothActor in host.resources }.value
                #expect(empty, "\(faultCase): host \(index + 1) still holds \(held)")
            }
            let closed = await eventually { run.opened.allClosed }
            #expect(closed, "\(faultCase): a transport's descriptors are still open")
            let joined = await eventually { readerThreads() == threadsBefore }
            #expect(joined, "\(faultCase): \(readerThreads() - threadsBefore) reader thread(s) left")
        }

        /// Asks Bluejay for one phase; returns the names its callbacks are recorded under.
        func ask(_ phase: SessionPhase, _ run: Run) -> [String] {
            let bluejay = run.bluejay, ledger = run.ledger
            switch phase {
            case .scan:
                bluejay.scan(
                    duration: 15, serviceIdentifiers: [Self.heartRate], discovery: { _, _ in .stop },
                    stopped: { found, error in
                        ledger.end(
                            "scan",
                            error.map { "failure: \($0)" } ?? (found.isEmpty ? "failure: nothing found" : "success"))
                    })
                return ["scan"]
            case .connect:
                bluejay.connect(run.peripheral, timeout: .seconds(15)) { result in
                    switch result {
                    case .success: ledger.end("connect", "success")
                    case .cancelled: ledger.end("connect", "cancelled")
                    case let .failure(error): ledger.end("connect", "failure: \(error)")
                    }
                }
                return ["connect"]
            case .read:
                bluejay.read(from: Self.sensorLocation) { (result: ReadResult<UInt8>) in
                    ledger.end("read", describe(result))
                }
                return ["read"]
            case .longRead:
                bluejay.read(from: Self.longValue) { (result: ReadResult<Data>) in
                    if case let .success(value) = result, value.count != 512 {
                        return ledger.end("long read", "failure: \(value.count) bytes")
                    }
                    ledger.end("long read", describe(result))
                }
                return ["long read"]
            case .write:
                bluejay.write(to: Self.sensorLocation, value: UInt8(2)) { ledger.end("write", describe($0)) }
                return ["write"]
            case .longWrite:
                bluejay.write(to: Self.longValue, value: Data((0..<300).map { UInt8(255 - $0 % 256) })) {
                    ledger.end("long write", describe($0))
                }
                return ["long write"]
            case .listen:
                var subscribed = false
                bluejay.listen(to: Self.indicated) { (result: ReadResult<Data>) in
                    switch result {
                    case let .success(value):
                        ledger.value("listen", value)
                        // The first value proves the subscription: that is the listen phase's success.
                        if !subscribed { ledger.end("listen", "success") }
                        subscribed = true
                    case .cancelled, .failure:
                        if !subscribed {
                            ledger.end("listen", describe(result))
                        } else {
                            ledger.end("listen end", describe(result))
                        }
                        subscribed = true
                    }
                }
                // The peer indicates what is written to its control point after 04.
                bluejay.write(to: Self.controlPoint, value: Data([0x04, 0xA1])) { ledger.end("indicate", describe($0)) }
                return ["listen", "indicate"]
            case .backgroundTask:
                bluejay.run(
                    backgroundTask: { peripheral -> Data in
                        let name: Data = try peripheral.read(from: Self.manufacturer)
                        try peripheral.write(to: Self.sensorLocation, value: UInt8(3))
                        return name
                    },
                    completionOnMainThread: { (result: RunResult<Data>) in
                        switch result {
                        case let .success(name):
                            ledger.end(
                                "background task", name == Data("Bluejay".utf8) ? "success" : "failure: read \(name)")
                        case .cancelled: ledger.end("background task", "cancelled")
                        case let .failure(error): ledger.end("background task", "failure: \(error)")
                        }
                    })
                return ["background task"]
            case .pairing:
                // Insufficient Encryption, then pairing on demand, then the value.
                bluejay.read(from: Self.encrypted) { (result: ReadResult<Data>) in
                    if case let .success(value) = result, value != Data("Bluejay secret".utf8) {
                        return ledger.end("pairing", "failure: read \(value)")
                    }
                    ledger.end("pairing", describe(result))
                }
                return ["pairing"]
            }
        }

        /// Writes the control point and waits for the response.
        func written(_ value: Data, _ run: Run) async {
            let result: WriteResult = await withCheckedContinuation { done in
                run.bluejay.write(to: Self.controlPoint, value: value) { done.resume(returning: $0) }
            }
            #expect(describe(result) == "success", "control point \(value as NSData): \(result)")
        }
    }
}
