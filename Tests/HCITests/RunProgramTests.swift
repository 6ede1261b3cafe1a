import Foundation
import HCITestSupport
import TestTraits
import Testing

/// The test rig's `run(…)`: a program it starts never outlives the test that started it. A
/// test that failed before interrupting `bluejay serve` waited for ever on the `async let`
/// of its run (the `defer` that stopped the peer never came), and held a CI run until its
/// 90 minutes were up.
@Suite(.hangGuard) struct RunProgramTests {
    @Test func aCancelledRunKillsItsProgram() async throws {
        let running = Task { try await run(URL(fileURLWithPath: "/bin/sleep"), ["3600"]) }
        running.cancel()
        let result = try await running.value
        #expect(result.status == SIGKILL, "a program killed by a signal ends with the signal's number")
        #expect(result.stderr.contains("killed with SIGKILL: the test was cancelled"), "stderr: \(result.stderr)")
    }

    /// The scope of a failing test ends its `async let` run: the way the hang came about.
    @Test func aFailureBesideAnAsyncLetRunEndsIt() async throws {
        struct ScenarioFailed: Error {}
        let stop = ProgramInterrupt()
        do {
            async let _ = run(URL(fileURLWithPath: "/bin/cat"), [], idleInput: .openPipe, interrupt: stop)
            throw ScenarioFailed()
        } catch is ScenarioFailed {
            // Reached only once the run is over: the scope awaited its cancelled child.
        }
    }
}
