import BluetoothCore
import DiscoveryCache
import Dispatch
import FoundationEssentials
import GATT
import HCI

/// One peripheral of a ``Central``: its link under a connection policy like BlueCap's
/// (timeout retries, disconnect retries with backoff, listens restored after a reconnect),
/// and its operations, one at a time in the order they were asked (Bluejay's queue rule),
/// concurrently with other peripherals'.
@BluetoothActor
public final class Peripheral {
    /// Who it is.
    public nonisolated let identifier: PeripheralIdentifier
    /// Where its link stands.
    public private(set) var state: PeripheralState = .disconnected { didSet { publishStatus() } }
    /// The same, for readers on other actors (``Bluejay``): written here alone.
    nonisolated let status = LinkStatus()
    /// The central it belongs to: weak, since the host holds the central until it closes,
    /// and a peripheral's last tasks may outlive both.
    private weak var central: Central?
    /// The stack its links run on.
    let host: BluetoothHost
    let queue = OperationQueue()
    /// The live link's handle.
    private(set) var handle: ConnectionHandle? { didSet { publishStatus() } }
    /// Its connections counted since discovery (BlueCap's names: PeripheralConnectionStatistics.swift).
    public internal(set) var statistics: PeripheralStatistics
    /// What ended the last link unasked, while the policy reconnects.
    private var droppedBy: BluejayError? { didSet { publishStatus() } }
    private var policy = Policy()
    private var events: [Int: AsyncStream<PeripheralEvent>.Continuation] = [:]
    var listens: [CharacteristicIdentifier: Listen] = [:]
    private var nextToken = 0
    private var reconnection: Task<Void, Never>?
    var rssiPolling: Task<Void, Never>?
    /// What every wait of the reconnection policy sleeps on (Bluejay's clock, when Bluejay
    /// runs on this peripheral).
    var clock = ElapsedClock(ContinuousClock())
    /// Told of every event as it happens, before the event streams (Bluejay's route).
    var onEvent: (@BluetoothActor (PeripheralEvent, ConnectionHandle?, BluejayError?) -> Void)?
    /// When set, every link end asks it (with the handle, the reason, and whether the end
    /// was asked for) whether to reconnect and under which policy, instead of the policy of
    /// the last connect: how Bluejay's disconnect handler and auto-reconnect decide.
    var reconnectionDecision: (@BluetoothActor (ConnectionHandle, HCIStatus, Bool) async -> Policy?)?
    /// Bluejay let go: its hooks, policy and clock go with it.
    func releaseBluejay() {
        onEvent = nil
        reconnectionDecision = nil
        policy = Policy()
        clock = ElapsedClock(ContinuousClock())
    }

    /// Why the last connection attempt of a reconnection failed.
    private(set) var lastFailure: BluejayError?
    /// Where a connection attempt of this peripheral is, while one runs.
    private enum Attempt {
        /// None runs.
        case none
        /// Waiting for its turn at the central's one initiator.
        case queued
        /// Its LE Create Connection is the controller's current one.
        case initiating
        /// The link is up and its GATT client being set up: the link's loss is the
        /// attempt's to report, not a drop to repair.
        case settingUp
    }

    private var attempt = Attempt.none
    /// Every ``disconnect()`` begins a new epoch: an attempt or reconnection begun in an
    /// earlier one stops at its next step, whatever was asked since.
    private var epoch = 0

    /// How links are made and remade: BlueCap's connection policy.
    struct Policy {
        var timeoutRetries = 0
        var disconnectRetries = 0
        /// Nil: an attempt waits until the peer answers (Bluejay's `connect` with no timeout).
        var connectionTimeout: Duration? = .seconds(10)
        var reconnectDelay: Duration = .seconds(1)
        /// The wait before the first reconnection when it differs from `reconnectDelay`
        /// (Bluejay tries once at once, then backs off from `reconnectDelay`).
        var firstReconnectDelay: Duration?

        /// The wait before reconnection `attempt`: doubling from the first delay, at most
        /// ``Peripheral/maximumReconnectDelay``.
        func delay(before attempt: Int) -> Duration {
            var delay = reconnectDelay
            var doublings = attempt - 1
            if let firstReconnectDelay {
                if attempt == 1 { return firstReconnectDelay }
                doublings -= 1
            }
            for _ in 0..<max(0, doublings) where delay < Peripheral.maximumReconnectDelay { delay *= 2 }
            return min(delay, Peripheral.maximumReconnectDelay)
        }
    }

