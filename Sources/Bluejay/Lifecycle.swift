import BluetoothCore
import HCI

/// Bringing the host up, losing the controller and bringing it back, and letting go.
extension Bluejay {
    // MARK: Lifecycle

    /// Brings the host up (or adopts one). Operations asked for before it is up wait for it;
    /// if it cannot come up they fail with ``BluejayError/startFailed(_:)``.
    public func start(mode: StartMode = .new(.default)) {
        guard !hasStarted else {
            log("start(mode:) called twice; ignored")
            return
        }
        // Either way the host leaves notStarted at once: that is what hasStarted reads.
        switch mode {
        case let .use(existing):
            adopt(existing, ready: nil)
        case let .new(options):
            let ready = Once<Result<BluetoothHost, BluejayError>>()
            hostState = .starting(ready)
            clock = FacadeClock(options.clock)
            listenBufferLimit = options.listenBufferLimit
            logFile = LogFile(path: options.store.path + "/bluejay.log")
            logger = options.effectiveLogger.layer("bluejay")
            if let identifier = options.backgroundRestore.identifier {
                restoration = RestorationStore(directory: options.store.subdirectory("restoration"), identifier: identifier)
                restorer = options.backgroundRestore.restorer
            }
            for line in logLines { log(line) }
            logLines = []
            // A recording cannot go on from the middle: a replayed controller is not reopened.
            if case .replay? = try? TransportSpec(parsing: options.transport), options.openTransport == nil {} else { reopenOptions = options }
            Task { @MainActor in
                let result = await Task { @BluetoothActor in await Self.makeHost(options, capture: nil) }.value
                guard self.isStarting(ready, else: result) else { return }
                switch result {
                case let .success(host):
                    self.adopt(host, ready: ready)
                    self.restore()
                case let .failure(error):
                    self.hostState = .down(error)
                    self.log("start failed: \(error)")
                    ready.fulfill(.failure(error))
                    for observer in self.observers { observer.bluetoothAvailable(false) }
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
    private static func makeHost(_ options: StartOptions, capture continued: BTSnoopWriter?) async -> Result<BluetoothHost, BluejayError> {
        do throws(BluejayError) {
            var capture = continued
            if capture == nil { capture = try BluetoothHost.openCapture(options.capture, redacted: options.redactCapture) }
            let transport = try await BluetoothHost.open(options.transport, capture: capture, using: options.openTransport, clock: options.clock)
            let host = try await BluetoothHost(transport: transport, capture: capture, store: options.store, cacheEnabled: options.cacheEnabled,
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
    private func isStarting(_ ready: Once<Result<BluetoothHost, BluejayError>>, else made: Result<BluetoothHost, BluejayError>) -> Bool {
        if case let .starting(current) = hostState, current === ready { return true }
        if case let .success(host) = made { Task { @BluetoothActor in host.close() } }
        return false
    }

    /// Runs on `host` from now on: its links and failures are heard, waiting operations go.
    private func adopt(_ host: BluetoothHost, ready: Once<Result<BluetoothHost, BluejayError>>?) {
        hostState = .up(host)
        let arrivals = arrivals
        Task { @BluetoothActor [weak self] in
            // Links end through the host's central, whose peripheral Bluejay's link is.
            _ = host.central
            host.onControllerFailure = { error in Task { @MainActor in self?.controllerLost(host, error) } }
            host.onServicesInvalidated = { handle, services in
                let identifiers = services.map { ServiceIdentifier(uuid: $0.uuid) }
                Task { @MainActor in self?.servicesInvalidated(handle, identifiers) }
            }
            // The same route as a listen's values, so the two stay in the order they came.
            host.onUnhandledValue = { handle, valueHandle, characteristic, value in
                arrivals.post(.unsolicited(link: handle, valueHandle: valueHandle, characteristic, value))
            }
            // Failed before anyone listened (between bring-up and now): heard all the same.
            if let failure = host.controller.failure { Task { @MainActor in self?.controllerLost(host, failure) } }
        }
        onHostUp?(host)
        ready?.fulfill(.success(host))
        for observer in observers { observer.bluetoothAvailable(true) }
        // A link the lost controller took is remade on this one.
        resumeReconnecting(on: host)
    }

    // MARK: Controller recovery

    /// The controller stopped by itself: its transport closed or failed, or it reported a
    /// Hardware Error. As on iOS when Bluetooth goes off, everything under way ends with the
    /// error and observers hear Bluetooth is unavailable; the link ends like any lost link
    /// (so auto-reconnect and listens carry on once a controller is back). Then, if Bluejay
    /// opened the transport itself, it is reopened as ``StartOptions/controllerRecovery``
    /// says, and operations wait for that.
    func controllerLost(_ lost: BluetoothHost, _ failure: HCIError) {
        guard case let .up(current) = hostState, current === lost else { return }
        let error = BluejayError.hci(failure)
        log("controller lost: \(failure)")
        if let recoveredAt, clock.now - recoveredAt > Self.recoveryStreakWindow { recoveryAttempts = 0 }
        let options = reopenOptions.flatMap { $0.controllerRecovery.delays.count > recoveryAttempts ? $0 : nil }
        if options == nil, reopenOptions?.controllerRecovery.delays.isEmpty == false { log("not reopening the controller again: it was lost \(recoveryAttempts + 1) times in a row") }
        let ready = Once<Result<BluetoothHost, BluejayError>>()
        hostState = options == nil ? .down(error) : .starting(ready)
        queue.cancelAll(error)
        // The link Bluejay follows, up or being remade, is to be remade on the next controller.
        if case let .following(peripheral, reported) = linkState {
            if let reported {
                if linkEnded(reported, reason: .unspecifiedError, on: lost, asked: false, error: error) != nil {
                    linkState = .awaitingController(peripheral.identifier, after: error)
                }
            } else if case .reconnecting = peripheral.status.snapshot.state {
                linkState = .awaitingController(peripheral.identifier, after: peripheral.status.snapshot.droppedBy ?? error)
            }
        }
        for observer in observers { observer.bluetoothAvailable(false) }
        // No controller to reconnect on.
        if options == nil, case let .awaitingController(peripheral, dropped) = linkState { reconnectionFailed(peripheral, error, after: dropped) }
        let capture = options == nil ? nil : lost.capture
        Task { @BluetoothActor in lost.close(keepingCapture: options != nil) }
        guard let options else { return }
        Task { @MainActor in await self.recover(ready, options, capture: capture) }
    }

    /// A controller lost again within this long after it came back counts as the same
    /// failure: its next reopen waits the next delay.
    static let recoveryStreakWindow: Duration = .seconds(10)

    /// Reopens the transport after each delay of ``StartOptions/controllerRecovery`` not yet
    /// used up until a controller comes up; if none does, Bluejay stays down with the last
    /// error. The delays are waited on Bluejay's clock.
    private func recover(_ ready: Once<Result<BluetoothHost, BluejayError>>, _ options: StartOptions, capture: BTSnoopWriter?) async {
        let delays = options.controllerRecovery.delays
        var lastError = BluejayError.bluetoothUnavailable
        while recoveryAttempts < delays.count {
            let attempt = recoveryAttempts
            recoveryAttempts += 1
            try? await clock.sleep(for: delays[attempt])
            guard case let .starting(current) = hostState, current === ready else { return }
            log("reopening \(options.transport) (attempt \(attempt + 1) of \(delays.count))")
            let result = await Task { @BluetoothActor in await Self.makeHost(options, capture: capture) }.value
            guard isStarting(ready, else: result) else { return }
            switch result {
            case let .success(host):
                log("the controller is back on \(options.transport)")
                recoveredAt = clock.now
                return adopt(host, ready: ready)
            case let .failure(error):
                log("reopening \(options.transport): \(error)")
                lastError = error
            }
        }
        log("gave up reopening \(options.transport) after \(delays.count) attempts")
        capture?.close()
        hostState = .down(lastError)
        ready.fulfill(.failure(lastError))
        if case let .awaitingController(peripheral, dropped) = linkState { reconnectionFailed(peripheral, lastError, after: dropped) }
    }

    // MARK: Letting go

    /// Cancels everything without disconnecting and hands back the host and the connected
    /// peripheral, for code outside Bluejay to go on with. Bluejay is unusable afterwards.
    public func stopAndExtractBluetoothState() -> (host: BluetoothHost?, peripheral: PeripheralIdentifier?) {
        cancelEverything(error: .cancelled, shouldDisconnect: false)
        let extracted = (host, connection?.peripheral)
        if let host {
            let followed = followed?.peripheral
            let reconnecting = followed.map { if case .reconnecting = $0.status.snapshot.state { true } else { false } } ?? false
            let subscribed = listeners.values.compactMap { listener in listener.token.map { (listener.characteristic, $0) } }
            Task { @BluetoothActor in
                host.onControllerFailure = nil
                // The host's central goes on for whoever takes the host, without Bluejay:
                // its listens' values stop (their subscriptions stay as they are).
                if let followed {
                    for (characteristic, token) in subscribed { _ = try? await followed.remove(token, of: characteristic, turningOff: false) }
                }
                host.central.releaseBluejay()
                if reconnecting { await followed?.disconnect() }
            }
        }
        // Operations waiting for a host that was still coming up end now.
        if case let .starting(ready) = hostState { ready.fulfill(.failure(.bluetoothUnavailable)) }
        hostState = .extracted
        linkState = .idle
        for listener in listeners.values { listener.close(.cancelled) }
        listeners = [:]
        return extracted
    }

    /// Ends the running and every queued operation with `error` and, by default, disconnects.
    public func cancelEverything(error: BluejayError = .cancelled, shouldDisconnect: Bool = true) {
        queue.cancelAll(error)
        guard shouldDisconnect else { return }
        shouldAutoReconnect = false
        stopReconnecting()
        if let (peripheral, _) = followed, let connection {
            Task { @BluetoothActor in _ = try? await peripheral.endLink(connection.handle) }
        }
    }
}

/// A value delivered once on the main actor, awaited by any number of waiters.
@MainActor
final class Once<Value: Sendable> {
    private var value: Value?
    private var waiters: [CheckedContinuation<Value, Never>] = []

    /// Delivers the value; later calls are ignored.
    func fulfill(_ value: Value) {
        guard self.value == nil else { return }
        self.value = value
        for waiter in waiters { waiter.resume(returning: value) }
        waiters = []
    }

    /// The value, waiting for it if needed.
    func value() async -> Value {
        if let value { return value }
        return await withCheckedContinuation { waiters.append($0) }
    }
}
