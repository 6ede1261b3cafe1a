import HCI

/// Scanning: one scan at a time, through the queue like every other operation.
extension Bluejay {
    // MARK: Scanning

    /// Scans for peripherals advertising `serviceIdentifiers` (all when nil) for `duration`
    /// seconds (0: until stopped). `discovery` sees each new peripheral (every advertisement
    /// whose RSSI moved by `throttleRSSIDelta` or more when duplicates are allowed) with all
    /// found so far, and says what to do next; `stopped` ends the scan exactly once.
    public func scan(duration: Double = 0, allowDuplicates: Bool = false, throttleRSSIDelta: Int = 5, serviceIdentifiers: [ServiceIdentifier]?,
                     discovery: @escaping (ScanDiscovery, [ScanDiscovery]) -> ScanAction,
                     expired: ((ScanDiscovery, [ScanDiscovery]) -> ScanAction)? = nil,
                     stopped: @escaping ([ScanDiscovery], (any Error)?) -> Void) {
        let discovery = callbacks.answer(discovery), expired = expired.map { callbacks.answer($0) }
        let stoppedOnQueue = callbacks.deliver { (outcome: ([ScanDiscovery], (any Error)?)) in stopped(outcome.0, outcome.1) }
        let stopped = { (found: [ScanDiscovery], error: (any Error)?) in stoppedOnQueue((found, error)) }
        var found: [ScanDiscovery] = []
        guard case .idle = scanState else {
            stopped(found, BluejayError.alreadyScanning)
            return
        }
        scanState = .scanning
        let options = ScanOptions(active: true, allowDuplicates: allowDuplicates, services: (serviceIdentifiers ?? []).map(\.uuid))
        queue.add(QueuedOperation(.scan, body: { [weak self] operation in
            guard let self, let host = await self.readyHost(operation) else { return }
            let (stream, feed) = AsyncStream.makeStream(of: ScanEvent.self)
            let failed = await Task { @BluetoothActor () -> HCIError? in
                do throws(HCIError) { try await host.scanner.start(options) { feed.yield(.report($0)) } } catch { return error }
                return nil
            }.value
            if let failed { return operation.fail(.hci(failed)) }
            operation.onCancel = { _ in feed.finish() }
            // Cancelled or stopped while the scan was starting: end it at once.
            if operation.isFinished { feed.finish() }
            if case .stopRequested = self.scanState { feed.finish() }
            let timer = Task { @MainActor in
                guard duration > 0 else { return }
                try? await Task.sleep(for: .milliseconds(Int(duration * 1000)))
                feed.finish()
            }
            // With duplicates allowed, a peripheral not heard for `scanExpiry` is reported lost.
            let expiry = self.scanExpiry
            let ticker = Task { @MainActor in
                guard allowDuplicates, expired != nil else { return }
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    feed.yield(.tick)
                }
            }
            var blacklisted: Set<PeripheralIdentifier> = []
            var lastSeen: [PeripheralIdentifier: ContinuousClock.Instant] = [:]
            var then: (ScanDiscovery, (ConnectionResult) -> Void)?
            scanning: for await event in stream {
                var actions: [(PeripheralIdentifier, ScanAction)] = []
                switch event {
                case let .report(report):
                    let identifier = PeripheralIdentifier(address: report.address, addressType: report.addressType, name: report.advertisement.localName)
                    guard !blacklisted.contains(identifier) else { continue }
                    lastSeen[identifier] = .now
                    let item = ScanDiscovery(peripheralIdentifier: identifier, advertisementPacket: report.advertisement, rssi: Int(report.rssi ?? 127))
                    if let index = found.firstIndex(where: { $0.peripheralIdentifier == identifier }) {
                        guard allowDuplicates, abs(found[index].rssi - item.rssi) >= throttleRSSIDelta else { continue }
                        found[index] = item
                    } else {
                        found.append(item)
                    }
                    actions.append((identifier, discovery(item, found)))
                case .tick:
                    let now = ContinuousClock.now
                    let lost = found.filter { lastSeen[$0.peripheralIdentifier].map { now - $0 > expiry } ?? false }
                    for item in lost {
                        found.removeAll { $0.peripheralIdentifier == item.peripheralIdentifier }
                        lastSeen[item.peripheralIdentifier] = nil
                        if let expired { actions.append((item.peripheralIdentifier, expired(item, found))) }
                    }
                }
                for (identifier, action) in actions {
                    switch action {
                    case .continue: continue
                    case .blacklist: blacklisted.insert(identifier)
                    case .stop: break scanning
                    case let .connect(target, completion):
                        then = (target, completion)
                        break scanning
                    }
                }
            }
            ticker.cancel()
            timer.cancel()
            await Task { @BluetoothActor in _ = try? await host.scanner.stop() }.value
            let wasCancelled = operation.isFinished
            if operation.claim() {
                self.scanState = .idle
                stopped(found, nil)
            }
            if let (target, completion) = then, !wasCancelled { self.connect(target.peripheralIdentifier, completion: completion) }
        }, onFailure: { [weak self] error in
            self?.scanState = .idle
            stopped(found, error)
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

/// What a scan's loop waits on: a report, or a tick to check for lost peripherals.
private enum ScanEvent: Sendable {
    case report(Discovery)
    case tick
}
