// Random test inputs that are the same on every run, so a failure can be reproduced: the
// one seeded generator of every test target.

/// SplitMix64 (Steele, Lea, Flood 2014) from a fixed seed: not for keys, only for test inputs.
package struct SeededGenerator: RandomNumberGenerator {
    /// The state, advanced by the golden-ratio increment on every draw.
    private var state: UInt64

    /// A stream starting from `seed`.
    package init(seed: UInt64) { state = seed }

    /// The next 64 bits.
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `count` random octets.
    package mutating func octets(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &self) }
    }
}
