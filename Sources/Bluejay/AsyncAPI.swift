import BluetoothCore
import FoundationEssentials
import HCI

/// The async/await mirror of the callback API (BlueCap's futures, in today's Swift). Each
/// call queues the same operation as its callback twin; cancelling the calling task
/// cancels that operation (dropped if still queued, stopped if running).
extension Bluejay {
    /// Connects; returns the peripheral.
    public func connect(_ peripheralIdentifier: PeripheralIdentifier, timeout: Timeout = .none) async throws
        -> PeripheralIdentifier
    {
        try await awaiting { done in
            connect(peripheralIdentifier, timeout: timeout) { result in
                switch result {
                case let .success(peripheral): done(.success(peripheral))
                case .cancelled: done(.failure(BluejayError.cancelled))
                case let .failure(error): done(.failure(error))
                }
            }
        }
    }

    /// Disconnects; returns the peripheral that was connected.
    @discardableResult
    public func disconnect() async throws -> PeripheralIdentifier {
        try await awaiting { done in
            disconnect(immediate: false) { result in
                switch result {
                case let .success(peripheral): done(.success(peripheral))
                case .cancelled: done(.failure(BluejayError.cancelled))
                case let .failure(error): done(.failure(error))
                }
            }
        }
    }

    /// Reads and decodes a characteristic.
    public func read<R: Receivable & Sendable>(from characteristicIdentifier: CharacteristicIdentifier) async throws
        -> R
    {
        try await awaiting { done in
            read(from: characteristicIdentifier) { (result: ReadResult<R>) in
                switch result {
                case let .success(value): done(.success(value))
                case .cancelled: done(.failure(BluejayError.cancelled))
                case let .failure(error): done(.failure(error))
                }
            }
        }
    }

    /// Writes a value.
    public func write<S: BluejaySendable>(
        to characteristicIdentifier: CharacteristicIdentifier, value: S, type: WriteType = .withResponse
    ) async throws {
        try await awaiting { (done: @escaping (Result<Void, any Error>) -> Void) in
            write(to: characteristicIdentifier, value: value, type: type) { result in
                switch result {
                case .success: done(.success(()))
                case .cancelled: done(.failure(BluejayError.cancelled))
                case let .failure(error): done(.failure(error))
                }
            }
        }
    }

    /// Turns a listen off (the CCCD back to 0).
    public func endListen(to characteristicIdentifier: CharacteristicIdentifier) async throws {
        try await awaiting { (done: @escaping (Result<Void, any Error>) -> Void) in
            endListen(to: characteristicIdentifier) { result in
                switch result {
                case .success: done(.success(()))
                case .cancelled: done(.failure(BluejayError.cancelled))
                case let .failure(error): done(.failure(error))
                }
            }
        }
    }

    /// Runs `backgroundTask` with a ``SynchronizedPeripheral`` on a thread of its own, as
    /// the callback `run(backgroundTask:completionOnMainThread:)` does,
    /// and returns what it returns. The task holds the queue until it ends.
    public func run<Result: Sendable>(backgroundTask: @escaping @Sendable (SynchronizedPeripheral) throws -> Result)
        async throws -> Result
    {
        try await awaiting { done in
            run(backgroundTask: backgroundTask) { (result: RunResult<Result>) in
                switch result {
                case let .success(value): done(.success(value))
                case .cancelled: done(.failure(BluejayError.cancelled))
                case let .failure(error): done(.failure(error))
                }
            }
        }
    }

    /// Discovers these services (every primary service when nil) and their
    /// characteristics, in the queue's turn; returns the characteristics, in handle order.
    public func discover(_ serviceIdentifiers: [ServiceIdentifier]? = nil) async throws -> [CharacteristicIdentifier] {
        try await run { peripheral in try peripheral.discover(serviceIdentifiers) }
    }

    /// Reads the link's RSSI (HCI Read RSSI), in dBm. Like the callback ``readRSSI()``, it
    /// does not wait for the queue: it asks the controller at once, and throws the same way
    /// (`BluejayError.backgroundTaskRunning`, `BluejayError.notConnected`).
    public func readRSSI() async throws -> Int {
        let (host, connection) = try linkForRSSI()
        let result = await Task { @BluetoothActor () -> Result<Int8, ConnectionError> in
            do throws(ConnectionError) { return .success(try await host.connections.readRSSI(connection.handle)) } catch
            { return .failure(error) }
        }.value
        switch result {
        case let .success(rssi): return Int(rssi)
        case let .failure(error): throw BluejayError.connection(error)
        }
    }

    /// Bluetooth availability and connection events as they happen (BlueCap's
    /// `whenStateChanges`): what the ``ConnectionObserver``s hear, starting with
    /// `.bluetoothAvailable(true)` when Bluetooth is already up. The stream ends when its
    /// iteration stops.
    public var states: AsyncStream<BluejayState> {
        let (stream, feed) = AsyncStream.makeStream(of: BluejayState.self)
        let relay = StateRelay(feed)
        register(connectionObserver: relay)
        feed.onTermination = { [weak self] _ in
            Task { @MainActor in self?.unregister(connectionObserver: relay) }
        }
        return stream
    }

