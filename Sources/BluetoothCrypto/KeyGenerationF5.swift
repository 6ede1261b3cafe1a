/// The LE Secure Connections key generation function f5 (Core Vol 3, Part H, 2.2.7):
/// the MacKey and the LTK from the Diffie-Hellman key.
///
/// `T = AES-CMAC_SALT(W)` with the specification's SALT, then
/// `AES-CMAC_T(Counter || keyID || N1 || N2 || A1 || A2 || Length)` with keyID "btle"
/// (0x62746C65), Length 256, Counter 0 for the MacKey and 1 for the LTK.
///
/// - Parameters:
///   - w: 32 octets, most significant first: the shared secret DHKey.
///   - n1: 16 octets, most significant first: the initiating device's nonce Na.
///   - n2: 16 octets, most significant first: the responding device's nonce Nb.
///   - a1: 7 octets: the initiating device's address type (0x00 public, 0x01 random) as the
///     most significant octet, then its address most significant octet first (the usual
///     written form: `00 56 12 37 37 BF CE` for public 56:12:37:37:BF:CE).
///   - a2: 7 octets: the responding device's address, the same way.
/// - Returns: the MacKey and the LTK, 16 octets each, most significant octet first (HCI
///   takes the LTK reversed).
///
/// Traps unless the lengths are as above.
public func f5(w: [UInt8], n1: [UInt8], n2: [UInt8], a1: [UInt8], a2: [UInt8]) -> (macKey: [UInt8], ltk: [UInt8]) {
    requireLength(w, 32, "W")
    let body = f5Body(n1: n1, n2: n2, a1: a1, a2: a2)
    let t = aesCMAC(key: f5Salt, message: w)
    return (
        macKey: aesCMAC(key: t, message: [0x00] + body),
        ltk: aesCMAC(key: t, message: [0x01] + body)
    )
}

/// `f5(w:n1:n2:a1:a2:)` with the DHKey held in ``SecretBytes``, and the MacKey and LTK
/// returned in ``SecretBytes``: no `Array` holding W, T or a result outlives the call.
///
/// Traps unless the lengths are as in `f5(w:n1:n2:a1:a2:)`.
public func f5(w: SecretBytes, n1: [UInt8], n2: [UInt8], a1: [UInt8], a2: [UInt8]) -> (
    macKey: SecretBytes, ltk: SecretBytes
) {
    requireLength(w, 32, "W")
    let body = f5Body(n1: n1, n2: n2, a1: a1, a2: a2)
    // W is AES-CMAC's message here, not its key: it passes through a copy, wiped after.
    let t = w.withTemporaryCopy { secretAESCMAC(key: SecretBytes(f5Salt), message: $0) }
    return (
        macKey: secretAESCMAC(key: t, message: [0x00] + body),
        ltk: secretAESCMAC(key: t, message: [0x01] + body)
    )
}

/// keyID || N1 || N2 || A1 || A2 || Length, the lengths checked.
private func f5Body(n1: [UInt8], n2: [UInt8], a1: [UInt8], a2: [UInt8], function: StaticString = #function) -> [UInt8] {
    requireLength(n1, 16, "N1", function: function)
    requireLength(n2, 16, "N2", function: function)
    requireLength(a1, 7, "A1", function: function)
    requireLength(a2, 7, "A2", function: function)
    return f5KeyID + n1 + n2 + a1 + a2 + f5Length
}

/// SALT of f5: 0x6C888391_AAF5A538_60370BDB_5A6083BE.
private let f5Salt: [UInt8] = [
    0x6C, 0x88, 0x83, 0x91, 0xAA, 0xF5, 0xA5, 0x38, 0x60, 0x37, 0x0B, 0xDB, 0x5A, 0x60, 0x83, 0xBE,
]

/// keyID of f5: "btle" as 0x62746C65.
private let f5KeyID: [UInt8] = [0x62, 0x74, 0x6C, 0x65]

/// Length of f5: 256 bits, as a 16-bit value 0x0100.
private let f5Length: [UInt8] = [0x01, 0x00]
