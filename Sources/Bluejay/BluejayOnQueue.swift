import BluetoothCore
import Dispatch

extension Bluejay {
    /// Bluejay's callback API with the callbacks run on `queue` (give a serial queue)
    /// instead of the main actor:
    ///
    /// ```swift
    /// let work = DispatchQueue(label: "sensor")
    /// bluejay.callbacks(on: work).listen(to: heartRate) { (result: ReadResult<HeartRateMeasurement>) in
    ///     // On `work`: this closure is @Sendable, so the compiler refuses main-actor state here.
    /// }
    /// ```
    ///
    /// The operations are the same ones, queued in the same FIFO; only where the callbacks
    /// run differs. To call Bluejay again from such a callback, hop back with
    /// `Task { @MainActor in … }`. A listen's values waiting on `queue` count toward
    /// ``StartOptions/listenBufferLimit`` until their callback has run.
    public func callbacks(on queue: DispatchQueue) -> BluejayOnQueue {
        BluejayOnQueue(bluejay: self, queue: CallbackQueue(queue: queue))
    }
}

/// Bluejay's callback API with `@Sendable` callbacks run on a queue of the app's
/// (``Bluejay/callbacks(on:)``). Each method queues the operation of its ``Bluejay`` twin.
@MainActor
public struct BluejayOnQueue {
    /// The Bluejay whose operations these are.
    public let bluejay: Bluejay
    let queue: CallbackQueue

    /// ``Bluejay/scan(duration:allowDuplicates:throttleRSSIDelta:serviceIdentifiers:discovery:expired:stopped:)``,
    /// its callbacks on the queue (the scan awaits each answer of `discovery` and `expired`
    /// without blocking the main actor). A connection asked for with
    /// ``ScanAction/connect(_:_:)`` calls back on the queue too.
    public func scan(
        duration: Double = 0, allowDuplicates: Bool = false, throttleRSSIDelta: Int = 5,
        serviceIdentifiers: [ServiceIdentifier]?,
        discovery: @escaping @Sendable (ScanDiscovery, [ScanDiscovery]) -> ScanAction,
        expired: (@Sendable (ScanDiscovery, [ScanDiscovery]) -> ScanAction)? = nil,
        stopped: @escaping @Sendable ([ScanDiscovery], (any Error)?) -> Void
    ) {
        bluejay.scan(
            duration: duration, allowDuplicates: allowDuplicates, throttleRSSIDelta: throttleRSSIDelta,
            serviceIdentifiers: serviceIdentifiers,
            answering: queue.answer(discovery), expired: expired.map(queue.answer), stopped: queue.deliver(stopped))
    }

    /// ``Bluejay/connect(_:timeout:warningOptions:completion:)``, calling back on the queue.
    public func connect(
        _ peripheralIdentifier: PeripheralIdentifier, timeout: Timeout = .none, warningOptions: WarningOptions? = nil,
        completion: @escaping @Sendable (ConnectionResult) -> Void
    ) {
        bluejay.connect(
            peripheralIdentifier, timeout: timeout, warningOptions: warningOptions,
            completion: queue.deliver(completion))
    }

    /// ``Bluejay/disconnect(immediate:completion:)``, calling back on the queue.
    public func disconnect(immediate: Bool = false, completion: (@Sendable (DisconnectionResult) -> Void)? = nil) {
        bluejay.disconnect(immediate: immediate, completion: completion.map(queue.deliver))
    }

    /// ``Bluejay/read(from:completion:)``, calling back on the queue.
    public func read<R: Receivable & Sendable>(
        from characteristicIdentifier: CharacteristicIdentifier, completion: @escaping @Sendable (ReadResult<R>) -> Void
    ) {
        bluejay.read(from: characteristicIdentifier, completion: queue.deliver(completion))
    }

    /// ``Bluejay/write(to:value:type:completion:)``, calling back on the queue.
    public func write<S: BluejaySendable>(
        to characteristicIdentifier: CharacteristicIdentifier, value: S, type: WriteType = .withResponse,
        completion: @escaping @Sendable (WriteResult) -> Void
    ) {
        bluejay.write(to: characteristicIdentifier, value: value, type: type, completion: queue.deliver(completion))
    }

    /// ``Bluejay/listen(to:multipleListenOption:completion:)``, each value and the listen's
    /// end on the queue. A value leaves the listen's backlog once its callback has run there.
    public func listen<R: Receivable & Sendable>(
        to characteristicIdentifier: CharacteristicIdentifier,
        multipleListenOption option: MultipleListenOption = .trap,
        completion: @escaping @Sendable (ReadResult<R>) -> Void
    ) {
        let queue = queue.queue
        bluejay.listen(
            to: characteristicIdentifier, multipleListenOption: option, tag: nil,
            completion: self.queue.deliver(completion),
            values: { backlog in
                { result in
                    queue.async {
                        completion(result)
                        backlog.taken()
                    }
                }
            })
    }

    /// ``Bluejay/endListen(to:completion:)``, calling back on the queue.
    public func endListen(
        to characteristicIdentifier: CharacteristicIdentifier, completion: (@Sendable (WriteResult) -> Void)? = nil
    ) {
        bluejay.endListen(to: characteristicIdentifier, completion: completion.map(queue.deliver))
    }

    /// `Bluejay.run(backgroundTask:completionOnMainThread:)`, its completion on the queue.
    public func run(
        backgroundTask: @escaping @Sendable (SynchronizedPeripheral) throws -> Void,
        completion: @escaping @Sendable (RunResult<Void>) -> Void
    ) {
        bluejay.run(backgroundTask: backgroundTask, completionOnMainThread: queue.deliver(completion))
    }

    /// `Bluejay.run(backgroundTask:completionOnMainThread:)` with a result, its completion on the queue.
    public func run<Result: Sendable>(
        backgroundTask: @escaping @Sendable (SynchronizedPeripheral) throws -> Result,
        completion: @escaping @Sendable (RunResult<Result>) -> Void
    ) {
        bluejay.run(backgroundTask: backgroundTask, completionOnMainThread: queue.deliver(completion))
    }

    /// ``Bluejay/run(userData:backgroundTask:completionOnMainThread:)``, its completion on the queue.
    public func run<UserData: Sendable, Result: Sendable>(
        userData: UserData,
        backgroundTask: @escaping @Sendable (SynchronizedPeripheral, UserData) throws -> Result,
        completion: @escaping @Sendable (RunResult<Result>) -> Void
    ) {
        bluejay.run(
            userData: userData, backgroundTask: backgroundTask, completionOnMainThread: queue.deliver(completion))
    }
}
