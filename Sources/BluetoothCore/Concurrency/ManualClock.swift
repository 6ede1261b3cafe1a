import Synchronization

/// A clock that moves only when told to: timeouts (command, ATT 30 s, connection) are
/// tested without waiting for them.
public final class ManualClock: Clock, Sendable {
    /// An instant on a manual clock: the time since its start.
    public struct Instant: InstantProtocol {
        /// Time since the clock's start.
        public var offset: Duration
        /// The instant `offset` after the clock's start.
        public init(offset: Duration) { self.offset = offset }
        /// The instant `duration` later.
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        /// The time from this instant to `other`; negative if `other` is earlier.
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        /// Whether `lhs` comes before `rhs`.
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private enum Sleeper {
        case waiting(Instant, CheckedContinuation<Void, any Error>)
        case cancelledEarly
    }

    private struct State {
        var now = Instant(offset: .zero)
        var nextID = 0
        var sleepers: [Int: Sleeper] = [:]
    }

    private let state = Mutex(State())

    /// A clock at offset zero.
    public init() {}

    /// The current instant; it moves only through ``advance(by:)``.
    public var now: Instant { state.withLock { $0.now } }
    /// Zero: time moves only in the steps it is told to.
    public var minimumResolution: Duration { .zero }

    /// How many entries the clock holds (sleepers and stale marks); zero when idle.
    var entryCount: Int { state.withLock { $0.sleepers.count } }

    /// How many tasks are sleeping on this clock.
    public var sleeperCount: Int { sleepingUntil.count }

    /// When each sleeping task is to wake (its deadline's offset from the clock's start),
    /// earliest first.
    public var sleepingUntil: [Duration] {
        state.withLock { state in
            state.sleepers.values.compactMap { if case let .waiting(deadline, _) = $0 { deadline.offset } else { nil } }
                .sorted()
        }
    }

    /// Suspends until ``advance(by:)`` reaches `deadline`, at once if it has passed; throws
    /// `CancellationError` if cancelled. `tolerance` is ignored.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        // A cancel that lands after the sleeper was woken marks it `cancelledEarly`; nothing
        // else would remove that mark, so the sleep clears its own entry on the way out.
        defer { _ = state.withLock { $0.sleepers.removeValue(forKey: id) } }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow: Result<Void, any Error>? = state.withLock { state in
                    if case .cancelledEarly = state.sleepers[id] {
                        state.sleepers[id] = nil
                        return .failure(CancellationError())
                    }
                    if deadline <= state.now { return .success(()) }
                    state.sleepers[id] = .waiting(deadline, continuation)
                    return nil
                }
                if let resumeNow { continuation.resume(with: resumeNow) }
            }
        } onCancel: {
            let continuation: CheckedContinuation<Void, any Error>? = state.withLock { state in
                if case let .waiting(_, continuation) = state.sleepers[id] {
                    state.sleepers[id] = nil
                    return continuation
                }
                state.sleepers[id] = .cancelledEarly
                return nil
            }
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward and wakes every sleeper whose deadline has come.
    public func advance(by duration: Duration) {
        let due: [CheckedContinuation<Void, any Error>] = state.withLock { state in
            state.now = state.now.advanced(by: duration)
            var due: [CheckedContinuation<Void, any Error>] = []
            for (id, sleeper) in state.sleepers {
                if case let .waiting(deadline, continuation) = sleeper, deadline <= state.now {
                    due.append(continuation)
                    state.sleepers[id] = nil
                }
            }
            return due
        }
        for continuation in due { continuation.resume() }
    }
}
