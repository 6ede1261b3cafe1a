import Dispatch
import DiscoveryCache
import FoundationEssentials
import GATT
import HCI
import Logging
import SMP

/// Told about Bluetooth availability and connections. Held weakly.
@MainActor
public protocol ConnectionObserver: AnyObject {
    /// The host came up (true) or went away (false).
    func bluetoothAvailable(_ available: Bool)
    /// Connected to a peripheral.
    func connected(to peripheral: PeripheralIdentifier)
    /// Disconnected from a peripheral.
    func disconnected(from peripheral: PeripheralIdentifier)
}

extension ConnectionObserver {
    /// Does nothing unless implemented.
    public func bluetoothAvailable(_ available: Bool) {}
    /// Does nothing unless implemented.
    public func connected(to peripheral: PeripheralIdentifier) {}
    /// Does nothing unless implemented.
    public func disconnected(from peripheral: PeripheralIdentifier) {}
}

/// Told when the connected peripheral's services change (a Service Changed indication).
@MainActor
public protocol ServiceObserver: AnyObject {
    /// The services the change invalidated; they are rediscovered on next use.
    func didModifyServices(from peripheral: PeripheralIdentifier, invalidatedServices: [ServiceIdentifier])
}

/// Told of each RSSI reading asked for with ``Bluejay/readRSSI()``.
@MainActor
public protocol RSSIObserver: AnyObject {
    /// The reading in dBm, or the error that prevented it.
    func didReadRSSI(from peripheral: PeripheralIdentifier, RSSI: Int, error: (any Error)?)
}

/// Told whenever Bluejay's log grows.
@MainActor
public protocol LogObserver: AnyObject {
    /// The whole log so far.
    func logFileUpdated(logs: String)
}

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

/// Bluejay on Linux: one connected peripheral at a time, a FIFO of operations, automatic
/// discovery as characteristics are used, and background tasks written as plain blocking
/// calls. It follows Bluejay's iOS API; what Linux changes is in DESIGN.md's porting map.
///
/// All of it runs on the main actor, and callbacks come back there, as on iOS's main queue:
/// a command-line program keeps a main loop running (`dispatchMain()` or `await` in `main`).
@MainActor
public final class Bluejay {
    /// Tells one Bluejay from another.
    public let uuid = UUID()
    /// Whether the host is up. False before ``start(mode:)`` completes, and while a lost
    /// controller is being reopened.
    public var isBluetoothAvailable: Bool { host != nil }
    /// Whether availability is about to change (the host is starting, or coming back after
    /// the controller was lost).
    public var isBluetoothStateUpdateImminent: Bool { if case .starting = hostState { true } else { false } }
    /// Whether a connection attempt runs.
    public private(set) var isConnecting = false
    /// Whether a peripheral is connected.
    public var isConnected: Bool { connection != nil }
    /// Whether a disconnection runs.
    public private(set) var isDisconnecting = false
    /// Whether Bluejay reconnects after an unexpected disconnection (true after a successful
    /// connect, false after an explicit disconnect).
    public private(set) var shouldAutoReconnect = true
    /// Whether a scan runs.
    public private(set) var isScanning = false
    /// Whether ``start(mode:)`` was called.
    public private(set) var hasStarted = false
    /// Warning options for connections that give none (iOS only; kept for compatibility).
    public private(set) var defaultWarningOptions = WarningOptions.default
    /// Whether the connection and listens are recorded for restoration after a restart.
    public var isBackgroundRestorationEnabled: Bool { restoration != nil }

    /// The connected peripheral.
    public var peripheral: PeripheralIdentifier? { connection?.peripheral }

    private struct Connection {
        let peripheral: PeripheralIdentifier
        let handle: UInt16
    }

    /// Where the host is in its life.
    private enum HostState {
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

    private var hostState = HostState.notStarted
    /// The host operations run on, while it is up.
    private var host: BluetoothHost? { if case let .up(host) = hostState { host } else { nil } }
    /// How the host was made, to make it again after the controller is lost (nil for a
    /// host adopted with ``StartMode/use(_:)``: Bluejay cannot reopen what it did not open).
    private var reopenOptions: StartOptions?
    /// Reopen attempts since the controller last stayed up, and when it last came back: a
    /// controller lost again soon after it came back goes on with the next delay, so one
    /// that keeps failing is given up on rather than reopened for ever.
    private var recoveryAttempts = 0
    private var recoveredAt: ContinuousClock.Instant?
    /// Told of each host Bluejay brings up (the tests' census of what every host held).
    var onHostUp: ((BluetoothHost) -> Void)?
    private var connection: Connection?
    private let queue = OperationQueue()
    private var connectionObservers: [WeakConnectionObserver] = []
    private var listeners: [CharacteristicIdentifier: Listener] = [:]
    private var logLines: [String] = []
    private var logFile: LogFile?
    private var scanStopRequested = false
    private var restoration: RestorationStore?
    private var restorer: (any ListenRestorer)?
    private static let logger = Logger(label: "bluejay")
    private weak var disconnectHandler: (any DisconnectHandler)?
    private var serviceObservers: [WeakBox] = []
    private var rssiObservers: [WeakBox] = []
    private var logObservers: [WeakBox] = []
    private var statistics: [PeripheralIdentifier: PeripheralStatistics] = [:]
    /// Characteristics whose unsolicited values were offered to the restorer on this link.
    private var offeredUnsolicited: Set<CharacteristicIdentifier> = []
    /// Where the app's callbacks run (``StartOptions/callbackQueue``).
    private var callbacks = CallbackQueue(.main)

