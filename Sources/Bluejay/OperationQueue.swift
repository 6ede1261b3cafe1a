import BluetoothCore

/// What a queued operation does (its raw value names it in logs). Bluejay treats some
/// kinds apart: ``Bluejay/stopScanning()`` stops a running scan, and a link's end does not
/// cancel the disconnection that ended it.
enum OperationKind: String, Sendable {
    case scan
    case connect
    case disconnect
    case read
    case write
    case listen
    case endListen = "end listen"
    case backgroundTask = "background task"
    case readRSSI = "read RSSI"
    case discovery
}

/// One queued operation: a scan, connect, disconnect, read, write, listen or background
/// task. It ends exactly once — through ``claim()`` or ``fail(_:)`` — whatever races
/// with it (a cancel, a disconnection, the body finishing late).
///
/// Like its queue, it belongs to the actor of whoever made it (the main actor for
/// ``Bluejay``, the stack's actor for ``Central`` and its ``Peripheral``s), and its body
/// runs there.
final class QueuedOperation {
    /// What it does.
    let kind: OperationKind
    private let body: nonisolated(nonsending) (QueuedOperation) async -> Void
    private let onFailure: (BluejayError) -> Void
    /// Called when the operation is cancelled while it runs (stop a scan, cancel a connect).
    var onCancel: ((BluejayError) -> Void)?
    private(set) var isFinished = false

    init(_ kind: OperationKind, body: nonisolated(nonsending) @escaping (QueuedOperation) async -> Void,
         onFailure: @escaping (BluejayError) -> Void) {
        self.kind = kind
        self.body = body
        self.onFailure = onFailure
    }

    nonisolated(nonsending) func run() async { await body(self) }

    /// Ends the operation; true when this call ended it, so the caller delivers the
    /// outcome, false when it had already ended (cancelled, failed).
    func claim() -> Bool {
        guard !isFinished else { return false }
        isFinished = true
        return true
    }

    /// Ends the operation with `error`, unless it already ended.
    func fail(_ error: BluejayError) {
        guard !isFinished else { return }
        isFinished = true
        onFailure(error)
    }
}

/// Bluejay's FIFO: operations run one at a time, in the order asked; the next starts when
/// the running one's body returns.
///
/// It is the one queue rule of the package: ``Bluejay``'s FIFO, each ``Peripheral``'s, and
/// the ``Central``'s turns at the controller's one initiator (those two through
/// ``run(_:_:)``).
///
/// It has no actor of its own: it belongs to the actor of its owner and runs its
/// operations there, so ``Central``'s queues, on the stack's actor, never wait for the main
/// actor, and ``Bluejay``'s, on the main actor, never hop off it.
final class OperationQueue {
    private var waiting: [QueuedOperation] = []
    private(set) var running: QueuedOperation?
    /// The operation added last (for the async API, which cancels its own operation).
    private(set) weak var lastAdded: QueuedOperation?

    /// An empty queue.
    init() {}

    /// Operations not ended yet (running and waiting).
    var count: Int { waiting.count + (running == nil ? 0 : 1) }

    /// Queues `operation`; it runs on the caller's actor, as every operation of this queue.
    func add(_ operation: QueuedOperation, isolation: isolated (any Actor) = #isolation) {
        waiting.append(operation)
        lastAdded = operation
        runNext()
    }

    /// Ends one operation with `error`: dropped when waiting, stopped when running.
    func cancel(_ operation: QueuedOperation, _ error: BluejayError) {
        if let index = waiting.firstIndex(where: { $0 === operation }) {
            waiting.remove(at: index)
            operation.fail(error)
        } else if running === operation, !operation.isFinished {
            operation.fail(error)
            operation.onCancel?(error)
        }
    }

    private func runNext(isolation: isolated (any Actor) = #isolation) {
        guard running == nil, !waiting.isEmpty else { return }
        let operation = waiting.removeFirst()
        running = operation
        Task {
            // Capturing the owner's actor runs the task there.
            _ = isolation
            await operation.run()
            // A body that returned without ending its operation would leave a caller waiting.
            operation.fail(.cancelled)
            self.running = nil
            self.runNext()
        }
    }

    /// Ends every waiting operation and the running one with `error`; the running one's
    /// cancel hook stops its work.
    func cancelAll(_ error: BluejayError) {
        let cancelled = waiting
        waiting = []
        for operation in cancelled { operation.fail(error) }
        if let running, !running.isFinished {
            running.fail(error)
            running.onCancel?(error)
        }
    }
}

extension OperationQueue {
    /// Runs `body` on the stack's actor once every operation queued before it has ended,
    /// as one operation of `kind`, and returns what it returns: the queue rule for callers
    /// on the stack's actor. Throws what `body` throws, or the error the operation was
    /// cancelled with.
    @BluetoothActor
    func run<T: Sendable>(_ kind: OperationKind, _ body: @escaping @BluetoothActor () async throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            add(QueuedOperation(kind, body: { operation in
                let outcome: Result<T, any Error>
                do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
                if operation.claim() { continuation.resume(with: outcome) }
            }, onFailure: { error in continuation.resume(throwing: error) }))
        }
    }
}