    /// One consumer of a characteristic's values: a value stream (``values(of:)``), or one
    /// of Bluejay's listens.
    struct Subscriber {
        /// Takes each value, on the stack's actor, in the order they came.
        let deliver: @BluetoothActor (ArraySlice<UInt8>) -> Void
        /// The listen is over: ended normally (nil), or lost with the error.
        let finish: @BluetoothActor ((any Error)?) -> Void
    }

    /// The subscribers of one characteristic's values, and the stack's listener for them.
    ///
    /// The stack's listener holds it (strongly: it holds nothing back) and hands it each
    /// value, so a value reaches the subscribers without a look-up by characteristic and
    /// without touching the peripheral, whose weak references make every retain and release
    /// of it take the slow path. Taken out of ``listens``, it is emptied: a value the stack's
    /// listener still brings goes nowhere.
    @BluetoothActor
    final class Listen {
        var subscribers: [Int: Subscriber] = [:]
        var listener: Int?

        /// A value from the stack's listener, to every subscriber.
        func deliver(_ value: ArraySlice<UInt8>) {
            for subscriber in subscribers.values { subscriber.deliver(value) }
        }
    }

    /// The longest wait between two reconnection attempts (the backoff doubles up to it).
    public nonisolated static let maximumReconnectDelay: Duration = .seconds(30)

    init(identifier: PeripheralIdentifier, central: Central, discoveredAt: ContinuousClock.Instant?) {
        self.identifier = identifier
        self.central = central
        self.host = central.host
        statistics = PeripheralStatistics(since: .now)
        if let discoveredAt { statistics.discovered(at: discoveredAt) }
    }

    // MARK: - Events

    /// The link's events from now on, each consumer its own stream (BlueCap's connection
    /// future stream). Ends when the central closes.
    public func connectionEvents() -> AsyncStream<PeripheralEvent> {
        let (stream, continuation) = AsyncStream<PeripheralEvent>.makeStream()
        let token = takeToken()
        events[token] = continuation
        continuation.onTermination = { _ in Task { @BluetoothActor [weak self] in self?.events[token] = nil } }
        return stream
    }

    private func publishStatus() {
        status.publish(LinkStatus.Snapshot(state: state, handle: handle, droppedBy: droppedBy))
    }

    private func emit(_ event: PeripheralEvent) {
        onEvent?(event, handle, lastFailure)
        for continuation in events.values { continuation.yield(event) }
    }

    func takeToken() -> Int {
        nextToken += 1
        return nextToken
    }

    // MARK: - Connection

    /// Connects under this policy: `timeoutRetries` more attempts when one finds no peer in
    /// `connectionTimeout`; after an unexpected disconnection, up to `disconnectRetries`
    /// reconnections, the first after `reconnectDelay` and each later one after twice the
    /// wait (at most ``maximumReconnectDelay``). Each step is an event
    /// (``connectionEvents()``). Throws when every attempt timed out, or one failed for good.
    /// With no `connectionTimeout` (the default, as BlueCap's), an attempt waits until the
    /// peer answers or ``disconnect()`` is called.
    public func connect(
        timeoutRetries: Int = 0, disconnectRetries: Int = 0, connectionTimeout: Duration? = nil,
        reconnectDelay: Duration = .seconds(1)
    ) async throws(BluejayError) {
        try await connect(
            under: Policy(
                timeoutRetries: max(0, timeoutRetries), disconnectRetries: max(0, disconnectRetries),
                connectionTimeout: connectionTimeout, reconnectDelay: reconnectDelay))
    }

    /// BlueCap's spelling, in seconds: `connectionTimeout: 10.0`, or `TimeInterval.infinity`
    /// for none; reconnections begin after a second, as with the other spelling.
    public func connect(timeoutRetries: Int = 0, disconnectRetries: Int = 0, connectionTimeout: TimeInterval)
        async throws(BluejayError)
    {
        try await connect(
            timeoutRetries: timeoutRetries, disconnectRetries: disconnectRetries,
            connectionTimeout: Duration(seconds: connectionTimeout))
    }

