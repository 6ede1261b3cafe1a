// P-256 (secp256r1, SEC 2 2.4.2 / FIPS 186-4 D.1.2.3) Diffie-Hellman for LE Secure
// Connections pairing (Core Vol 3, Part H, 2.3.5.6): a key pair, the check that a peer's
// public key is on the curve, and the DHKey.
//
// Written for constant time with respect to the private key: the field arithmetic has no
// branches and no indices that depend on the values, the point formulas are the complete
// ones of Renes, Costello and Batina (so the identity and doubling need no special case),
// and the scalar multiplication runs the same 256 doublings and additions for every scalar,
// keeping or dropping each sum by a mask. What may branch is public: the exponent p − 2,
// the loop counters, and whether a key someone hands us is valid at all.
//
// Numbers are 256 bits in four 64-bit limbs, least significant first. Field elements are
// kept in Montgomery form aR mod p with R = 2^256, always fully reduced (< p).

/// A P-256 private key: the scalar d, 1 ≤ d ≤ n − 1 (SEC 1, 3.2.1).
///
/// LE Secure Connections pairing makes one per pairing, sends ``publicKey`` in the Pairing
/// Public Key PDU and computes the DHKey with ``dhKey(with:)``.
///
/// d is held in a ``SecretBytes``: copies of the key share it, and it is zeroed when the
/// last of them is gone.
public struct P256PrivateKey: Sendable {
    /// d, as its four limbs, least significant first.
    let secret: SecretBytes

    /// d.
    var scalar: UInt256 {
        secret.withUnsafeBytes { limbs in
            UInt256(
                limbs.loadUnaligned(fromByteOffset: 0, as: UInt64.self),
                limbs.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
                limbs.loadUnaligned(fromByteOffset: 16, as: UInt64.self),
                limbs.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
        }
    }

    /// The key whose scalar is `rawRepresentation`, 32 octets, most significant first; `nil`
    /// unless it is 32 octets and 0 < d < n.
    public init?(rawRepresentation: [UInt8]) {
        guard let d = UInt256(bigEndian: rawRepresentation) else { return nil }
        // d < n: subtracting n borrows. d ≠ 0. (Whether a key is valid is not a secret.)
        guard d.subtracting(P256.n).borrow == 1, !d.isZero else { return nil }
        // Limb by limb, not through an array of them: that would be a heap copy of d.
        secret = SecretBytes(count: 32) { limbs in
            limbs.storeBytes(of: d.w0, toByteOffset: 0, as: UInt64.self)
            limbs.storeBytes(of: d.w1, toByteOffset: 8, as: UInt64.self)
            limbs.storeBytes(of: d.w2, toByteOffset: 16, as: UInt64.self)
            limbs.storeBytes(of: d.w3, toByteOffset: 24, as: UInt64.self)
        }
    }

    /// The key whose scalar is `secretRepresentation`, 32 octets, most significant first;
    /// `nil` unless it is 32 octets and 0 < d < n.
    public init?(secretRepresentation: SecretBytes) {
        guard let key = secretRepresentation.withTemporaryCopy({ P256PrivateKey(rawRepresentation: $0) }) else {
            return nil
        }
        self = key
    }

    /// A new key from the system's random number generator.
    public init() {
        var generator = SystemRandomNumberGenerator()
        self.init(using: &generator)
    }

    /// A new key from `generator`: 32 random octets, drawn again until they are a valid
    /// scalar (all but about 2^-32 of them are).
    public init(using generator: inout some RandomNumberGenerator) {
        while true {
            var octets = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            defer { SecretBytes.wipe(&octets) }
            if let key = P256PrivateKey(rawRepresentation: octets) {
                self = key
                return
            }
        }
    }

    /// The scalar d, 32 octets, most significant first, in an `Array` nothing zeroes.
    public var rawRepresentation: [UInt8] { scalar.bigEndianBytes }

    /// The public key Q = d·G. Costs a scalar multiplication each time it is read.
    public var publicKey: P256PublicKey {
        let (x, y) = ProjectivePoint.multiply(ProjectivePoint(affineX: P256.gx, y: P256.gy), by: scalar).affine()
        return P256PublicKey(x: x, y: y)
    }

    /// The x-coordinate of d·Q, 32 octets, most significant first: the DHKey of Core Vol 3,
    /// Part H, 2.3.5.6.1 (in the toolbox's octet order), and what ECDH (SEC 1, 3.3.1) shares.
    /// In an `Array` nothing zeroes: ``dhKey(with:)`` is the same value in ``SecretBytes``.
    ///
    /// `peer` was checked to be on the curve when it was made, and the curve's order n is
    /// prime, so d·Q is never the point at infinity.
    public func sharedSecret(with peer: P256PublicKey) -> [UInt8] {
        sharedX(peer).bigEndianBytes
    }

    /// ``sharedSecret(with:)`` held in ``SecretBytes``: the DHKey, 32 octets, most
    /// significant first, zeroed when the last owner lets go.
    public func dhKey(with peer: P256PublicKey) -> SecretBytes {
        let x = sharedX(peer).value
        return SecretBytes(count: 32) { octets in
            octets.storeBytes(of: x.w3.bigEndian, toByteOffset: 0, as: UInt64.self)
            octets.storeBytes(of: x.w2.bigEndian, toByteOffset: 8, as: UInt64.self)
            octets.storeBytes(of: x.w1.bigEndian, toByteOffset: 16, as: UInt64.self)
            octets.storeBytes(of: x.w0.bigEndian, toByteOffset: 24, as: UInt64.self)
        }
    }

    /// The x-coordinate of d·Q.
    private func sharedX(_ peer: P256PublicKey) -> FieldElement {
        ProjectivePoint.multiply(ProjectivePoint(affineX: peer.x, y: peer.y), by: scalar).affine().x
    }
}

/// A P-256 public key: a point (x, y) on the curve y² = x³ − 3x + b over GF(p), never the
/// point at infinity.
public struct P256PublicKey: Sendable, Equatable {
    /// x.
    let x: FieldElement
    /// y.
    let y: FieldElement

