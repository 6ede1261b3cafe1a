import BluetoothCore
import HCI

/// Connection statistics of a peripheral, as BlueCap keeps them.
public struct PeripheralStatistics: Sendable, Equatable {
    /// When the last connection came up.
    public var connectedAt: ContinuousClock.Instant?
    /// When the last connection ended.
    public var disconnectedAt: ContinuousClock.Instant?
    /// Successful connections.
    public var connectionCount = 0
    /// Disconnections.
    public var disconnectionCount = 0
    /// Connection attempts that timed out.
    public var timeoutCount = 0
    /// Time spent connected, over all connections (the current one up to now not included).
    public var cumulativeConnected: Duration = .zero

    /// How long the current connection has lasted, if connected.
    public var connectedFor: Duration? {
        guard let connectedAt, disconnectedAt.map({ $0 < connectedAt }) ?? true else { return nil }
        return ContinuousClock.now - connectedAt
    }
}

/// How Bluejay reconnects after a disconnection it did not ask for: the first attempt at
/// once, then up to `attempts` in all, waiting `retryDelay` before the second and twice as
/// long before each later one (at most ``Peripheral/maximumReconnectDelay``). The link's
/// ``Peripheral`` runs the attempts; each, and the last failure, is told to the
/// ``ConnectionObserver``s.
public struct AutoReconnectPolicy: Sendable, Equatable {
    /// Attempts in all (1: one attempt, as before there was a policy).
    public var attempts: Int
    /// The wait before the second attempt.
    public var retryDelay: Duration

    /// A policy; by default three attempts, one second apart and then two.
    public init(attempts: Int = 3, retryDelay: Duration = .seconds(1)) {
        self.attempts = max(1, attempts)
        self.retryDelay = retryDelay
    }
}

/// What to do about auto-reconnection after a disconnection.
public enum AutoReconnectMode: Sendable {
    /// Keep ``Bluejay/shouldAutoReconnect`` as it is.
    case noChange
    /// Set it.
    case change(shouldAutoReconnect: Bool)
}

/// Told of every disconnection; decides whether Bluejay reconnects.
@MainActor
public protocol DisconnectHandler: AnyObject {
    /// `error` is nil for a disconnection that was asked for; `autoReconnect` says what
    /// Bluejay will do unless the answer changes it.
    func didDisconnect(from peripheral: PeripheralIdentifier, with error: (any Error)?, willReconnect autoReconnect: Bool) -> AutoReconnectMode
}

/// Connecting, disconnecting, a link's end, and reconnecting after one nobody asked for.
extension Bluejay {
    // MARK: Connecting

    /// Connects to `peripheralIdentifier`. Fails at once when already connected or
    /// connecting; stops a running scan first. With a timeout, a peripheral that does not
    /// answer in time ends with ``BluejayError/connectionTimedOut``.
    public func connect(_ peripheralIdentifier: PeripheralIdentifier, timeout: Timeout = .seconds(15), warningOptions: WarningOptions? = nil,
                        completion: @escaping @MainActor (ConnectionResult) -> Void) {
        connect(peripheralIdentifier, timeout: timeout, then: completion)
    }

