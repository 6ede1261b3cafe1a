// The arithmetic under P256.swift's curve: the field GF(p), 256-bit integers and their
// 64-bit limbs.

// MARK: The field GF(p)

/// An element of GF(p), held as aR mod p (Montgomery form, R = 2^256), always < p.
struct FieldElement: Equatable, Sendable {
    /// aR mod p.
    var montgomery: UInt256

    /// The element whose Montgomery form is `montgomery` (< p).
    init(montgomery: UInt256) { self.montgomery = montgomery }

    /// The element `value` (< p), brought into Montgomery form: value · R² · R⁻¹.
    init(_ value: UInt256) {
        self = FieldElement(montgomery: value) * FieldElement(montgomery: Self.rSquared)
    }

    /// The element whose value is `bytes`, 32 octets, most significant first; `nil` unless
    /// the value is < p.
    init?(bigEndian bytes: ArraySlice<UInt8>) {
        guard let value = UInt256(bigEndian: Array(bytes)), value.subtracting(P256.p).borrow == 1 else { return nil }
        self.init(value)
    }

    /// The value (out of Montgomery form: times 1, R⁻¹), 32 octets, most significant first.
    var bigEndianBytes: [UInt8] { value.bigEndianBytes }

    /// The value, out of Montgomery form (times 1, R⁻¹).
    var value: UInt256 { (self * FieldElement(montgomery: UInt256(1, 0, 0, 0))).montgomery }

    /// 0 (the same in Montgomery form).
    static let zero = FieldElement(montgomery: UInt256(0, 0, 0, 0))

    /// 1, that is R mod p = 2^256 − p (p > 2^255, so that is already reduced).
    static let one = FieldElement(montgomery: UInt256(0, 0, 0, 0).subtracting(P256.p).difference)

    /// R² mod p, for bringing values into Montgomery form: R mod p doubled 256 times.
    static let rSquared: UInt256 = {
        var r = one
        for _ in 0..<256 { r = r + r }
        return r.montgomery
    }()

    /// −p⁻¹ mod 2^64, the factor of Montgomery reduction. p ≡ −1 (mod 2^64), its low limb
    /// being all ones, so −p⁻¹ ≡ 1: the CIOS quotient digit m is just the low limb t0.
    static let montgomeryFactor: UInt64 = 1

    /// p − 2, the exponent of inversion by Fermat.
    static let pMinus2 = P256.p.subtracting(UInt256(2, 0, 0, 0)).difference

    /// `a` where `mask` is all ones, `b` where it is zero.
    @inline(__always)
    static func select(_ a: FieldElement, else b: FieldElement, mask: UInt64) -> FieldElement {
        FieldElement(montgomery: .select(a.montgomery, else: b.montgomery, mask: mask))
    }

    /// a + b mod p: the sum (< 2p, up to 257 bits), less p unless that goes negative.
    @inline(__always)
    static func + (a: FieldElement, b: FieldElement) -> FieldElement {
        let (sum, carry) = a.montgomery.adding(b.montgomery)
        return FieldElement(reducingOnce: sum, carry: carry)
    }

    /// a − b mod p: the difference, plus p where it went negative.
    @inline(__always)
    static func - (a: FieldElement, b: FieldElement) -> FieldElement {
        let (difference, borrow) = a.montgomery.subtracting(b.montgomery)
        let correction = UInt256.select(P256.p, else: UInt256(0, 0, 0, 0), mask: 0 &- borrow)
        return FieldElement(montgomery: difference.adding(correction).sum)
    }

