/// Checks `condition` until it holds or `limit` passes, and says whether it held. For
/// state that settles with no event to wait on (a cancelled timer's task unwinding, a
/// reader thread joined, a counter bumped on another thread); it returns as soon as the
/// condition holds, so a slow machine only makes it wait longer, never fail sooner.
package func eventually(within limit: Duration = .seconds(10), isolation: isolated (any Actor)? = #isolation,
                       _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return await condition()
}
