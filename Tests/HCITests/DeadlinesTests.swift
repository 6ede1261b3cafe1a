import BluetoothCore
import HCITestSupport
import Testing

/// One layer's timeouts under one sleeping task (Sources/BluetoothCore/Concurrency/Deadlines.swift),
/// on a manual clock: what runs, when, and how many tasks sleep for it.
@Suite @BluetoothActor
struct DeadlinesTests {
    final class Fired {
        var names: [String] = []
    }

    @Test("Deadlines run at their time, earliest first, and a cancelled one never runs")
    func runInOrder() async {
        let clock = ManualClock()
        let deadlines = Deadlines(clock: clock)
        let fired = Fired()
        deadlines.schedule(after: .seconds(30)) { fired.names.append("30 s") }
        let cancelled = deadlines.schedule(after: .seconds(10)) { fired.names.append("cancelled") }
        deadlines.schedule(after: .seconds(20)) { fired.names.append("20 s") }
        deadlines.schedule(after: .seconds(20)) { fired.names.append("20 s, second") }
        deadlines.cancel(cancelled)
        #expect(deadlines.count == 3)
        // A cancel takes the deadline out and leaves the sleeper: it wakes at 10 s for nothing.
        #expect(await eventually { clock.sleepingUntil == [.seconds(10)] }, "one task sleeps for all of them")

        clock.advance(by: .seconds(19))
        // Woken at 10 s, it found nothing due and sleeps until the next deadline.
        #expect(await eventually { clock.sleepingUntil == [.seconds(20)] })
        #expect(fired.names.isEmpty, "nothing is due before 20 s")
        clock.advance(by: .seconds(1))
        #expect(await eventually { fired.names == ["20 s", "20 s, second"] })
        #expect(await eventually { clock.sleepingUntil == [.seconds(30)] })
        clock.advance(by: .seconds(10))
        #expect(await eventually { fired.names == ["20 s", "20 s, second", "30 s"] })
        #expect(await eventually { clock.sleeperCount == 0 }, "nothing left: the sleeper ends")
        #expect(deadlines.count == 0)
    }

    @Test("Deadlines in flight share one sleeper; an earlier one replaces it; none, no sleeper")
    func oneSleeper() async {
        let clock = ManualClock()
        let deadlines = Deadlines(clock: clock)
        let fired = Fired()
        // Commands in flight: each one's timeout is cancelled by its answer, in any order.
        var tokens: [Deadlines.Token] = []
        for request in 0..<100 {
            tokens.append(deadlines.schedule(after: .seconds(30)) { fired.names.append("request \(request)") })
            if request % 2 == 1 { deadlines.cancel(tokens[request - 1]) }
        }
        #expect(await eventually { clock.sleeperCount == 1 })
        #expect(deadlines.count == 50)
        for token in tokens { deadlines.cancel(token) }
        #expect(deadlines.count == 0)
        #expect(await eventually { clock.sleeperCount == 0 }, "the last cancel ends the sleeper")

        // An earlier deadline than the one slept for: the sleeper is replaced, not added to.
        deadlines.schedule(after: .seconds(30)) { fired.names.append("30 s") }
        #expect(await eventually { clock.sleepingUntil == [.seconds(30)] })
        deadlines.schedule(after: .seconds(5)) { fired.names.append("5 s") }
        #expect(await eventually { clock.sleepingUntil == [.seconds(5)] }, "one sleeper, until the earlier deadline")
        clock.advance(by: .seconds(5))
        #expect(await eventually { fired.names == ["5 s"] && clock.sleepingUntil == [.seconds(30)] })
        clock.advance(by: .seconds(25))
        #expect(await eventually { fired.names == ["5 s", "30 s"] && clock.sleeperCount == 0 })
    }

    @Test("An action may schedule another deadline, due at once or later")
    func scheduleFromAction() async {
        let clock = ManualClock()
        let deadlines = Deadlines(clock: clock)
        let fired = Fired()
        deadlines.schedule(after: .seconds(1)) {
            fired.names.append("first")
            deadlines.schedule(after: .zero) { fired.names.append("at once") }
            deadlines.schedule(after: .seconds(1)) { fired.names.append("a second later") }
        }
        clock.advance(by: .seconds(1))
        #expect(await eventually { fired.names == ["first", "at once"] })
        #expect(await eventually { clock.sleeperCount == 1 })
        clock.advance(by: .seconds(1))
        #expect(await eventually { fired.names == ["first", "at once", "a second later"] })
    }

    @Test("cancelAll stops the sleeper, also from inside an action, and nothing else runs")
    func cancelAll() async {
        let clock = ManualClock()
        let deadlines = Deadlines(clock: clock)
        let fired = Fired()
        deadlines.schedule(after: .seconds(1)) {
            fired.names.append("closing")
            deadlines.cancelAll()
        }
        deadlines.schedule(after: .seconds(1)) { fired.names.append("after the close") }
        deadlines.schedule(after: .seconds(2)) { fired.names.append("later") }
        clock.advance(by: .seconds(2))
        #expect(await eventually { fired.names == ["closing"] && clock.sleeperCount == 0 })
        #expect(deadlines.count == 0)

        deadlines.schedule(after: .seconds(1)) { fired.names.append("reopened") }
        deadlines.cancelAll()
        #expect(await eventually { clock.sleeperCount == 0 }, "a cancelled sleeper ends")
        clock.advance(by: .seconds(1))
        await Task.yield()
        #expect(fired.names == ["closing"])
    }
}
