import BluetoothCore
import FoundationEssentials
import GATT
import HCI

/// Bluejay on Linux: one connected peripheral at a time, a FIFO of operations, automatic
/// discovery as characteristics are used, and background tasks written as plain blocking
/// calls. It follows Bluejay's iOS API; what Linux changes is in docs/ARCHITECTURE.md's porting map.
///
/// All of it runs on the main actor, and callbacks come back there, as on iOS's main queue:
/// a command-line program keeps a main loop running (`dispatchMain()` or `await` in `main`).
@MainActor
public final class Bluejay {
    // This file holds the class's state; each concern is an extension in its own file:
    // Lifecycle (start, controller recovery, stop), Scanning, Connecting (connect,
    // disconnect, a link's end, auto-reconnect), ReadingAndWriting, Listening (listens and
    // the one route every notified value takes), BackgroundTasks, Observers (and logs).

    /// Tells one Bluejay from another.
    public let uuid = UUID()
    /// Whether the host is up. False before ``start(mode:)`` completes, and while a lost
    /// controller is being reopened.
    public var isBluetoothAvailable: Bool { host != nil }
    /// Whether availability is about to change (the host is starting, or coming back after
    /// the controller was lost).
    public var isBluetoothStateUpdateImminent: Bool { if case .starting = hostState { true } else { false } }
    /// Whether a connection attempt runs.
    public var isConnecting: Bool {
        switch linkState {
        case .connecting, .awaitingController: true
        case .idle: false
        case let .following(peripheral, _):
            switch peripheral.status.snapshot.state {
            case .connecting, .reconnecting: true
            case .connected, .disconnecting, .disconnected: false
            }
        }
    }
    /// Whether a peripheral is connected.
    public var isConnected: Bool { connection != nil }
    /// Whether a disconnection runs.
    public var isDisconnecting: Bool { followed?.link.state == .disconnecting }
    /// Whether Bluejay reconnects after an unexpected disconnection (true after a successful
    /// connect, false after an explicit disconnect).
    public internal(set) var shouldAutoReconnect = true
    /// How many times, and how far apart, Bluejay tries to reconnect after a drop.
    public var autoReconnectPolicy = AutoReconnectPolicy()
    /// Whether a scan runs.
    public var isScanning: Bool { if case .idle = scanState { false } else { true } }
    /// Whether ``start(mode:)`` was called.
    public var hasStarted: Bool { if case .notStarted = hostState { false } else { true } }
    /// Warning options for connections that give none (iOS only; kept for compatibility).
    public private(set) var defaultWarningOptions = WarningOptions.default
    /// Whether the connection and listens are recorded for restoration after a restart.
    public var isBackgroundRestorationEnabled: Bool { restoration != nil }

    /// The connected peripheral.
    public var peripheral: PeripheralIdentifier? { connection?.peripheral }

    /// With duplicates allowed, a peripheral not heard for this long is reported to the
    /// scan's `expired` callback.
    public var scanExpiry: Duration = .seconds(15)

    // MARK: Host

    /// Where the host is in its life.
    enum HostState {
        /// ``start(mode:)`` not called yet.
        case notStarted
        /// Coming up, the first time or again after the controller was lost; operations
        /// wait for the outcome.
        case starting(Once<Result<BluetoothHost, BluejayError>>)
        /// Up: operations run on it.
        case up(BluetoothHost)
        /// Could not come up, or lost and not brought back: operations fail with this.
        case down(BluejayError)
        /// Handed over by ``stopAndExtractBluetoothState()``.
        case extracted
    }

    var hostState = HostState.notStarted
    /// The host operations run on, while it is up.
    var host: BluetoothHost? { if case let .up(host) = hostState { host } else { nil } }
    /// How the host was made, to make it again after the controller is lost (nil for a
    /// host adopted with ``StartMode/use(_:)``: Bluejay cannot reopen what it did not open).
    var reopenOptions: StartOptions?
    /// Reopen attempts since the controller last stayed up, and when it last came back: a
    /// controller lost again soon after it came back goes on with the next delay, so one
    /// that keeps failing is given up on rather than reopened for ever.
    var recoveryAttempts = 0
    var recoveredAt: FacadeClock.Instant?
    /// Told of each host Bluejay brings up (the tests' census of what every host held).
    var onHostUp: ((BluetoothHost) -> Void)?
    /// What every timer of Bluejay's own waits on (``StartOptions/clock``).
    var clock = FacadeClock(ContinuousClock())
    /// Bluejay's FIFO: every operation on the peripheral waits its turn here.
    let queue = OperationQueue()

