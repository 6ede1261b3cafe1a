import BluetoothCore
import HCI

/// How Bluejay reconnects after a disconnection it did not ask for: the first attempt at
/// once, then up to `attempts` in all, waiting `retryDelay` before the second and twice as
/// long before each later one (at most ``Peripheral/maximumReconnectDelay``). The link's
/// ``Peripheral`` runs the attempts; each, and the last failure, is told to the
/// ``ConnectionObserver``s. Each attempt has the timeout of the connect that made the link:
/// with none (the default), an attempt waits until the peripheral is back, as a pending
/// connection does on iOS, and the next attempt follows only a failure.
public struct AutoReconnectPolicy: Sendable, Equatable {
    /// Attempts in all (1: a single attempt, never retried).
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
    func didDisconnect(
        from peripheral: PeripheralIdentifier, with error: (any Error)?, willReconnect autoReconnect: Bool
    ) -> AutoReconnectMode
}

/// Connecting, disconnecting, a link's end, and reconnecting after one nobody asked for.
/// The operations run on the stack's actor; what the app hears is posted to the main actor.
extension Bluejay {
    // MARK: Connecting

    /// Connects to `peripheralIdentifier`. Fails at once when already connected or
    /// connecting; stops a running scan first. With a timeout, a peripheral that does not
    /// answer in time ends with `BluejayError.connectionTimedOut`; by default there is
    /// none, as in Bluejay's reference: the attempt waits until the peripheral answers or
    /// the app cancels it.
    public func connect(
        _ peripheralIdentifier: PeripheralIdentifier, timeout: Timeout = .none, warningOptions: WarningOptions? = nil,
        completion: @escaping @MainActor (ConnectionResult) -> Void
    ) {
        connect(peripheralIdentifier, timeout: timeout, then: completion)
    }

    /// Connects, calling `completion` on the main actor: the app's callback, or Bluejay's
    /// own continuation (a restored connection). Refused at once, synchronously, when
    /// already connected or connecting.
    func connect(
        _ peripheralIdentifier: PeripheralIdentifier, timeout: Timeout,
        then completion: @escaping @MainActor (ConnectionResult) -> Void
    ) {
        if let refused = queueConnect(peripheralIdentifier, timeout: timeout, then: completion) {
            completion(.failure(refused))
        }
    }

    /// Queues a connection, from either actor; returns why it is refused instead (already
    /// connected or connecting). The link is made by the host's ``Central``, as its
    /// ``Peripheral`` for `peripheralIdentifier`.
    nonisolated func queueConnect(
        _ peripheralIdentifier: PeripheralIdentifier, timeout: Timeout,
        then completion: @escaping @MainActor (ConnectionResult) -> Void
    ) -> BluejayError? {
        let refused = core.state.withLock { state -> BluejayError? in
            if state.connection != nil { return .alreadyConnected }
            if state.isConnecting { return .alreadyConnecting }
            state.link = .connecting(peripheralIdentifier)
            state.lastConnect = (peripheralIdentifier, timeout)
            return nil
        }
        if let refused { return refused }
        requestScanStop()
        let core = core
        queue.add(
            QueuedOperation(
                .connect,
                body: { [weak self] operation in
                    guard let self, let host = await self.readyHost(operation) else { return }
                    // A cancelled attempt stops (a link it still makes, it ends itself).
                    operation.onCancel = { _ in
                        Task { @BluetoothActor in await host.central.peripheral(peripheralIdentifier).disconnect() }
                    }
                    let peripheral = self.attach(peripheralIdentifier, on: host)
                    guard !operation.isFinished else { return }
                    do throws(BluejayError) {
                        try await peripheral.connect(under: self.reconnectionPolicy(timeout))
                        guard let handle = peripheral.handle else { throw .notConnected }
                        guard !operation.isFinished else {
                            // Cancelled while the link came up: do not keep a link nobody asked for.
                            Task { @BluetoothActor in _ = try? await peripheral.endLink(handle) }
                            return
                        }
                        self.linkUp(peripheral, handle)
                        // One job: app code the completion resumes finds the observers told.
                        let claimed = operation.claim()
                        self.post {
                            if claimed { completion(.success(peripheralIdentifier)) }
                            for observer in self.observers { observer.heardConnected(peripheral) }
                        }
                    } catch {
                        if case .connectionTimedOut = error {
                            core.state.withLock {
                                $0.statistics[peripheralIdentifier, default: PeripheralStatistics()].timedOut()
                            }
                        }
                        operation.fail(Self.cause(error, on: host))
                    }
                },
                onFailure: failing { error in
                    if BluejayError.isCancellation(error) {
                        completion(.cancelled)
                    } else {
                        completion(.failure(error))
                    }
                } first: { _ in
                    // However the attempt ended without a link (failed, cancelled, never ran).
                    core.state.withLock { if case .connecting = $0.link { $0.link = .idle } }
                }))
        return nil
    }

