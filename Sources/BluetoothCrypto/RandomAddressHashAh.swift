/// The random address hash function ah (Core Vol 3, Part H, 2.2.2), used to generate and
/// resolve resolvable private addresses: `ah(k, r) = e(k, r') mod 2^24`, where r' is r
/// padded with 104 zero bits on the most significant side.
///
/// A resolvable private address carries prand in its most significant 24 bits and
/// `hash = ah(IRK, prand)` in its least significant 24 bits; on the air and over HCI the
/// address is least significant octet first, so the hash comes first there.
///
/// - Parameters:
///   - k: 16 octets, most significant first: the IRK.
///   - r: 3 octets, most significant first: prand.
/// - Returns: the 24-bit hash as 3 octets, most significant first.
///
/// Traps unless the lengths are as above.
public func ah(k: [UInt8], r: [UInt8]) -> [UInt8] {
    requireLength(k, 16, "k")
    return ah(cipher: AES128(key: k), r: r)
}

/// `ah(k:r:)` with the IRK held in ``SecretBytes``.
///
/// Traps unless the lengths are as in `ah(k:r:)`.
public func ah(k: SecretBytes, r: [UInt8]) -> [UInt8] {
    requireLength(k, 16, "k")
    return ah(cipher: AES128(key: k), r: r)
}

/// ah with the IRK already expanded.
private func ah(cipher: AES128, r: [UInt8], function: StaticString = #function) -> [UInt8] {
    requireLength(r, 3, "r", function: function)
    let padded = [UInt8](repeating: 0, count: 13) + r
    return Array(cipher.encrypt(padded).suffix(3))
}