    // MARK: The link

    /// Which peripheral Bluejay follows: one at a time. Where its link stands is not kept
    /// here: the link is made, watched and remade by the host's ``Central``, as one of its
    /// ``Peripheral``s, which owns it and publishes it (``Peripheral/status``); Bluejay asks.
    enum LinkState {
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
    struct Connection {
        let handle: ConnectionHandle
        /// The ``Peripheral`` that owns the link (its operations, its listens).
        let owner: Peripheral
        var peripheral: PeripheralIdentifier { owner.identifier }
    }

    var linkState = LinkState.idle
    /// The followed peripheral's link as it publishes it.
    var followed: (peripheral: Peripheral, link: LinkStatus.Snapshot)? {
        if case let .following(peripheral, _) = linkState { (peripheral, peripheral.status.snapshot) } else { nil }
    }
    /// The link while it is up (also while it is being disconnected), once the app has been
    /// told of it: a link the peripheral has remade counts from the moment Bluejay reports
    /// it (observers, statistics), so `isConnected` never runs ahead of `connected(to:)`.
    var connection: Connection? {
        guard case let .following(peripheral, reported?) = linkState,
              let handle = peripheral.status.snapshot.connectedHandle, handle == reported else { return nil }
        return Connection(handle: handle, owner: peripheral)
    }

    /// The last connection asked for, to reconnect to with the same timeout.
    var lastConnect: (PeripheralIdentifier, Timeout)?
    weak var disconnectHandler: (any DisconnectHandler)?
    var statistics: [PeripheralIdentifier: PeripheralStatistics] = [:]

    // MARK: Listens

    /// The listens by characteristic; they outlive a link that ends unexpectedly, to be
    /// subscribed again once Bluejay has reconnected.
    var listeners: [CharacteristicIdentifier: Listener] = [:]
    /// Characteristics whose unsolicited values were offered to the restorer on this link.
    var offeredUnsolicited: Set<CharacteristicIdentifier> = []
    /// How many values of one listen may wait for the app (``StartOptions/listenBufferLimit``).
    var listenBufferLimit = StartOptions.defaultListenBufferLimit
    /// The one way every notified or indicated value comes to the main actor, in the order
    /// the stack received them (see Listening.swift).
    let arrivals: ArrivalInbox
    var restoration: RestorationStore?
    var restorer: (any ListenRestorer)?

    // MARK: Scan

    /// Whether a scan was asked for, and whether it was asked to stop.
    enum ScanState {
        /// None, or the last one has ended.
        case idle
        /// Queued, starting or running.
        case scanning
        /// ``stopScanning()`` was called: a scan still queued or starting ends as soon as
        /// it runs, a running one is ending.
        case stopRequested
    }

    var scanState = ScanState.idle

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
    func cancel(_ operation: QueuedOperation) { queue.cancel(operation, .cancelled) }

    /// The host once up (waiting while it starts or comes back); fails `operation` when
    /// there is none.
    func readyHost(_ operation: QueuedOperation) async -> BluetoothHost? {
        switch hostState {
        case .notStarted, .extracted:
            operation.fail(.bluetoothUnavailable)
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
                guard case let .up(current) = hostState, current === host else {
                    operation.fail(.bluetoothUnavailable)
                    return nil
                }
                return host
            case let .failure(error):
                operation.fail(error)
                return nil
            }
        }
    }

    /// The host and the connected link; fails `operation` with ``BluejayError/notConnected``.
    func connected(_ operation: QueuedOperation) async -> (BluetoothHost, Connection)? {
        guard let host = await readyHost(operation) else { return nil }
        guard let connection, !operation.isFinished else {
            operation.fail(.notConnected)
            return nil
        }
        return (host, connection)
    }

    /// Runs `body` with the GATT client of link `handle`.
    @BluetoothActor
    static func onClient<T>(_ host: BluetoothHost, _ handle: ConnectionHandle,
                            _ body: (GATTClient) async throws(GATTError) -> T) async -> Swift.Result<T, GATTError> {
        guard let client = host.existingClient(for: handle) else { return .failure(.att(.notConnected(handle))) }
        do { return .success(try await body(client)) } catch { return .failure(error) }
    }
}