    /// An operation's failure: `first` at once on the failing actor (Bluejay's own state),
    /// then `callback` posted to the main actor in its turn (the app's).
    nonisolated func failing(
        _ callback: @escaping @MainActor (any Error) -> Void,
        first: @escaping @Sendable (any Error) -> Void = { _ in }
    ) -> @Sendable (any Error) -> Void {
        let arrivals = arrivals
        return { error in
            first(error)
            arrivals.post(.callback { callback(error) })
        }
    }

    /// `peripheral`'s link `handle` is up (connected, or reconnected): Bluejay follows it.
    nonisolated private func linkUp(_ peripheral: Peripheral, _ handle: ConnectionHandle) {
        core.state.withLock { state in
            state.link = .following(peripheral, reported: handle)
            state.shouldAutoReconnect = true
            state.statistics[peripheral.identifier, default: PeripheralStatistics()].connected()
        }
        recordRestorationState()
    }

    /// What the peripheral's policy does for Bluejay: one attempt in `timeout`; after a drop,
    /// ``autoReconnectPolicy``'s attempts, the first at once.
    nonisolated func reconnectionPolicy(_ timeout: Timeout) -> Peripheral.Policy {
        let policy = core.read(\.autoReconnectPolicy)
        return Peripheral.Policy(
            timeoutRetries: 0, disconnectRetries: policy.attempts,
            connectionTimeout: timeout.duration,
            reconnectDelay: policy.retryDelay, firstReconnectDelay: .zero)
    }

    /// The ``Peripheral`` of `host`'s central that Bluejay's link to `identifier` runs on:
    /// its events come to Bluejay, and each end of its link asks Bluejay whether to reconnect.
    @BluetoothActor
    func attach(_ identifier: PeripheralIdentifier, on host: BluetoothHost) -> Peripheral {
        let peripheral = host.central.peripheral(identifier)
        peripheral.clock = core.read(\.clock)
        peripheral.onEvent = { [weak self, weak peripheral] event, handle, failure in
            guard let peripheral else { return }
            self?.peripheralEvent(event, of: peripheral, handle: handle, failure: failure)
        }
        peripheral.reconnectionDecision = { [weak self] handle, reason, asked in
            guard let self else { return nil }
            // A failed controller ends its links itself: that is the controller lost.
            if let failure = host.controller.failure {
                await self.controllerLost(host, failure)
                return nil
            }
            return await self.linkEnded(handle, reason: reason, on: host, asked: asked)
        }
        return peripheral
    }

    /// What the peripheral's policy did while reconnecting the link Bluejay follows.
    nonisolated private func peripheralEvent(
        _ event: PeripheralEvent, of peripheral: Peripheral, handle: ConnectionHandle?, failure: BluejayError?
    ) {
        guard case let .following(followed, reported) = core.read(\.link), followed === peripheral else { return }
        let identifier = peripheral.identifier
        switch event {
        case let .reconnecting(attempt, _):
            let attempts = core.read(\.autoReconnectPolicy.attempts)
            post {
                self.log("reconnecting to \(identifier) (attempt \(attempt) of \(attempts))")
                for observer in self.observers { observer.reconnecting(to: identifier, attempt: attempt) }
            }
        case .connectionTimedOut:
            core.state.withLock { $0.statistics[identifier, default: PeripheralStatistics()].timedOut() }
        case .connected:
            // A link the app has not heard of: a reconnection (the peripheral subscribed the
            // listens again before it reported the link).
            guard let handle, handle != reported else { return }
            linkUp(peripheral, handle)
            post { for observer in self.observers { observer.heardConnected(peripheral) } }
        case .gaveUp:
            let dropped = peripheral.status.snapshot.droppedBy ?? .notConnected
            reconnectionFailed(identifier, failure ?? dropped, after: dropped)
        case .disconnected, .forcedDisconnect:
            break
        }
    }