    private struct WeakBox {
        weak var object: AnyObject?
    }

    /// What a scan's loop waits on: a report, or a tick to check for lost peripherals.
    private enum ScanEvent: Sendable {
        case report(Discovery)
        case tick
    }

    /// With duplicates allowed, a peripheral not heard for this long is reported to the
    /// scan's `expired` callback.
    public var scanExpiry: Duration = .seconds(15)
    /// How many values of one listen may wait for the app (``StartOptions/listenBufferLimit``).
    private(set) var listenBufferLimit = StartOptions.defaultListenBufferLimit
    /// The last connection asked for, to reconnect to with the same timeout.
    private var lastConnect: (PeripheralIdentifier, Timeout)?

    private struct WeakConnectionObserver {
        weak var observer: (any ConnectionObserver)?
    }

    /// A listen: registered when asked for (so a second one is trapped at once), live once
    /// its subscription is written.
    @MainActor
    final class Listener {
        let option: MultipleListenOption
        let deliver: ([UInt8]) -> Void
        /// Values on their way to the callback, bounded.
        let backlog: ListenBacklog
        /// Tells the caller the listen is over (cancelled, or failed with the reason).
        private let end: (BluejayError) -> Void
        /// Who asked (the async API's stream), to end only its own listen.
        let tag: AnyObject?
        /// The value handle it watches, once subscribed.
        var valueHandle: UInt16?
        /// The GATT client's listener token, removed when the listen ends.
        var token: Int?
        /// Ends the stream that carries values to the main actor.
        var finish: (@Sendable () -> Void)?
        private(set) var isEnded = false

        init(option: MultipleListenOption, tag: AnyObject?, backlog: ListenBacklog, deliver: @escaping ([UInt8]) -> Void,
             end: @escaping (BluejayError) -> Void) {
            self.option = option
            self.tag = tag
            self.backlog = backlog
            self.deliver = deliver
            self.end = end
        }

        /// Delivers a value that did not come through the subscription's stream (one that
        /// arrived before the subscription was written).
        func deliverDirectly(_ bytes: [UInt8]) {
            guard case .accepted = backlog.arrived() else { return }
            deliver(bytes)
        }

        /// Ends the listen once: values stop and the caller hears why.
        func close(_ reason: BluejayError) {
            guard !isEnded else { return }
            isEnded = true
            finish?()
            finish = nil
            end(reason)
        }
    }

    /// A Bluejay that does nothing until ``start(mode:)``.
    public init() {}

    // MARK: Lifecycle

