import BluetoothCrypto
import Synchronization

/// Where pairing gets its randomness: nonces, passkeys shown, the P-256 key pair.
///
/// ``system`` is the only choice for real use. `seeded(_:)` (debug builds only) makes every pairing
/// reproduce the same bytes, which is what a recorded pairing replayed in a conformance
/// test needs (the peer's recorded confirm values only verify against the recorded keys).
/// A seeded pairing is not secret: never use it with a real device.
public struct PairingEntropy: Sendable {
    /// `count` random octets.
    public let bytes: @Sendable (Int) -> [UInt8]

    /// Entropy from `bytes`.
    public init(bytes: @escaping @Sendable (Int) -> [UInt8]) { self.bytes = bytes }

    /// The system's random number generator.
    public static let system = PairingEntropy { count in
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    #if DEBUG
        /// A deterministic stream (SplitMix64) from `seed`. For replayed tests only, and in
        /// debug builds only: a release build (the board binary, an app's release) has no way
        /// to make pairing predictable.
        public static func seeded(_ seed: UInt64) -> PairingEntropy {
            let state = Mutex(seed)
            return PairingEntropy { count in
                state.withLock { state in
                    var bytes: [UInt8] = []
                    while bytes.count < count {
                        state &+= 0x9E37_79B9_7F4A_7C15
                        var z = state
                        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                        z ^= z >> 31
                        bytes += withUnsafeBytes(of: z.littleEndian) { Array($0) }
                    }
                    return Array(bytes.prefix(count))
                }
            }
        }
    #endif

    /// A P-256 key pair: the system's, or one made from this entropy's octets.
    /// The octets it was made from are wiped.
    func privateKey() -> P256PrivateKey {
        for _ in 0..<8 {
            // A 32-octet string is a valid scalar unless it is 0 or ≥ n: retry then.
            var octets = bytes(32)
            defer { SecretBytes.wipe(&octets) }
            if let key = P256PrivateKey(rawRepresentation: octets) { return key }
        }
        return P256PrivateKey()
    }

    /// A six-digit passkey; the octets it was made from are wiped.
    func passkey() -> UInt32 {
        var octets = bytes(4)
        defer { SecretBytes.wipe(&octets) }
        let raw = octets.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (8 * UInt32($1.offset)) }
        return raw % 1_000_000
    }
}
