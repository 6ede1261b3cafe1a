import BluetoothCore
import HCI

/// Bringing the host up, losing the controller and bringing it back, and letting go.
extension Bluejay {
    // MARK: Lifecycle

    /// Brings the host up (or adopts one). Operations asked for before it is up wait for it;
    /// if it cannot come up they fail with `BluejayError.startFailed(_:)`.
    public func start(mode: StartMode = .new(.default)) {
        guard !hasStarted else {
            log("start(mode:) called twice; ignored")
            return
        }
        // Either way the host leaves notStarted at once: that is what hasStarted reads.
        switch mode {
        case let .use(existing):
            core.state.withLock { $0.host = .up(existing) }
            onHostUp?(existing)
            for observer in observers { observer.bluetoothAvailable(true) }
            Task { @BluetoothActor in
                self.hook(existing)
                // A link the lost controller took is remade on this one.
                self.resumeReconnecting(on: existing)
            }
        case let .new(options):
            let ready = OneShot<Result<BluetoothHost, BluejayError>>()
            let restoration = options.backgroundRestore.identifier.map {
                RestorationStore(directory: options.store.subdirectory("restoration"), identifier: $0)
            }
            // A recording cannot go on from the middle: a replayed controller is not reopened.
            let isReplay =
                if case .replay? = try? TransportSpec(parsing: options.transport), options.openTransport == nil {
                    true
                } else { false }
            core.state.withLock { state in
                state.host = .starting(ready)
                state.clock = ElapsedClock(options.clock)
                state.listenBufferLimit = options.listenBufferLimit
                state.restoration = restoration
                if !isReplay { state.reopenOptions = options }
            }
            logFile = LogFile(path: options.store.path + "/bluejay.log")
            logger = options.effectiveLogger.layer("bluejay")
            if restoration != nil { restorer = options.backgroundRestore.restorer }
            for line in logLines { log(line) }
            logLines = []
            Task { @BluetoothActor in
                let result = await Self.makeHost(options, capture: nil)
                guard self.isStarting(ready, else: result) else { return }
                switch result {
                case let .success(host):
                    self.adopt(host, ready: ready)
                    self.post { self.restore() }
                case let .failure(error):
                    self.core.state.withLock { $0.host = .down(error) }
                    self.post {
                        self.log("start failed: \(error)")
                        for observer in self.observers { observer.bluetoothAvailable(false) }
                    }
                    ready.fulfill(.failure(error))
                }
            }
        }
    }

    /// Starts on the default options' transport with state restoration
    /// (``StartOptions/backgroundRestore``), as Bluejay's README starts it:
    /// `start(backgroundRestore: .enable(identifier, restorer))`.
    public func start(backgroundRestore: BackgroundRestoreMode) {
        var options = StartOptions.default
        options.backgroundRestore = backgroundRestore
        start(mode: .new(options))
    }

    /// Starts and registers `connectionObserver` first, so it hears availability.
    public func start(connectionObserver: any ConnectionObserver, mode: StartMode = .new(.default)) {
        register(connectionObserver: connectionObserver)
        start(mode: mode)
    }

    /// Opens the transport `options` name (continuing `capture`, or opening the capture file
    /// they name) and brings a host up on it.
    @BluetoothActor
    private static func makeHost(_ options: StartOptions, capture continued: BTSnoopWriter?) async -> Result<
        BluetoothHost, BluejayError
    > {
        do throws(BluejayError) {
            var capture = continued
            if capture == nil {
                capture = try BluetoothHost.openCapture(options.capture, redacted: options.redactCapture)
            }
            let transport = try await BluetoothHost.open(
                options.transport, capture: capture, using: options.openTransport, clock: options.clock)
            let host = try await BluetoothHost(
                transport: transport, capture: capture, store: options.store, cacheEnabled: options.cacheEnabled,
                deviceName: options.deviceName, logger: options.effectiveLogger)
            host.security.policy = options.pairingPolicy
            host.security.delegate = options.pairingDelegate
            host.maximumValueLength = options.maxValueLength
            return .success(host)
        } catch {
            return .failure(error)
        }
    }

    /// Whether the bring-up that `ready` stands for is still wanted; if not (Bluejay was
    /// stopped meanwhile), the host it made is closed.
    nonisolated private func isStarting(
        _ ready: OneShot<Result<BluetoothHost, BluejayError>>, else made: Result<BluetoothHost, BluejayError>
    ) -> Bool {
        if let current = core.read(\.host).bringUp, current === ready { return true }
        if case let .success(host) = made { Task { @BluetoothActor in host.close() } }
        return false
    }