    /// A point known to be on the curve.
    init(x: FieldElement, y: FieldElement) { (self.x, self.y) = (x, y) }

    /// The point whose coordinates are `rawRepresentation`, X || Y, 32 octets each, most
    /// significant first (as the Pairing Public Key PDU carries them, reversed); `nil` unless
    /// it is 64 octets, x < p, y < p and y² = x³ − 3x + b (mod p).
    ///
    /// The last check is what keeps an invalid-curve attack out (CVE-2018-5383): a point off
    /// the curve lies on another curve, of small order, and d·Q there gives d away piece by
    /// piece.
    public init?(rawRepresentation: [UInt8]) {
        guard rawRepresentation.count == 64,
            let x = FieldElement(bigEndian: rawRepresentation[0..<32]),
            let y = FieldElement(bigEndian: rawRepresentation[32..<64])
        else { return nil }
        let threeX = x + x + x
        guard y * y == x * x * x - threeX + P256.b else { return nil }
        self.init(x: x, y: y)
    }

    /// X || Y, 32 octets each, most significant first.
    public var rawRepresentation: [UInt8] { x.bigEndianBytes + y.bigEndianBytes }
}

// MARK: The curve

/// The domain parameters of P-256 (SEC 2, 2.4.2), as typed from the standard; the Montgomery
/// forms the arithmetic needs are computed from them on first use.
enum P256 {
    /// The field prime p = 2^256 − 2^224 + 2^192 + 2^96 − 1
    /// = ffffffff 00000001 00000000 00000000 00000000 ffffffff ffffffff ffffffff.
    static let p = UInt256(0xFFFF_FFFF_FFFF_FFFF, 0x0000_0000_FFFF_FFFF, 0x0000_0000_0000_0000, 0xFFFF_FFFF_0000_0001)

    /// The order n of G = ffffffff 00000000 ffffffff ffffffff bce6faad a7179e84 f3b9cac2 fc632551.
    static let n = UInt256(0xF3B9_CAC2_FC63_2551, 0xBCE6_FAAD_A717_9E84, 0xFFFF_FFFF_FFFF_FFFF, 0xFFFF_FFFF_0000_0000)

    /// b = 5ac635d8 aa3a93e7 b3ebbd55 769886bc 651d06b0 cc53b0f6 3bce3c3e 27d2604b.
    static let b = FieldElement(
        UInt256(0x3BCE_3C3E_27D2_604B, 0x651D_06B0_CC53_B0F6, 0xB3EB_BD55_7698_86BC, 0x5AC6_35D8_AA3A_93E7))

    /// G's x = 6b17d1f2 e12c4247 f8bce6e5 63a440f2 77037d81 2deb33a0 f4a13945 d898c296.
    static let gx = FieldElement(
        UInt256(0xF4A1_3945_D898_C296, 0x7703_7D81_2DEB_33A0, 0xF8BC_E6E5_63A4_40F2, 0x6B17_D1F2_E12C_4247))

