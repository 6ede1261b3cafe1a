import Crypto
import _CryptoExtras

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

/// AES-128 with one key, one block at a time, on `_CryptoExtras`' `AES.permute`.
struct AES128 {
    /// The key as swift-crypto holds it.
    private let key: SymmetricKey

    /// A cipher for a 16-octet key (the caller has checked the length).
    init(key: [UInt8]) {
        assert(key.count == 16)
        self.key = SymmetricKey(data: key)
    }

    /// The encryption of one 16-octet block.
    func encrypt(_ block: [UInt8]) -> [UInt8] {
        var output = block
        do {
            try AES.permute(&output, key: key)
        } catch {
            // Only wrong sizes throw, and every caller passes 16-octet keys and blocks.
            preconditionFailure("AES.permute rejected a 16-octet block and key: \(error)")
        }
        return output
    }
}
