import Foundation
import Synchronization

/// Ends a program that ``run(_:_:environment:input:idleInput:interrupt:)`` runs, with SIGINT
/// (a person's Ctrl-C), once the test's scenario is over and the program has said what the
/// test waits for. A tool that serves a central (`serve`, `advertise`) runs until then:
/// its own `--duration` would be a speed check in disguise (6 s ran out under a
/// ThreadSanitizer build on a loaded machine before the central had connected).
package final class ProgramInterrupt: Sendable {
    private struct State {
        var process: pid_t?
        var output = ""
    }
    private let state = Mutex(State())

    package init() {}

    /// Waits, within the hang guard, until `text` has appeared `times` times on the
    /// program's standard output, then sends it SIGINT. Throws when it never does (the
    /// program is interrupted anyway, so the test's `run` returns).
    package func interrupt(after text: String, times: Int = 1) async throws {
        let said = await eventually {
            self.state.withLock { $0.output.components(separatedBy: text).count - 1 >= times }
        }
        // run(…) registers the process as it starts it; the text cannot come before.
        _ = await eventually { self.state.withLock { $0.process != nil } }
        if let process = state.withLock({ $0.process }) { kill(process, SIGINT) }
        guard said else {
            throw ProgramInterruptError(
                description: "the program never printed '\(text)'; it printed: \(state.withLock { $0.output })")
        }
    }

    /// The running program (``run(_:_:environment:input:idleInput:interrupt:)`` calls this).
    func started(_ process: pid_t) { state.withLock { $0.process = process } }

    /// More of its standard output, as it comes.
    func printed(_ data: Data) { state.withLock { $0.output += String(decoding: data, as: UTF8.self) } }
}

/// The text a ``ProgramInterrupt`` waited for never came.
package struct ProgramInterruptError: Error, CustomStringConvertible {
    package let description: String
}