    /// G's y = 4fe342e2 fe1a7f9b 8ee7eb4a 7c0f9e16 2bce3357 6b315ece cbb64068 37bf51f5.
    static let gy = FieldElement(
        UInt256(0xCBB6_4068_37BF_51F5, 0x2BCE_3357_6B31_5ECE, 0x8EE7_EB4A_7C0F_9E16, 0x4FE3_42E2_FE1A_7F9B))
}

/// A point in projective coordinates (X : Y : Z), standing for (X/Z, Y/Z); the point at
/// infinity is (0 : 1 : 0).
struct ProjectivePoint {
    /// X.
    var x: FieldElement
    /// Y.
    var y: FieldElement
    /// Z.
    var z: FieldElement

    /// The point at infinity, the group's identity.
    static var identity: ProjectivePoint { ProjectivePoint(x: .zero, y: .one, z: .zero) }

    /// A point of the curve given by its affine coordinates.
    init(affineX x: FieldElement, y: FieldElement) {
        self.init(x: x, y: y, z: .one)
    }

    /// The point (x : y : z).
    init(x: FieldElement, y: FieldElement, z: FieldElement) { (self.x, self.y, self.z) = (x, y, z) }

    /// (X/Z, Y/Z). Z is 0 only at infinity, which no caller reaches; it would give (0, 0).
    func affine() -> (x: FieldElement, y: FieldElement) {
        let zInverse = z.inverse()
        return (x * zInverse, y * zInverse)
    }

    /// `scalar`·`point` by double-and-add-always, most significant bit first: 256 doublings
    /// and 256 additions whatever the scalar, each sum kept or dropped by a mask.
    static func multiply(_ point: ProjectivePoint, by scalar: UInt256) -> ProjectivePoint {
        var result = ProjectivePoint.identity
        for index in stride(from: 255, through: 0, by: -1) {
            result = result.doubled()
            let sum = result + point
            result = select(sum, else: result, mask: 0 &- scalar.bit(index))
        }
        return result
    }

    /// `a` where `mask` is all ones, `b` where it is zero.
    @inline(__always)
    static func select(_ a: ProjectivePoint, else b: ProjectivePoint, mask: UInt64) -> ProjectivePoint {
        ProjectivePoint(
            x: .select(a.x, else: b.x, mask: mask), y: .select(a.y, else: b.y, mask: mask),
            z: .select(a.z, else: b.z, mask: mask))
    }

    /// P + Q by the complete addition formula for a = −3: Renes, Costello, Batina, "Complete
    /// addition formulas for prime order elliptic curves" (2015), Algorithm 4, step by step.
    /// Correct for every pair of points, equal, opposite or at infinity.
    static func + (p: ProjectivePoint, q: ProjectivePoint) -> ProjectivePoint {
        let b = P256.b
        var t0 = p.x * q.x  // 1. t0 ← X1 · X2
        var t1 = p.y * q.y  // 2. t1 ← Y1 · Y2
        var t2 = p.z * q.z  // 3. t2 ← Z1 · Z2
        var t3 = p.x + p.y  // 4. t3 ← X1 + Y1
        var t4 = q.x + q.y  // 5. t4 ← X2 + Y2
        t3 = t3 * t4  // 6. t3 ← t3 · t4
        t4 = t0 + t1  // 7. t4 ← t0 + t1
        t3 = t3 - t4  // 8. t3 ← t3 − t4
        t4 = p.y + p.z  // 9. t4 ← Y1 + Z1
        var x3 = q.y + q.z  // 10. X3 ← Y2 + Z2
        t4 = t4 * x3  // 11. t4 ← t4 · X3
        x3 = t1 + t2  // 12. X3 ← t1 + t2
        t4 = t4 - x3  // 13. t4 ← t4 − X3
        x3 = p.x + p.z  // 14. X3 ← X1 + Z1
        var y3 = q.x + q.z  // 15. Y3 ← X2 + Z2
        x3 = x3 * y3  // 16. X3 ← X3 · Y3
        y3 = t0 + t2  // 17. Y3 ← t0 + t2
        y3 = x3 - y3  // 18. Y3 ← X3 − Y3
        var z3 = b * t2  // 19. Z3 ← b · t2
        x3 = y3 - z3  // 20. X3 ← Y3 − Z3
        z3 = x3 + x3  // 21. Z3 ← X3 + X3
        x3 = x3 + z3  // 22. X3 ← X3 + Z3
        z3 = t1 - x3  // 23. Z3 ← t1 − X3
        x3 = t1 + x3  // 24. X3 ← t1 + X3
        y3 = b * y3  // 25. Y3 ← b · Y3
        t1 = t2 + t2  // 26. t1 ← t2 + t2
        t2 = t1 + t2  // 27. t2 ← t1 + t2
        y3 = y3 - t2  // 28. Y3 ← Y3 − t2
        y3 = y3 - t0  // 29. Y3 ← Y3 − t0
        t1 = y3 + y3  // 30. t1 ← Y3 + Y3
        y3 = t1 + y3  // 31. Y3 ← t1 + Y3
        t1 = t0 + t0  // 32. t1 ← t0 + t0
        t0 = t1 + t0  // 33. t0 ← t1 + t0
        t0 = t0 - t2  // 34. t0 ← t0 − t2
        t1 = t4 * y3  // 35. t1 ← t4 · Y3
        t2 = t0 * y3  // 36. t2 ← t0 · Y3
        y3 = x3 * z3  // 37. Y3 ← X3 · Z3
        y3 = y3 + t2  // 38. Y3 ← Y3 + t2
        x3 = t3 * x3  // 39. X3 ← t3 · X3
        x3 = x3 - t1  // 40. X3 ← X3 − t1
        z3 = t4 * z3  // 41. Z3 ← t4 · Z3
        t1 = t3 * t0  // 42. t1 ← t3 · t0
        z3 = z3 + t1  // 43. Z3 ← Z3 + t1
        return ProjectivePoint(x: x3, y: y3, z: z3)
    }

