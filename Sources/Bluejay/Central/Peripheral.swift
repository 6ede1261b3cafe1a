import BluetoothCore
import Dispatch
import FoundationEssentials
import GATT
import HCI

/// Where a ``Peripheral``'s link stands.
public enum PeripheralState: Sendable, Equatable {
    /// No link, and none being made.
    case disconnected
    /// A connection attempt is under way (``Peripheral/connect(timeoutRetries:disconnectRetries:connectionTimeout:reconnectDelay:)``).
    case connecting
    /// The link is up and its GATT client ready.
    case connected
    /// The link dropped and the policy is reconnecting: attempt `attempt` of the
    /// disconnect retries.
    case reconnecting(attempt: Int)
    /// ``Peripheral/disconnect()`` is ending the link.
    case disconnecting
}

/// What happened to a ``Peripheral``'s link, as its event stream reports it (BlueCap's
/// connection future stream, as events).
public enum PeripheralEvent: Sendable, Equatable {
    /// The link is up (after a first connect or a reconnection); listens are restored.
    case connected
    /// Connection attempt `attempt` found no peer in the connection timeout.
    case connectionTimedOut(attempt: Int)
    /// The link ended, with the controller's reason.
    case disconnected(HCIStatus)
    /// The policy tries again: reconnection `attempt`, after `delay`.
    case reconnecting(attempt: Int, delay: Duration)
    /// The policy's retries are spent (or a retry failed for good): the peripheral stays
    /// disconnected, and its value streams end with the reason.
    case gaveUp(reason: String)
}

/// One peripheral of a ``Central``: its link under a connection policy like BlueCap's
/// (timeout retries, disconnect retries with backoff, listens restored after a reconnect),
/// and its operations, one at a time in the order they were asked (Bluejay's queue rule),
/// concurrently with other peripherals'.
@BluetoothActor
public final class Peripheral {
    /// Who it is.
    public let identifier: PeripheralIdentifier
    /// Where its link stands.
    public private(set) var state: PeripheralState = .disconnected
    private unowned let central: Central
    private let queue = SerialGate()
    private(set) var handle: ConnectionHandle?
    private var policy = Policy()
    private var events: [Int: AsyncStream<PeripheralEvent>.Continuation] = [:]
    private var listens: [CharacteristicIdentifier: Listen] = [:]
    private var nextToken = 0
    private var reconnection: Task<Void, Never>?
    private var rssiPolling: Task<Void, Never>?
    /// A link is being set up (connected, GATT client not ready yet): its loss is the
    /// attempt's to report, not a drop to repair.
    private var settingUp = false
    /// ``disconnect()`` was asked while an attempt was under way.
    private var disconnectRequested = false
    /// This peripheral's LE Create Connection is the controller's current one.
    private var initiating = false

    private struct Policy {
        var timeoutRetries = 0
        var disconnectRetries = 0
        var connectionTimeout: Duration = .seconds(10)
        var reconnectDelay: Duration = .seconds(1)
    }

    /// The subscribers of one characteristic's values, and the stack's listener for them.
    private struct Listen {
        var subscribers: [Int: AsyncThrowingStream<[UInt8], any Error>.Continuation] = [:]
        var listener: Int?
    }

    /// The longest wait between two reconnection attempts (the backoff doubles up to it).
    public nonisolated static let maximumReconnectDelay: Duration = .seconds(30)

    init(identifier: PeripheralIdentifier, central: Central) {
        self.identifier = identifier
        self.central = central
    }

    var host: BluetoothHost { central.host }

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

    private func emit(_ event: PeripheralEvent) {
        for continuation in events.values { continuation.yield(event) }
    }

    private func takeToken() -> Int {
        nextToken += 1
        return nextToken
    }

    // MARK: - Connection

    /// Connects under this policy: `timeoutRetries` more attempts when one finds no peer in
    /// `connectionTimeout`; after an unexpected disconnection, up to `disconnectRetries`
    /// reconnections, the first after `reconnectDelay` and each later one after twice the
    /// wait (at most ``maximumReconnectDelay``). Each step is an event
    /// (``connectionEvents()``). Throws when every attempt timed out, or one failed for good.
    public func connect(timeoutRetries: Int = 0, disconnectRetries: Int = 0, connectionTimeout: Duration = .seconds(10),
                        reconnectDelay: Duration = .seconds(1)) async throws(BluejayError) {
        switch state {
        case .connected: throw .alreadyConnected
        case .connecting, .reconnecting, .disconnecting: throw .alreadyConnecting
        case .disconnected: break
        }
        policy = Policy(timeoutRetries: max(0, timeoutRetries), disconnectRetries: max(0, disconnectRetries),
                        connectionTimeout: connectionTimeout, reconnectDelay: reconnectDelay)
        disconnectRequested = false
        do { try await establish() } catch {
            emit(.gaveUp(reason: error.description))
            throw error
        }
    }

