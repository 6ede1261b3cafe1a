import Synchronization

/// The one route every notified or indicated value, and every callback of the app's, takes
/// from the stack to the main actor (``ValueArrival``): posted in the order the stack
/// produced them, taken on the main actor in that order, a whole batch per hop. A flood costs one main-actor job per burst the
/// stack handled, not a task wake-up and an element box per value, so the main actor keeps
/// up with the stack instead of falling behind it.
final class ArrivalInbox: Sendable {
    private struct State {
        /// Posted, not taken yet.
        var waiting: [ValueArrival] = []
        /// The storage of the last batch taken, kept for the next one.
        var spare: [ValueArrival] = []
        /// Whether a main-actor job that takes `waiting` is on its way.
        var scheduled = false
        /// Set by ``close()``: nothing more is taken.
        var closed = false
        /// Holds in force (``hold()``): what is posted meanwhile waits, to be taken in one batch.
        var holds = 0
    }

    private let state = Mutex(State())
    /// What takes each batch, in order, on the main actor (set once its owner is made).
    private let taker = Mutex<(@MainActor @Sendable ([ValueArrival]) -> Void)?>(nil)

    /// An empty inbox; values posted before ``deliver(to:)`` wait for it.
    init() {}

    /// From now on the values go to `take`, a batch at a time, in the order posted (one
    /// call per batch: a closure called per value cost more than the value's own way).
    func deliver(to take: @escaping @MainActor @Sendable ([ValueArrival]) -> Void) {
        taker.withLock { $0 = take }
    }

    /// Posts `arrival` (from any thread: the stack's actor); a main-actor job takes it
    /// with whatever else is waiting by then.
    func post(_ arrival: ValueArrival) {
        let schedule = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.waiting.append(arrival)
            guard !state.scheduled, state.holds == 0 else { return false }
            state.scheduled = true
            return true
        }
        if schedule { Task { @MainActor in self.drain() } }
    }

    /// Until the matching ``release()``, what is posted waits: a step that posts several
    /// callbacks (an operation's failure, the observers, the disconnect handler's question)
    /// has them taken in one main-actor job, so app code resumed by the first cannot run
    /// before the last, as when the step ran on the main actor at once.
    func hold() {
        state.withLock { $0.holds += 1 }
    }

    /// Ends a ``hold()``; with no hold left, what waits is taken.
    func release() {
        let schedule = state.withLock { state -> Bool in
            state.holds -= 1
            guard state.holds == 0, !state.scheduled, !state.waiting.isEmpty, !state.closed else { return false }
            state.scheduled = true
            return true
        }
        if schedule { Task { @MainActor in self.drain() } }
    }

    /// Nothing posted from now on is taken.
    func close() {
        state.withLock { state in
            state.closed = true
            state.waiting = []
        }
    }

    /// Takes everything waiting, in order. What is posted meanwhile schedules the next job,
    /// which the main actor runs after this one.
    @MainActor
    private func drain() {
        var batch = state.withLock { state -> [ValueArrival] in
            state.scheduled = false
            // The spare storage becomes the new `waiting` (moved, not shared, so appending
            // to it does not copy it), and what was waiting is this batch.
            var batch: [ValueArrival] = []
            swap(&batch, &state.spare)
            swap(&batch, &state.waiting)
            return batch
        }
        if let take = taker.withLock({ $0 }) { take(batch) }
        batch.removeAll(keepingCapacity: true)
        let emptied = batch
        state.withLock { state in if state.spare.capacity < emptied.capacity { state.spare = emptied } }
    }
}
