import BluetoothCore
import Synchronization

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

    /// Whether its body waits only on its link's layers (ATT and GATT), which end whatever
    /// is pending when the link or the controller goes: such an operation, running when
    /// that happens, is left to end by itself (``OperationQueue/endAll(losing:)``).
    var endsWithItsLink: Bool {
        switch self {
        case .read, .write, .listen, .endListen, .discovery: true
        case .scan, .connect, .disconnect, .backgroundTask, .readRSSI: false
        }
    }
}

/// One queued operation: a scan, connect, disconnect, read, write, listen or background
/// task. It ends exactly once — through ``claim()`` or ``fail(_:)`` — whatever races
/// with it (a cancel from the main actor, a disconnection on the stack's actor, the body
/// finishing late): its phase is kept behind a lock, as either actor may end it.
///
/// Its body runs on the stack's actor, whoever queued it.
final class QueuedOperation: Sendable {
    /// What it does.
    let kind: OperationKind
    private let body: @BluetoothActor @Sendable (QueuedOperation) async -> Void
    private let onFailure: @Sendable (any Error) -> Void

    /// Where the operation is in its life.
    private enum Phase {
        /// Waiting or running, nothing decided.
        case live
        /// Its link or controller went while it ran: it ends with the loss's error, unless
        /// its answer came first, which its body claims as usual.
        case outliving(loss: any Error)
        /// Claimed, failed or cancelled.
        case ended
    }

    private struct State {
        var phase = Phase.live
        /// Called when the operation is cancelled while it runs (stop a scan, cancel a connect).
        var onCancel: (@Sendable (any Error) -> Void)?
    }

    private let state = Mutex(State())

    init(
        _ kind: OperationKind, body: @escaping @BluetoothActor @Sendable (QueuedOperation) async -> Void,
        onFailure: @escaping @Sendable (any Error) -> Void
    ) {
        (self.kind, self.body, self.onFailure) = (kind, body, onFailure)
    }

    @BluetoothActor
    func run() async { await body(self) }

    /// Whether it has ended (claimed, failed or cancelled).
    var isFinished: Bool {
        state.withLock { if case .ended = $0.phase { true } else { false } }
    }

    /// What stops its work when it is cancelled while it runs (set by its body).
    var onCancel: (@Sendable (any Error) -> Void)? {
        get { state.withLock { $0.onCancel } }
        set { state.withLock { $0.onCancel = newValue } }
    }

    /// Ends the operation; true when this call ended it, so the caller delivers the
    /// outcome, false when it had already ended (cancelled, failed).
    func claim() -> Bool {
        if case .ended = end() { false } else { true }
    }

    /// Ends the operation with `error`, unless it already ended: a `BluejayError`, or
    /// whatever error the app handed ``Bluejay/cancelEverything(error:shouldDisconnect:)``.
    /// After a loss (``outlive(_:)``) it ends with the loss's error instead, which says why.
    func fail(_ error: any Error) {
        switch end() {
        case .ended: return
        case .live: onFailure(error)
        case let .outliving(loss): onFailure(loss)
        }
    }

    /// Ends the operation; returns the phase it ended from (`.ended`: it had already ended).
    private func end() -> Phase {
        state.withLock { state in
            defer { state.phase = .ended }
            return state.phase
        }
    }

    /// Marks a running operation as outliving the loss of its link or controller: its
    /// body, which the loss ends (``OperationKind/endsWithItsLink``), decides. An answer
    /// that arrived before the loss — in the same batch of packets, say, whose later packet
    /// reported it — is delivered; anything else ends with `loss`.
    func outlive(_ loss: any Error) {
        state.withLock { state in
            if case .live = state.phase { state.phase = .outliving(loss: loss) }
        }
    }
}

/// Bluejay's FIFO: operations run one at a time, in the order asked; the next starts when
/// the running one's body returns.
///
/// It is the one queue rule of the package: ``Bluejay``'s FIFO, each ``Peripheral``'s, and
/// the ``Central``'s turns at the controller's one initiator (those two through
/// ``run(_:_:)``).
///
/// Operations are added and cancelled from either actor (``Bluejay``'s seed API on the main
/// actor adds synchronously, so `connect` then `read` keep their order); what waits and
/// what runs is kept behind a lock. The runner and every body run on the stack's actor, so
/// no step of an operation waits for the main actor.
final class OperationQueue: Sendable {
    private struct State {
        var waiting: [QueuedOperation] = []
        var running: QueuedOperation?
        /// The operation added last (for the async API, which cancels its own operation).
        weak var lastAdded: QueuedOperation?
    }