    /// Connects under `policy` (the public connect's, or Bluejay's).
    func connect(under policy: Policy) async throws(BluejayError) {
        // Its central was reset or closed: the peripheral of the new stack is asked for anew.
        guard !host.isClosed else { throw .bluetoothUnavailable }
        switch state {
        case .connected: throw .alreadyConnected
        case .connecting, .reconnecting, .disconnecting: throw .alreadyConnecting
        case .disconnected: break
        }
        self.policy = policy
        do { try await establish(in: epoch) } catch {
            emit(.gaveUp(reason: error.description))
            throw error
        }
    }

    /// Connects again after `delay` under the policy of the last ``connect(timeoutRetries:disconnectRetries:connectionTimeout:reconnectDelay:)``
    /// (BlueCap's `reconnect(withDelay:)`).
    public func reconnect(withDelay delay: Duration = .zero) async throws(BluejayError) {
        guard state == .disconnected else { throw state == .connected ? .alreadyConnected : .alreadyConnecting }
        state = .connecting
        let epoch = epoch
        do { try await clock.sleep(for: delay) } catch {
            state = .disconnected
            throw .cancelled
        }
        // disconnect() during the wait.
        guard epoch == self.epoch else {
            state = .disconnected
            throw .cancelled
        }
        do { try await establish(in: epoch) } catch {
            emit(.gaveUp(reason: error.description))
            throw error
        }
    }

    /// Ends the link (and any reconnection under way); value streams end. Nothing happens
    /// when it is not connected.
    public func disconnect() async {
        epoch += 1
        reconnection?.cancel()
        reconnection = nil
        stopPollingRSSI()
        if state != .disconnected || handle != nil { emit(.forcedDisconnect) }
        guard let handle, attempt != .settingUp else {
            // No link yet: an attempt under way is cancelled (a link it still makes, it ends
            // itself), and the listens end as asked.
            if attempt == .initiating { host.connections.cancelConnect() }
            if state != .connecting && attempt != .settingUp { state = .disconnected }
            endListens(nil)
            return
        }
        _ = try? await endLink(handle)
    }

    /// Ends the live link `handle` (asked for: no reconnection follows); throws when the
    /// controller refuses, and then the link stays up. A link already gone (or replaced)
    /// is done all the same.
    func endLink(_ handle: ConnectionHandle) async throws(ConnectionError) {
        guard self.handle == handle, state == .connected || state == .disconnecting else { return }
        state = .disconnecting
        do { _ = try await host.connections.disconnect(handle, reason: .remoteUserTerminatedConnection) } catch {
            if case .notConnected = error {
                // It went down meanwhile, and its end may not have reached us yet.
                if self.handle == nil, state == .disconnecting { state = .disconnected }
                return
            }
            if self.handle == handle, state == .disconnecting { state = .connected }
            throw error
        }
    }

    /// Attempts up to 1 + timeoutRetries connections, as long as no ``disconnect()`` ends
    /// `epoch`; on success the GATT client is ready and every listen subscribed again.
    private func establish(in epoch: Int) async throws(BluejayError) {
        let attempts = policy.timeoutRetries + 1
        for attempt in 1...attempts {
            if case .reconnecting = state {} else { state = .connecting }
            self.attempt = .queued
            defer { self.attempt = .none }
            let link: LEConnection
            do {
                let host = host, identifier = identifier, timeout = policy.connectionTimeout
                // The host closed: its central went with it.
                guard let central else { throw ConnectionError.cancelled }
                link = try await central.initiator.run(.connect) {
                    guard epoch == self.epoch else { throw ConnectionError.cancelled }
                    self.attempt = .initiating
                    defer { self.attempt = .queued }
                    return try await host.connections.connect(
                        to: identifier.address, type: identifier.addressType, timeout: timeout)
                }
            } catch let error as ConnectionError {
                switch error {
                case .connectionTimeout:
                    statistics.timedOut()
                    emit(.connectionTimedOut(attempt: attempt))
                    if attempt < attempts { continue }
                    state = .disconnected
                    throw .connectionTimedOut
                case .cancelled:
                    state = .disconnected
                    throw .cancelled
                default:
                    state = .disconnected
                    throw .connection(error)
                }
            } catch {
                state = .disconnected
                throw .cancelled
            }
            handle = link.handle
            central?.linkUp(link.handle, for: self)
            self.attempt = .settingUp
            do throws(BluejayError) {
                guard epoch == self.epoch else { throw BluejayError.cancelled }
                _ = try await host.client(
                    for: link.handle, identity: DiscoveryCache.identity(identifier.address, identifier.addressType))
                try await restoreListens(on: link.handle)
                guard epoch == self.epoch else { throw BluejayError.cancelled }
            } catch {
                // The link is up but unusable (or no longer wanted): end it, and say why.
                _ = try? await host.connections.disconnect(link.handle)
                handle = nil
                state = .disconnected
                throw error
            }
            droppedBy = nil
            statistics.connected()
            state = .connected
            emit(.connected)
            return
        }
        state = .disconnected
        throw .connectionTimedOut
    }