    /// 2P by the exception-free doubling formula for a = −3 of the same paper, Algorithm 6,
    /// step by step (cheaper than P + P by Algorithm 4, and likewise correct at infinity).
    func doubled() -> ProjectivePoint {
        let b = P256.b
        var t0 = x * x  // 1. t0 ← X · X
        let t1 = y * y  // 2. t1 ← Y · Y
        var t2 = z * z  // 3. t2 ← Z · Z
        var t3 = x * y  // 4. t3 ← X · Y
        t3 = t3 + t3  // 5. t3 ← t3 + t3
        var z3 = x * z  // 6. Z3 ← X · Z
        z3 = z3 + z3  // 7. Z3 ← Z3 + Z3
        var y3 = b * t2  // 8. Y3 ← b · t2
        y3 = y3 - z3  // 9. Y3 ← Y3 − Z3
        var x3 = y3 + y3  // 10. X3 ← Y3 + Y3
        y3 = x3 + y3  // 11. Y3 ← X3 + Y3
        x3 = t1 - y3  // 12. X3 ← t1 − Y3
        y3 = t1 + y3  // 13. Y3 ← t1 + Y3
        y3 = x3 * y3  // 14. Y3 ← X3 · Y3
        x3 = x3 * t3  // 15. X3 ← X3 · t3
        t3 = t2 + t2  // 16. t3 ← t2 + t2
        t2 = t2 + t3  // 17. t2 ← t2 + t3
        z3 = b * z3  // 18. Z3 ← b · Z3
        z3 = z3 - t2  // 19. Z3 ← Z3 − t2
        z3 = z3 - t0  // 20. Z3 ← Z3 − t0
        t3 = z3 + z3  // 21. t3 ← Z3 + Z3
        z3 = z3 + t3  // 22. Z3 ← Z3 + t3
        t3 = t0 + t0  // 23. t3 ← t0 + t0
        t0 = t3 + t0  // 24. t0 ← t3 + t0
        t0 = t0 - t2  // 25. t0 ← t0 − t2
        t0 = t0 * z3  // 26. t0 ← t0 · Z3
        y3 = y3 + t0  // 27. Y3 ← Y3 + t0
        t0 = y * z  // 28. t0 ← Y · Z
        t0 = t0 + t0  // 29. t0 ← t0 + t0
        z3 = t0 * z3  // 30. Z3 ← t0 · Z3
        x3 = x3 - z3  // 31. X3 ← X3 − Z3
        z3 = t0 * t1  // 32. Z3 ← t0 · t1
        z3 = z3 + z3  // 33. Z3 ← Z3 + Z3
        z3 = z3 + z3  // 34. Z3 ← Z3 + Z3
        return ProjectivePoint(x: x3, y: y3, z: z3)
    }
}
