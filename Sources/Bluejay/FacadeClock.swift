/// The clock Bluejay's own timers wait on (``StartOptions/clock``): a scan's duration, when a
/// peripheral not heard from is reported lost, the delays before a lost controller is
/// reopened. Its instants are the time since it was made, so a deadline is a plain
/// `Duration` whatever clock is underneath (`ContinuousClock`, or a test's `ManualClock`).
struct FacadeClock: Sendable {
    /// An instant: the time since the clock was made.
    typealias Instant = Duration

    private let reading: @Sendable () -> Instant
    private let sleeping: @Sendable (Instant) async throws -> Void

    /// Instants on `clock`, counted from now.
    init(_ clock: any Clock<Duration>) { self.init(opened: clock) }

    private init<Base: Clock<Duration>>(opened clock: Base) {
        let origin = clock.now
        reading = { origin.duration(to: clock.now) }
        sleeping = { deadline in try await clock.sleep(until: origin.advanced(by: deadline), tolerance: nil) }
    }

    /// The current instant.
    var now: Instant { reading() }

    /// Suspends until `deadline` (at once if it has passed); throws if cancelled.
    func sleep(until deadline: Instant) async throws { try await sleeping(deadline) }

    /// Suspends for `duration` from now; throws if cancelled.
    func sleep(for duration: Duration) async throws { try await sleep(until: now + duration) }
}
