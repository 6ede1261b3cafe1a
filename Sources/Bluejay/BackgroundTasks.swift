import BluetoothCore
import Dispatch
import HCI

/// Background tasks: the app's blocking code, run on a thread of its own while it holds the queue.
extension Bluejay {
    // MARK: Background tasks

    /// Runs `backgroundTask` on a background thread with a ``SynchronizedPeripheral`` whose
    /// calls block until done; `completionOnMainThread` gets the outcome. The task holds the
    /// queue: nothing else runs until it returns.
    ///
    /// The task is `@Sendable`: written in a main-actor context it is still not isolated to
    /// the main actor, so the compiler refuses a task that touches main-actor state or calls
    /// ``Bluejay`` (whose queued API would wait for the task to end).
    public func run(
        backgroundTask: @escaping @Sendable (SynchronizedPeripheral) throws -> Void,
        completionOnMainThread: @escaping @MainActor (RunResult<Void>) -> Void
    ) {
        run(
            userData: (), backgroundTask: { peripheral, _ in try backgroundTask(peripheral) },
            completionOnMainThread: completionOnMainThread)
    }

    /// Runs `backgroundTask` and hands its result to `completionOnMainThread`.
    public func run<Result: Sendable>(
        backgroundTask: @escaping @Sendable (SynchronizedPeripheral) throws -> Result,
        completionOnMainThread: @escaping @MainActor (RunResult<Result>) -> Void
    ) {
        run(
            userData: (), backgroundTask: { peripheral, _ in try backgroundTask(peripheral) },
            completionOnMainThread: completionOnMainThread)
    }

    /// Runs `backgroundTask` with `userData` and hands its result to `completionOnMainThread`.
    /// The arguments come in the reference's order: the peripheral, then the user data.
    public func run<UserData: Sendable, Result: Sendable>(
        userData: UserData,
        backgroundTask: @escaping @Sendable (SynchronizedPeripheral, UserData) throws -> Result,
        completionOnMainThread: @escaping @MainActor (RunResult<Result>) -> Void
    ) {
        queue.add(
            QueuedOperation(
                .backgroundTask,
                body: { [weak self] operation in
                    guard let self, let (host, link) = await self.connected(operation) else { return }
                    let peripheral = SynchronizedPeripheral(
                        host: host, handle: link.handle, identifier: link.peripheral
                    ) { [weak self] characteristic in
                        self?.listenEndedByTask(characteristic)
                    }
                    operation.onCancel = { peripheral.cancel($0) }
                    let outcome: Swift.Result<Result, any Error> = await withCheckedContinuation { continuation in
                        DispatchQueue(label: "bluejay.background-task").async {
                            continuation.resume(returning: Swift.Result { try backgroundTask(peripheral, userData) })
                        }
                    }
                    switch outcome {
                    case let .success(value):
                        if operation.claim() { self.post { completionOnMainThread(.success(value)) } }
                    case let .failure(error as BluejayError): operation.fail(Self.cause(error, on: host))
                    case let .failure(error):
                        if operation.claim() { self.post { completionOnMainThread(.failure(error)) } }
                    }
                },
                onFailure: failing { error in
                    if BluejayError.isCancellation(error) {
                        completionOnMainThread(.cancelled)
                    } else {
                        completionOnMainThread(.failure(error))
                    }
                }))
    }
}

/// Carries a value across a thread boundary the compiler cannot check: the user's
/// background task and its result, which Bluejay's contract puts on a background thread.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
