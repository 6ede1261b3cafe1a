import Foundation

/// The executables built beside the running test bundle (`bluejay`, `bluejay-gateway`, …):
/// the folder of the test process's own executable, so the tests drive the tools of the same
/// build, whichever scratch folder and sanitizer made it (`make test SANITIZE=thread` runs
/// the command-line suites on the instrumented tools too).
package enum BuiltProducts {
    /// The products folder, e.g. `.build/x86_64-unknown-linux-gnu/debug`.
    package static let directory: URL = {
        // /proc/self/exe names the test runner (`…/debug/BluejayPackageTests.xctest`) whatever
        // path or symlink it was started by.
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: executable).deletingLastPathComponent()
    }()

    /// The product `name` of this build.
    package static func url(_ name: String) -> URL { directory.appendingPathComponent(name) }
}
