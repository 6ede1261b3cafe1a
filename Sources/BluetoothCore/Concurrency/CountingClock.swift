import Synchronization

/// A clock that keeps count of the tasks sleeping on it: every timeout of the stack (a
/// command's, the ATT and SMP 30 s timers, a connection attempt's) is such a sleep, so
/// ``sleeping`` is the number of timers armed right now. A timer still armed after what it
/// guards has ended is a leak; the fault-injection tests look for exactly that.
public final class CountingClock<Base: Clock>: Clock, Sendable where Base.Duration == Duration, Base: Sendable {
    /// The instants of the clock underneath.
    public typealias Instant = Base.Instant

    private let base: Base
    private let count = Atomic<Int>(0)

    /// Counts the sleeps on `base`.
    public init(_ base: Base) { self.base = base }

    /// Tasks sleeping on this clock right now.
    public var sleeping: Int { count.load(ordering: .relaxed) }

    /// The underlying clock's now.
    public var now: Instant { base.now }
    /// The underlying clock's resolution.
    public var minimumResolution: Duration { base.minimumResolution }

    /// Sleeps on the underlying clock, counted while it lasts (cancelled or not).
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        count.add(1, ordering: .relaxed)
        defer { count.subtract(1, ordering: .relaxed) }
        try await base.sleep(until: deadline, tolerance: tolerance)
    }
}
