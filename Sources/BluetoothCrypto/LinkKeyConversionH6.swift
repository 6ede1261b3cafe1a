/// The link key conversion function h6 (Core Vol 3, Part H, 2.2.10):
/// `h6(W, keyID) = AES-CMAC_W(keyID)`, which turns a key from one transport into a key for
/// the other (cross-transport key derivation).
///
/// - Parameters:
///   - w: 16 octets, most significant first: the key to convert.
///   - keyID: 4 octets, most significant first: ASCII as written, "tmp1" is
///     `74 6D 70 31`; the specification uses "tmp1", "tmp2", "lebr" and "brle".
/// - Returns: 16 octets, most significant first.
///
/// Traps unless the lengths are as above.
public func h6(w: [UInt8], keyID: [UInt8]) -> [UInt8] {
    requireLength(w, 16, "W")
    requireLength(keyID, 4, "keyID")
    return aesCMAC(key: w, message: keyID)
}
