import BluetoothCore
import HCI

/// Scanning: one scan at a time, through the queue like every other operation.
extension Bluejay {
    // MARK: Scanning

    /// Scans for peripherals advertising `serviceIdentifiers` (all when nil) for `duration`
    /// seconds (0: until stopped). `discovery` sees each new peripheral (every advertisement
    /// whose RSSI moved by `throttleRSSIDelta` or more when duplicates are allowed) with all
    /// found so far, and says what to do next; `stopped` ends the scan exactly once.
    public func scan(duration: Double = 0, allowDuplicates: Bool = false, throttleRSSIDelta: Int = 5, serviceIdentifiers: [ServiceIdentifier]?,
                     discovery: @escaping @MainActor (ScanDiscovery, [ScanDiscovery]) -> ScanAction,
                     expired: (@MainActor (ScanDiscovery, [ScanDiscovery]) -> ScanAction)? = nil,
                     stopped: @escaping @MainActor ([ScanDiscovery], (any Error)?) -> Void) {
        var expiredAnswer: (@MainActor (ScanDiscovery, [ScanDiscovery]) async -> ScanAction)?
        if let expired { expiredAnswer = { expired($0, $1) } }
        scan(duration: duration, allowDuplicates: allowDuplicates, throttleRSSIDelta: throttleRSSIDelta, serviceIdentifiers: serviceIdentifiers,
             answering: { discovery($0, $1) }, expired: expiredAnswer, stopped: stopped)
    }

    /// The scan, its answers awaited: an answer from the app's own queue
    /// (``Bluejay/callbacks(on:)``) comes back without the main actor waiting on that queue,
    /// which may be the main queue itself.
    func scan(duration: Double, allowDuplicates: Bool, throttleRSSIDelta: Int, serviceIdentifiers: [ServiceIdentifier]?,
              answering discovery: @escaping @MainActor (ScanDiscovery, [ScanDiscovery]) async -> ScanAction,
              expired: (@MainActor (ScanDiscovery, [ScanDiscovery]) async -> ScanAction)?,
              stopped: @escaping @MainActor ([ScanDiscovery], (any Error)?) -> Void) {
        var findings = ScanFindings(allowDuplicates: allowDuplicates, throttleRSSIDelta: throttleRSSIDelta)
        guard case .idle = scanState else {
            stopped(findings.found, BluejayError.alreadyScanning)
            return
        }
        scanState = .scanning
        let options = ScanOptions(active: true, allowDuplicates: allowDuplicates, services: (serviceIdentifiers ?? []).map(\.uuid))
        queue.add(QueuedOperation(.scan, body: { [weak self] operation in
            guard let self, let host = await self.readyHost(operation) else { return }
            let (events, feed) = AsyncStream.makeStream(of: ScanEvent.self)
            let failed = await Task { @BluetoothActor () -> HCIError? in
                do throws(HCIError) { try await host.scanner.start(options) { feed.yield(.report($0)) } } catch { return error }
                return nil
            }.value
            if let failed { return operation.fail(.hci(failed)) }
            operation.onCancel = { _ in feed.finish() }
            // Cancelled or stopped while the scan was starting: end it at once.
            if operation.isFinished { feed.finish() }
            if case .stopRequested = self.scanState { feed.finish() }
            let clock = self.clock
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
            let expiry = allowDuplicates && expired != nil ? self.scanExpiry : nil
            var alarm: Task<Void, Never>?
            var then: (ScanDiscovery, @MainActor (ConnectionResult) -> Void)?
            scanning: for await event in events {
                var actions: [(PeripheralIdentifier, ScanAction)] = []
                switch event {
                case let .report(report):
                    if let item = findings.heard(report, at: clock.now) { actions.append((item.peripheralIdentifier, await discovery(item, findings.found))) }
                case .expiryDue:
                    alarm = nil
                    if let expiry, let expired {
                        for item in findings.lost(at: clock.now, after: expiry) {
                            findings.forget(item.peripheralIdentifier)
                            actions.append((item.peripheralIdentifier, await expired(item, findings.found)))
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
            await Task { @BluetoothActor in _ = try? await host.scanner.stop() }.value
            let wasCancelled = operation.isFinished
            if operation.claim() {
                self.scanState = .idle
                stopped(findings.found, nil)
            }
            if let (target, completion) = then, !wasCancelled { self.connect(target.peripheralIdentifier, completion: completion) }
        }, onFailure: { [weak self] error in
            self?.scanState = .idle
            stopped(findings.found, error)
        }))
    }

    /// Stops a running scan; its `stopped` callback follows.
    public func stopScanning() {
        guard case .scanning = scanState else { return }
        // Seen by a scan still queued or starting, which ends as soon as it runs.
        scanState = .stopRequested
        if let running = queue.running, running.kind == .scan { running.onCancel?(.cancelled) }
    }
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
    private var lastHeard: [PeripheralIdentifier: FacadeClock.Instant] = [:]
    private var blacklisted: Set<PeripheralIdentifier> = []

    init(allowDuplicates: Bool, throttleRSSIDelta: Int) {
        self.allowDuplicates = allowDuplicates
        self.throttleRSSIDelta = throttleRSSIDelta
    }

    /// Takes a report heard at `now`; returns what to tell the app of: a new peripheral,
    /// or (duplicates allowed) one whose RSSI moved by the throttle or more.
    mutating func heard(_ report: Discovery, at now: FacadeClock.Instant) -> ScanDiscovery? {
        let identifier = PeripheralIdentifier(address: report.address, addressType: report.addressType, name: report.advertisement.localName)
        guard !blacklisted.contains(identifier) else { return nil }
        lastHeard[identifier] = now
        let item = ScanDiscovery(peripheralIdentifier: identifier, advertisementPacket: report.advertisement, rssi: Int(report.rssi ?? 127))
        if let index = found.firstIndex(where: { $0.peripheralIdentifier == identifier }) {
            guard allowDuplicates, abs(found[index].rssi - item.rssi) >= throttleRSSIDelta else { return nil }
            found[index] = item
        } else {
            found.append(item)
        }
        return item
    }

    /// The peripherals found and not heard for `expiry` by `now`.
    func lost(at now: FacadeClock.Instant, after expiry: Duration) -> [ScanDiscovery] {
        found.filter { lastHeard[$0.peripheralIdentifier].map { now - $0 >= expiry } ?? false }
    }

    /// The earliest instant a peripheral found could be lost at, if any was found.
    func nextExpiry(after expiry: Duration) -> FacadeClock.Instant? {
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
