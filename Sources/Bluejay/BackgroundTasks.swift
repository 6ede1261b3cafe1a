import BluetoothCore
import Dispatch
import HCI

/// Background tasks: the app's blocking code, run on a thread of its own while it holds the queue.
extension Bluejay {
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
}

/// Carries a value across a thread boundary the compiler cannot check: the user's
/// background task and its result, which Bluejay's contract puts on a background thread.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
