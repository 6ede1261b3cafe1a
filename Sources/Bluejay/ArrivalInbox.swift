import Synchronization

/// The one route every notified or indicated value, and every callback of the app's, takes
/// from the stack to the main actor (``ValueArrival``): posted in the order the stack
/// produced them, taken on the main actor in that order, a whole batch per hop. A flood costs one main-actor turn per burst the
/// stack handled, not a task wake-up and an element box per value, so the main actor keeps
/// up with the stack instead of falling behind it.
///
/// One long-lived main-actor task takes the batches: it sleeps on a continuation while
/// nothing waits, and a post wakes it. A task made per burst instead cost a heap allocation
/// each time, which under a flood's small bursts was a third of an allocation per value.
final class ArrivalInbox: Sendable {
    private struct State {
        /// Posted, not taken yet.
        var waiting: [ValueArrival] = []
        /// The storage of the last batch taken, kept for the next one.
        var spare: [ValueArrival] = []
        /// The taker, asleep until something is posted (nil while it is awake).
        var sleeper: UnsafeContinuation<Void, Never>?
        /// Set by ``close()``: nothing more is taken.
        var closed = false
        /// Holds in force (``hold()``): what is posted meanwhile waits, to be taken in one batch.
        var holds = 0

        /// The sleeping taker, to be resumed outside the lock (nil when it is awake).
        mutating func wake() -> UnsafeContinuation<Void, Never>? {
            defer { sleeper = nil }
            return sleeper
        }
    }

    private let state = Mutex(State())

    /// An empty inbox; values posted before ``deliver(to:)`` wait for it.
    init() {}

    /// From now on the values go to `take`, a batch at a time, in the order posted (one
    /// call per batch: a closure called per value cost more than the value's own way), until
    /// ``close()``. Called once.
    func deliver(to take: @escaping @MainActor @Sendable ([ValueArrival]) -> Void) {
        Task { @MainActor in await self.takeBatches(take) }
    }

    /// Posts `arrival` (from any thread: the stack's actor); the taker gets it with
    /// whatever else is waiting by then.
    func post(_ arrival: ValueArrival) {
        let sleeper = state.withLock { state -> UnsafeContinuation<Void, Never>? in
            guard !state.closed else { return nil }
            state.waiting.append(arrival)
            return state.holds == 0 ? state.wake() : nil
        }
        sleeper?.resume()
    }

    /// Until the matching ``release()``, what is posted waits: a step that posts several
    /// callbacks (an operation's failure, the observers, the disconnect handler's question)
    /// has them taken in one batch, so app code resumed by the first cannot run before the
    /// last, as when the step ran on the main actor at once.
    func hold() {
        state.withLock { $0.holds += 1 }
    }

    /// Ends a ``hold()``; with no hold left, what waits is taken.
    func release() {
        let sleeper = state.withLock { state -> UnsafeContinuation<Void, Never>? in
            state.holds -= 1
            return state.holds == 0 && !state.waiting.isEmpty ? state.wake() : nil
        }
        sleeper?.resume()
    }

    /// Nothing posted from now on is taken, and the taker ends.
    func close() {
        let sleeper = state.withLock { state -> UnsafeContinuation<Void, Never>? in
            state.closed = true
            state.waiting = []
            return state.wake()
        }
        sleeper?.resume()
    }

    /// The taker: everything waiting, in order, a batch per main-actor turn; asleep when
    /// nothing waits; over once closed.
    @MainActor
    private func takeBatches(_ take: @MainActor @Sendable ([ValueArrival]) -> Void) async {
        var batch: [ValueArrival] = []
        while true {
            let isOpen = state.withLock { state -> Bool in
                guard !state.closed else { return false }
                // Held: nothing is taken until the release.
                guard state.holds == 0 else { return true }
                // The spare storage becomes the new `waiting` (moved, not shared, so
                // appending to it does not copy it), and what was waiting is this batch.
                swap(&batch, &state.spare)
                swap(&batch, &state.waiting)
                return true
            }
            guard isOpen else { return }
            if batch.isEmpty {
                await withUnsafeContinuation { (sleeper: UnsafeContinuation<Void, Never>) in
                    let awake = state.withLock { state -> Bool in
                        guard !state.closed, state.waiting.isEmpty || state.holds > 0 else { return true }
                        state.sleeper = sleeper
                        return false
                    }
                    if awake { sleeper.resume() }
                }
                continue
            }
            take(batch)
            batch.removeAll(keepingCapacity: true)
            // The main actor's other work (the app's callbacks, its own tasks) gets its turn
            // between batches, as it did between the jobs of a task per burst.
            await Task.yield()
        }
    }
}
