/// The LE Secure Connections numeric comparison value generation function g2 (Core Vol 3,
/// Part H, 2.2.9): `g2(U, V, X, Y) = AES-CMAC_X(U || V || Y) mod 2^32`.
///
/// The six digits both users compare are `g2(...) % 1_000_000`.
///
/// - Parameters:
///   - u: 32 octets, most significant first: PKax, the initiator's public key X coordinate.
///   - v: 32 octets, most significant first: PKbx, the responder's public key X coordinate.
///   - x: 16 octets, most significant first: Na, the key.
///   - y: 16 octets, most significant first: Nb.
/// - Returns: the least significant 32 bits of the MAC, as a number.
///
/// Traps unless the lengths are as above.
public func g2(u: [UInt8], v: [UInt8], x: [UInt8], y: [UInt8]) -> UInt32 {
    requireLength(u, 32, "U")
    requireLength(v, 32, "V")
    requireLength(x, 16, "X")
    requireLength(y, 16, "Y")
    let mac = aesCMAC(key: x, message: u + v + y)
    return mac.suffix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
}
