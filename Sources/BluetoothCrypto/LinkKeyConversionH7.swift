/// The link key conversion function h7 (Core Vol 3, Part H, 2.2.11):
/// `h7(SALT, W) = AES-CMAC_SALT(W)`, the variant of h6 used when both devices set CT2.
///
/// - Parameters:
///   - salt: 16 octets, most significant first: the key, for example "tmp1" as
///     `00 … 00 74 6D 70 31` or "tmp2" as `00 … 00 74 6D 70 32`.
///   - w: 16 octets, most significant first: the key to convert.
/// - Returns: 16 octets, most significant first.
///
/// Traps unless the lengths are as above.
public func h7(salt: [UInt8], w: [UInt8]) -> [UInt8] {
    requireLength(salt, 16, "SALT")
    requireLength(w, 16, "W")
    return aesCMAC(key: salt, message: w)
}