    /// The last reconnection attempt failed with `failure`: Bluejay stays disconnected, and
    /// the listens end with what ended the link.
    nonisolated func reconnectionFailed(
        _ peripheral: PeripheralIdentifier, _ failure: BluejayError, after error: BluejayError
    ) {
        let ended = core.state.withLock { state in
            state.link = .idle
            return state.takeListens()
        }
        post {
            for observer in self.observers { observer.reconnectFailed(to: peripheral, error: failure) }
            for listener in ended { listener.close(error) }
        }
    }

    /// Stops a reconnection under way (auto-reconnect was turned off): the listens end with
    /// what ended the link. Returns the peripheral it was reconnecting to.
    @discardableResult
    nonisolated func stopReconnecting() -> PeripheralIdentifier? {
        let stopped = core.state.withLock { state -> (PeripheralIdentifier, BluejayError, Peripheral?)? in
            switch state.link {
            case let .awaitingController(identifier, error):
                state.link = .idle
                return (identifier, error, nil)
            case let .following(peripheral, _):
                let link = peripheral.status.snapshot
                guard case .reconnecting = link.state else { return nil }
                state.link = .idle
                return (peripheral.identifier, link.droppedBy ?? .notConnected, peripheral)
            case .idle, .connecting:
                return nil
            }
        }
        guard let (identifier, error, peripheral) = stopped else { return nil }
        endListens(error)
        if let peripheral { Task { @BluetoothActor in await peripheral.disconnect() } }
        return identifier
    }

    /// Reconnects on `host` (a controller that came back) to the peripheral whose link the
    /// lost controller took.
    @BluetoothActor
    func resumeReconnecting(on host: BluetoothHost) {
        guard case let .awaitingController(identifier, error) = core.read(\.link),
            let (_, timeout) = core.read(\.lastConnect)
        else { return }
        let policy = reconnectionPolicy(timeout)
        // The listens move to this host's peripheral, which subscribes them as it reconnects.
        let moving = core.read { $0.listens.values.map(\.listener) }
        let peripheral = attach(identifier, on: host)
        let tokens = moving.map { peripheral.adopt(subscriber(for: $0, on: host), of: $0.characteristic).token }
        let resumed = core.state.withLock { state -> Bool in
            // Disconnected, or lost again, meanwhile.
            guard case .awaitingController(identifier, _) = state.link, host === state.upHost else { return false }
            state.link = .following(peripheral, reported: nil)
            for (listener, token) in zip(moving, tokens)
            where state.isCurrent(listener) && state.listens[listener.characteristic]?.token != nil {
                state.listens[listener.characteristic]?.token = token
            }
            return true
        }
        if resumed {
            peripheral.resumeReconnecting(under: policy, after: error)
        } else {
            Task { @BluetoothActor in await peripheral.disconnect() }
        }
    }

    /// Disconnects. `immediate` cancels everything queued first (and disconnects);
    /// otherwise the disconnection waits its turn in the queue.
    public func disconnect(immediate: Bool = false, completion: (@MainActor (DisconnectionResult) -> Void)? = nil) {
        shouldAutoReconnect = false
        // A reconnection under way stops here: that is the disconnection asked for.
        let stoppedReconnecting = stopReconnecting()
        if immediate { queue.cancelAll(BluejayError.cancelled) }
        queue.add(
            QueuedOperation(
                .disconnect,
                body: { [weak self] operation in
                    guard let self, let host = await self.readyHost(operation) else { return }
                    // The peripheral's link as it stands, reported to the app yet or not (one remade
                    // a moment ago is ended all the same).
                    guard let (peripheral, status) = self.followed, let handle = status.connectedHandle else {
                        if let stoppedReconnecting, operation.claim() {
                            self.post { completion?(.success(stoppedReconnecting)) }
                        }
                        return operation.fail(BluejayError.notConnected)
                    }
                    do throws(ConnectionError) {
                        try await peripheral.endLink(handle)
                    } catch {
                        // The controller refused: the link is still up.
                        return operation.fail(Self.cause(.connection(error), on: host))
                    }
                    let link = self.core.read(\.link)
                    if case .following(_, reported: handle) = link {
                        await self.linkEnded(handle, reason: .connectionTerminatedByLocalHost, on: host, asked: true)
                    } else if case .following = link {
                        // Remade and ended before the app heard of it: it hears nothing of that link.
                        self.core.state.withLock { $0.link = .idle }
                        self.endListens(.disconnected(.connectionTerminatedByLocalHost))
                    }
                    // Asked for: nothing to restore after a restart.
                    self.recordRestorationState()
                    let identifier = peripheral.identifier
                    if operation.claim() { self.post { completion?(.success(identifier)) } }
                },
                onFailure: failing { error in
                    if BluejayError.isCancellation(error) {
                        completion?(.cancelled)
                    } else {
                        completion?(.failure(error))
                    }
                }))
    }

