import BluetoothCore
import FoundationEssentials
import GATT
import HCI

/// Bluejay on Linux: one connected peripheral at a time, a FIFO of operations, automatic
/// discovery as characteristics are used, and background tasks written as plain blocking
/// calls. It follows Bluejay's iOS API; what Linux changes is in docs/ARCHITECTURE.md's porting map.
///
/// Its API is called on the main actor, and callbacks come back there, as on iOS's main
/// queue: a command-line program keeps a main loop running (`dispatchMain()` or `await` in
/// `main`). The operations themselves run on the stack's actor, so a busy main actor holds
/// back only the callbacks, not the peripheral's traffic.
@MainActor
public final class Bluejay {
    // This file holds the class's state; each concern is an extension in its own file:
    // Lifecycle (start, controller recovery, stop), Scanning, Connecting (connect,
    // disconnect, a link's end, auto-reconnect), ReadingAndWriting, Listening (listens and
    // the one route every notified value takes), BackgroundTasks, Observers (and logs).

    /// Tells one Bluejay from another.
    public nonisolated let uuid = UUID()
    /// Whether the host is up. False before ``start(mode:)`` completes, and while a lost
    /// controller is being reopened.
    public var isBluetoothAvailable: Bool { host != nil }
    /// Whether availability is about to change (the host is starting, or coming back after
    /// the controller was lost).
    public var isBluetoothStateUpdateImminent: Bool { core.read { $0.host.bringUp != nil } }
    /// Whether a connection attempt runs.
    public var isConnecting: Bool { core.read(\.isConnecting) }
    /// Whether a peripheral is connected.
    public var isConnected: Bool { connection != nil }
    /// Whether a disconnection runs.
    public var isDisconnecting: Bool { followed?.link.state == .disconnecting }
    /// Whether Bluejay reconnects after an unexpected disconnection (true after a successful
    /// connect, false after an explicit disconnect).
    public internal(set) var shouldAutoReconnect: Bool {
        get { core.read(\.shouldAutoReconnect) }
        set { core.state.withLock { $0.shouldAutoReconnect = newValue } }
    }
    /// How many times, and how far apart, Bluejay tries to reconnect after a drop.
    public var autoReconnectPolicy: AutoReconnectPolicy {
        get { core.read(\.autoReconnectPolicy) }
        set { core.state.withLock { $0.autoReconnectPolicy = newValue } }
    }
    /// Whether a scan runs.
    public var isScanning: Bool { core.read { if case .idle = $0.scan { false } else { true } } }
    /// Whether ``start(mode:)`` was called.
    public var hasStarted: Bool { core.read { if case .notStarted = $0.host { false } else { true } } }
    /// Warning options for connections that give none (iOS only; kept for compatibility).
    public private(set) var defaultWarningOptions = WarningOptions.default
    /// Whether the connection and listens are recorded for restoration after a restart.
    public var isBackgroundRestorationEnabled: Bool { core.read { $0.restoration != nil } }

    /// The connected peripheral.
    public var peripheral: PeripheralIdentifier? { connection?.peripheral }

    /// With duplicates allowed, a peripheral not heard for this long is reported to the
    /// scan's `expired` callback.
    public var scanExpiry: Duration {
        get { core.read(\.scanExpiry) }
        set { core.state.withLock { $0.scanExpiry = newValue } }
    }

    // MARK: Host

    /// Where the host is in its life.
    enum HostState: Sendable {
        /// ``start(mode:)`` not called yet.
        case notStarted
        /// Coming up the first time; operations wait for the outcome.
        case starting(OneShot<Result<BluetoothHost, BluejayError>>)
        /// Coming back after the controller was lost. As on iOS while Bluetooth is off,
        /// operations fail at once with `BluejayError.bluetoothUnavailable` rather than
        /// wait; the link followed is remade by itself once the controller is back.
        case recovering(OneShot<Result<BluetoothHost, BluejayError>>)
        /// Up: operations run on it.
        case up(BluetoothHost)
        /// Could not come up, or lost and not brought back: operations fail with this.
        case down(BluejayError)
        /// Handed over by ``stopAndExtractBluetoothState()``.
        case extracted

