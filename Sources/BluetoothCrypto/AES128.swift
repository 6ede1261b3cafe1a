// AES-128 (FIPS-197), written to run in constant time with respect to the key and the data.
//
// The usual table implementation looks S-box entries up by a secret octet, and which cache
// line that touches leaks the octet. Here the S-box is computed instead: the inverse in
// GF(2^8) as x^254 (a fixed chain of multiplications, each one by masks, never by a branch
// or an index), then the affine transform. All sixteen octets of the state go through the
// same operations at once as the lanes of one SIMD16<UInt8>, so the only indices anywhere
// are the fixed permutations of ShiftRows and MixColumns and the round number.
//
// State layout as in FIPS-197, 3.4: input octet `i` is s[r, c] with r = i % 4, c = i / 4,
// and lane `i` of the vector holds it.

/// AES-128 with one key, one block at a time: the block cipher under the toolbox's e and
/// AES-CMAC.
struct AES128 {
    /// The eleven round keys of the key expansion (FIPS-197, 5.2), in the state layout.
    private let roundKeys: RoundKeys

    /// A cipher for a 16-octet key (the caller has checked the length); expands the key.
    init(key: [UInt8]) {
        assert(key.count == 16)
        self.init(key: SIMD16<UInt8>(key))
    }

    /// A cipher for a 16-octet secret key (the caller has checked the length), read from
    /// its buffer with no `Array` on the way.
    init(key: SecretBytes) {
        assert(key.count == 16)
        self.init(key: key.withUnsafeBytes { $0.loadUnaligned(as: SIMD16<UInt8>.self) })
    }

    /// A cipher for the key in lanes 0...15.
    private init(key: SIMD16<UInt8>) {
        var keys = RoundKeys()
        var roundKey = key
        keys[0] = roundKey
        var rcon: SIMD16<UInt8> = .zero
        rcon[0] = 0x01
        for round in 1...10 {
            // temp = SubWord(RotWord(w[i-1])) xor Rcon[i/Nk], in lanes 0...3.
            var temp = SIMD16<UInt8>.zero
            temp[0] = roundKey[13]; temp[1] = roundKey[14]; temp[2] = roundKey[15]; temp[3] = roundKey[12]
            temp = subBytes(temp) ^ rcon
            // w[i] = w[i-Nk] xor temp for the first word, then w[i] = w[i-Nk] xor w[i-1].
            for lane in 0..<4 { roundKey[lane] ^= temp[lane] }
            for lane in 4..<16 { roundKey[lane] ^= roundKey[lane - 4] }
            keys[round] = roundKey
            rcon = xtime(rcon)
        }
        roundKeys = keys
    }

    /// The encryption of one 16-octet block (FIPS-197, 5.1).
    func encrypt(_ block: [UInt8]) -> [UInt8] {
        assert(block.count == 16)
        let output = encrypt(SIMD16<UInt8>(block))
        return (0..<16).map { output[$0] }
    }

    /// The encryption of one block held as a vector, lane `i` being octet `i`.
    func encrypt(_ block: SIMD16<UInt8>) -> SIMD16<UInt8> {
        var state = block ^ roundKeys[0]
        for round in 1..<10 {
            state = mixColumns(shiftRows(subBytes(state))) ^ roundKeys[round]
        }
        return shiftRows(subBytes(state)) ^ roundKeys[10]
    }
}

/// Eleven 16-octet round keys in one fixed-size value: no heap storage, and the rounds read
/// them by the (public) round number.
private struct RoundKeys {
    private var storage:
        (
            SIMD16<UInt8>, SIMD16<UInt8>, SIMD16<UInt8>, SIMD16<UInt8>, SIMD16<UInt8>, SIMD16<UInt8>,
            SIMD16<UInt8>, SIMD16<UInt8>, SIMD16<UInt8>, SIMD16<UInt8>, SIMD16<UInt8>
        ) =
            (.zero, .zero, .zero, .zero, .zero, .zero, .zero, .zero, .zero, .zero, .zero)

    /// The key of round `round`, 0...10.
    subscript(round: Int) -> SIMD16<UInt8> {
        get {
            precondition((0...10).contains(round))
            return withUnsafeBytes(of: storage) { $0.load(fromByteOffset: round * 16, as: SIMD16<UInt8>.self) }
        }
        set {
            precondition((0...10).contains(round))
            withUnsafeMutableBytes(of: &storage) {
                $0.storeBytes(of: newValue, toByteOffset: round * 16, as: SIMD16<UInt8>.self)
            }
        }
    }
}

// MARK: The round transformations