    /// Connects, calling `completion` on the main actor: the app's callback, or Bluejay's
    /// own continuation (a restored connection). The link is made by the host's ``Central``,
    /// as its ``Peripheral`` for `peripheralIdentifier`.
    func connect(_ peripheralIdentifier: PeripheralIdentifier, timeout: Timeout, then completion: @escaping @MainActor (ConnectionResult) -> Void) {
        if isConnected { return completion(.failure(BluejayError.alreadyConnected)) }
        if isConnecting { return completion(.failure(BluejayError.alreadyConnecting)) }
        stopScanning()
        linkState = .connecting(peripheralIdentifier)
        lastConnect = (peripheralIdentifier, timeout)
        queue.add(QueuedOperation(.connect, body: { [weak self] operation in
            guard let self, let host = await self.readyHost(operation) else { return }
            // A cancelled attempt stops (a link it still makes, it ends itself).
            operation.onCancel = { _ in Task { @BluetoothActor in await host.central.peripheral(peripheralIdentifier).disconnect() } }
            let peripheral = await self.attach(peripheralIdentifier, on: host)
            guard !operation.isFinished else { return }
            let policy = self.reconnectionPolicy(timeout)
            let result = await Task { @BluetoothActor () -> Result<ConnectionHandle, BluejayError> in
                do throws(BluejayError) {
                    try await peripheral.connect(under: policy)
                    guard let handle = peripheral.handle else { return .failure(.notConnected) }
                    return .success(handle)
                } catch {
                    return .failure(error)
                }
            }.value
            switch result {
            case let .success(handle):
                guard !operation.isFinished else {
                    // Cancelled while the link came up: do not keep a link nobody asked for.
                    Task { @BluetoothActor in _ = try? await peripheral.endLink(handle) }
                    return
                }
                self.linkUp(peripheral, handle)
                if operation.claim() { completion(.success(peripheralIdentifier)) }
                for observer in self.observers { observer.connected(to: peripheralIdentifier) }
            case let .failure(error):
                if case .connectionTimedOut = error { self.statistics[peripheralIdentifier, default: PeripheralStatistics()].timeoutCount += 1 }
                operation.fail(error)
            }
        }, onFailure: { [weak self] error in
            // However the attempt ended without a link (failed, cancelled, never ran).
            if case .connecting? = self?.linkState { self?.linkState = .idle }
            if case .cancelled = error { completion(.cancelled) } else { completion(.failure(error)) }
        }))
    }

    /// `peripheral`'s link `handle` is up (connected, or reconnected): Bluejay follows it and
    /// tells the app.
    private func linkUp(_ peripheral: Peripheral, _ handle: ConnectionHandle) {
        linkState = .following(peripheral, reported: handle)
        shouldAutoReconnect = true
        statistics[peripheral.identifier, default: PeripheralStatistics()].connectedAt = .now
        statistics[peripheral.identifier, default: PeripheralStatistics()].connectionCount += 1
        recordRestorationState()
    }

    /// What the peripheral's policy does for Bluejay: one attempt in `timeout`; after a drop,
    /// ``autoReconnectPolicy``'s attempts, the first at once.
    func reconnectionPolicy(_ timeout: Timeout) -> Peripheral.Policy {
        Peripheral.Policy(timeoutRetries: 0, disconnectRetries: autoReconnectPolicy.attempts,
                          connectionTimeout: timeout.duration ?? .seconds(86_400 * 365),
                          reconnectDelay: autoReconnectPolicy.retryDelay, firstReconnectDelay: .zero)
    }

    /// The ``Peripheral`` of `host`'s central that Bluejay's link to `identifier` runs on:
    /// its events come to Bluejay, and each end of its link asks Bluejay whether to reconnect.
    func attach(_ identifier: PeripheralIdentifier, on host: BluetoothHost) async -> Peripheral {
        let clock = clock
        return await Task { @BluetoothActor [weak self] in
            let peripheral = host.central.peripheral(identifier)
            peripheral.clock = clock
            peripheral.onEvent = { [weak peripheral] event, handle, failure in
                guard let peripheral else { return }
                Task { @MainActor in self?.peripheralEvent(event, of: peripheral, handle: handle, failure: failure) }
            }
            peripheral.reconnectionDecision = { handle, reason, asked in
                // A failed controller ends its links itself: that is the controller lost.
                let failure = host.controller.failure
                return await Task { @MainActor () -> Peripheral.Policy? in
                    guard let self else { return nil }
                    if let failure {
                        self.controllerLost(host, failure)
                        return nil
                    }
                    return self.linkEnded(handle, reason: reason, on: host, asked: asked)
                }.value
            }
            return peripheral
        }.value
    }