    /// Runs on `host` from now on: its links and failures are heard, waiting operations go.
    @BluetoothActor
    private func adopt(_ host: BluetoothHost, ready: OneShot<Result<BluetoothHost, BluejayError>>) {
        core.state.withLock { $0.host = .up(host) }
        hook(host)
        post {
            self.onHostUp?(host)
            for observer in self.observers { observer.bluetoothAvailable(true) }
        }
        ready.fulfill(.success(host))
        // A link the lost controller took is remade on this one.
        resumeReconnecting(on: host)
    }

    /// Hears `host`'s failures, Service Changed and values nobody listens to.
    @BluetoothActor
    private func hook(_ host: BluetoothHost) {
        let arrivals = arrivals
        // Links end through the host's central, whose peripheral Bluejay's link is.
        _ = host.central
        host.onControllerFailure = { [weak self] error in
            Task { @BluetoothActor in await self?.controllerLost(host, error) }
        }
        host.onServicesInvalidated = { [weak self] handle, services in
            let identifiers = services.map { ServiceIdentifier(uuid: $0.uuid) }
            // Its own weak capture: Swift 6.0 will not send the outer closure's to the main actor.
            self?.post { [weak self] in self?.servicesInvalidated(handle, identifiers) }
        }
        // The same route as a listen's values, so the two stay in the order they came.
        host.onUnhandledValue = { handle, valueHandle, characteristic, value in
            arrivals.post(.unsolicited(link: handle, valueHandle: valueHandle, characteristic, value))
        }
        // Failed before anyone listened (between bring-up and now): heard all the same.
        if let failure = host.controller.failure {
            Task { @BluetoothActor [weak self] in await self?.controllerLost(host, failure) }
        }
    }

    // MARK: Controller recovery

    /// The controller stopped by itself: its transport closed or failed, or it reported a
    /// Hardware Error. As Bluejay's reference does when Bluetooth goes off, everything under
    /// way ends with `BluejayError.bluetoothUnavailable` (the log names the failure; a read
    /// or write whose answer arrived before the loss is delivered) and observers hear Bluetooth is unavailable; the link ends like any lost link (so
    /// auto-reconnect and listens carry on once a controller is back). Then, if Bluejay
    /// opened the transport itself, it is reopened as ``StartOptions/controllerRecovery``
    /// says; operations asked for meanwhile fail at once, the same way.
    @BluetoothActor
    func controllerLost(_ lost: BluetoothHost, _ failure: HCIError) async {
        let error = BluejayError.bluetoothUnavailable
        let ready = OneShot<Result<BluetoothHost, BluejayError>>()
        let decided = core.state.withLock { state -> (options: StartOptions?, gaveUpAfter: Int?)? in
            guard case let .up(current) = state.host, current === lost else { return nil }
            if let recoveredAt = state.recoveredAt, state.clock.now - recoveredAt > Self.recoveryStreakWindow {
                state.recoveryAttempts = 0
            }
            let attempts = state.recoveryAttempts
            let options = state.reopenOptions.flatMap { $0.controllerRecovery.delays.count > attempts ? $0 : nil }
            state.host = options == nil ? .down(error) : .recovering(ready)
            let gaveUp = options == nil && state.reopenOptions?.controllerRecovery.delays.isEmpty == false
            return (options, gaveUp ? attempts + 1 : nil)
        }
        guard let (options, gaveUpAfter) = decided else { return }
        logLater("controller lost: \(failure)")
        if let gaveUpAfter { logLater("not reopening the controller again: it was lost \(gaveUpAfter) times in a row") }
        queue.endAll(losing: error)
        // The link Bluejay follows, up or being remade, is to be remade on the next controller.
        if case let .following(peripheral, reported) = core.read(\.link) {
            if let reported {
                if await linkEnded(reported, reason: .unspecifiedError, on: lost, asked: false, error: error) != nil {
                    core.state.withLock { $0.link = .awaitingController(peripheral.identifier, after: error) }
                }
            } else if case .reconnecting = peripheral.status.snapshot.state {
                let dropped = peripheral.status.snapshot.droppedBy ?? error
                core.state.withLock { $0.link = .awaitingController(peripheral.identifier, after: dropped) }
            }
        }
        post { for observer in self.observers { observer.bluetoothAvailable(false) } }
        // No controller to reconnect on.
        if options == nil, case let .awaitingController(peripheral, dropped) = core.read(\.link) {
            reconnectionFailed(peripheral, error, after: dropped)
        }
        let capture = options == nil ? nil : lost.capture
        Task { @BluetoothActor in lost.close(keepingCapture: options != nil) }
        guard let options else { return }
        Task { @BluetoothActor in await self.recover(ready, options, capture: capture) }
    }

