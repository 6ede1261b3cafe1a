// What bluejay-ct measures: BluetoothCrypto's operations on a secret, through its public API
// (the code SMP runs), each with a fixed secret against random ones. The fixed secrets are
// corner cases, as dudect advises, because they make a leak larger: the scalar 1 (one set
// bit, the accumulator at infinity for 255 of the 256 steps, every masked select going the
// same way) and the all-zero AES key.
import BluetoothCrypto

/// One measured operation: its name in the report, and how to measure it `count` times.
struct MeasuredOperation {
    /// The name in the report.
    let name: String
    /// Measurements in a run (before --scale).
    let count: Int
    /// In the self-check: whether a run fails unless this leak is flagged. A leak too small
    /// to be seen on a loaded machine is measured and reported, never required, so the
    /// self-check fails only when the harness is broken, not when the machine is busy.
    var required = true
    /// Measures it `count` times and returns the verdict.
    let run: (_ count: Int) -> LeakageTest
}

/// The fixed P-256 scalar: d = 1.
let fixedScalar = P256PrivateKey(rawRepresentation: [UInt8](repeating: 0, count: 31) + [1])!

/// The fixed AES key: 16 zero octets.
let fixedAESKey = [UInt8](repeating: 0, count: 16)

/// A private key for `inputClass`: the fixed scalar, or a random one.
func scalar(_ inputClass: InputClass, _ generator: inout SystemRandomNumberGenerator) -> P256PrivateKey {
    inputClass == .fixed ? fixedScalar : P256PrivateKey(using: &generator)
}

/// An AES key for `inputClass`: a fresh copy of the fixed key (its own storage, like a random
/// one's), or random octets.
func aesKey(_ inputClass: InputClass, _ generator: inout SystemRandomNumberGenerator) -> [UInt8] {
    inputClass == .fixed ? fixedAESKey.map { $0 } : randomOctets(16, &generator)
}

/// `count` random octets: public inputs, and random secrets.
func randomOctets(_ count: Int, _ generator: inout SystemRandomNumberGenerator) -> [UInt8] {
    (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
}

/// The operations of an ordinary run: scalar multiplication on a fixed and on a random
/// point, one AES block, one AES-CMAC. The counts take about 15 s on a quiet 2-core
/// machine and 40 s on a loaded one; on a quiet one they see leaks the size of the
/// self-check's (below) at |t| 20 and more, on one whose cores are busy throughout only
/// larger ones (docs/Security.md, "Constant time").
func constantTimeOperations() -> [MeasuredOperation] {
    // Peers' public keys (public inputs): one pool for both classes.
    var generator = SystemRandomNumberGenerator()
    let peers = (0..<64).map { _ in P256PrivateKey(using: &generator).publicKey }
    return [
        MeasuredOperation(name: "P-256 d·G (publicKey)", count: 10_000) { count in
            let (ticks, classes) = measure(count: count, makeInput: scalar) { $0.publicKey }
            return LeakageTest(ticks: ticks, classes: classes)
        },
        MeasuredOperation(name: "P-256 d·Q (sharedSecret)", count: 10_000) { count in
            let (ticks, classes) = measure(
                count: count,
                makeInput: { inputClass, generator in
                    (scalar(inputClass, &generator), peers[Int.random(in: 0..<peers.count, using: &generator)])
                }
            ) { $0.0.sharedSecret(with: $0.1) }
            return LeakageTest(ticks: ticks, classes: classes)
        },
        MeasuredOperation(name: "AES-128 e(k, m), secret k", count: 200_000) { count in
            let (ticks, classes) = measure(
                count: count,
                makeInput: { inputClass, generator in
                    (aesKey(inputClass, &generator), randomOctets(16, &generator))
                }
            ) { e(key: $0.0, plaintext: $0.1) }
            return LeakageTest(ticks: ticks, classes: classes)
        },
        MeasuredOperation(name: "AES-CMAC(k, 32 octets), secret k", count: 200_000) { count in
            let (ticks, classes) = measure(
                count: count,
                makeInput: { inputClass, generator in
                    (aesKey(inputClass, &generator), randomOctets(32, &generator))
                }
            ) { aesCMAC(key: $0.0, message: $0.1) }
            return LeakageTest(ticks: ticks, classes: classes)
        },
    ]
}

/// The self-check's operations: the operations above with a leak added by hand, each the
/// shape of a bug this test is for, measured as often as the real ones.
func leakyOperations() -> [MeasuredOperation] {
    [
        // One AES block, then a branch on each bit of the key's first octet: the shape of the
        // leak this test found in AES-CMAC's subkeys (RFC 4493's `if MSB(L)`, AESCMAC.swift)
        // eight times over, about 1 % of the block. Required: flagged in every run so far,
        // loaded or not (|t| 25 to 600), so a harness that does not flag it (a broken clock,
        // classes mixed up, the optimiser timing nothing) is broken, and the run fails.
        MeasuredOperation(name: "self-check: e(k, m) + a branch per bit of k[0]", count: 200_000) { count in
            let (ticks, classes) = measure(
                count: count,
                makeInput: { inputClass, generator in
                    (aesKey(inputClass, &generator), randomOctets(16, &generator))
                }
            ) { input in
                LeakyBlock(block: e(key: input.0, plaintext: input.1), accumulator: branchOnEachBit(of: input.0[0..<1]))
            }
            return LeakageTest(ticks: ticks, classes: classes)
        },
        // d·G, then a branch on each of the scalar's 256 bits, a few instructions taken on a
        // set bit: what a compiler would make of the ladder's masked select if it turned the
        // mask back into a jump, and no more time than that (about half a percent of d·G).
        // Reported, not required: how well this run could see that bug. When the machine has
        // quiet moments |t| is 20 to 110; when other processes keep both cores busy for the
        // whole run, P-256's times spread so far that it falls to 2 to 6 (docs/Security.md,
        // "Constant time").
        MeasuredOperation(name: "self-check: d·G + a branch per scalar bit", count: 10_000, required: false) { count in
            let (ticks, classes) = measure(
                count: count,
                makeInput: { inputClass, generator in
                    let key = scalar(inputClass, &generator)
                    return (key, key.rawRepresentation)
                }
            ) { input in
                LeakyResult(publicKey: input.0.publicKey, accumulator: branchOnEachBit(of: input.1))
            }
            return LeakageTest(ticks: ticks, classes: classes)
        },
    ]
}

/// What the self-check's operation returns: both parts, so neither can be optimised away.
struct LeakyResult: Equatable {
    /// d·G.
    let publicKey: P256PublicKey
    /// What the branches computed.
    let accumulator: UInt64
}

/// What the AES self-check returns: both parts, so neither can be optimised away.
struct LeakyBlock: Equatable {
    /// e(k, m).
    let block: [UInt8]
    /// What the branch computed.
    let accumulator: UInt64
}

/// Goes through `secret` bit by bit and, where a bit is set, calls ``step(_:)``: a branch
/// the compiler cannot turn into a masked select, because the call is opaque to it.
func branchOnEachBit(of secret: some Collection<UInt8>) -> UInt64 {
    var accumulator: UInt64 = 0
    for octet in secret {
        for bit in 0..<8 where (octet >> bit) & 1 == 1 {
            accumulator = step(accumulator)
        }
    }
    return accumulator
}

/// A few instructions behind a call the optimiser does not inline.
@inline(never)
func step(_ value: UInt64) -> UInt64 {
    value &* 0x9E37_79B9_7F4A_7C15 &+ 1
}
