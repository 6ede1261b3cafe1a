/// A clock whose instants are the time since it was made, so that a deadline is a plain
/// `Duration` whatever clock is underneath (`ContinuousClock`, or a test's `ManualClock`):
/// what ``Deadlines`` and Bluejay's own timers (a scan's duration, when a peripheral not
/// heard from is reported lost, the delays before a lost controller is reopened) wait on.
public struct ElapsedClock: Sendable {
    /// An instant: the time since the clock was made.
    public typealias Instant = Duration

    private let reading: @Sendable () -> Instant
    private let sleeping: @Sendable (Instant) async throws -> Void

    /// Instants on `clock`, counted from now.
    public init(_ clock: any Clock<Duration>) { self.init(opened: clock) }

    private init<Base: Clock<Duration>>(opened clock: Base) {
        let origin = clock.now
        reading = { origin.duration(to: clock.now) }
        sleeping = { deadline in try await clock.sleep(until: origin.advanced(by: deadline), tolerance: nil) }
    }

    /// The current instant.
    public var now: Instant { reading() }

    /// Suspends until `deadline` (at once if it has passed); throws if cancelled.
    public func sleep(until deadline: Instant) async throws { try await sleeping(deadline) }

    /// Suspends for `duration` from now; throws if cancelled.
    public func sleep(for duration: Duration) async throws { try await sleep(until: now + duration) }
}
