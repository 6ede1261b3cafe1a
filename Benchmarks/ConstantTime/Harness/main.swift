// bluejay-ct: whether BluetoothCrypto's P-256 and AES run in constant time, measured rather
// than claimed: dudect's fixed-against-random Welch t-test (docs/Security.md, "Constant
// time"). Built in release, the code SMP runs; `make bench-check` runs it in CI, with the
// self-check.
//
//   bluejay-ct [--scale F]                 the operations; exit 1 if any max |t| > 10
//   bluejay-ct --self-check [--scale F]    deliberately leaky operations; exit 1 unless the
//                                          required one's max |t| > 10 (the harness must see
//                                          a leak), the other's |t| printed as this run's
//                                          sensitivity in P-256
//
// --scale multiplies every measurement count (a longer run sees smaller leaks). The counts
// are fixed, never a time limit: a loaded machine takes longer rather than measuring less.
import CycleCounter
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// dudect's verdict "definitely not constant time": above it a run fails. A test fails only
/// for a leak: on an operation with no leak |t| behaves like a standard normal variable, so
/// the largest of the 110 correlated tests of a run stays around 3 to 4; noise from other
/// processes widens the spread of both classes alike, which lowers t rather than raising it.
let threshold = 10.0

/// Below this, dudect's "no evidence of leakage".
let noEvidenceBelow = 4.5

/// The command line: --self-check, --scale F.
struct Options {
    /// Measure the leaky operations instead.
    var selfCheck = false
    /// Factor on every measurement count.
    var scale = 1.0

    /// Parses `arguments` (without the program name); nil on anything else.
    init?(_ arguments: [String]) {
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--self-check": selfCheck = true
            case "--scale":
                guard let value = rest.popFirst().flatMap(Double.init), value > 0 else { return nil }
                scale = value
            default: return nil
            }
        }
    }
}

guard let options = Options(Array(CommandLine.arguments.dropFirst())) else {
    print("usage: bluejay-ct [--self-check] [--scale F]")
    exit(2)
}

let operations = options.selfCheck ? leakyOperations() : constantTimeOperations()
print(
    "bluejay-ct: dudect fixed-vs-random Welch t-test, counter \(String(cString: ct_counter_name())), "
        + "fail above |t| = \(fixed1(threshold))\(options.selfCheck ? " (self-check: leaky operations)" : "")")
var largest = 0.0
var unseen: [String] = [], leaking: [String] = []
let runStarted = ContinuousClock.now
for operation in operations {
    let count = max(1000, Int((Double(operation.count) * options.scale).rounded()))
    let started = ContinuousClock.now
    let test = operation.run(count)
    largest = max(largest, test.maxT)
    if test.maxT > threshold { leaking.append(operation.name) }
    var verdict =
        test.maxT > threshold
        ? "LEAKS" : test.maxT < noEvidenceBelow ? "no evidence of leakage" : "inconclusive, under the threshold"
    if options.selfCheck {
        if test.maxT <= threshold && operation.required { unseen.append(operation.name) }
        verdict +=
            operation.required
            ? " (must leak)"
            : test.maxT > threshold
                ? " (this run could see a leak this small)"
                : " (not required: this run was too noisy to see a leak this small in P-256)"
    }
    print(
        "\(operation.name): \(test.counts.fixed + test.counts.random) measurements "
            + "(\(test.counts.fixed) fixed, \(test.counts.random) random), median \(test.medians.fixed) / \(test.medians.random) ticks; "
            + "max |t| = \(fixed1(test.maxT)) (\(test.maxTest)), raw |t| = \(fixed1(test.rawT)); \(verdict) [\(fixed1(seconds(since: started))) s]"
    )
}

if options.selfCheck {
    if unseen.isEmpty {
        print("bluejay-ct self-check passed: the required leak was flagged, in \(fixed1(seconds(since: runStarted))) s")
    } else {
        print(
            "bluejay-ct self-check FAILED: a known leak went unseen (\(unseen.joined(separator: ", "))); the harness cannot be trusted"
        )
        exit(1)
    }
} else if largest > threshold {
    print(
        "bluejay-ct FAILED: timing depends on the secret in \(leaking.joined(separator: ", ")) (max |t| \(fixed1(largest)) > \(fixed1(threshold)))"
    )
    exit(1)
} else {
    print(
        "bluejay-ct passed: max |t| \(fixed1(largest)) ≤ \(fixed1(threshold)) for every operation, in \(fixed1(seconds(since: runStarted))) s"
    )
}

/// `value` with one decimal, without Foundation.
func fixed1(_ value: Double) -> String {
    guard value.isFinite else { return "\(value)" }
    let tenths = Int((value * 10).rounded())
    return "\(tenths < 0 ? "-" : "")\(abs(tenths) / 10).\(abs(tenths) % 10)"
}

/// Wall seconds since `start`.
func seconds(since start: ContinuousClock.Instant) -> Double {
    (ContinuousClock.now - start) / .milliseconds(1) / 1000
}