    /// The link ended (the central hears it): as asked, or a drop the policy may repair.
    func linkEnded(reason: HCIStatus) {
        let ended = handle
        handle = nil
        // A link lost while it was being set up: the attempt under way reports it.
        if attempt == .settingUp || state == .connecting { return }
        statistics.disconnected()
        for listen in listens.values { listen.listener = nil }
        emit(.disconnected(reason))
        let asked = state == .disconnecting
        let error = BluejayError.disconnected(reason)
        droppedBy = asked ? nil : error
        state = .disconnected
        if let decide = reconnectionDecision, let ended {
            let epoch = epoch
            reconnection = Task { [weak self] in
                let policy = await decide(ended, reason, asked)
                guard let self, self.state == .disconnected else { return }
                guard let policy, !asked, epoch == self.epoch, !Task.isCancelled else {
                    return self.endListens(asked ? nil : error)
                }
                await self.reconnect(under: policy, after: error)
            }
            return
        }
        if asked || policy.disconnectRetries == 0 { return endListens(asked ? nil : error) }
        state = .reconnecting(attempt: 1)
        reconnection = Task { [weak self] in await self?.reconnect(under: nil, after: error) }
    }

    /// Starts reconnecting under `policy` after the link was lost elsewhere (Bluejay's link,
    /// when the controller it was on was lost and a new one has come up).
    func resumeReconnecting(under policy: Policy, after error: BluejayError) {
        guard state == .disconnected, handle == nil else { return }
        // Reconnecting from now on, for whoever reads the status at once.
        droppedBy = error
        state = .reconnecting(attempt: 1)
        reconnection = Task { [weak self] in await self?.reconnect(under: policy, after: error) }
    }

    /// Up to `disconnectRetries` attempts, backing off; after the last failure the
    /// peripheral stays disconnected and its listens end.
    private func reconnect(under newPolicy: Policy?, after error: BluejayError) async {
        if let newPolicy { policy = newPolicy }
        lastFailure = nil
        let epoch = epoch
        for attempt in 1...max(1, policy.disconnectRetries) {
            let delay = policy.delay(before: attempt)
            state = .reconnecting(attempt: attempt)
            emit(.reconnecting(attempt: attempt, delay: delay))
            if delay > .zero { do { try await clock.sleep(for: delay) } catch { return } }
            guard case .reconnecting = state, epoch == self.epoch, !Task.isCancelled else { return }
            do {
                try await establish(in: epoch)
                return
            } catch {
                lastFailure = error
                // disconnect() stopped it: nothing more to try or report.
                if epoch != self.epoch || Task.isCancelled {
                    state = .disconnected
                    return
                }
                state = .reconnecting(attempt: attempt)
            }
        }
        state = .disconnected
        // The listens end first, with what ended the link, so whoever hears of the give-up
        // finds them over.
        endListens(error)
        emit(.gaveUp(reason: "\(policy.disconnectRetries) reconnection(s) failed"))
    }

    /// The central closed.
    func closed() {
        reconnection?.cancel()
        stopPollingRSSI()
        endListens(BluejayError.bluetoothUnavailable)
        for continuation in events.values { continuation.finish() }
        events = [:]
        state = .disconnected
    }

    /// Disconnects and forgets this peripheral: the central's next ``Central/peripheral(_:)``
    /// for its identifier makes a new one (BlueCap's `terminate()`).
    public func terminate() async {
        await disconnect()
        central?.forget(self)
    }
}