    /// The Montgomery product a·b·R⁻¹ mod p, by CIOS (Koç, Acar, Kaliski, "Analyzing and
    /// comparing Montgomery multiplication algorithms", 1996): for each limb of b, add a·bᵢ,
    /// then add m·p with m chosen to clear the low limb, and drop that limb. The running value
    /// stays below 2p, so one conditional subtraction finishes it.
    ///
    /// Called, not inlined: a pairing does two scalar multiplications, and inlining each of
    /// the dozen products of a point addition made the board binary 30 kB larger for a
    /// speed no pairing notices.
    @inline(never)
    static func * (a: FieldElement, b: FieldElement) -> FieldElement {
        let x = a.montgomery, p = P256.p, factor = montgomeryFactor
        var t0: UInt64 = 0, t1: UInt64 = 0, t2: UInt64 = 0, t3: UInt64 = 0, t4: UInt64 = 0

        @inline(__always) func step(_ limb: UInt64) {
            var carry: UInt64, t5: UInt64
            (t0, carry) = multiplyAdd(x.w0, limb, t0, 0)
            (t1, carry) = multiplyAdd(x.w1, limb, t1, carry)
            (t2, carry) = multiplyAdd(x.w2, limb, t2, carry)
            (t3, carry) = multiplyAdd(x.w3, limb, t3, carry)
            (t4, t5) = addWithCarry(t4, carry, 0)
            let m = t0 &* factor
            (_, carry) = multiplyAdd(m, p.w0, t0, 0)
            (t0, carry) = multiplyAdd(m, p.w1, t1, carry)
            (t1, carry) = multiplyAdd(m, p.w2, t2, carry)
            (t2, carry) = multiplyAdd(m, p.w3, t3, carry)
            (t3, carry) = addWithCarry(t4, carry, 0)
            t4 = t5 &+ carry
        }
        step(b.montgomery.w0)
        step(b.montgomery.w1)
        step(b.montgomery.w2)
        step(b.montgomery.w3)
        return FieldElement(reducingOnce: UInt256(t0, t1, t2, t3), carry: t4)
    }

    /// value + carry·2^256 (< 2p) reduced: less p if that is not negative.
    @inline(__always)
    private init(reducingOnce value: UInt256, carry: UInt64) {
        let (difference, borrow) = value.subtracting(P256.p)
        // value + carry·2^256 ≥ p exactly when there is a carry or the subtraction did not borrow.
        let keepDifference = carry | (borrow ^ 1)
        self.init(montgomery: .select(difference, else: value, mask: 0 &- keepDifference))
    }

    /// The inverse a^(p−2) (Fermat; 0 gives 0), by square-and-multiply over the bits of
    /// p − 2. Those bits are public, so the branch on them tells nothing about a.
    func inverse() -> FieldElement {
        let exponent = Self.pMinus2
        var result = FieldElement.one
        for index in stride(from: 255, through: 0, by: -1) {
            result = result * result
            if exponent.bit(index) == 1 { result = result * self }
        }
        return result
    }

    /// Equality of elements, without an early exit (the representation is unique).
    static func == (a: FieldElement, b: FieldElement) -> Bool {
        let x = a.montgomery, y = b.montgomery
        return ((x.w0 ^ y.w0) | (x.w1 ^ y.w1) | (x.w2 ^ y.w2) | (x.w3 ^ y.w3)) == 0
    }
}

// MARK: 256-bit integers

/// A 256-bit unsigned integer in four limbs, `w0` the least significant.
struct UInt256: Equatable, Sendable {
    /// Bits 0–63.
    var w0: UInt64
    /// Bits 64–127.
    var w1: UInt64
    /// Bits 128–191.
    var w2: UInt64
    /// Bits 192–255.
    var w3: UInt64

    /// The number w0 + w1·2^64 + w2·2^128 + w3·2^192.
    init(_ w0: UInt64, _ w1: UInt64, _ w2: UInt64, _ w3: UInt64) {
        (self.w0, self.w1, self.w2, self.w3) = (w0, w1, w2, w3)
    }

    /// The number whose big-endian octets are `bytes`; `nil` unless they are 32.
    init?(bigEndian bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        func limb(_ start: Int) -> UInt64 {
            (start..<start + 8).reduce(0) { $0 << 8 | UInt64(bytes[$1]) }
        }
        self.init(limb(24), limb(16), limb(8), limb(0))
    }

    /// The 32 big-endian octets.
    var bigEndianBytes: [UInt8] {
        [w3, w2, w1, w0].flatMap { limb in (0..<8).map { UInt8(truncatingIfNeeded: limb >> (56 - 8 * $0)) } }
    }

    /// Whether every bit is 0. Branches: for public values only.
    var isZero: Bool { (w0 | w1 | w2 | w3) == 0 }

