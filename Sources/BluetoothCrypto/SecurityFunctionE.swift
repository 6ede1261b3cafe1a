/// The security function e (Core Vol 3, Part H, 2.2.1): AES-128 encryption of one block,
/// `encryptedData = e(key, plaintextData)`.
///
/// All three values are 128 bits, most significant octet first, which is also the octet
/// order AES (FIPS-197) uses: `key[0]` is the first octet of the AES key. HCI LE Encrypt
/// carries the same key and block least significant octet first; convert with
/// ``lsbFirst(fromMSBFirst:)``.
///
/// Traps unless `key` and `plaintext` are 16 octets each.
public func e(key: [UInt8], plaintext: [UInt8]) -> [UInt8] {
    requireLength(key, 16, "key")
    requireLength(plaintext, 16, "plaintext")
    return AES128(key: key).encrypt(plaintext)
}

/// `e(key:plaintext:)` with the key held in ``SecretBytes``.
///
/// Traps unless `key` and `plaintext` are 16 octets each.
public func e(key: SecretBytes, plaintext: [UInt8]) -> [UInt8] {
    requireLength(key, 16, "key")
    requireLength(plaintext, 16, "plaintext")
    return AES128(key: key).encrypt(plaintext)
}