    /// What the peripheral's policy did while reconnecting the link Bluejay follows.
    private func peripheralEvent(_ event: PeripheralEvent, of peripheral: Peripheral, handle: ConnectionHandle?, failure: BluejayError?) {
        guard case let .following(followed, reported) = linkState, followed === peripheral else { return }
        let identifier = peripheral.identifier
        switch event {
        case let .reconnecting(attempt, _):
            log("reconnecting to \(identifier) (attempt \(attempt) of \(autoReconnectPolicy.attempts))")
            for observer in observers { observer.reconnecting(to: identifier, attempt: attempt) }
        case .connectionTimedOut:
            statistics[identifier, default: PeripheralStatistics()].timeoutCount += 1
        case .connected:
            // A link the app has not heard of: a reconnection (the peripheral subscribed the
            // listens again before it reported the link).
            guard let handle, handle != reported else { return }
            linkUp(peripheral, handle)
            for observer in observers { observer.connected(to: identifier) }
        case .gaveUp:
            let dropped = peripheral.status.snapshot.droppedBy ?? .notConnected
            reconnectionFailed(identifier, failure ?? dropped, after: dropped)
        case .disconnected, .forcedDisconnect:
            break
        }
    }

    /// The last reconnection attempt failed with `failure`: Bluejay stays disconnected, and
    /// the listens end with what ended the link.
    func reconnectionFailed(_ peripheral: PeripheralIdentifier, _ failure: BluejayError, after error: BluejayError) {
        linkState = .idle
        for observer in observers { observer.reconnectFailed(to: peripheral, error: failure) }
        endListens(error)
    }

    /// Stops a reconnection under way (auto-reconnect was turned off): the listens end with
    /// what ended the link. Returns the peripheral it was reconnecting to.
    @discardableResult
    func stopReconnecting() -> PeripheralIdentifier? {
        switch linkState {
        case let .awaitingController(identifier, error):
            linkState = .idle
            endListens(error)
            return identifier
        case let .following(peripheral, _):
            let link = peripheral.status.snapshot
            guard case .reconnecting = link.state else { return nil }
            linkState = .idle
            endListens(link.droppedBy ?? .notConnected)
            Task { @BluetoothActor in await peripheral.disconnect() }
            return peripheral.identifier
        case .idle, .connecting:
            return nil
        }
    }

    /// Reconnects on `host` (a controller that came back) to the peripheral whose link the
    /// lost controller took.
    func resumeReconnecting(on host: BluetoothHost) {
        guard case let .awaitingController(identifier, error) = linkState, let (_, timeout) = lastConnect else { return }
        let policy = reconnectionPolicy(timeout)
        // The listens move to this host's peripheral, which subscribes them as it reconnects.
        let moving = listeners.values.filter { !$0.isEnded }.map { ($0, $0.characteristic, subscriber(for: $0, on: host)) }
        Task { @MainActor in
            let peripheral = await self.attach(identifier, on: host)
            // Disconnected, or lost again, meanwhile.
            guard case .awaitingController(identifier, _) = self.linkState, host === self.host else { return }
            let subscribers = moving.map { ($0.1, $0.2) }
            let tokens = await Task { @BluetoothActor in
                let tokens = subscribers.map { peripheral.adopt($0.1, of: $0.0).token }
                peripheral.resumeReconnecting(under: policy, after: error)
                return tokens
            }.value
            guard case .awaitingController(identifier, _) = self.linkState, host === self.host else {
                return await peripheral.disconnect()
            }
            self.linkState = .following(peripheral, reported: nil)
            for ((listener, _, _), token) in zip(moving, tokens) { listener.moved(token: token) }
        }
    }

