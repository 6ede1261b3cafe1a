import BluetoothCrypto
import TestTraits
import Testing

// Our P-256 against the Core Specification's sample keys, the curve's own points, and
// OpenSSL's (OracleVectors.swift); and the keys it must refuse.

/// Values of P-256 (SEC 2, 2.4.2) and of the Core Specification's samples.
enum Curve {
    /// The field prime p.
    static let p = hex("ffffffff 00000001 00000000 00000000 00000000 ffffffff ffffffff ffffffff")
    /// The order n of G.
    static let n = hex("ffffffff 00000000 ffffffff ffffffff bce6faad a7179e84 f3b9cac2 fc632551")
    /// G's x.
    static let gx = hex("6b17d1f2 e12c4247 f8bce6e5 63a440f2 77037d81 2deb33a0 f4a13945 d898c296")
    /// G's y.
    static let gy = hex("4fe342e2 fe1a7f9b 8ee7eb4a 7c0f9e16 2bce3357 6b315ece cbb64068 37bf51f5")
    /// p − Gy, the y of −G.
    static let pMinusGy = hex("b01cbd1c 01e58065 711814b5 83f061e9 d431cca9 94cea131 3449bf97 c840ae0a")

    /// The SMP debug private key (Core Vol 3, Part H, 2.3.5.6.1), also Private A of the
    /// P-256 sample data (Vol 2, Part G, 7.1.2.1).
    static let debugPrivate = hex("3f49f6d4 a3c55f38 74c9b3e3 d2103f50 4aff607b eb40b799 5899b8a6 cd3c1abd")
    /// The debug public key's X and Y (the same in Zephyr's and BTstack's sources).
    static let debugPublicX = hex("20b003d2 f297be2c 5e2c83a7 e9f9a5b9 eff49111 acf4fddb cc030148 0e359de6")
    static let debugPublicY = hex("dc809c49 652aeb6d 63329abf 5a52155c 766345c2 8fed3024 741c8ed0 1589d28b")
    /// Private B of the P-256 sample data set 1, its public key, and the DHKey of A and B.
    static let privateB = hex("55188b3d 32f6bb9a 900afcfb eed4e72a 59cb9ac2 f19d7cfb 6b4fdd49 f47fc5fd")
    static let publicBX = hex("1ea1f0f0 1faf1d96 09592284 f19e4c00 47b58afd 8615a69f 559077b2 2faaa190")
    static let publicBY = hex("4c55f33e 429dad37 7356703a 9ab85160 472d1130 e28e3676 5f89aff9 15b1214a")
    static let dhKey = hex("ec0234a3 57c8ad05 341010a6 0a397d9b 99796b13 b4f866f1 868d34f3 73bfa698")

    /// A point with x = 0, so that x + p still fits in 256 bits (found by x³ − 3x + b being a
    /// square for x = 0, y its root).
    static let zeroXPointY = hex("66485c78 0e2f83d7 2433bd5d 84a06bb6 541c2af3 1dae8717 28bf856a 174f93f4")
    /// A point whose y = 2^256 − 4 − p is small enough that y + p fits in 256 bits (x a root
    /// of x³ − 3x + b − y², found by gcd(X^p − X, the cubic)).
    static let smallYPointX = hex("7fdf2576 794222a3 1c484202 261613fa 5f2367de 32d405eb 4938e370 8cf9f802")
    static let smallYPointY = hex("00000000 fffffffe ffffffff ffffffff fffffffe ffffffff ffffffff fffffffd")
}

@Suite("P-256")
struct P256Tests {
    @Test("The SMP debug key pair (Core Vol 3, Part H, 2.3.5.6.1)")
    func debugKeyPair() throws {
        let key = try #require(P256PrivateKey(rawRepresentation: Curve.debugPrivate))
        #expect(key.rawRepresentation == Curve.debugPrivate)
        #expect(key.publicKey.rawRepresentation == Curve.debugPublicX + Curve.debugPublicY)
    }

    @Test("P-256 sample data set 1 (Core Vol 2, Part G, 7.1.2.1): B's public key and the DHKey both ways")
    func sampleDataSet1() throws {
        let a = try #require(P256PrivateKey(rawRepresentation: Curve.debugPrivate))
        let b = try #require(P256PrivateKey(rawRepresentation: Curve.privateB))
        #expect(b.publicKey.rawRepresentation == Curve.publicBX + Curve.publicBY)
        #expect(a.sharedSecret(with: b.publicKey) == Curve.dhKey)
        #expect(b.sharedSecret(with: a.publicKey) == Curve.dhKey)
        #expect(Curve.dhKey == Sample.dhKey)  // the DHKey the f5 sample of Part H, D.3 starts from
    }

    @Test("1·G = G, and (n − 1)·G = −G = (Gx, p − Gy)")
    func generatorAndItsNegation() throws {
        let one = try #require(P256PrivateKey(rawRepresentation: [UInt8](repeating: 0, count: 31) + [1]))
        #expect(one.publicKey.rawRepresentation == Curve.gx + Curve.gy)
        var nMinusOne = Curve.n
        nMinusOne[31] -= 1
        let last = try #require(P256PrivateKey(rawRepresentation: nMinusOne))
        #expect(last.publicKey.rawRepresentation == Curve.gx + Curve.pMinusGy)
        // d·G and (n − d)·G share their x, so the DHKey with the generator agrees.
        let g = try #require(P256PublicKey(rawRepresentation: Curve.gx + Curve.gy))
        #expect(last.sharedSecret(with: g) == Curve.gx)
        #expect(one.sharedSecret(with: g) == Curve.gx)
    }