    /// A controller lost again within this long after it came back counts as the same
    /// failure: its next reopen waits the next delay.
    nonisolated static let recoveryStreakWindow: Duration = .seconds(10)

    /// Reopens the transport after each delay of ``StartOptions/controllerRecovery`` not yet
    /// used up until a controller comes up; if none does, Bluejay stays down with the last
    /// error. The delays are waited on Bluejay's clock.
    @BluetoothActor
    private func recover(
        _ ready: OneShot<Result<BluetoothHost, BluejayError>>, _ options: StartOptions, capture: BTSnoopWriter?
    ) async {
        let delays = options.controllerRecovery.delays
        var lastError = BluejayError.bluetoothUnavailable
        let clock = core.read(\.clock)
        while let attempt = core.state.withLock({ state -> Int? in
            guard state.recoveryAttempts < delays.count else { return nil }
            defer { state.recoveryAttempts += 1 }
            return state.recoveryAttempts
        }) {
            try? await clock.sleep(for: delays[attempt])
            guard case let .recovering(current) = core.read(\.host), current === ready else { return }
            logLater("reopening \(options.transport) (attempt \(attempt + 1) of \(delays.count))")
            let result = await Self.makeHost(options, capture: capture)
            guard isStarting(ready, else: result) else { return }
            switch result {
            case let .success(host):
                logLater("the controller is back on \(options.transport)")
                core.state.withLock { $0.recoveredAt = clock.now }
                return adopt(host, ready: ready)
            case let .failure(error):
                logLater("reopening \(options.transport): \(error)")
                lastError = error
            }
        }
        logLater("gave up reopening \(options.transport) after \(delays.count) attempts")
        capture?.close()
        core.state.withLock { $0.host = .down(.bluetoothUnavailable) }
        ready.fulfill(.failure(lastError))
        if case let .awaitingController(peripheral, dropped) = core.read(\.link) {
            reconnectionFailed(peripheral, lastError, after: dropped)
        }
    }

    // MARK: Letting go

    /// Cancels everything without disconnecting and hands back the host and the connected
    /// peripheral, for code outside Bluejay to go on with. Bluejay is unusable afterwards.
    public func stopAndExtractBluetoothState() -> (host: BluetoothHost?, peripheral: PeripheralIdentifier?) {
        cancelEverything(error: BluejayError.cancelled, shouldDisconnect: false)
        let host = host
        let extracted = (host, connection?.peripheral)
        if let host {
            let followed = followed?.peripheral
            let reconnecting =
                followed.map { if case .reconnecting = $0.status.snapshot.state { true } else { false } } ?? false
            let subscribed = core.read {
                $0.listens.values.compactMap { listen in listen.token.map { (listen.listener.characteristic, $0) } }
            }
            Task { @BluetoothActor in
                host.onControllerFailure = nil
                // The host's central goes on for whoever takes the host, without Bluejay:
                // its listens' values stop (their subscriptions stay as they are).
                if let followed {
                    for (characteristic, token) in subscribed {
                        _ = try? await followed.remove(token, of: characteristic, turningOff: false)
                    }
                }
                host.central.releaseBluejay()
                if reconnecting { await followed?.disconnect() }
            }
        }
        let (starting, listeners) = core.state.withLock { state in
            let starting = state.host.bringUp
            state.host = .extracted
            state.link = .idle
            return (starting, state.takeListens())
        }
        // Operations waiting for a host that was still coming up end now.
        starting?.fulfill(.failure(.bluetoothUnavailable))
        for listener in listeners { listener.close(BluejayError.cancelled) }
        return extracted
    }

    /// Ends the running and every queued operation with `error` and, by default, disconnects.
    /// `error` is any error, as in Bluejay's reference: each completion gets it as its
    /// `.failure`, or `.cancelled` for `BluejayError.cancelled`.
    public func cancelEverything(error: any Error = BluejayError.cancelled, shouldDisconnect: Bool = true) {
        queue.cancelAll(error)
        guard shouldDisconnect else { return }
        shouldAutoReconnect = false
        stopReconnecting()
        if let (peripheral, _) = followed, let connection {
            Task { @BluetoothActor in _ = try? await peripheral.endLink(connection.handle) }
        }
    }
}
