@testable import Bluejay
import Testing

/// The bound between the stack and a listen's callback.
struct ListenBacklogTests {
    @Test func acceptsUpToTheLimitThenOverflowsOnceThenDrops() {
        let backlog = ListenBacklog(limit: 3)
        #expect((0..<3).map { _ in backlog.arrived() } == [.accepted, .accepted, .accepted])
        #expect(backlog.pending == 3)
        #expect(backlog.arrived() == .overflowed)
        #expect(backlog.arrived() == .dropped)
        // Taking values after the overflow does not reopen the listen.
        backlog.taken()
        #expect(backlog.arrived() == .dropped)
    }

    @Test func anAppThatKeepsUpNeverOverflows() {
        let backlog = ListenBacklog(limit: 2)
        for _ in 0..<10_000 {
            #expect(backlog.arrived() == .accepted)
            backlog.taken()
        }
        #expect(backlog.pending == 0)
        backlog.taken()
        #expect(backlog.pending == 0, "never below zero")
    }
}
