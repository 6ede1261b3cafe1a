import BluetoothCore
import GAP
import HCI
import Synchronization

/// Scanning: one scan at a time, through the queue like every other operation.
extension Bluejay {
    // MARK: Scanning

    /// Scans for peripherals advertising `serviceIdentifiers` (all when nil) for `duration`
    /// seconds (0: until stopped). `discovery` sees each new peripheral (every advertisement
    /// whose RSSI moved by `throttleRSSIDelta` or more when duplicates are allowed) with all
    /// found so far, and says what to do next; `stopped` ends the scan exactly once.
    public func scan(
        duration: Double = 0, allowDuplicates: Bool = false, throttleRSSIDelta: Int = 5,
        serviceIdentifiers: [ServiceIdentifier]?,
        discovery: @escaping @MainActor (ScanDiscovery, [ScanDiscovery]) -> ScanAction,
        expired: (@MainActor (ScanDiscovery, [ScanDiscovery]) -> ScanAction)? = nil,
        stopped: @escaping @MainActor ([ScanDiscovery], (any Error)?) -> Void
    ) {
        var expiredAnswer: (@MainActor (ScanDiscovery, [ScanDiscovery]) async -> ScanAnswer)?
        if let expired { expiredAnswer = { ScanAnswer(expired($0, $1)) } }
        scan(
            duration: duration, allowDuplicates: allowDuplicates, throttleRSSIDelta: throttleRSSIDelta,
            serviceIdentifiers: serviceIdentifiers,
            answering: { ScanAnswer(discovery($0, $1)) }, expired: expiredAnswer, stopped: stopped)
    }

    /// The scan, its answers awaited: the scan runs on the stack's actor and asks the
    /// main actor for each answer; an answer from the app's own queue
    /// (``Bluejay/callbacks(on:)``) comes back without the main actor waiting on that queue,
    /// which may be the main queue itself.
    func scan(
        duration: Double, allowDuplicates: Bool, throttleRSSIDelta: Int, serviceIdentifiers: [ServiceIdentifier]?,
        answering discovery: @escaping @MainActor (ScanDiscovery, [ScanDiscovery]) async -> ScanAnswer,
        expired: (@MainActor (ScanDiscovery, [ScanDiscovery]) async -> ScanAnswer)?,
        stopped: @escaping @MainActor ([ScanDiscovery], (any Error)?) -> Void
    ) {
        let refused = core.state.withLock { state -> Bool in
            guard case .idle = state.scan else { return true }
            state.scan = .scanning
            return false
        }
        if refused { return stopped([], BluejayError.alreadyScanning) }
        let options = ScanOptions(
            active: true, allowDuplicates: allowDuplicates, services: (serviceIdentifiers ?? []).map(\.uuid))
        // What was found, for a scan that fails: it has found nothing unless it ran.
        let found = FoundSoFar()
        let core = core
        queue.add(
            QueuedOperation(
                .scan,
                body: { [weak self] operation in
                    guard let self, let host = await self.readyHost(operation) else { return }
                    var findings = ScanFindings(allowDuplicates: allowDuplicates, throttleRSSIDelta: throttleRSSIDelta)
                    let (events, feed) = AsyncStream.makeStream(of: ScanEvent.self)
                    do throws(HCIError) { try await host.scanner.start(options) { feed.yield(.report($0)) } } catch {
                        return operation.fail(Self.cause(.hci(error), on: host))
                    }
                    operation.onCancel = { _ in feed.finish() }
                    // Cancelled or stopped while the scan was starting: end it at once.
                    if operation.isFinished { feed.finish() }
                    if case .stopRequested = core.read(\.scan) { feed.finish() }
                    let (clock, scanExpiry) = core.read { ($0.clock, $0.scanExpiry) }
                    // The scan ends at its deadline.
                    let deadline = duration > 0 ? clock.now + .milliseconds(Int(duration * 1000)) : nil
                    let timer = deadline.map { deadline in
                        Task {
                            guard (try? await clock.sleep(until: deadline)) != nil else { return }
                            feed.finish()
                        }
                    }
                    // With duplicates allowed, a peripheral not heard for `scanExpiry` is reported
                    // lost: an alarm is set for the earliest such deadline. A report only moves a
                    // peripheral's deadline later, so an alarm once set is never late, at worst early;
                    // when it goes off, what is due expires and the alarm is set for the next one.
                    let expiry = allowDuplicates && expired != nil ? scanExpiry : nil
                    var alarm: Task<Void, Never>?
                    var then: (ScanDiscovery, @MainActor (ConnectionResult) -> Void)?
                    scanning: for await event in events {
                        var actions: [(PeripheralIdentifier, ScanAction)] = []
                        switch event {
                        case let .report(report):
                            if let item = findings.heard(report, at: clock.now) {
                                found.set(findings.found)
                                actions.append(
                                    (item.peripheralIdentifier, await discovery(item, findings.found).action))
                            }
                        case .expiryDue:
                            alarm = nil
                            if let expiry, let expired {
                                for item in findings.lost(at: clock.now, after: expiry) {
                                    findings.forget(item.peripheralIdentifier)
                                    found.set(findings.found)
                                    actions.append(
                                        (item.peripheralIdentifier, await expired(item, findings.found).action))
                                }
                            }
                        }
                        for (identifier, action) in actions {
                            switch action {
                            case .continue: continue
                            case .blacklist: findings.blacklist(identifier)
                            case .stop: break scanning
                            case let .connect(target, completion):
                                then = (target, completion)
                                break scanning
                            }
                        }
                        if let expiry, alarm == nil, let due = findings.nextExpiry(after: expiry) {
                            alarm = Task {
                                guard (try? await clock.sleep(until: due)) != nil else { return }
                                feed.yield(.expiryDue)
                            }
                        }
                    }
                    alarm?.cancel()
                    timer?.cancel()
                    _ = try? await host.scanner.stop()
                    let wasCancelled = operation.isFinished
                    if operation.claim() {
                        core.state.withLock { $0.scan = .idle }
                        let results = findings.found
                        self.post { stopped(results, nil) }
                    }
                    if let (target, completion) = then, !wasCancelled {
                        if let refused = self.queueConnect(
                            target.peripheralIdentifier, timeout: .none, then: completion)
                        {
                            self.post { completion(.failure(refused)) }
                        }
                    }
                },
                onFailure: failing { error in
                    stopped(found.value, error)
                } first: { _ in
                    core.state.withLock { $0.scan = .idle }
                }))
    }