    /// Connects again after `delay` under the policy of the last ``connect(timeoutRetries:disconnectRetries:connectionTimeout:reconnectDelay:)``
    /// (BlueCap's `reconnect(withDelay:)`).
    public func reconnect(withDelay delay: Duration = .zero) async throws(BluejayError) {
        guard state == .disconnected else { throw state == .connected ? .alreadyConnected : .alreadyConnecting }
        state = .connecting
        disconnectRequested = false
        do { try await Task.sleep(for: delay) } catch {
            state = .disconnected
            throw .cancelled
        }
        do { try await establish() } catch {
            emit(.gaveUp(reason: error.description))
            throw error
        }
    }

    /// Ends the link (and any reconnection under way); value streams end. Nothing happens
    /// when it is not connected.
    public func disconnect() async {
        reconnection?.cancel()
        reconnection = nil
        stopPollingRSSI()
        guard let handle, !settingUp else {
            // No link yet: an attempt under way is cancelled (a link it still makes, it ends
            // itself), and the listens end as asked.
            disconnectRequested = true
            if initiating { host.connections.cancelConnect() }
            if state != .connecting && !settingUp { state = .disconnected }
            endListens(nil)
            return
        }
        state = .disconnecting
        _ = try? await host.connections.disconnect(handle, reason: .remoteUserTerminatedConnection)
    }

    /// Attempts up to 1 + timeoutRetries connections; on success the GATT client is ready
    /// and every listen subscribed again.
    private func establish() async throws(BluejayError) {
        let attempts = policy.timeoutRetries + 1
        for attempt in 1...attempts {
            if case .reconnecting = state {} else { state = .connecting }
            let link: LEConnection
            do {
                let host = host, identifier = identifier, timeout = policy.connectionTimeout
                link = try await central.initiator.run {
                    guard !self.disconnectRequested else { throw ConnectionError.cancelled }
                    self.initiating = true
                    defer { self.initiating = false }
                    return try await host.connections.connect(to: identifier.address, type: identifier.addressType, timeout: timeout)
                }
            } catch let error as ConnectionError {
                if case .connectionTimeout = error {
                    emit(.connectionTimedOut(attempt: attempt))
                    if attempt < attempts { continue }
                    state = .disconnected
                    throw .connectionTimedOut
                }
                state = .disconnected
                throw .connection(error)
            } catch {
                state = .disconnected
                throw .cancelled
            }
            handle = link.handle
            central.linkUp(link.handle, for: self)
            settingUp = true
            defer { settingUp = false }
            do throws(BluejayError) {
                guard !disconnectRequested else { throw BluejayError.cancelled }
                _ = try await host.client(for: link.handle, identity: identifier.description)
                try await restoreListens(on: link.handle)
                guard !disconnectRequested else { throw BluejayError.cancelled }
            } catch {
                // The link is up but unusable (or no longer wanted): end it, and say why.
                _ = try? await host.connections.disconnect(link.handle)
                handle = nil
                state = .disconnected
                throw error
            }
            state = .connected
            emit(.connected)
            return
        }
        state = .disconnected
        throw .connectionTimedOut
    }

    /// The link ended (the central hears it): as asked, or a drop the policy may repair.
    func linkEnded(reason: HCIStatus) {
        handle = nil
        // A link lost while it was being set up: the attempt under way reports it.
        if settingUp || state == .connecting { return }
        for key in listens.keys { listens[key]?.listener = nil }
        emit(.disconnected(reason))
        let asked = state == .disconnecting
        if asked || policy.disconnectRetries == 0 {
            state = .disconnected
            endListens(asked ? nil : BluejayError.disconnected(reason))
            return
        }
        state = .reconnecting(attempt: 1)
        reconnection = Task { [weak self] in await self?.reconnectAfterDrop() }
    }