    @Test("100 keys, the edges of [1, n − 1] among them: public keys and DHKeys as OpenSSL makes them")
    func againstOpenSSL() throws {
        #expect(p256Oracle.count == 100)
        for (d, publicKey, peer, shared) in p256Oracle {
            let key = try #require(P256PrivateKey(rawRepresentation: hex(d)))
            #expect(key.publicKey.rawRepresentation == hex(publicKey), "d \(d)")
            #expect(P256PublicKey(rawRepresentation: hex(publicKey)) == key.publicKey)
            let theirs = try #require(P256PublicKey(rawRepresentation: hex(peer)))
            #expect(key.sharedSecret(with: theirs) == hex(shared), "d \(d)")
        }
    }

    @Test("Public keys OpenSSL refuses as off the curve (one bit of y flipped) are refused")
    func offCurveAsOpenSSL() {
        #expect(p256OffCurve.count == 30)
        for raw in p256OffCurve { #expect(P256PublicKey(rawRepresentation: hex(raw)) == nil, "\(raw)") }
    }

    @Test("Keys from a generator: the same seed makes the same key, and it agrees with others")
    func generatorKeys() throws {
        var first = SeededGenerator(seed: 0x9256), second = SeededGenerator(seed: 0x9256)
        let a = P256PrivateKey(using: &first), again = P256PrivateKey(using: &second)
        #expect(a.rawRepresentation == again.rawRepresentation)
        let b = P256PrivateKey(using: &first)
        #expect(a.rawRepresentation != b.rawRepresentation)
        #expect(a.sharedSecret(with: b.publicKey) == b.sharedSecret(with: a.publicKey))
    }

    @Test("Keys from the system's generator are valid and agree with each other")
    func systemKeys() {
        let a = P256PrivateKey(), b = P256PrivateKey()
        #expect(a.rawRepresentation != b.rawRepresentation)
        #expect(a.sharedSecret(with: b.publicKey) == b.sharedSecret(with: a.publicKey))
    }

    @Test(
        "Private keys refused: 0, n, 2^256 − 1, and anything but 32 octets (SEC 1, 3.2.1: 1 ≤ d ≤ n − 1)",
        arguments: [
            [UInt8](repeating: 0, count: 32),
            Curve.n,
            [UInt8](repeating: 0xff, count: 32),
            Curve.p,  // > n
            [],
            [UInt8](repeating: 1, count: 31),
            [UInt8](repeating: 1, count: 33),
            [0] + Curve.debugPrivate,
        ])
    func refusedPrivateKeys(raw: [UInt8]) {
        #expect(P256PrivateKey(rawRepresentation: raw) == nil)
    }

    @Test(
        "Public keys refused: off the curve, x or y ≥ p (SEC 1, 3.2.2.1; OpenSSL reduces these), the wrong length",
        arguments: refusedPublicKeyInputs)
    func refusedPublicKeys(raw: [UInt8]) {
        #expect(P256PublicKey(rawRepresentation: raw) == nil)
    }

    @Test("The reduced forms of the two non-canonical points are accepted")
    func canonicalFormsAccepted() throws {
        for raw in [
            [UInt8](repeating: 0, count: 32) + Curve.zeroXPointY, Curve.smallYPointX + Curve.smallYPointY,
            Curve.debugPublicX + Curve.debugPublicY, Curve.gx + Curve.gy,
        ] {
            #expect(P256PublicKey(rawRepresentation: raw)?.rawRepresentation == raw)
        }
    }
}

/// a + b of two 32-octet big-endian numbers, mod 2^256.
/// What refusedPublicKeys(raw:) tries. Typed, and outside the attribute: Swift 6.0's type
/// checker gave up on the untyped literal of sums ("unable to type-check this expression
/// in reasonable time").
private let refusedPublicKeyInputs: [[UInt8]] = [
    // The debug public key with one bit of y flipped: no longer on the curve.
    Curve.debugPublicX + Curve.debugPublicY.enumerated().map { $0.offset == 31 ? $0.element ^ 1 : $0.element },
    Curve.debugPublicX.enumerated().map { $0.offset == 0 ? $0.element ^ 0x80 : $0.element } + Curve.debugPublicY,
    // (0, y) is on the curve, (p, y) is the same point with x not reduced.
    Curve.p + Curve.zeroXPointY,
    // (x, y) is on the curve, (x, y + p) is the same point with y not reduced.
    Curve.smallYPointX + add(Curve.smallYPointY, Curve.p),
    // y = p, and all ones in both coordinates.
    Curve.gx + Curve.p,
    [UInt8](repeating: 0xff, count: 64),
    // The point at infinity has no affine coordinates; (0, 0) is not on the curve.
    [UInt8](repeating: 0, count: 64),
    // Lengths.
    [],
    Curve.debugPublicX,
    [0x04] + Curve.debugPublicX + Curve.debugPublicY,
    Array((Curve.debugPublicX + Curve.debugPublicY).dropLast()),
]

private func add(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
    var sum = [UInt8](repeating: 0, count: 32), carry = 0
    for index in (0..<32).reversed() {
        let total = Int(a[index]) + Int(b[index]) + carry
        sum[index] = UInt8(total & 0xff)
        carry = total >> 8
    }
    return sum
}
