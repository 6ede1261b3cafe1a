// AES-CCM (RFC 3610; NIST SP 800-38C): counter mode for secrecy, CBC-MAC for integrity,
// both on our AES-128 block. Bluetooth LE encrypts links with it (Core Vol 6, Part E), and
// sensors that advertise encrypted readings (BTHome, Xiaomi MiBeacon, the pvvx and ATC
// thermometer firmware) use it with a pre-shared key and a 4-octet tag.
//
// Octet order is the RFC's throughout: key, nonce, data and tag as they are sent, the
// length fields most significant octet first.

/// AES-CCM encryption with a 128-bit key (RFC 3610, 2.2 and 2.3): the ciphertext, as long
/// as `plaintext`, and the authentication tag of `tagLength` octets.
///
/// `nonce` is 7 to 13 octets; the length field takes the rest of the 15 (L = 15 − nonce
/// length), so the plaintext may be up to 2^(8·L) − 1 octets. `tagLength` is 4, 6, 8, 10,
/// 12, 14 or 16 (M). `associatedData` is authenticated, not encrypted, and may be empty.
///
/// Traps unless `key` is 16 octets and `nonce` and `tagLength` are within those ranges.
public func aesCCMEncrypt(
    key: [UInt8], nonce: [UInt8], plaintext: [UInt8], associatedData: [UInt8] = [],
    tagLength: Int
) -> (ciphertext: [UInt8], tag: [UInt8]) {
    requireLength(key, 16, "key")
    let ccm = CCM(key: key, nonce: nonce, tagLength: tagLength, messageLength: plaintext.count)
    let mac = ccm.cbcMAC(associatedData: associatedData, message: plaintext)
    return (ccm.applyKeystream(plaintext), ccm.tag(fromMAC: mac))
}

/// AES-CCM decryption with a 128-bit key (RFC 3610, 2.5): the plaintext when `tag` is the
/// tag of `ciphertext` and `associatedData` under `key` and `nonce`, else nil. Nothing of
/// the plaintext is returned when the tag does not match, and the comparison takes the same
/// time wherever the tags differ.
///
/// The tag's length is M (4, 6, 8, 10, 12, 14 or 16 octets); `nonce` is 7 to 13 octets.
///
/// Traps unless `key` is 16 octets and `nonce` and `tag` are within those ranges.
public func aesCCMDecrypt(
    key: [UInt8], nonce: [UInt8], ciphertext: [UInt8], tag: [UInt8],
    associatedData: [UInt8] = []
) -> [UInt8]? {
    requireLength(key, 16, "key")
    let ccm = CCM(key: key, nonce: nonce, tagLength: tag.count, messageLength: ciphertext.count)
    let plaintext = ccm.applyKeystream(ciphertext)
    let expected = ccm.tag(fromMAC: ccm.cbcMAC(associatedData: associatedData, message: plaintext))
    var difference: UInt8 = 0
    for (a, b) in zip(expected, tag) { difference |= a ^ b }
    return difference == 0 ? plaintext : nil
}

/// One CCM operation's parameters, with the key expanded once.
private struct CCM {
    let cipher: AES128
    let nonce: [UInt8]
    /// M, octets of the tag.
    let tagLength: Int
    /// L, octets of the length field and of the counter.
    let lengthFieldSize: Int
    let messageLength: Int

    init(key: [UInt8], nonce: [UInt8], tagLength: Int, messageLength: Int) {
        precondition((7...13).contains(nonce.count), "AES-CCM: the nonce must be 7 to 13 octets, got \(nonce.count)")
        precondition(
            (4...16).contains(tagLength) && tagLength.isMultiple(of: 2),
            "AES-CCM: the tag must be 4, 6, …, 16 octets, got \(tagLength)")
        lengthFieldSize = 15 - nonce.count
        precondition(
            lengthFieldSize >= 8 || messageLength < 1 << (8 * lengthFieldSize),
            "AES-CCM: \(messageLength) octets do not fit a \(lengthFieldSize)-octet length field")
        cipher = AES128(key: key)
        self.nonce = nonce
        self.tagLength = tagLength
        self.messageLength = messageLength
    }

    /// `value` as `count` octets, most significant first.
    private func bigEndian(_ value: Int, count: Int) -> [UInt8] {
        (0..<count).map { index in
            let shift = 8 * (count - 1 - index)
            return shift >= Int.bitWidth ? 0 : UInt8(truncatingIfNeeded: value >> shift)
        }
    }

    /// Counter block A_i (RFC 3610, 2.3): flags L − 1, the nonce, i in L octets.
    private func counterBlock(_ index: Int) -> SIMD16<UInt8> {
        SIMD16([UInt8(lengthFieldSize - 1)] + nonce + bigEndian(index, count: lengthFieldSize))
    }

    /// X_n of RFC 3610, 2.2: the CBC-MAC of B_0, the encoded associated data and the
    /// message, each part zero-padded to whole blocks.
    func cbcMAC(associatedData: [UInt8], message: [UInt8]) -> SIMD16<UInt8> {
        let flags =
            UInt8(associatedData.isEmpty ? 0 : 0x40) | UInt8((tagLength - 2) / 2) << 3 | UInt8(lengthFieldSize - 1)
        var state = cipher.encrypt(SIMD16([flags] + nonce + bigEndian(messageLength, count: lengthFieldSize)))
        if !associatedData.isEmpty {
            // The length of a(): two octets below 2^16 − 2^8, else 0xFFFE and four octets.
            let prefix =
                associatedData.count < 0xFF00
                ? bigEndian(associatedData.count, count: 2) : [0xFF, 0xFE] + bigEndian(associatedData.count, count: 4)
            absorb(prefix + associatedData, into: &state)
        }
        absorb(message, into: &state)
        return state
    }

    private func absorb(_ bytes: [UInt8], into state: inout SIMD16<UInt8>) {
        var start = 0
        while start < bytes.count {
            var block = SIMD16<UInt8>.zero
            for index in 0..<min(16, bytes.count - start) { block[index] = bytes[start + index] }
            state = cipher.encrypt(state ^ block)
            start += 16
        }
    }

    /// U of RFC 3610, 2.3: the first M octets of the MAC, encrypted with S_0.
    func tag(fromMAC mac: SIMD16<UInt8>) -> [UInt8] {
        let masked = mac ^ cipher.encrypt(counterBlock(0))
        return (0..<tagLength).map { masked[$0] }
    }

    /// The data exclusive-ored with S_1, S_2, …: encryption and decryption alike.
    func applyKeystream(_ data: [UInt8]) -> [UInt8] {
        var output = data
        var start = 0
        var counter = 1
        while start < data.count {
            let keystream = cipher.encrypt(counterBlock(counter))
            for index in 0..<min(16, data.count - start) { output[start + index] ^= keystream[index] }
            start += 16
            counter += 1
        }
        return output
    }
}
