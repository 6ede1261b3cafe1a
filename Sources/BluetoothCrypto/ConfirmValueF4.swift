/// The LE Secure Connections confirm value generation function f4 (Core Vol 3, Part H,
/// 2.2.6): `f4(U, V, X, Z) = AES-CMAC_X(U || V || Z)`.
///
/// - Parameters:
///   - u: 32 octets, most significant first: the X coordinate of one device's P-256
///     public key (PKax or PKbx).
///   - v: 32 octets, most significant first: the X coordinate of the other public key.
///   - x: 16 octets, most significant first: the key, a nonce (Na or Nb).
///   - z: 0 for Just Works and Numeric Comparison; `0x80 | bit` for each passkey bit.
/// - Returns: the 16-octet confirm value, most significant octet first (the Pairing Confirm
///   PDU carries it reversed).
///
/// Traps unless the lengths are as above.
public func f4(u: [UInt8], v: [UInt8], x: [UInt8], z: UInt8) -> [UInt8] {
    requireLength(u, 32, "U")
    requireLength(v, 32, "V")
    requireLength(x, 16, "X")
    return aesCMAC(key: x, message: u + v + [z])
}