        /// The outcome a bring-up under way (starting or recovering) will give.
        var bringUp: OneShot<Result<BluetoothHost, BluejayError>>? {
            switch self {
            case let .starting(ready), let .recovering(ready): ready
            default: nil
            }
        }
    }

    /// Bluejay's own state, shared by the seed API on the main actor and the operations on
    /// the stack's actor (``BluejayCore``).
    nonisolated let core = BluejayCore()
    /// The host operations run on, while it is up.
    nonisolated var host: BluetoothHost? { core.read(\.upHost) }
    /// Told of each host Bluejay brings up (the tests' census of what every host held).
    var onHostUp: ((BluetoothHost) -> Void)?
    /// Bluejay's FIFO: every operation on the peripheral waits its turn here, and runs on
    /// the stack's actor.
    nonisolated let queue = OperationQueue()

    // MARK: The link

    /// Which peripheral Bluejay follows: one at a time. Where its link stands is not kept
    /// here: the link is made, watched and remade by the host's ``Central``, as one of its
    /// ``Peripheral``s, which owns it and publishes it (``Peripheral/status``); Bluejay asks.
    enum LinkState: Sendable {
        /// None followed.
        case idle
        /// A connection to this peripheral is queued or being made; its ``Peripheral``
        /// becomes the followed one once the link is up.
        case connecting(PeripheralIdentifier)
        /// Bluejay follows this peripheral's link. `reported` is the link the app was last
        /// told is up (observers, the connect's completion): nil once told it ended, while
        /// the peripheral reconnects.
        case following(Peripheral, reported: ConnectionHandle?)
        /// The controller the link was on was lost (with `error`); it is remade on the
        /// next controller, by that host's peripheral.
        case awaitingController(PeripheralIdentifier, after: BluejayError)
    }

    /// A link up to the peripheral.
    struct Connection: Sendable {
        let handle: ConnectionHandle
        /// The ``Peripheral`` that owns the link (its operations, its listens).
        let owner: Peripheral
        var peripheral: PeripheralIdentifier { owner.identifier }
    }

    /// The followed peripheral's link as it publishes it.
    nonisolated var followed: (peripheral: Peripheral, link: LinkStatus.Snapshot)? { core.read(\.followed) }
    /// The link while it is up (also while it is being disconnected), once the app has been
    /// told of it: a link the peripheral has remade counts from the moment Bluejay reports
    /// it (observers, statistics), so `isConnected` never runs ahead of `connected(to:)`.
    nonisolated var connection: Connection? { core.read(\.connection) }

    weak var disconnectHandler: (any DisconnectHandler)?

    // MARK: Listens

    /// The one way every notified or indicated value, and every callback of the app's,
    /// comes to the main actor, in the order the stack produced them (see Listening.swift).
    nonisolated let arrivals: ArrivalInbox
    var restorer: (any ListenRestorer)?

    // MARK: Scan

    /// Whether a scan was asked for, and whether it was asked to stop.
    enum ScanState: Sendable {
        /// None, or the last one has ended.
        case idle
        /// Queued, starting or running.
        case scanning
        /// ``stopScanning()`` was called: a scan still queued or starting ends as soon as
        /// it runs, a running one is ending.
        case stopRequested
    }

    // MARK: Observers and logs

    var connectionObservers: [WeakConnectionObserver] = []
    var serviceObservers: [WeakBox] = []
    var rssiObservers: [WeakBox] = []
    var logObservers: [WeakBox] = []
    /// Lines logged before ``start(mode:)`` opened the log file.
    var logLines: [String] = []
    var logFile: LogFile?
    /// Where Bluejay's own lines go besides its log file: the stack's logging route, as
    /// layer `bluejay` (``StartOptions/logger``).
    var logger = HCILogger.standardError.layer("bluejay")