    private let state = Mutex(State())

    /// An empty queue.
    init() {}

    /// Operations not ended yet (running and waiting).
    var count: Int { state.withLock { $0.waiting.count + ($0.running == nil ? 0 : 1) } }
    /// The running operation.
    var running: QueuedOperation? { state.withLock { $0.running } }
    /// The operation added last.
    var lastAdded: QueuedOperation? { state.withLock { $0.lastAdded } }

    /// Queues `operation`, from any actor; it runs on the stack's actor.
    func add(_ operation: QueuedOperation) {
        let first = state.withLock { state -> QueuedOperation? in
            state.waiting.append(operation)
            state.lastAdded = operation
            guard state.running == nil else { return nil }
            state.running = state.waiting.removeFirst()
            return state.running
        }
        if let first { Task { @BluetoothActor in await self.run(from: first) } }
    }

    /// Runs `first` and each operation after it until none waits: one task for a run of
    /// operations, not one per operation. The task that made an operation the running one
    /// is the one that runs it: the next is taken in the same locked step that ends the
    /// last, so a runner that has just found the queue empty never picks up what an `add`
    /// from the other actor made running for its own new runner (the body would run twice).
    @BluetoothActor
    private func run(from first: QueuedOperation) async {
        var next: QueuedOperation? = first
        while let operation = next {
            await operation.run()
            // A body that returned without ending its operation would leave a caller waiting
            // (after a loss, it ends with the loss's error).
            operation.fail(BluejayError.cancelled)
            next = state.withLock { state in
                state.running = state.waiting.isEmpty ? nil : state.waiting.removeFirst()
                return state.running
            }
        }
    }

    /// Ends one operation with `error`: dropped when waiting, stopped when running.
    func cancel(_ operation: QueuedOperation, _ error: any Error) {
        let wasRunning = state.withLock { state -> Bool? in
            if let index = state.waiting.firstIndex(where: { $0 === operation }) {
                state.waiting.remove(at: index)
                return false
            }
            return state.running === operation ? true : nil
        }
        guard let wasRunning, !operation.isFinished else { return }
        operation.fail(error)
        if wasRunning { operation.onCancel?(error) }
    }

    /// Ends every waiting operation and the running one with `error`; the running one's
    /// cancel hook stops its work.
    func cancelAll(_ error: any Error) {
        let (cancelled, running) = takeWaiting()
        for operation in cancelled { operation.fail(error) }
        if let running, !running.isFinished {
            running.fail(error)
            running.onCancel?(error)
        }
    }

    /// Ends every operation after the link or the controller was lost, with `loss`. The
    /// running one, when it waits only on its link's layers, ends as they settle it: its
    /// answer if it came before the loss (the loss is handled in a later job than the
    /// answer's arrival, so the answer's task may not have run yet), else `loss`.
    func endAll(losing loss: any Error) {
        let (waiting, running) = takeWaiting()
        for operation in waiting { operation.fail(loss) }
        guard let running, !running.isFinished else { return }
        if running.kind.endsWithItsLink {
            running.outlive(loss)
        } else {
            running.fail(loss)
            running.onCancel?(loss)
        }
    }

    /// Takes every waiting operation off the queue, and says which one runs: in one step,
    /// so an add from the other actor lands either among them or after them.
    private func takeWaiting() -> (waiting: [QueuedOperation], running: QueuedOperation?) {
        state.withLock { state in
            defer { state.waiting = [] }
            return (state.waiting, state.running)
        }
    }
}

extension OperationQueue {
    /// Runs `body` on the stack's actor once every operation queued before it has ended,
    /// as one operation of `kind`, and returns what it returns: the queue rule for callers
    /// on the stack's actor. Throws what `body` throws, or the error the operation was
    /// cancelled with.
    @BluetoothActor
    func run<T: Sendable>(_ kind: OperationKind, _ body: @escaping @BluetoothActor () async throws -> T) async throws
        -> T
    {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            add(
                QueuedOperation(
                    kind,
                    body: { operation in
                        let outcome: Result<T, any Error>
                        do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
                        if operation.claim() { continuation.resume(with: outcome) }
                    }, onFailure: { error in continuation.resume(throwing: error) }))
        }
    }
}
