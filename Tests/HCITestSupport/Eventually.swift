/// How long ``eventually(within:isolation:_:)`` waits by default: a hang guard, not a speed
/// check. It returns as soon as the condition holds, so the limit costs nothing when the
/// test passes; it only has to stay above the slowest run CI makes (ThreadSanitizer, beside
/// another CI lane, on 2 cores: a wait of 10 s once ran out there under load).
package let hangGuardWait: Duration = .seconds(120)

/// Checks `condition` until it holds or `limit` passes, and says whether it held. For
/// state that settles with no event to wait on (a cancelled timer's task unwinding, a
/// reader thread joined, a counter bumped on another thread); it returns as soon as the
/// condition holds, so a slow machine only makes it wait longer, never fail sooner.
package func eventually(
    within limit: Duration = hangGuardWait, isolation: isolated (any Actor)? = #isolation,
    _ condition: () async -> Bool
) async -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return await condition()
}

/// Checks `condition` until it holds, for long work that keeps moving (hundreds of
/// advertisers heard through a ThreadSanitizer build on a loaded machine can take minutes);
/// gives up only once `progress` has not changed for `stall`: a hang guard on a stall, not
/// on the whole run's time. Says whether `condition` held.
package func eventually<Progress: Equatable & Sendable>(
    stallingAfter stall: Duration = hangGuardWait, isolation: isolated (any Actor)? = #isolation,
    progress: () async -> Progress, _ condition: () async -> Bool
) async -> Bool {
    var last = await progress()
    var movedAt = ContinuousClock.now
    while true {
        if await condition() { return true }
        let now = ContinuousClock.now, current = await progress()
        if current != last {
            last = current
            movedAt = now
        } else if now - movedAt > stall {
            return await condition()
        }
        try? await Task.sleep(for: .milliseconds(5))
    }
}
