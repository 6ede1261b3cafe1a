/// The LE legacy pairing confirm value generation function c1 (Core Vol 3, Part H, 2.2.3):
/// `c1(k, r, preq, pres, iat, rat, ia, ra) = e(k, e(k, r XOR p1) XOR p2)`, with
/// `p1 = pres || preq || rat' || iat'` and `p2 = padding || ia || ra`.
///
/// - Parameters:
///   - k: 16 octets, most significant first: the TK.
///   - r: 16 octets, most significant first: Mrand or Srand.
///   - preq: 7 octets, most significant first: the whole Pairing Request command as a
///     56-bit value. Its code octet (0x01) is the least significant octet, so this is the
///     PDU as sent, reversed: ``msbFirst(fromLSBFirst:)`` of the PDU bytes.
///   - pres: 7 octets, most significant first: the Pairing Response command, the same way
///     (its code octet 0x02 last).
///   - iat: the initiating device's address type, 0 public or 1 random.
///   - ia: 6 octets, most significant first (the written form): the initiating address.
///   - rat: the responding device's address type, 0 public or 1 random.
///   - ra: 6 octets, most significant first: the responding address.
/// - Returns: the 16-octet confirm value, most significant octet first.
///
/// Traps unless the lengths are as above and the address types are 0 or 1.
public func c1(
    k: [UInt8], r: [UInt8], preq: [UInt8], pres: [UInt8], iat: UInt8, ia: [UInt8], rat: UInt8, ra: [UInt8]
) -> [UInt8] {
    requireLength(k, 16, "k")
    return c1(cipher: AES128(key: k), r: r, preq: preq, pres: pres, iat: iat, ia: ia, rat: rat, ra: ra)
}

/// `c1(k:r:preq:pres:iat:ia:rat:ra:)` with the TK (the passkey, in Passkey Entry) held in
/// ``SecretBytes``.
///
/// Traps unless the lengths and address types are as in `c1(k:r:preq:pres:iat:ia:rat:ra:)`.
public func c1(
    k: SecretBytes, r: [UInt8], preq: [UInt8], pres: [UInt8], iat: UInt8, ia: [UInt8], rat: UInt8, ra: [UInt8]
) -> [UInt8] {
    requireLength(k, 16, "k")
    return c1(cipher: AES128(key: k), r: r, preq: preq, pres: pres, iat: iat, ia: ia, rat: rat, ra: ra)
}

/// c1 with the key k already expanded.
private func c1(
    cipher: AES128, r: [UInt8], preq: [UInt8], pres: [UInt8], iat: UInt8, ia: [UInt8], rat: UInt8, ra: [UInt8],
    function: StaticString = #function
) -> [UInt8] {
    requireLength(r, 16, "r", function: function)
    requireLength(preq, 7, "preq", function: function)
    requireLength(pres, 7, "pres", function: function)
    requireLength(ia, 6, "ia", function: function)
    requireLength(ra, 6, "ra", function: function)
    precondition(iat <= 1 && rat <= 1, "c1: address types are 1 bit, got iat \(iat), rat \(rat)")
    let p1 = pres + preq + [rat, iat]
    let p2 = [UInt8](repeating: 0, count: 4) + ia + ra
    return cipher.encrypt(xor(cipher.encrypt(xor(r, p1)), p2))
}