/// SubBytes (FIPS-197, 5.1.1) on every lane: the multiplicative inverse in GF(2^8), 0 going
/// to 0, then the affine transform b ⊕ (b <<< 1) ⊕ (b <<< 2) ⊕ (b <<< 3) ⊕ (b <<< 4) ⊕ 0x63.
@inline(__always)
private func subBytes(_ state: SIMD16<UInt8>) -> SIMD16<UInt8> {
    let inverse = gfInverse(state)
    return inverse ^ rotateLeft(inverse, 1) ^ rotateLeft(inverse, 2) ^ rotateLeft(inverse, 3) ^ rotateLeft(inverse, 4)
        ^ SIMD16(repeating: 0x63)
}

/// ShiftRows (FIPS-197, 5.1.2): row r turns left by r columns, s'[r, c] = s[r, (c + r) mod 4].
@inline(__always)
private func shiftRows(_ s: SIMD16<UInt8>) -> SIMD16<UInt8> {
    SIMD16(s[0], s[5], s[10], s[15], s[4], s[9], s[14], s[3], s[8], s[13], s[2], s[7], s[12], s[1], s[6], s[11])
}

/// MixColumns (FIPS-197, 5.1.3): each column times {03}x^3 + {01}x^2 + {01}x + {02}, that
/// is s'[r] = {02}s[r] ⊕ {03}s[r+1] ⊕ s[r+2] ⊕ s[r+3] with row indices mod 4.
@inline(__always)
private func mixColumns(_ s: SIMD16<UInt8>) -> SIMD16<UInt8> {
    // The column turned up by one, two and three rows: lane r + 4c holds s[(r + k) mod 4, c].
    let up1 = SIMD16(
        s[1], s[2], s[3], s[0], s[5], s[6], s[7], s[4], s[9], s[10], s[11], s[8], s[13], s[14], s[15], s[12])
    let up2 = SIMD16(
        s[2], s[3], s[0], s[1], s[6], s[7], s[4], s[5], s[10], s[11], s[8], s[9], s[14], s[15], s[12], s[13])
    let up3 = SIMD16(
        s[3], s[0], s[1], s[2], s[7], s[4], s[5], s[6], s[11], s[8], s[9], s[10], s[15], s[12], s[13], s[14])
    return xtime(s ^ up1) ^ up1 ^ up2 ^ up3
}

// MARK: GF(2^8) with the AES polynomial x^8 + x^4 + x^3 + x + 1, lane by lane

/// Multiplication by x ({02}, FIPS-197, 4.2.1): a left shift, reduced by 0x1b when the top
/// bit was set, the condition spread into a mask rather than tested.
@inline(__always)
private func xtime(_ a: SIMD16<UInt8>) -> SIMD16<UInt8> {
    let carry = SIMD16<UInt8>.zero &- (a &>> 7)  // 0xff where the top bit was set, else 0
    return (a &<< 1) ^ (carry & SIMD16(repeating: 0x1b))
}

/// The product a · b: for each bit of b (lowest first), a · x^i added under a mask of that bit.
@inline(__always)
private func gfMultiply(_ a: SIMD16<UInt8>, _ b: SIMD16<UInt8>) -> SIMD16<UInt8> {
    var product = SIMD16<UInt8>.zero
    var multiple = a
    for bit in 0..<8 {
        let mask = SIMD16<UInt8>.zero &- ((b &>> UInt8(bit)) & SIMD16(repeating: 1))
        product ^= multiple & mask
        multiple = xtime(multiple)
    }
    return product
}

/// The inverse a^-1 = a^254 (the multiplicative group has 255 elements), with 0^254 = 0 as
/// SubBytes wants. 254 = 0b11111110 by a fixed chain: 2, 3, 6, 12, 15, 30, 60, 120, 240,
/// then 240 + 14 with 14 = 12 + 2.
@inline(__always)
private func gfInverse(_ a: SIMD16<UInt8>) -> SIMD16<UInt8> {
    let a2 = gfMultiply(a, a)
    let a3 = gfMultiply(a2, a)
    let a6 = gfMultiply(a3, a3)
    let a12 = gfMultiply(a6, a6)
    let a15 = gfMultiply(a12, a3)
    let a30 = gfMultiply(a15, a15)
    let a60 = gfMultiply(a30, a30)
    let a120 = gfMultiply(a60, a60)
    let a240 = gfMultiply(a120, a120)
    let a14 = gfMultiply(a12, a2)
    return gfMultiply(a240, a14)
}

/// Every lane rotated left by `count` bits (1...7).
@inline(__always)
private func rotateLeft(_ a: SIMD16<UInt8>, _ count: UInt8) -> SIMD16<UInt8> {
    (a &<< count) | (a &>> (8 - count))
}