    private func reconnectAfterDrop() async {
        var delay = policy.reconnectDelay
        for attempt in 1...policy.disconnectRetries {
            state = .reconnecting(attempt: attempt)
            emit(.reconnecting(attempt: attempt, delay: delay))
            do { try await Task.sleep(for: delay) } catch { return }
            guard case .reconnecting = state else { return }
            do {
                try await establish()
                return
            } catch {
                // disconnect() stopped it: nothing more to try or report.
                if disconnectRequested || Task.isCancelled {
                    state = .disconnected
                    return
                }
                state = .reconnecting(attempt: attempt)
            }
            delay = min(delay * 2, Self.maximumReconnectDelay)
        }
        state = .disconnected
        emit(.gaveUp(reason: "\(policy.disconnectRetries) reconnection(s) failed"))
        endListens(BluejayError.connectionTimedOut)
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

    // MARK: - Operations, one at a time

    /// Runs `body` on the link's GATT client once every earlier operation is done.
    private func operation<T>(_ characteristic: CharacteristicIdentifier? = nil,
                              _ body: @BluetoothActor (GATTClient) async throws(GATTError) -> T) async throws(BluejayError) -> T {
        do {
            return try await queue.run { () async throws -> T in
                guard let handle, state == .connected, let client = host.existingClient(for: handle) else { throw BluejayError.notConnected }
                do { return try await body(client) } catch let error as GATTError { throw BluejayError.from(error, characteristic) }
            }
        } catch let error as BluejayError {
            throw error
        } catch {
            throw .cancelled
        }
    }

    /// Discovers every service and characteristic; returns the characteristics.
    public func discoverServices() async throws(BluejayError) -> [CharacteristicIdentifier] {
        try await operation { client throws(GATTError) in
            let database = try await client.discoverAll()
            return database.services.flatMap { service in
                (database.characteristics[service.handle] ?? []).map {
                    CharacteristicIdentifier(uuid: $0.uuid, service: ServiceIdentifier(uuid: service.uuid))
                }
            }
        }
    }

    /// The handle of `characteristic`'s value on this link (discovered on first use).
    public func valueHandle(of characteristic: CharacteristicIdentifier) async throws(BluejayError) -> AttributeHandle {
        try await operation(characteristic) { client throws(GATTError) in try await client.characteristic(characteristic).valueHandle }
    }

    /// Reads the whole value of `characteristic`.
    public func read(from characteristic: CharacteristicIdentifier) async throws(BluejayError) -> [UInt8] {
        try await operation(characteristic) { client throws(GATTError) in try await client.readValue(characteristic) }
    }

    /// Reads `characteristic` as `R`.
    public func read<R: Receivable>(from characteristic: CharacteristicIdentifier, as _: R.Type = R.self) async throws -> R {
        try R(bluetoothBytes: try await read(from: characteristic)[...])
    }

    /// Writes `bytes` to `characteristic`: a Write Request (Prepare/Execute when longer than
    /// one carries), or a Write Command.
    public func write(to characteristic: CharacteristicIdentifier, bytes: [UInt8], type: WriteType = .withResponse) async throws(BluejayError) {
        try await operation(characteristic) { client throws(GATTError) in try await client.write(bytes, to: characteristic, type: type) }
    }

    /// Writes `value` to `characteristic`.
    public func write<S: BluejaySendable>(to characteristic: CharacteristicIdentifier, value: S, type: WriteType = .withResponse) async throws(BluejayError) {
        try await write(to: characteristic, bytes: Array(value.toBluetoothData()), type: type)
    }

    /// Reads the link's RSSI in dBm.
    public func readRSSI() async throws(BluejayError) -> Int {
        do {
            return try await queue.run { () async throws -> Int in
                guard let handle else { throw BluejayError.notConnected }
                do { return Int(try await host.connections.readRSSI(handle)) } catch let error as ConnectionError { throw BluejayError.connection(error) }
            }
        } catch let error as BluejayError { throw error } catch { throw .cancelled }
    }

    /// Reads the RSSI every `period` while connected and yields it; ends with
    /// ``stopPollingRSSI()`` (or a new poll).
    public func startPollingRSSI(every period: Duration = .seconds(10)) -> AsyncStream<Int> {
        stopPollingRSSI()
        let (stream, continuation) = AsyncStream<Int>.makeStream()
        rssiPolling = Task { [weak self] in
            while !Task.isCancelled {
                guard let self else { break }
                if self.state == .connected, let rssi = try? await self.readRSSI() { continuation.yield(rssi) }
                do { try await Task.sleep(for: period) } catch { break }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in Task { @BluetoothActor [weak self] in self?.stopPollingRSSI() } }
        return stream
    }

    /// Stops the RSSI poll.
    public func stopPollingRSSI() {
        rssiPolling?.cancel()
        rssiPolling = nil
    }

    /// Runs `backgroundTask` on a thread of its own with a ``SynchronizedPeripheral`` (whose
    /// calls block that thread until done), in this peripheral's queue like any operation,
    /// and returns its result.
    public func run<Result: Sendable>(backgroundTask: @escaping @Sendable (SynchronizedPeripheral) throws -> Result) async throws -> Result {
        try await queue.run {
            guard let handle, state == .connected else { throw BluejayError.notConnected }
            let synchronized = SynchronizedPeripheral(host: host, handle: handle, identifier: identifier) { _ in }
            let outcome: Swift.Result<Result, any Error> = await withCheckedContinuation { continuation in
                DispatchQueue(label: "bluejay.central.background-task").async {
                    continuation.resume(returning: Swift.Result { try backgroundTask(synchronized) })
                }
            }
            return try outcome.get()
        }
    }

    // MARK: - Listening

    /// The values of `characteristic`, notified or indicated, once it is subscribed (this
    /// returns when it is; the first consumer subscribes, the last one to stop
    /// unsubscribes). Asked before the link is up, it subscribes when it comes up. The
    /// subscription is restored after a reconnection (the stream goes on); the stream ends
    /// with ``endListen(to:)`` or ``disconnect()``, and throws when the link is lost for good.
    public func values(of characteristic: CharacteristicIdentifier) async throws(BluejayError) -> AsyncThrowingStream<[UInt8], any Error> {
        let (stream, continuation) = AsyncThrowingStream<[UInt8], any Error>.makeStream()
        let token = takeToken()
        let first = listens[characteristic] == nil
        listens[characteristic, default: Listen()].subscribers[token] = continuation
        continuation.onTermination = { _ in Task { @BluetoothActor [weak self] in await self?.unsubscribe(characteristic, token: token) } }
        if first, let handle {
            do { try await subscribe(characteristic, on: handle) } catch {
                endListen(characteristic, error)
                throw error
            }
        }
        return stream
    }

    /// Turns the characteristic's notifications off and ends its value streams (normally).
    public func endListen(to characteristic: CharacteristicIdentifier) async throws(BluejayError) {
        guard let listen = listens.removeValue(forKey: characteristic) else { return }
        for continuation in listen.subscribers.values { continuation.finish() }
        guard state == .connected else { return }
        try await operation(characteristic) { client throws(GATTError) in try await client.unsubscribe(characteristic, token: listen.listener) }
    }

    /// Turns the characteristic's notifications on and routes them to its subscribers.
    private func subscribe(_ characteristic: CharacteristicIdentifier, on handle: ConnectionHandle) async throws(BluejayError) {
        let listener = try await operation(characteristic) { client throws(GATTError) in
            try await client.subscribe(characteristic) { [weak self] value in self?.deliver(Array(value), of: characteristic) }.token
        }
        if listens[characteristic] != nil, self.handle == handle { listens[characteristic]?.listener = listener }
    }

    private func deliver(_ value: [UInt8], of characteristic: CharacteristicIdentifier) {
        for continuation in listens[characteristic]?.subscribers.values ?? [:].values { continuation.yield(value) }
    }

    private func unsubscribe(_ characteristic: CharacteristicIdentifier, token: Int) async {
        listens[characteristic]?.subscribers[token] = nil
        guard let listen = listens[characteristic], listen.subscribers.isEmpty else { return }
        listens[characteristic] = nil
        guard state == .connected else { return }
        _ = try? await operation(characteristic) { client throws(GATTError) in
            try await client.unsubscribe(characteristic, token: listen.listener)
        }
    }

    /// Subscribes every listen again on a new link (before the link counts as connected, so
    /// no operation comes between). A characteristic gone from the database ends its listen.
    private func restoreListens(on handle: ConnectionHandle) async throws(BluejayError) {
        guard let client = host.existingClient(for: handle) else { throw .notConnected }
        for characteristic in listens.keys {
            do {
                let listener = try await client.subscribe(characteristic) { [weak self] value in self?.deliver(Array(value), of: characteristic) }.token
                listens[characteristic]?.listener = listener
            } catch {
                guard case .att(.disconnected) = error else { endListen(characteristic, BluejayError.from(error, characteristic)); continue }
                throw BluejayError.from(error, characteristic)
            }
        }
    }

    private func endListen(_ characteristic: CharacteristicIdentifier, _ error: (any Error)?) {
        for continuation in listens.removeValue(forKey: characteristic)?.subscribers.values ?? [:].values {
            continuation.finish(throwing: error)
        }
    }

    private func endListens(_ error: (any Error)?) {
        for characteristic in Array(listens.keys) { endListen(characteristic, error) }
    }
}