    /// The decoded values of a characteristic as they arrive; the listen ends when the
    /// iteration stops (or the stream is dropped) and the sequence ends with an error when
    /// the listen fails or the link goes. At most ``StartOptions/listenBufferLimit`` values
    /// wait for the iteration: one more and, after those, the sequence ends with
    /// `BluejayError.listenOverflow(_:limit:)` and the listen is turned off.
    public func values<R: Receivable & Sendable>(of characteristicIdentifier: CharacteristicIdentifier)
        -> AsyncThrowingStream<R, any Error>
    {
        let limit = core.read(\.listenBufferLimit)
        let (stream, feed) = AsyncThrowingStream.makeStream(of: R.self, bufferingPolicy: .bufferingOldest(limit))
        let tag = StopFlag()
        listen(to: characteristicIdentifier, multipleListenOption: .replaceable, tag: tag) {
            [weak self] (result: ReadResult<R>) in
            switch result {
            case let .success(value):
                guard case .dropped = feed.yield(value) else { return }
                feed.finish(throwing: BluejayError.listenOverflow(characteristicIdentifier, limit: limit))
                Task { @MainActor in self?.endListen(to: characteristicIdentifier, ifTaggedWith: tag) }
            case .cancelled: feed.finish()  // ended (endListen, or replaced by another listen)
            case let .failure(error): feed.finish(throwing: error)
            }
        }
        feed.onTermination = { [weak self] termination in
            guard case .cancelled = termination else { return }
            // Only this stream's own listen: another may have replaced it since.
            Task { @MainActor in self?.endListen(to: characteristicIdentifier, ifTaggedWith: tag) }
        }
        return stream
    }

    /// Discoveries as they come, for `duration` seconds (0: until the iteration stops);
    /// stopping the iteration stops the scan.
    public func discoveries(
        serviceIdentifiers: [ServiceIdentifier]?, duration: Double = 0, allowDuplicates: Bool = false
    ) -> AsyncThrowingStream<ScanDiscovery, any Error> {
        let (stream, feed) = AsyncThrowingStream.makeStream(of: ScanDiscovery.self)
        let stop = StopFlag()
        scan(
            duration: duration, allowDuplicates: allowDuplicates, serviceIdentifiers: serviceIdentifiers,
            discovery: { discovery, _ in
                guard !stop.isSet else { return .stop }
                feed.yield(discovery)
                return .continue
            },
            stopped: { _, error in
                if let error { feed.finish(throwing: error) } else { feed.finish() }
            })
        feed.onTermination = { [weak self] _ in
            Task { @MainActor in
                stop.set()
                self?.stopScanning()
            }
        }
        return stream
    }

    /// Queues an operation through `start` and waits for its outcome; cancelling the task
    /// cancels the operation.
    private func awaiting<T: Sendable>(_ start: (@escaping (Result<T, any Error>) -> Void) -> Void) async throws -> T {
        let handle = CancelHandle()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                let before = queueLastAdded
                start { continuation.resume(with: $0) }
                if let added = queueLastAdded, added !== before { handle.operation = added }
                if Task.isCancelled { handle.cancel(in: self) }
            }
        } onCancel: {
            Task { @MainActor in handle.cancel(in: self) }
        }
    }
}

/// The operation an async call queued, so its task's cancellation can reach it.
@MainActor
final class CancelHandle: Sendable {
    weak var operation: QueuedOperation?
    nonisolated init() {}

    func cancel(in bluejay: Bluejay) {
        if let operation { bluejay.cancel(operation) }
    }
}

/// A flag set once, read from the main actor.
@MainActor
final class StopFlag: Sendable {
    private(set) var isSet = false
    nonisolated init() {}
    func set() { isSet = true }
}

/// What ``Bluejay/states`` tells: the host's availability and the link's comings and goings.
public enum BluejayState: Sendable, Equatable {
    /// The host came up (true) or went away (false).
    case bluetoothAvailable(Bool)
    /// Connected to a peripheral.
    case connected(PeripheralIdentifier)
    /// Disconnected from a peripheral.
    case disconnected(PeripheralIdentifier)
}

/// The connection observer behind ``Bluejay/states``: it feeds the stream and is kept alive
/// by the stream's termination handler until the iteration stops.
@MainActor
final class StateRelay: ConnectionObserver {
    let feed: AsyncStream<BluejayState>.Continuation
    init(_ feed: AsyncStream<BluejayState>.Continuation) { self.feed = feed }
    func bluetoothAvailable(_ available: Bool) { feed.yield(.bluetoothAvailable(available)) }
    func connected(to peripheral: PeripheralIdentifier) { feed.yield(.connected(peripheral)) }
    func disconnected(from peripheral: PeripheralIdentifier) { feed.yield(.disconnected(peripheral)) }
}