    /// Bit `index` (0 the least significant) as 0 or 1. `index` is public; the bit is not.
    @inline(__always)
    func bit(_ index: Int) -> UInt64 {
        let limb: UInt64
        switch index >> 6 {
        case 0: limb = w0
        case 1: limb = w1
        case 2: limb = w2
        default: limb = w3
        }
        return (limb >> UInt64(index & 63)) & 1
    }

    /// self + other mod 2^256, and the carry out (0 or 1).
    @inline(__always)
    func adding(_ other: UInt256) -> (sum: UInt256, carry: UInt64) {
        let (s0, c0) = addWithCarry(w0, other.w0, 0)
        let (s1, c1) = addWithCarry(w1, other.w1, c0)
        let (s2, c2) = addWithCarry(w2, other.w2, c1)
        let (s3, c3) = addWithCarry(w3, other.w3, c2)
        return (UInt256(s0, s1, s2, s3), c3)
    }

    /// self − other mod 2^256, and the borrow out (1 if other > self, else 0).
    @inline(__always)
    func subtracting(_ other: UInt256) -> (difference: UInt256, borrow: UInt64) {
        let (d0, b0) = subtractWithBorrow(w0, other.w0, 0)
        let (d1, b1) = subtractWithBorrow(w1, other.w1, b0)
        let (d2, b2) = subtractWithBorrow(w2, other.w2, b1)
        let (d3, b3) = subtractWithBorrow(w3, other.w3, b2)
        return (UInt256(d0, d1, d2, d3), b3)
    }

    /// `a` where `mask` is all ones, `b` where it is zero, limb by limb without a branch.
    @inline(__always)
    static func select(_ a: UInt256, else b: UInt256, mask: UInt64) -> UInt256 {
        UInt256(
            b.w0 ^ (mask & (a.w0 ^ b.w0)), b.w1 ^ (mask & (a.w1 ^ b.w1)),
            b.w2 ^ (mask & (a.w2 ^ b.w2)), b.w3 ^ (mask & (a.w3 ^ b.w3)))
    }
}

// MARK: Limb arithmetic
//
// Carries come from the overflow flags of the standard library's adds, turned into 0 or 1 by
// reinterpreting the Bool's byte, not by `flag ? 1 : 0`, which an unoptimized build compiles
// to a branch. Optimized, these chains become add-with-carry instructions.

/// The flag as 0 or 1 (a Bool is one byte holding 0 or 1).
@inline(__always)
private func bit(_ flag: Bool) -> UInt64 {
    UInt64(unsafeBitCast(flag, to: UInt8.self))
}

/// a + b + carry (carry 0 or 1) as a low limb and a carry out.
@inline(__always)
private func addWithCarry(_ a: UInt64, _ b: UInt64, _ carry: UInt64) -> (UInt64, UInt64) {
    let (partial, overflow1) = a.addingReportingOverflow(b)
    let (sum, overflow2) = partial.addingReportingOverflow(carry)
    return (sum, bit(overflow1) | bit(overflow2))  // at most one of them overflows
}

/// a − b − borrow (borrow 0 or 1) as a low limb and a borrow out.
@inline(__always)
private func subtractWithBorrow(_ a: UInt64, _ b: UInt64, _ borrow: UInt64) -> (UInt64, UInt64) {
    let (partial, overflow1) = a.subtractingReportingOverflow(b)
    let (difference, overflow2) = partial.subtractingReportingOverflow(borrow)
    return (difference, bit(overflow1) | bit(overflow2))
}

/// a · b + c + d as a low and a high limb; at most (2^64 − 1)² + 2(2^64 − 1) = 2^128 − 1,
/// so the high limb cannot overflow.
@inline(__always)
private func multiplyAdd(_ a: UInt64, _ b: UInt64, _ c: UInt64, _ d: UInt64) -> (UInt64, UInt64) {
    let product = a.multipliedFullWidth(by: b)
    let (partial, overflow1) = product.low.addingReportingOverflow(c)
    let (low, overflow2) = partial.addingReportingOverflow(d)
    return (low, product.high &+ bit(overflow1) &+ bit(overflow2))
}