    /// Disconnects. `immediate` cancels everything queued first (and disconnects);
    /// otherwise the disconnection waits its turn in the queue.
    public func disconnect(immediate: Bool = false, completion: (@MainActor (DisconnectionResult) -> Void)? = nil) {
        shouldAutoReconnect = false
        // A reconnection under way stops here: that is the disconnection asked for.
        let stoppedReconnecting = stopReconnecting()
        if immediate { queue.cancelAll(.cancelled) }
        queue.add(QueuedOperation(.disconnect, body: { [weak self] operation in
            guard let self, let host = await self.readyHost(operation) else { return }
            // The peripheral's link as it stands, reported to the app yet or not (one remade
            // a moment ago is ended all the same).
            guard let (peripheral, status) = self.followed, let handle = status.connectedHandle else {
                if let stoppedReconnecting, operation.claim() { completion?(.success(stoppedReconnecting)) }
                return operation.fail(.notConnected)
            }
            let outcome = await Task { @BluetoothActor () -> BluejayError? in
                do throws(ConnectionError) {
                    try await peripheral.endLink(handle)
                    return nil
                } catch {
                    return .connection(error)
                }
            }.value
            // The controller refused: the link is still up.
            if let outcome { return operation.fail(outcome) }
            if case .following(_, reported: handle) = self.linkState {
                self.linkEnded(handle, reason: .connectionTerminatedByLocalHost, on: host, asked: true)
            } else if case .following = self.linkState {
                // Remade and ended before the app heard of it: it hears nothing of that link.
                self.linkState = .idle
                self.endListens(.disconnected(.connectionTerminatedByLocalHost))
            }
            // Asked for: nothing to restore after a restart.
            self.recordRestorationState()
            if operation.claim() { completion?(.success(peripheral.identifier)) }
        }, onFailure: { error in
            if case .cancelled = error { completion?(.cancelled) } else { completion?(.failure(error)) }
        }))
    }

    /// The link `handle` that Bluejay follows ended (`asked` for, or not): everything
    /// waiting on it fails, listens end, observers hear of it, once per link. Returns the
    /// policy to reconnect under when Bluejay reconnects (the link's ``Peripheral`` does it;
    /// the listens wait for it). `error` is what operations under way fail with (by
    /// default, the disconnection).
    @discardableResult
    func linkEnded(_ handle: ConnectionHandle, reason: HCIStatus, on endedHost: BluetoothHost, asked: Bool,
                   error failure: BluejayError? = nil) -> Peripheral.Policy? {
        // Heard of already (a disconnection both asked for and heard), or not the followed link.
        guard case let .following(peripheral, reported) = linkState, reported == handle,
              endedHost === host || failure != nil else { return nil }
        let identifier = peripheral.identifier
        // Asked for (a disconnection, or auto-reconnect turned off): no error to report.
        let expected = asked || !shouldAutoReconnect
        linkState = .following(peripheral, reported: nil)
        var counted = statistics[identifier, default: PeripheralStatistics()]
        counted.disconnectionCount += 1
        counted.disconnectedAt = .now
        if let since = counted.connectedAt { counted.cumulativeConnected += ContinuousClock.now - since }
        statistics[identifier] = counted
        let error = failure ?? BluejayError.disconnected(reason)
        offeredUnsolicited = []
        // Listens keep their callbacks to go on after a reconnection: the peripheral keeps
        // their subscriptions and writes them again.
        Task { @BluetoothActor in endedHost.linkEnded(handle) }
        // Operations still queued cannot succeed without the link; a disconnection under
        // way is what ended it, and finishes by itself.
        if queue.running?.kind != .disconnect { queue.cancelAll(error) }
        for observer in observers { observer.disconnected(from: identifier) }
        var reconnect = !expected && shouldAutoReconnect
        if let handler = disconnectHandler,
           case let .change(shouldAutoReconnect: decided) = handler.didDisconnect(from: identifier, with: expected ? nil : error, willReconnect: reconnect) {
            shouldAutoReconnect = decided
            reconnect = decided && !expected
        }
        guard reconnect, let (_, timeout) = lastConnect else {
            linkState = .idle
            endListens(error)
            return nil
        }
        return reconnectionPolicy(timeout)
    }

    /// Decides, after each disconnection, whether Bluejay reconnects. Held weakly.
    public func registerDisconnectHandler(handler: any DisconnectHandler) { disconnectHandler = handler }

    /// Drops the disconnect handler.
    public func unregisterDisconnectHandler() { disconnectHandler = nil }

    /// Connection statistics of `peripheral` since this Bluejay started.
    public func statistics(for peripheral: PeripheralIdentifier) -> PeripheralStatistics {
        statistics[peripheral] ?? PeripheralStatistics()
    }
}
