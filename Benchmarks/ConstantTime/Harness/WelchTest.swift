// The statistics of dudect (Reparaz, Balasch, Verbauwhede, "Dude, is my code constant
// time?", DATE 2017): Welch's t-test between the two classes' timings, on all of them and
// on the sets cropped at a series of percentiles, the largest |t| being the verdict.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Welch's two-sample t-test, accumulated one measurement at a time (Welford's mean and
/// sum of squared deviations per class): enough for a t-statistic without keeping sums of
/// squares of cycle counts, which would lose the precision of a Double.
struct WelchTest {
    /// Measurements seen per class.
    private(set) var count: (Double, Double) = (0, 0)
    /// Running mean per class.
    private(set) var mean: (Double, Double) = (0, 0)
    /// Running sum of squared deviations from the mean, per class.
    private var squares: (Double, Double) = (0, 0)

    /// Adds one measurement `x` of class `inputClass` (0 or 1).
    mutating func add(_ x: Double, inputClass: UInt8) {
        if inputClass == 0 {
            count.0 += 1
            let delta = x - mean.0
            mean.0 += delta / count.0
            squares.0 += delta * (x - mean.0)
        } else {
            count.1 += 1
            let delta = x - mean.1
            mean.1 += delta / count.1
            squares.1 += delta * (x - mean.1)
        }
    }

    /// The smaller of the two classes' counts: a test is read only when both have enough.
    var smallerCount: Int { Int(min(count.0, count.1)) }

    /// t = (mean₀ − mean₁) / √(s₀²/n₀ + s₁²/n₁); 0 while a class has fewer than two
    /// measurements or neither varies (then the classes cannot be told apart this way).
    var t: Double {
        guard count.0 > 1, count.1 > 1 else { return 0 }
        let variance0 = squares.0 / (count.0 - 1), variance1 = squares.1 / (count.1 - 1)
        let standardError = (variance0 / count.0 + variance1 / count.1).squareRoot()
        guard standardError > 0 else { return 0 }
        return (mean.0 - mean.1) / standardError
    }
}

/// The verdict on one operation's measurements: the test with the largest |t| among the
/// raw set and the cropped ones.
struct LeakageTest {
    /// Measurements per class (fixed, random), as the raw test counted them.
    let counts: (fixed: Int, random: Int)
    /// Median counter ticks per class (fixed, random): the size of the operation, for the
    /// report; the medians are not what the test compares.
    let medians: (fixed: UInt64, random: UInt64)
    /// The largest |t| over the tests with enough measurements.
    let maxT: Double
    /// Which test gave it: "raw", or "< p99.9" for the set cropped at that percentile.
    let maxTest: String
    /// |t| of the uncropped set alone.
    let rawT: Double

    /// The cropping points: dudect's percentiles 1 − 0.5^(10(i+1)/100), i = 0 … 99, from
    /// 6.7 % up to 99.9 %, and below them 0.5 % to 6 %. Cropping drops the long tail that
    /// interrupts, migrations and other processes add to an operation's time (the mean is not
    /// robust against it), and a leak that shifts the body of the distribution stands out more
    /// in a cropped set. The low points are ours: on a shared machine most P-256 runs are
    /// slowed by whatever shares the core, and the few that were not, the fastest 2 or 3 %,
    /// are where a leak of a few thousand cycles shows (the P-256 self-check: |t| 20 to 30
    /// there, about 2 in dudect's sets alone, on the same recorded runs).
    static let croppingPercentiles: [Double] =
        [0.005, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.06]
        + (0..<100).map { 1 - pow(0.5, 10 * Double($0 + 1) / 100) }

    /// Fewest measurements per class for a cropped set's t to count. Small, for the low
    /// cropping points; without a leak, the largest |t| of a run stays far from the threshold
    /// of 10 all the same (the classes of seven recorded runs relabelled at random, 700 times
    /// in all: 4.3 at most).
    static let minimumPerClass = 50

    /// Runs the tests over `ticks[i]` of class `classes[i]`.
    init(ticks: [UInt64], classes: [UInt8]) {
        precondition(ticks.count == classes.count && !ticks.isEmpty)
        let sorted = ticks.sorted()
        // Thresholds from both classes pooled, so a cut is the same for both.
        let thresholds = Self.croppingPercentiles.map { sorted[min(sorted.count - 1, Int($0 * Double(sorted.count)))] }
        var raw = WelchTest()
        var cropped = [WelchTest](repeating: WelchTest(), count: thresholds.count)
        for (tick, inputClass) in zip(ticks, classes) {
            let x = Double(tick)
            raw.add(x, inputClass: inputClass)
            for (index, threshold) in thresholds.enumerated() where tick < threshold {
                cropped[index].add(x, inputClass: inputClass)
            }
        }
        var best = (t: abs(raw.t), name: "raw")
        for (index, test) in cropped.enumerated()
        where test.smallerCount >= Self.minimumPerClass && abs(test.t) > best.t {
            best = (abs(test.t), "< p" + percentString(Self.croppingPercentiles[index]))
        }
        counts = (Int(raw.count.0), Int(raw.count.1))
        let fixed = zip(ticks, classes).filter { $0.1 == 0 }.map(\.0).sorted()
        let random = zip(ticks, classes).filter { $0.1 == 1 }.map(\.0).sorted()
        medians = (fixed.isEmpty ? 0 : fixed[fixed.count / 2], random.isEmpty ? 0 : random[random.count / 2])
        maxT = best.t
        maxTest = best.name
        rawT = abs(raw.t)
    }
}

/// A percentile as "99.9", one decimal.
private func percentString(_ fraction: Double) -> String {
    let tenths = Int((fraction * 1000).rounded())
    return "\(tenths / 10).\(tenths % 10)"
}
