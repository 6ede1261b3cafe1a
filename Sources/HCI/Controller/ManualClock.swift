import Synchronization

/// A clock that moves only when told to: timeouts (command, ATT 30 s, connection) are
/// tested without waiting for them.
public final class ManualClock: Clock, Sendable {
    /// An instant on a manual clock: the time since its start.
    public struct Instant: InstantProtocol {
        public var offset: Duration
        public init(offset: Duration) { self.offset = offset }
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
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

    public var now: Instant { state.withLock { $0.now } }
    public var minimumResolution: Duration { .zero }

    /// How many tasks are sleeping on this clock.
    public var sleeperCount: Int {
        state.withLock { state in state.sleepers.values.filter { if case .waiting = $0 { true } else { false } }.count }
    }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
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