    /// The link `handle` that Bluejay follows ended (`asked` for, or not): everything
    /// waiting on it fails, listens end, observers hear of it, once per link. Returns the
    /// policy to reconnect under when Bluejay reconnects (the link's ``Peripheral`` does it;
    /// the listens wait for it). `error` is what operations under way fail with (by
    /// default, the disconnection). The app's disconnect handler, when there is one, is
    /// asked on the main actor.
    @discardableResult
    @BluetoothActor
    func linkEnded(
        _ handle: ConnectionHandle, reason: HCIStatus, on endedHost: BluetoothHost, asked: Bool,
        error failure: BluejayError? = nil
    ) async -> Peripheral.Policy? {
        let ended = core.state.withLock {
            state -> (peripheral: Peripheral, expected: Bool, reconnect: Bool, timeout: Timeout?, ask: Bool)? in
            // Heard of already (a disconnection both asked for and heard), or not the followed link.
            guard case let .following(peripheral, reported) = state.link, reported == handle,
                endedHost === state.upHost || failure != nil
            else { return nil }
            let identifier = peripheral.identifier
            // Asked for (a disconnection, or auto-reconnect turned off): no error to report.
            let expected = asked || !state.shouldAutoReconnect
            state.link = .following(peripheral, reported: nil)
            state.statistics[identifier, default: PeripheralStatistics()].disconnected()
            state.offeredUnsolicited = []
            return (
                peripheral, expected, !expected && state.shouldAutoReconnect, state.lastConnect?.1,
                state.hasDisconnectHandler
            )
        }
        guard let ended else { return nil }
        let identifier = ended.peripheral.identifier, peripheral = ended.peripheral
        let error = failure ?? BluejayError.disconnected(reason)
        // Listens keep their callbacks to go on after a reconnection: the peripheral keeps
        // their subscriptions and writes them again.
        Task { @BluetoothActor in endedHost.linkEnded(handle) }
        // What the app hears of this end is taken in one main-actor job, the disconnect
        // handler's answer included, as when it all ran there at once.
        arrivals.hold()
        // Operations still queued cannot succeed without the link; a disconnection under
        // way is what ended it, and finishes by itself.
        if queue.running?.kind != .disconnect { queue.endAll(losing: error) }
        post { for observer in self.observers { observer.heardDisconnected(peripheral) } }
        let expected = ended.expected, timeout = ended.timeout, core = core
        /// Not reconnecting: Bluejay follows nothing, and the listens it took end.
        @Sendable func conclude(_ reconnect: Bool) -> [Listener] {
            guard !reconnect || timeout == nil else { return [] }
            return core.state.withLock { state in
                state.link = .idle
                return state.takeListens()
            }
        }
        let reconnect: Bool
        if ended.ask {
            let proposed = ended.reconnect
            reconnect = await ask(releasingHold: true) { () -> Bool in
                let mode = self.disconnectHandler?.didDisconnect(
                    from: identifier, with: expected ? nil : error, willReconnect: proposed)
                var reconnect = proposed
                if case let .change(shouldAutoReconnect: decided)? = mode {
                    // Applied here, before any app code this job resumes reads it.
                    core.state.withLock { $0.shouldAutoReconnect = decided }
                    reconnect = decided && !expected
                }
                for listener in conclude(reconnect) { listener.close(error) }
                return reconnect
            }
        } else {
            reconnect = ended.reconnect
            let closed = conclude(reconnect)
            if !closed.isEmpty { post { for listener in closed { listener.close(error) } } }
            arrivals.release()
        }
        guard reconnect, let timeout else { return nil }
        return reconnectionPolicy(timeout)
    }

    /// Decides, after each disconnection, whether Bluejay reconnects. Held weakly.
    public func registerDisconnectHandler(handler: any DisconnectHandler) {
        disconnectHandler = handler
        core.state.withLock { $0.hasDisconnectHandler = true }
    }

    /// Drops the disconnect handler.
    public func unregisterDisconnectHandler() {
        disconnectHandler = nil
        core.state.withLock { $0.hasDisconnectHandler = false }
    }

    /// Connection statistics of `peripheral` since this Bluejay started.
    public func statistics(for peripheral: PeripheralIdentifier) -> PeripheralStatistics {
        core.read { $0.statistics[peripheral] } ?? PeripheralStatistics()
    }
}