    /// Brings the host up (or adopts one). Operations asked for before it is up wait for it;
    /// if it cannot come up they fail with ``BluejayError/startFailed(_:)``.
    public func start(mode: StartMode = .new(.default)) {
        guard !hasStarted else {
            log("start(mode:) called twice; ignored")
            return
        }
        hasStarted = true
        switch mode {
        case let .use(existing):
            adopt(existing, ready: nil)
        case let .new(options):
            callbacks = CallbackQueue(options.callbackQueue)
            listenBufferLimit = options.listenBufferLimit
            logFile = LogFile(path: options.store.path + "/bluejay.log")
            if let identifier = options.backgroundRestore.identifier {
                restoration = RestorationStore(directory: options.store.subdirectory("restoration"), identifier: identifier)
                restorer = options.backgroundRestore.restorer
            }
            for line in logLines { log(line) }
            logLines = []
            // A recording cannot go on from the middle: a replayed controller is not reopened.
            if case .replay? = try? TransportSpec(parsing: options.transport), options.openTransport == nil {} else { reopenOptions = options }
            let ready = Once<Result<BluetoothHost, BluejayError>>()
            hostState = .starting(ready)
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

    /// Opens the transport `options` name (continuing `capture`, or opening the capture file
    /// they name) and brings a host up on it.
    @BluetoothActor
    private static func makeHost(_ options: StartOptions, capture continued: BTSnoopWriter?) async -> Result<BluetoothHost, BluejayError> {
        do throws(BluejayError) {
            var capture = continued
            if capture == nil { capture = try BluetoothHost.openCapture(options.capture) }
            let transport = try await BluetoothHost.open(options.transport, capture: capture, using: options.openTransport, clock: ContinuousClock())
            let host = try await BluetoothHost(transport: transport, capture: capture, store: options.store, cacheEnabled: options.cacheEnabled,
                                               deviceName: options.deviceName, logger: options.logger)
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

    /// Starts and registers `connectionObserver` first, so it hears availability.
    public func start(connectionObserver: any ConnectionObserver, mode: StartMode = .new(.default)) {
        register(connectionObserver: connectionObserver)
        start(mode: mode)
    }

    /// Runs on `host` from now on: its links and failures are heard, waiting operations go.
    private func adopt(_ host: BluetoothHost, ready: Once<Result<BluetoothHost, BluejayError>>?) {
        hostState = .up(host)
        Task { @BluetoothActor [weak self] in
            host.connections.onDisconnection = { link, reason in
                // A failed controller ends its links itself: that is the controller lost.
                let failure = host.controller.failure
                Task { @MainActor in
                    if let failure { self?.controllerLost(host, failure) } else { self?.linkEnded(link.handle, reason: reason, on: host) }
                }
            }
            host.onControllerFailure = { error in Task { @MainActor in self?.controllerLost(host, error) } }
            host.onServicesInvalidated = { handle, services in
                let identifiers = services.map { ServiceIdentifier(uuid: $0.uuid) }
                Task { @MainActor in self?.servicesInvalidated(handle, identifiers) }
            }
            host.onUnhandledValue = { handle, valueHandle, characteristic, value in
                Task { @MainActor in self?.unsolicitedValue(handle, valueHandle, characteristic, value) }
            }
            // Failed before anyone listened (between bring-up and now): heard all the same.
            if let failure = host.controller.failure { Task { @MainActor in self?.controllerLost(host, failure) } }
        }
        onHostUp?(host)
        ready?.fulfill(.success(host))
        for observer in observers { observer.bluetoothAvailable(true) }
    }

    /// The controller stopped by itself: its transport closed or failed, or it reported a
    /// Hardware Error. As on iOS when Bluetooth goes off, everything under way ends with the
    /// error and observers hear Bluetooth is unavailable; the link ends like any lost link
    /// (so auto-reconnect and listens carry on once a controller is back). Then, if Bluejay
    /// opened the transport itself, it is reopened as ``StartOptions/controllerRecovery``
    /// says, and operations wait for that.
    private func controllerLost(_ lost: BluetoothHost, _ failure: HCIError) {
        guard case let .up(current) = hostState, current === lost else { return }
        let error = BluejayError.hci(failure)
        log("controller lost: \(failure)")
        if let recoveredAt, ContinuousClock.now - recoveredAt > Self.recoveryStreakWindow { recoveryAttempts = 0 }
        let options = reopenOptions.flatMap { $0.controllerRecovery.delays.count > recoveryAttempts ? $0 : nil }
        if options == nil, reopenOptions?.controllerRecovery.delays.isEmpty == false { log("not reopening the controller again: it was lost \(recoveryAttempts + 1) times in a row") }
        let ready = Once<Result<BluetoothHost, BluejayError>>()
        hostState = options == nil ? .down(error) : .starting(ready)
        queue.cancelAll(error)
        if let connection { linkEnded(connection.handle, reason: .unspecifiedError, on: lost, error: error) }
        for observer in observers { observer.bluetoothAvailable(false) }
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
    /// error.
    private func recover(_ ready: Once<Result<BluetoothHost, BluejayError>>, _ options: StartOptions, capture: BTSnoopWriter?) async {
        let delays = options.controllerRecovery.delays
        var lastError = BluejayError.bluetoothUnavailable
        while recoveryAttempts < delays.count {
            let attempt = recoveryAttempts
            recoveryAttempts += 1
            try? await Task.sleep(for: delays[attempt])
            guard case let .starting(current) = hostState, current === ready else { return }
            log("reopening \(options.transport) (attempt \(attempt + 1) of \(delays.count))")
            let result = await Task { @BluetoothActor in await Self.makeHost(options, capture: capture) }.value
            guard isStarting(ready, else: result) else { return }
            switch result {
            case let .success(host):
                log("the controller is back on \(options.transport)")
                recoveredAt = .now
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
    }

    /// After a restart: reconnect to the recorded peripheral and offer each recorded listen
    /// to the restorer; what it does not take back is turned off.
    private func restore() {
        guard let record = restoration?.load(), let peripheral = record.peripheralIdentifier else { return }
        log("restoring the connection to \(peripheral) and \(record.listens.count) listens")
        connect(peripheral) { [weak self] result in
            guard let self, case .success = result else { return }
            for characteristic in record.characteristics {
                if self.listeners[characteristic] != nil { continue }
                if self.restorer?.willRestoreListen(on: characteristic) == true, self.listeners[characteristic] != nil { continue }
                // Nobody takes it: leave no subscription behind.
                self.endListen(to: characteristic)
            }
        }
    }

    /// Records the connected peripheral and the active listens (when restoration is on).
    private func recordRestorationState() {
        guard let restoration else { return }
        var record = RestorationRecord()
        if let connection {
            record.peripheral = connection.peripheral.address.description
            record.addressType = connection.peripheral.addressType == .random || connection.peripheral.addressType == .randomIdentity ? "random" : "public"
            record.listens = listeners.keys.map { RestorationRecord.Listen(service: $0.service.uuid.description, characteristic: $0.uuid.description) }
                .sorted { ($0.service, $0.characteristic) < ($1.service, $1.characteristic) }
        }
        do { try restoration.save(record) } catch { log("recording restoration state: \(error)") }
    }

    /// Cancels everything without disconnecting and hands back the host and the connected
    /// peripheral, for code outside Bluejay to go on with. Bluejay is unusable afterwards.
    public func stopAndExtractBluetoothState() -> (host: BluetoothHost?, peripheral: PeripheralIdentifier?) {
        cancelEverything(error: .cancelled, shouldDisconnect: false)
        let extracted = (host, connection?.peripheral)
        if let host {
            Task { @BluetoothActor in
                host.connections.onDisconnection = nil
                host.onControllerFailure = nil
            }
        }
        // Operations waiting for a host that was still coming up end now.
        if case let .starting(ready) = hostState { ready.fulfill(.failure(.bluetoothUnavailable)) }
        hostState = .extracted
        connection = nil
        for listener in listeners.values { listener.close(.cancelled) }
        listeners = [:]
        return extracted
    }

    /// Ends the running and every queued operation with `error` and, by default, disconnects.
    public func cancelEverything(error: BluejayError = .cancelled, shouldDisconnect: Bool = true) {
        queue.cancelAll(error)
        if shouldDisconnect, let connection, let host {
            shouldAutoReconnect = false
            isDisconnecting = true
            Task { @BluetoothActor in _ = try? await host.connections.disconnect(connection.handle) }
        }
    }

    // MARK: Observers and logs

    /// Hears availability and connection events; held weakly.
    public func register(connectionObserver: any ConnectionObserver) {
        connectionObservers.removeAll { $0.observer == nil || $0.observer === connectionObserver }
        connectionObservers.append(WeakConnectionObserver(observer: connectionObserver))
        if host != nil { connectionObserver.bluetoothAvailable(true) }
    }

    /// Stops telling `connectionObserver`.
    public func unregister(connectionObserver: any ConnectionObserver) {
        connectionObservers.removeAll { $0.observer == nil || $0.observer === connectionObserver }
    }

    private var observers: [any ConnectionObserver] { connectionObservers.compactMap(\.observer) }

    /// Hears Service Changed; held weakly.
    public func register(serviceObserver: any ServiceObserver) {
        serviceObservers.removeAll { $0.object == nil || $0.object === serviceObserver }
        serviceObservers.append(WeakBox(object: serviceObserver))
    }

    /// Stops telling `serviceObserver`.
    public func unregister(serviceObserver: any ServiceObserver) { serviceObservers.removeAll { $0.object == nil || $0.object === serviceObserver } }

    /// Hears RSSI readings; held weakly.
    public func register(rssiObserver: any RSSIObserver) {
        rssiObservers.removeAll { $0.object == nil || $0.object === rssiObserver }
        rssiObservers.append(WeakBox(object: rssiObserver))
    }

    /// Stops telling `rssiObserver`.
    public func unregister(rssiObserver: any RSSIObserver) { rssiObservers.removeAll { $0.object == nil || $0.object === rssiObserver } }

    /// Hears the log grow; held weakly.
    public func register(logObserver: any LogObserver) {
        logObservers.removeAll { $0.object == nil || $0.object === logObserver }
        logObservers.append(WeakBox(object: logObserver))
    }

    /// Stops telling `logObserver`.
    public func unregister(logObserver: any LogObserver) { logObservers.removeAll { $0.object == nil || $0.object === logObserver } }

    private func servicesInvalidated(_ handle: UInt16, _ services: [ServiceIdentifier]) {
        guard let connection, connection.handle == handle else { return }
        for case let observer as any ServiceObserver in serviceObservers.compactMap(\.object) {
            observer.didModifyServices(from: connection.peripheral, invalidatedServices: services)
        }
    }

    /// Asks the controller for the link's RSSI; the reading (or the error, e.g. a controller
    /// that does not support Read RSSI) goes to the RSSI observers. Throws when not connected.
    public func readRSSI() throws {
        guard let connection, let host else { throw BluejayError.notConnected }
        Task { @MainActor in
            let result = await Task { @BluetoothActor () -> Result<Int8, ConnectionError> in
                do throws(ConnectionError) { return .success(try await host.connections.readRSSI(connection.handle)) } catch { return .failure(error) }
            }.value
            for case let observer as any RSSIObserver in self.rssiObservers.compactMap(\.object) {
                switch result {
                case let .success(rssi): observer.didReadRSSI(from: connection.peripheral, RSSI: Int(rssi), error: nil)
                case let .failure(error): observer.didReadRSSI(from: connection.peripheral, RSSI: 127, error: BluejayError.connection(error))
                }
            }
        }
    }

    /// Connection statistics of `peripheral` since this Bluejay started.
    public func statistics(for peripheral: PeripheralIdentifier) -> PeripheralStatistics {
        statistics[peripheral] ?? PeripheralStatistics()
    }

    /// Adds a line to Bluejay's log: the log file in the store directory (`bluejay.log`,
    /// mode 0600, from ``start(mode:)`` on; kept in memory before) and swift-log's
    /// `Logger(label: "bluejay")`, so an app's own logging backend sees it too.
    public func log(_ string: String) {
        Self.logger.info("\(string)")
        if let logFile {
            do { try logFile.append(string + "\n") } catch { Self.logger.error("writing \(logFile.path): \(error)") }
        } else {
            logLines.append(string)
        }
        let observers = logObservers.compactMap(\.object)
        guard !observers.isEmpty, let logs = getLogs() else { return }
        for case let observer as any LogObserver in observers { observer.logFileUpdated(logs: logs) }
    }

    /// The whole log, or nil when it is empty.
    public func getLogs() -> String? {
        guard let logFile else { return logLines.isEmpty ? nil : logLines.joined(separator: "\n") }
        guard let text = try? logFile.contents(), !text.isEmpty else { return nil }
        return text.hasSuffix("\n") ? String(text.dropLast()) : text
    }

    /// Empties the log.
    public func clearLogs() {
        logLines = []
        try? logFile?.truncate()
    }

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
        guard !isScanning else {
            stopped(found, BluejayError.alreadyScanning)
            return
        }
        isScanning = true
        scanStopRequested = false
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
            if operation.isFinished || self.scanStopRequested { feed.finish() }
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
            self.isScanning = false
            let wasCancelled = operation.isFinished
            if operation.claim() { stopped(found, nil) }
            if let (target, completion) = then, !wasCancelled { self.connect(target.peripheralIdentifier, completion: completion) }
        }, onFailure: { [weak self] error in
            self?.isScanning = false
            stopped(found, error)
        }))
    }

    /// Stops a running scan; its `stopped` callback follows.
    public func stopScanning() {
        guard isScanning else { return }
        // Seen by a scan still queued or starting, which ends as soon as it runs.
        scanStopRequested = true
        if let running = queue.running, running.kind == .scan { running.onCancel?(.cancelled) }
    }

    // MARK: Connecting

    /// Connects to `peripheralIdentifier`. Fails at once when already connected or
    /// connecting; stops a running scan first. With a timeout, a peripheral that does not
    /// answer in time ends with ``BluejayError/connectionTimedOut``.
    public func connect(_ peripheralIdentifier: PeripheralIdentifier, timeout: Timeout = .seconds(15), warningOptions: WarningOptions? = nil,
                        completion: @escaping (ConnectionResult) -> Void) {
        let completion = callbacks.deliver(completion)
        if isConnected { return completion(.failure(BluejayError.alreadyConnected)) }
        if isConnecting { return completion(.failure(BluejayError.alreadyConnecting)) }
        stopScanning()
        isConnecting = true
        lastConnect = (peripheralIdentifier, timeout)
        let limit = timeout.duration ?? .seconds(86_400 * 365)
        queue.add(QueuedOperation(.connect, body: { [weak self] operation in
            guard let self, let host = await self.readyHost(operation) else { return }
            operation.onCancel = { _ in Task { @BluetoothActor in host.connections.cancelConnect() } }
            let identity = DiscoveryCache.identity(peripheralIdentifier.address, peripheralIdentifier.addressType)
            let result = await Task { @BluetoothActor () -> Result<UInt16, BluejayError> in
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
            self.isConnecting = false
            switch result {
            case let .success(handle):
                guard !operation.isFinished else {
                    // Cancelled while the link came up: do not keep a link nobody asked for.
                    Task { @BluetoothActor in _ = try? await host.connections.disconnect(handle) }
                    return
                }
                self.connection = Connection(peripheral: peripheralIdentifier, handle: handle)
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
            self?.isConnecting = false
            if case .cancelled = error { completion(.cancelled) } else { completion(.failure(error)) }
        }))
    }

    /// Disconnects. `immediate` cancels everything queued first (and disconnects);
    /// otherwise the disconnection waits its turn in the queue.
    public func disconnect(immediate: Bool = false, completion: ((DisconnectionResult) -> Void)? = nil) {
        let completion = completion.map { callbacks.deliver($0) }
        shouldAutoReconnect = false
        if immediate { queue.cancelAll(.cancelled) }
        queue.add(QueuedOperation(.disconnect, body: { [weak self] operation in
            guard let self, let host = await self.readyHost(operation) else { return }
            guard let link = self.connection else { return operation.fail(.notConnected) }
            self.isDisconnecting = true
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
            self.isDisconnecting = false
            if let outcome { return operation.fail(outcome) }
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
    private func linkEnded(_ handle: UInt16, reason: HCIStatus, on endedHost: BluetoothHost, error failure: BluejayError? = nil) {
        guard let link = connection, link.handle == handle, endedHost === host || failure != nil else { return }
        let expected = isDisconnecting || !shouldAutoReconnect
        connection = nil
        var counted = statistics[link.peripheral, default: PeripheralStatistics()]
        counted.disconnectionCount += 1
        counted.disconnectedAt = .now
        if let since = counted.connectedAt { counted.cumulativeConnected += ContinuousClock.now - since }
        statistics[link.peripheral] = counted
        isDisconnecting = false
        let error = failure ?? BluejayError.disconnected(reason)
        offeredUnsolicited = []
        // Listens stop flowing; their callbacks are kept to resume after a reconnection.
        for listener in listeners.values {
            listener.finish?()
            listener.finish = nil
            listener.valueHandle = nil
            listener.token = nil
        }
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
        guard reconnect, let (peripheral, timeout) = lastConnect else {
            for listener in listeners.values { listener.close(error) }
            listeners = [:]
            return
        }
        log("reconnecting to \(peripheral) after \(reason)")
        connect(peripheral, timeout: timeout) { [weak self] result in
            guard let self else { return }
            guard case .success = result else {
                for listener in self.listeners.values { listener.close(error) }
                self.listeners = [:]
                return
            }
            for (characteristic, listener) in self.listeners { self.subscribe(characteristic, listener, removing: nil) }
        }
    }

    /// A notification or indication nobody listens to: a bonded peer's subscription that
    /// outlived the last link (or the last process). The restorer is offered it once per link;
    /// when nobody takes it, the subscription is turned off rather than left running.
    private func unsolicitedValue(_ handle: UInt16, _ valueHandle: UInt16, _ characteristic: CharacteristicIdentifier?, _ value: [UInt8]) {
        guard let link = connection, link.handle == handle else { return }
        guard let characteristic else {
            return log("a value for handle \(hex(valueHandle, digits: 4)), where nothing is discovered, was dropped")
        }
        // A listen whose subscription is still being written: the value is its first.
        if let listener = listeners[characteristic], !listener.isEnded { return listener.deliverDirectly(value) }
        guard offeredUnsolicited.insert(characteristic).inserted else {
            return log("a value of \(characteristic) nobody listens to was dropped (its subscription is being turned off)")
        }
        if restorer?.willRestoreListen(on: characteristic) == true, let listener = listeners[characteristic] { return listener.deliverDirectly(value) }
        log("\(characteristic) notifies but nobody listens: turning its subscription off")
        endListen(to: characteristic)
    }

    /// Decides, after each disconnection, whether Bluejay reconnects. Held weakly.
    public func registerDisconnectHandler(handler: any DisconnectHandler) { disconnectHandler = handler }

    /// Drops the disconnect handler.
    public func unregisterDisconnectHandler() { disconnectHandler = nil }

    // MARK: Reading, writing, listening

    /// Reads a characteristic (discovering it on first use) and decodes it as `R`.
    public func read<R: Receivable>(from characteristicIdentifier: CharacteristicIdentifier, completion: @escaping (ReadResult<R>) -> Void) {
        let completion = callbacks.deliver(completion)
        queue.add(QueuedOperation(.read, body: { [weak self] operation in
            guard let self, let (host, link) = await self.connected(operation) else { return }
            let result = await Task { @BluetoothActor () -> Result<[UInt8], BluejayError> in
                await Self.onClient(host, link.handle) { client throws(GATTError) in try await client.readValue(characteristicIdentifier) }.mapError { BluejayError.from($0, characteristicIdentifier) }
            }.value
            switch result {
            case let .success(bytes):
                do {
                    let value = try R(bluetoothData: Data(bytes))
                    if operation.claim() { completion(.success(value)) }
                } catch {
                    if operation.claim() { completion(.failure(error)) }
                }
            case let .failure(error): operation.fail(error)
            }
        }, onFailure: { error in
            if case .cancelled = error { completion(.cancelled) } else { completion(.failure(error)) }
        }))
    }

    /// Writes `value` to a characteristic, with or without a response.
    public func write<S: BluejaySendable>(to characteristicIdentifier: CharacteristicIdentifier, value: S, type: WriteType = .withResponse,
                                          completion: @escaping (WriteResult) -> Void) {
        let completion = callbacks.deliver(completion)
        let bytes = [UInt8](value.toBluetoothData())
        queue.add(QueuedOperation(.write, body: { [weak self] operation in
            guard let self, let (host, link) = await self.connected(operation) else { return }
            let result = await Task { @BluetoothActor () -> Result<Void, BluejayError> in
                await Self.onClient(host, link.handle) { client throws(GATTError) in try await client.write(bytes, to: characteristicIdentifier, type: type) }.mapError { BluejayError.from($0, characteristicIdentifier) }
            }.value
            switch result {
            case .success: if operation.claim() { completion(.success) }
            case let .failure(error): operation.fail(error)
            }
        }, onFailure: { error in
            if case .cancelled = error { completion(.cancelled) } else { completion(.failure(error)) }
        }))
    }

    /// Subscribes to a characteristic (notifications when it offers them, else
    /// indications); `completion` gets every value until ``endListen(to:completion:)`` or
    /// the link ends. A second listen fails with ``BluejayError/multipleListenTrapped``
    /// unless the first was `.replaceable`.
    public func listen<R: Receivable>(to characteristicIdentifier: CharacteristicIdentifier, multipleListenOption option: MultipleListenOption = .trap,
                                      completion: @escaping (ReadResult<R>) -> Void) {
        listen(to: characteristicIdentifier, multipleListenOption: option, tag: nil, completion: completion)
    }

    /// A listen; `tag` marks who asked, for ``endListen(to:ifTaggedWith:)``.
    func listen<R: Receivable>(to characteristicIdentifier: CharacteristicIdentifier, multipleListenOption option: MultipleListenOption,
                               tag: AnyObject?, completion: @escaping (ReadResult<R>) -> Void) {
        let backlog = ListenBacklog(limit: listenBufferLimit)
        // A value leaves the backlog once the app's callback has run, wherever it runs.
        let onValue = callbacks.deliver { (result: ReadResult<R>) in
            completion(result)
            backlog.taken()
        }
        let completion = callbacks.deliver(completion)
        if let existing = listeners[characteristicIdentifier], existing.option == .trap {
            return completion(.failure(BluejayError.multipleListenTrapped))
        }
        let listener = Listener(option: option, tag: tag, backlog: backlog, deliver: { bytes in
            do { onValue(.success(try R(bluetoothData: Data(bytes)))) } catch { onValue(.failure(error)) }
        }, end: { reason in
            if case .cancelled = reason { completion(.cancelled) } else { completion(.failure(reason)) }
        })
        let replaced = listeners[characteristicIdentifier]
        replaced?.close(.cancelled)
        listeners[characteristicIdentifier] = listener
        subscribe(characteristicIdentifier, listener, removing: replaced?.token)
    }

    /// A background task turned a listen off: its callback hears `.cancelled` and goes.
    private func listenEndedByTask(_ characteristicIdentifier: CharacteristicIdentifier) {
        guard let listener = listeners.removeValue(forKey: characteristicIdentifier) else { return }
        if let token = listener.token, let host, let connection {
            Task { @BluetoothActor in host.existingClient(for: connection.handle)?.removeValueListener(token) }
        }
        listener.close(.cancelled)
        recordRestorationState()
    }

    /// Ends the listen on `characteristicIdentifier` only if `tag` started it.
    func endListen(to characteristicIdentifier: CharacteristicIdentifier, ifTaggedWith tag: AnyObject) {
        guard let listener = listeners[characteristicIdentifier], listener.tag === tag else { return }
        endListen(to: characteristicIdentifier)
    }

    /// Queues the subscription of `listener` (a new listen, or one resumed after a
    /// reconnection): the CCCD is written and values flow to the listener in order.
    private func subscribe(_ characteristicIdentifier: CharacteristicIdentifier, _ listener: Listener, removing replacedToken: Int?) {
        queue.add(QueuedOperation(.listen, body: { [weak self] operation in
            guard let self, let (host, link) = await self.connected(operation) else { return }
            let (values, feed) = AsyncStream.makeStream(of: ListenBacklog.Item.self)
            let backlog = listener.backlog
            let result = await Task { @BluetoothActor () -> Result<(UInt16, Int), BluejayError> in
                await Self.onClient(host, link.handle) { client throws(GATTError) in
                    if let replacedToken { client.removeValueListener(replacedToken) }
                    return try await client.subscribe(characteristicIdentifier) { bytes in
                        switch backlog.arrived() {
                        case .accepted: feed.yield(.value(bytes))
                        case .overflowed:
                            feed.yield(.overflow)
                            feed.finish()
                        case .dropped: break  // after the overflow, until the subscription is off
                        }
                    }
                }.mapError { BluejayError.from($0, characteristicIdentifier) }
            }.value
            switch result {
            case let .success((valueHandle, token)):
                guard operation.claim(), self.listeners[characteristicIdentifier] === listener else {
                    // Cancelled or replaced while subscribing: leave nothing listening.
                    feed.finish()
                    Task { @BluetoothActor in host.existingClient(for: link.handle)?.removeValueListener(token) }
                    return
                }
                listener.valueHandle = valueHandle
                listener.token = token
                listener.finish = { feed.finish() }
                self.recordRestorationState()
                // Values reach the callback in arrival order, on the main actor, while this
                // listen is the characteristic's current one.
                Task { @MainActor [weak self] in
                    for await item in values where self?.listeners[characteristicIdentifier] === listener && !listener.isEnded {
                        switch item {
                        case let .value(bytes): listener.deliver(bytes)
                        case .overflow: self?.listenOverflowed(characteristicIdentifier, listener)
                        }
                    }
                }
            case let .failure(error):
                feed.finish()
                operation.fail(error)
            }
        }, onFailure: { [weak self] error in
            if self?.listeners[characteristicIdentifier] === listener { self?.listeners[characteristicIdentifier] = nil }
            listener.close(error)
        }))
    }

    /// The app fell more than the backlog's limit behind a listen: what came before the
    /// overflow has been delivered; the listen ends with ``BluejayError/listenOverflow(_:limit:)``
    /// and its subscription is turned off, so the peer stops sending. The link stays up.
    private func listenOverflowed(_ characteristicIdentifier: CharacteristicIdentifier, _ listener: Listener) {
        guard listeners[characteristicIdentifier] === listener else { return }
        listeners[characteristicIdentifier] = nil
        let limit = listener.backlog.limit
        log("\(characteristicIdentifier): the app fell more than \(limit) values behind; the listen ends and its notifications are turned off")
        listener.close(.listenOverflow(characteristicIdentifier, limit: limit))
        let token = listener.token
        queue.add(QueuedOperation(.endListen, body: { [weak self] operation in
            guard let self, let (host, link) = await self.connected(operation) else { return }
            // Listened to again meanwhile: only the old listener goes.
            let relistened = self.listeners[characteristicIdentifier] != nil
            _ = await Task { @BluetoothActor () -> Result<Void, GATTError> in
                await Self.onClient(host, link.handle) { client throws(GATTError) in
                    if relistened { token.map(client.removeValueListener) } else { try await client.unsubscribe(characteristicIdentifier, token: token) }
                }
            }.value
            self.recordRestorationState()
            _ = operation.claim()
        }, onFailure: { _ in }))
    }

    /// Ends a listen: the CCCD is written back to 0 and the callback dropped.
    public func endListen(to characteristicIdentifier: CharacteristicIdentifier, completion: ((WriteResult) -> Void)? = nil) {
        let completion = completion.map { callbacks.deliver($0) }
        queue.add(QueuedOperation(.endListen, body: { [weak self] operation in
            guard let self, let (host, link) = await self.connected(operation) else { return }
            let ended = self.listeners.removeValue(forKey: characteristicIdentifier)
            let token = ended?.token
            ended?.close(.cancelled)
            let result = await Task { @BluetoothActor () -> Result<Void, BluejayError> in
                await Self.onClient(host, link.handle) { client throws(GATTError) in try await client.unsubscribe(characteristicIdentifier, token: token) }.mapError { BluejayError.from($0, characteristicIdentifier) }
            }.value
            self.recordRestorationState()
            switch result {
            case .success: if operation.claim() { completion?(.success) }
            case let .failure(error): operation.fail(error)
            }
        }, onFailure: { error in
            if case .cancelled = error { completion?(.cancelled) } else { completion?(.failure(error)) }
        }))
    }

    /// Whether a listen is active on the characteristic; throws when not connected.
    public func isListening(to characteristicIdentifier: CharacteristicIdentifier) throws -> Bool {
        guard isConnected else { throw BluejayError.notConnected }
        return listeners[characteristicIdentifier] != nil
    }

    // MARK: Background tasks

    /// Runs `backgroundTask` on a background thread with a ``SynchronizedPeripheral`` whose
    /// calls block until done; `completionOnMainThread` gets the outcome. The task holds the
    /// queue: nothing else runs until it returns.
    public func run(backgroundTask: @escaping (SynchronizedPeripheral) throws -> Void, completionOnMainThread: @escaping (RunResult<Void>) -> Void) {
        run(userData: (), backgroundTask: { _, peripheral in try backgroundTask(peripheral) }, completionOnMainThread: completionOnMainThread)
    }

    /// Runs `backgroundTask` and hands its result to `completionOnMainThread`.
    public func run<Result>(backgroundTask: @escaping (SynchronizedPeripheral) throws -> Result, completionOnMainThread: @escaping (RunResult<Result>) -> Void) {
        run(userData: (), backgroundTask: { _, peripheral in try backgroundTask(peripheral) }, completionOnMainThread: completionOnMainThread)
    }

    /// Runs `backgroundTask` with `userData` and hands its result to `completionOnMainThread`.
    public func run<UserData, Result>(userData: UserData, backgroundTask: @escaping (UserData, SynchronizedPeripheral) throws -> Result,
                                      completionOnMainThread: @escaping (RunResult<Result>) -> Void) {
        let completionOnMainThread = callbacks.deliver(completionOnMainThread)
        queue.add(QueuedOperation(.backgroundTask, body: { [weak self] operation in
            guard let self, let (host, link) = await self.connected(operation) else { return }
            let peripheral = SynchronizedPeripheral(host: host, handle: link.handle, identifier: link.peripheral) { [weak self] characteristic in
                Task { @MainActor in self?.listenEndedByTask(characteristic) }
            }
            operation.onCancel = { peripheral.cancel($0) }
            // The task is the caller's code for a background thread, by Bluejay's contract.
            let work = UncheckedBox((backgroundTask, userData, peripheral))
            let outcome: UncheckedBox<Swift.Result<Result, any Error>> = await withCheckedContinuation { continuation in
                DispatchQueue(label: "bluejay.background-task").async {
                    let (task, data, peripheral) = work.value
                    continuation.resume(returning: UncheckedBox(Swift.Result { try task(data, peripheral) }))
                }
            }
            switch outcome.value {
            case let .success(value): if operation.claim() { completionOnMainThread(.success(value)) }
            case let .failure(error as BluejayError): operation.fail(error)
            case let .failure(error): if operation.claim() { completionOnMainThread(.failure(error)) }
            }
        }, onFailure: { error in
            if case .cancelled = error { completionOnMainThread(.cancelled) } else { completionOnMainThread(.failure(error)) }
        }))
    }

    // MARK: Plumbing

    /// The operation queued last (the async API's handle on it).
    var queueLastAdded: QueuedOperation? { queue.lastAdded }

    /// Cancels one operation (a cancelled async call's).
    func cancel(_ operation: QueuedOperation) { queue.cancel(operation, .cancelled) }

    /// The host once up (waiting while it starts or comes back); fails `operation` when
    /// there is none.
    private func readyHost(_ operation: QueuedOperation) async -> BluetoothHost? {
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
    private func connected(_ operation: QueuedOperation) async -> (BluetoothHost, Connection)? {
        guard let host = await readyHost(operation) else { return nil }
        guard let connection, !operation.isFinished else {
            operation.fail(.notConnected)
            return nil
        }
        return (host, connection)
    }

    /// Runs `body` with the GATT client of link `handle`.
    @BluetoothActor
    static func onClient<T>(_ host: BluetoothHost, _ handle: UInt16,
                            _ body: (GATTClient) async throws(GATTError) -> T) async -> Swift.Result<T, GATTError> {
        guard let client = host.existingClient(for: handle) else { return .failure(.att(.notConnected(handle))) }
        do { return .success(try await body(client)) } catch { return .failure(error) }
    }
}

/// Carries a value across a thread boundary the compiler cannot check: the user's
/// background task and its result, which Bluejay's contract puts on a background thread.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
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
