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
    requireLength(n1, 16, "N1")
    requireLength(n2, 16, "N2")
    requireLength(a1, 7, "A1")
    requireLength(a2, 7, "A2")
    let t = aesCMAC(key: f5Salt, message: w)
    let body = f5KeyID + n1 + n2 + a1 + a2 + f5Length
    return (macKey: aesCMAC(key: t, message: [0x00] + body),
            ltk: aesCMAC(key: t, message: [0x01] + body))
}

/// SALT of f5: 0x6C888391_AAF5A538_60370BDB_5A6083BE.
private let f5Salt: [UInt8] = [
    0x6C, 0x88, 0x83, 0x91, 0xAA, 0xF5, 0xA5, 0x38, 0x60, 0x37, 0x0B, 0xDB, 0x5A, 0x60, 0x83, 0xBE,
]

/// keyID of f5: "btle" as 0x62746C65.
private let f5KeyID: [UInt8] = [0x62, 0x74, 0x6C, 0x65]

/// Length of f5: 256 bits, as a 16-bit value 0x0100.
private let f5Length: [UInt8] = [0x01, 0x00]