    /// A Bluejay that does nothing until ``start(mode:)``.
    public init() {
        arrivals = ArrivalInbox()
        arrivals.deliver { [weak self] batch in self?.arrived(batch) }
    }

    deinit {
        // Values still on their way have nowhere to go.
        arrivals.close()
    }

    // MARK: Plumbing

    /// The operation queued last (the async API's handle on it).
    var queueLastAdded: QueuedOperation? { queue.lastAdded }

    /// Cancels one operation (a cancelled async call's).
    func cancel(_ operation: QueuedOperation) { queue.cancel(operation, BluejayError.cancelled) }

    /// Runs `body` on the main actor after everything posted before it (values, callbacks):
    /// the app's callbacks keep the order the stack produced them in.
    nonisolated func post(_ body: @escaping @MainActor @Sendable () -> Void) {
        arrivals.post(.callback(body))
    }

    /// Runs `body` on the main actor in its turn (``post(_:)``) and returns its answer: what
    /// the app decides there (its disconnect handler, a scan's discovery).
    /// With `releasingHold`, the question ends a hold of ``arrivals`` once it is posted.
    nonisolated func ask<T: Sendable>(releasingHold: Bool = false, _ body: @escaping @MainActor @Sendable () -> T) async
        -> T
    {
        await withCheckedContinuation { (answered: CheckedContinuation<T, Never>) in
            post { answered.resume(returning: body()) }
            if releasingHold { arrivals.release() }
        }
    }

    /// The host once up (waiting while it starts or comes back); fails `operation` when
    /// there is none.
    nonisolated func readyHost(_ operation: QueuedOperation) async -> BluetoothHost? {
        switch core.read(\.host) {
        case .notStarted, .extracted, .recovering:
            operation.fail(BluejayError.bluetoothUnavailable)
            return nil
        case let .down(error):
            operation.fail(error)
            return nil
        case let .up(host):
            return operation.isFinished ? nil : host
        case let .starting(ready):
            let result = await ready.value()
            // Cancelled while the host was coming up: do nothing at all.
            guard !operation.isFinished else { return nil }
            switch result {
            case let .success(host):
                // Lost again, or handed over, since it came up.
                guard let current = self.host, current === host else {
                    operation.fail(BluejayError.bluetoothUnavailable)
                    return nil
                }
                return host
            case let .failure(error):
                operation.fail(error)
                return nil
            }
        }
    }

    /// The host and the connected link; fails `operation` with `BluejayError.notConnected`.
    nonisolated func connected(_ operation: QueuedOperation) async -> (BluetoothHost, Connection)? {
        guard let host = await readyHost(operation) else { return nil }
        guard let connection, !operation.isFinished else {
            operation.fail(BluejayError.notConnected)
            return nil
        }
        return (host, connection)
    }

    /// What an operation on `host` failed with: `BluejayError.bluetoothUnavailable` when
    /// the controller has failed meanwhile (a read cut short by a lost controller says so,
    /// not what the cut left behind, such as a closed bearer), else `error`. The operation
    /// ends before the controller's loss is handled, which ends the others the same way.
    @BluetoothActor
    static func cause(_ error: BluejayError, on host: BluetoothHost) -> BluejayError {
        host.controller.failure == nil ? error : .bluetoothUnavailable
    }

    /// Runs `body` with the GATT client of link `handle`. (`T` is Sendable for Swift 6.0,
    /// which takes a call of `body`, an async closure whose type names no isolation, as
    /// leaving the actor: its result crosses back. Every caller's is.)
    @BluetoothActor
    static func onClient<T: Sendable>(
        _ host: BluetoothHost, _ handle: ConnectionHandle,
        _ body: (GATTClient) async throws(GATTError) -> T
    ) async -> Swift.Result<T, GATTError> {
        guard let client = host.existingClient(for: handle) else { return .failure(.att(.notConnected(handle))) }
        do { return .success(try await body(client)) } catch { return .failure(error) }
    }
}
