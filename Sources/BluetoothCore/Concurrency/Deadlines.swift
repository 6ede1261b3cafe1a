/// One layer's timeouts (or one link's): what happens if nothing else comes first, such as an
/// HCI command's answer, an ATT transaction's response (Core Vol 3, Part F, 3.3.3) or an SMP
/// procedure's end (Vol 3, Part H, 3.4). After NimBLE's host, which keeps each procedure's
/// expiry in its table and has one timer for the earliest.
///
/// One task sleeps until the earliest deadline, however many are pending (commands in
/// flight, a request on each link): scheduling a deadline no earlier than that one starts
/// nothing, and cancelling one only takes it out of the list. The sleeper ends when the
/// last deadline goes, so a clock holds no sleeper for a layer with nothing pending (the
/// tests count them).
@BluetoothActor
public final class Deadlines {
    /// Names one scheduled deadline, for ``cancel(_:)``.
    public struct Token: Hashable, Sendable {
        fileprivate let id: UInt64
    }

    private struct Entry {
        let due: ElapsedClock.Instant
        let id: UInt64
        let action: @BluetoothActor () -> Void
    }

    /// The sleeper's state. A sleeper that finds another generation in place ends itself: it
    /// was replaced (by an earlier deadline) or stopped, and its wake-up may already have
    /// been on its way.
    private enum Sleeper {
        case none
        case sleeping(until: ElapsedClock.Instant, generation: UInt64, task: Task<Void, Never>)
        /// Running the due actions: what they schedule is picked up when they are done.
        case firing(generation: UInt64)
    }

    private let clock: ElapsedClock
    /// Pending deadlines, earliest first; equal ones in the order they were scheduled.
    private var entries: [Entry] = []
    private var sleeper = Sleeper.none
    private var nextID: UInt64 = 0
    private var generation: UInt64 = 0

    /// Deadlines timed by `clock`.
    public nonisolated init(clock: any Clock<Duration>) {
        self.clock = ElapsedClock(clock)
    }

    /// How many deadlines are pending.
    public var count: Int { entries.count }

    /// Runs `action` after `delay`, unless cancelled first.
    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping @BluetoothActor () -> Void) -> Token {
        nextID &+= 1
        let due = clock.now + delay
        let index = entries.firstIndex { $0.due > due } ?? entries.endIndex
        entries.insert(Entry(due: due, id: nextID, action: action), at: index)
        switch sleeper {
        case .none: sleep(until: due)
        case .sleeping(let until, _, let task) where due < until:
            task.cancel()
            sleep(until: due)
        case .sleeping, .firing: break
        }
        return Token(id: nextID)
    }

    /// Takes the deadline out; its action will not run. Nothing happens if it ran already.
    public func cancel(_ token: Token) {
        guard let index = entries.firstIndex(where: { $0.id == token.id }) else { return }
        entries.remove(at: index)
        if entries.isEmpty, case .sleeping(_, _, let task) = sleeper {
            task.cancel()
            generation &+= 1
            sleeper = .none
        }
    }

    /// Takes every deadline out and stops the sleeper (the layer or link is closing).
    public func cancelAll() {
        entries.removeAll()
        if case .sleeping(_, _, let task) = sleeper { task.cancel() }
        generation &+= 1
        sleeper = .none
    }

    private func sleep(until due: ElapsedClock.Instant) {
        generation &+= 1
        let mine = generation, clock = clock
        let task = Task { [weak self] in
            var due = due
            while true {
                do { try await clock.sleep(until: due) } catch { return }
                guard let self, let next = self.fireDue(generation: mine) else { return }
                due = next
            }
        }
        sleeper = .sleeping(until: due, generation: mine, task: task)
    }

    /// Runs what is due, in order; returns the instant to sleep until, or nil for a sleeper
    /// that is to end.
    private func fireDue(generation mine: UInt64) -> ElapsedClock.Instant? {
        guard case .sleeping(_, mine, let task) = sleeper else { return nil }
        sleeper = .firing(generation: mine)
        let now = clock.now
        while let first = entries.first, first.due <= now {
            entries.removeFirst()
            first.action()
            // An action may have closed the layer (cancelAll), which stopped this sleeper.
            guard case .firing(mine) = sleeper else { return nil }
        }
        guard let next = entries.first?.due else {
            sleeper = .none
            return nil
        }
        sleeper = .sleeping(until: next, generation: mine, task: task)
        return next
    }
}
