import BluetoothCore
import DiscoveryCache
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
/// long before each later one (at most 30 s). Each attempt and the last failure are told to
/// the ``ConnectionObserver``s.
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
    /// own continuation (a reconnection, a restored connection).
    func connect(_ peripheralIdentifier: PeripheralIdentifier, timeout: Timeout, then completion: @escaping @MainActor (ConnectionResult) -> Void) {
        switch linkState {
        case .connected, .disconnecting: return completion(.failure(BluejayError.alreadyConnected))
        case .connecting: return completion(.failure(BluejayError.alreadyConnecting))
        case .idle: break
        }
        stopScanning()
        linkState = .connecting(peripheralIdentifier)
        lastConnect = (peripheralIdentifier, timeout)
        let limit = timeout.duration ?? .seconds(86_400 * 365)
        queue.add(QueuedOperation(.connect, body: { [weak self] operation in
            guard let self, let host = await self.readyHost(operation) else { return }
            operation.onCancel = { _ in Task { @BluetoothActor in host.connections.cancelConnect() } }
            let identity = DiscoveryCache.identity(peripheralIdentifier.address, peripheralIdentifier.addressType)
            let result = await Task { @BluetoothActor () -> Result<ConnectionHandle, BluejayError> in
                do throws(ConnectionError) {
                    let link = try await host.connections.connect(to: peripheralIdentifier.address, type: peripheralIdentifier.addressType, timeout: limit)
                    do throws(BluejayError) { _ = try await host.client(for: link.handle, identity: identity) } catch {
                        _ = try? await host.connections.disconnect(link.handle)
                        return .failure(error)
                    }
                    return .success(link.handle)
                } catch {
                    switch error {
                    case .connectionTimeout: return .failure(.connectionTimedOut)
                    case .cancelled: return .failure(.cancelled)
                    default: return .failure(.connection(error))
                    }
                }
            }.value
            switch result {
            case let .success(handle):
                guard !operation.isFinished else {
                    // Cancelled while the link came up: do not keep a link nobody asked for.
                    Task { @BluetoothActor in _ = try? await host.connections.disconnect(handle) }
                    return
                }
                self.linkState = .connected(Connection(peripheral: peripheralIdentifier, handle: handle))
                self.shouldAutoReconnect = true
                self.statistics[peripheralIdentifier, default: PeripheralStatistics()].connectedAt = .now
                self.statistics[peripheralIdentifier, default: PeripheralStatistics()].connectionCount += 1
                self.recordRestorationState()
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

    /// Disconnects. `immediate` cancels everything queued first (and disconnects);
    /// otherwise the disconnection waits its turn in the queue.
    public func disconnect(immediate: Bool = false, completion: (@MainActor (DisconnectionResult) -> Void)? = nil) {
        shouldAutoReconnect = false
        if immediate { queue.cancelAll(.cancelled) }
        queue.add(QueuedOperation(.disconnect, body: { [weak self] operation in
            guard let self, let host = await self.readyHost(operation) else { return }
            guard let link = self.connection else { return operation.fail(.notConnected) }
            self.linkState = .disconnecting(link)
            let outcome = await Task { @BluetoothActor () -> BluejayError? in
                do throws(ConnectionError) {
                    try await host.connections.disconnect(link.handle)
                    return nil
                } catch {
                    switch error {
                    case .notConnected: return nil  // it went down meanwhile: done all the same
                    default: return .connection(error)
                    }
                }
            }.value
            if let outcome {
                // The link is still up.
                if case let .disconnecting(current) = self.linkState, current.handle == link.handle { self.linkState = .connected(current) }
                return operation.fail(outcome)
            }
            self.linkEnded(link.handle, reason: .connectionTerminatedByLocalHost, on: host)
            // Asked for: nothing to restore after a restart.
            self.recordRestorationState()
            if operation.claim() { completion?(.disconnected(link.peripheral)) }
        }, onFailure: { error in
            if case .cancelled = error { completion?(.cancelled) } else { completion?(.failure(error)) }
        }))
    }

    /// The link of the connected peripheral ended (asked for or not): everything waiting on
    /// it fails, listens end, observers hear of it.
    /// `error` is what operations under way fail with (by default, the disconnection).
    func linkEnded(_ handle: ConnectionHandle, reason: HCIStatus, on endedHost: BluetoothHost, error failure: BluejayError? = nil) {
        guard let link = connection, link.handle == handle, endedHost === host || failure != nil else { return }
        // Asked for (a disconnection under way, or auto-reconnect turned off): no error to report.
        let expected = if case .disconnecting = linkState { true } else { !shouldAutoReconnect }
        linkState = .idle
        var counted = statistics[link.peripheral, default: PeripheralStatistics()]
        counted.disconnectionCount += 1
        counted.disconnectedAt = .now
        if let since = counted.connectedAt { counted.cumulativeConnected += ContinuousClock.now - since }
        statistics[link.peripheral] = counted
        let error = failure ?? BluejayError.disconnected(reason)
        offeredUnsolicited = []
        // Listens stop flowing; their callbacks are kept to resume after a reconnection.
        for listener in listeners.values { listener.unsubscribed() }
        Task { @BluetoothActor in endedHost.linkEnded(handle) }
        // Operations still queued cannot succeed without the link; a disconnection under
        // way is what ended it, and finishes by itself.
        if queue.running?.kind != .disconnect { queue.cancelAll(error) }
        for observer in observers { observer.disconnected(from: link.peripheral) }
        var reconnect = !expected && shouldAutoReconnect
        if let handler = disconnectHandler,
           case let .change(shouldAutoReconnect: decided) = handler.didDisconnect(from: link.peripheral, with: expected ? nil : error, willReconnect: reconnect) {
            shouldAutoReconnect = decided
            reconnect = decided && !expected
        }
        guard reconnect, let (peripheral, timeout) = lastConnect else { return endListens(error) }
        self.reconnect(to: peripheral, timeout: timeout, attempt: 1, delay: autoReconnectPolicy.retryDelay, after: error)
    }

    /// Reconnection attempt `attempt` under ``autoReconnectPolicy``; on success the listens
    /// are subscribed again, after the last failure they end with `error`.
    private func reconnect(to peripheral: PeripheralIdentifier, timeout: Timeout, attempt: Int, delay: Duration, after error: BluejayError) {
        log("reconnecting to \(peripheral) (attempt \(attempt) of \(autoReconnectPolicy.attempts))")
        for observer in observers { observer.reconnecting(to: peripheral, attempt: attempt) }
        connect(peripheral, timeout: timeout, then: { [weak self] result in
            guard let self else { return }
            switch result {
            case .success:
                for (characteristic, listener) in self.listeners { self.subscribe(characteristic, listener, removing: nil) }
            case .cancelled:
                self.endListens(error)
            case let .failure(failure):
                // The app connected meanwhile: the retries are over, its link and listens
                // are its own.
                if self.isConnected || self.isConnecting { return }
                // Auto-reconnect turned off, or the last attempt: Bluejay stays disconnected.
                guard attempt < self.autoReconnectPolicy.attempts, self.shouldAutoReconnect else {
                    for observer in self.observers { observer.reconnectFailed(to: peripheral, error: failure) }
                    return self.endListens(error)
                }
                Task { @MainActor [weak self] in
                    guard let self, (try? await self.clock.sleep(for: delay)) != nil else { return }
                    if self.isConnected || self.isConnecting { return }
                    guard self.shouldAutoReconnect else { return self.endListens(error) }
                    self.reconnect(to: peripheral, timeout: timeout, attempt: attempt + 1, delay: min(delay * 2, .seconds(30)), after: error)
                }
            }
        })
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