    /// Stops a running scan; its `stopped` callback follows.
    public func stopScanning() { requestScanStop() }

    /// Stops a running scan, from either actor.
    nonisolated func requestScanStop() {
        let requested = core.state.withLock { state -> Bool in
            guard case .scanning = state.scan else { return false }
            // Seen by a scan still queued or starting, which ends as soon as it runs.
            state.scan = .stopRequested
            return true
        }
        guard requested else { return }
        if let running = queue.running, running.kind == .scan { running.onCancel?(BluejayError.cancelled) }
    }
}

/// A scan's answer on its way back from the main actor or the app's queue to the scan on
/// the stack's actor: a ``ScanAction`` is not `Sendable` only for the connection callback
/// it may carry, which is `@MainActor`.
struct ScanAnswer: @unchecked Sendable {
    let action: ScanAction
    init(_ action: ScanAction) { self.action = action }
}

/// What a scan has found so far, for its `stopped` callback when it fails.
private final class FoundSoFar: Sendable {
    private let found = Mutex<[ScanDiscovery]>([])
    var value: [ScanDiscovery] { found.withLock { $0 } }
    func set(_ value: [ScanDiscovery]) { found.withLock { $0 = value } }
}

/// What a scan's loop waits on.
private enum ScanEvent: Sendable {
    /// An advertisement (with its scan response, when active).
    case report(Discovery)
    /// The earliest deadline for a peripheral not heard from has come.
    case expiryDue
}

/// What one scan has found, when each peripheral was last heard, and whom it ignores.
private struct ScanFindings {
    let allowDuplicates: Bool
    let throttleRSSIDelta: Int
    /// Each peripheral reported, with its latest report, in the order first found.
    private(set) var found: [ScanDiscovery] = []
    private var lastHeard: [PeripheralIdentifier: ElapsedClock.Instant] = [:]
    private var blacklisted: Set<PeripheralIdentifier> = []

    init(allowDuplicates: Bool, throttleRSSIDelta: Int) {
        (self.allowDuplicates, self.throttleRSSIDelta) = (allowDuplicates, throttleRSSIDelta)
    }

    /// Takes a report heard at `now`; returns what to tell the app of: a new peripheral,
    /// or (duplicates allowed) one whose RSSI moved by the throttle or more.
    mutating func heard(_ report: Discovery, at now: ElapsedClock.Instant) -> ScanDiscovery? {
        let item = ScanDiscovery(report), identifier = item.peripheralIdentifier
        guard !blacklisted.contains(identifier) else { return nil }
        lastHeard[identifier] = now
        if let index = found.firstIndex(where: { $0.peripheralIdentifier == identifier }) {
            guard allowDuplicates, abs(found[index].rssi - item.rssi) >= throttleRSSIDelta else { return nil }
            found[index] = item
        } else {
            found.append(item)
        }
        return item
    }

    /// The peripherals found and not heard for `expiry` by `now`.
    func lost(at now: ElapsedClock.Instant, after expiry: Duration) -> [ScanDiscovery] {
        found.filter { lastHeard[$0.peripheralIdentifier].map { now - $0 >= expiry } ?? false }
    }

    /// The earliest instant a peripheral found could be lost at, if any was found.
    func nextExpiry(after expiry: Duration) -> ElapsedClock.Instant? {
        found.compactMap { lastHeard[$0.peripheralIdentifier] }.min().map { $0 + expiry }
    }

    /// Drops a lost peripheral: heard again, it is new.
    mutating func forget(_ identifier: PeripheralIdentifier) {
        found.removeAll { $0.peripheralIdentifier == identifier }
        lastHeard[identifier] = nil
    }

    /// Ignores `identifier` for the rest of the scan.
    mutating func blacklist(_ identifier: PeripheralIdentifier) { blacklisted.insert(identifier) }
}
