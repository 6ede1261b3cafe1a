/// The LE legacy pairing key generation function s1 (Core Vol 3, Part H, 2.2.4), which
/// makes the STK: `s1(k, r1, r2) = e(k, r')`, where r' is the least significant 64 bits of
/// r1 followed by the least significant 64 bits of r2.
///
/// - Parameters:
///   - k: 16 octets, most significant first: the TK.
///   - r1: 16 octets, most significant first: Srand (the responder's random).
///   - r2: 16 octets, most significant first: Mrand (the initiator's random).
/// - Returns: the 16-octet STK, most significant octet first (HCI takes it reversed).
///
/// Traps unless the lengths are as above.
public func s1(k: [UInt8], r1: [UInt8], r2: [UInt8]) -> [UInt8] {
    requireLength(k, 16, "k")
    return e(key: k, plaintext: s1Plaintext(r1: r1, r2: r2))
}

/// `s1(k:r1:r2:)` with the TK held in ``SecretBytes``, and the STK returned in one.
///
/// Traps unless the lengths are as in `s1(k:r1:r2:)`.
public func s1(k: SecretBytes, r1: [UInt8], r2: [UInt8]) -> SecretBytes {
    requireLength(k, 16, "k")
    var stk = e(key: k, plaintext: s1Plaintext(r1: r1, r2: r2))
    defer { SecretBytes.wipe(&stk) }
    return SecretBytes(stk)
}

/// r': the least significant 64 bits of r1, then those of r2.
private func s1Plaintext(r1: [UInt8], r2: [UInt8], function: StaticString = #function) -> [UInt8] {
    requireLength(r1, 16, "r1", function: function)
    requireLength(r2, 16, "r2", function: function)
    return Array(r1.suffix(8) + r2.suffix(8))
}
