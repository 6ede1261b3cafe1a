/// AES-CMAC (RFC 4493) with a 128-bit key: the 16-octet message authentication code of
/// `message`, the function the toolbox calls AES-CMAC_k(m) (Core Vol 3, Part H, 2.2.5).
///
/// `key` is 16 octets and, like `message` and the result, in RFC 4493 order: the first octet
/// is the most significant. `message` may be of any length, including zero.
///
/// Traps unless `key` is 16 octets.
public func aesCMAC(key: [UInt8], message: [UInt8]) -> [UInt8] {
    requireLength(key, 16, "key")
    return aesCMAC(cipher: AES128(key: key), message: message)
}

/// `aesCMAC(key:message:)` with a key held in ``SecretBytes`` (an LTK, the MacKey, f5's
/// T): the key goes into the cipher without an `Array` on the way.
///
/// Traps unless `key` is 16 octets.
public func aesCMAC(key: SecretBytes, message: [UInt8]) -> [UInt8] {
    requireLength(key, 16, "key")
    return aesCMAC(cipher: AES128(key: key), message: message)
}

/// AES-CMAC whose result is itself a key (f5's T, MacKey and LTK, h6, s1): the MAC moved
/// into ``SecretBytes`` and its `Array` wiped.
func secretAESCMAC(key: SecretBytes, message: [UInt8]) -> SecretBytes {
    var mac = aesCMAC(key: key, message: message)
    defer { SecretBytes.wipe(&mac) }
    return SecretBytes(mac)
}

/// RFC 4493, 2.4, with the key already expanded.
private func aesCMAC(cipher: AES128, message: [UInt8]) -> [UInt8] {
    let (k1, k2) = cmacSubkeys(cipher)

    // RFC 4493, 2.4: n blocks, the last one complete or padded with 10*, and the last
    // block masked with K1 (complete) or K2 (padded).
    let blockCount = max(1, (message.count + 15) / 16)
    let lastStart = (blockCount - 1) * 16
    let lastIsComplete = !message.isEmpty && message.count % 16 == 0
    var last = Array(message[lastStart...])
    if lastIsComplete {
        last = xor(last, k1)
    } else {
        last.append(0x80)
        last += [UInt8](repeating: 0, count: 16 - last.count)
        last = xor(last, k2)
    }

    var x = [UInt8](repeating: 0, count: 16)
    for start in stride(from: 0, to: lastStart, by: 16) {
        x = cipher.encrypt(xor(x, message[start..<start + 16]))
    }
    return cipher.encrypt(xor(x, last))
}

/// RFC 4493, 2.3: K1 and K2 from L = AES-128(K, 0^128).
private func cmacSubkeys(_ cipher: AES128) -> ([UInt8], [UInt8]) {
    let l = cipher.encrypt([UInt8](repeating: 0, count: 16))
    let k1 = doubled(l)
    return (k1, doubled(k1))
}

/// Multiplication by x in GF(2^128): a left shift by one bit, with the constant
/// Rb = 0x87 folded into the last octet when the shifted-out bit was set.
///
/// Folded in under a mask of that bit, not by a branch: L = AES-128(K, 0^128) is as secret
/// as K, and so are K1 and K2. RFC 4493's `if MSB(L) = 0`, written as a branch, compiled to
/// a jump on the bit (`jns` in the release build), which bluejay-ct measured: max |t| 15 to
/// 61 over 100,000 or 200,000 AES-CMACs, a fixed key against random ones.
private func doubled(_ block: [UInt8]) -> [UInt8] {
    var result = [UInt8](repeating: 0, count: 16)
    for index in 0..<16 {
        let carry: UInt8 = index < 15 ? block[index + 1] >> 7 : 0
        result[index] = block[index] << 1 | carry
    }
    result[15] ^= 0x87 & (0 &- (block[0] >> 7))  // 0xff & 0x87 where the top bit was set
    return result
}

/// The octet-wise exclusive or of two equally long byte sequences.
func xor(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> [UInt8] {
    assert(a.count == b.count)
    return zip(a, b).map { $0 ^ $1 }
}
