/// The LE Secure Connections check value generation function f6 (Core Vol 3, Part H,
/// 2.2.8), for the DHKey checks Ea and Eb:
/// `f6(W, N1, N2, R, IOcap, A1, A2) = AES-CMAC_W(N1 || N2 || R || IOcap || A1 || A2)`.
///
/// - Parameters:
///   - w: 16 octets, most significant first: the MacKey from ``f5(w:n1:n2:a1:a2:)``.
///   - n1: 16 octets, most significant first: the first nonce.
///   - n2: 16 octets, most significant first: the second nonce.
///   - r: 16 octets, most significant first: ra or rb (zero, the passkey, or OOB data).
///   - ioCap: 3 octets: AuthReq as the most significant octet, then OOB data flag, then IO
///     capability as the least significant (`01 01 02` is AuthReq 0x01, OOB 0x01, IO 0x02).
///   - a1: 7 octets: an address type octet, then the address most significant octet first.
///   - a2: 7 octets: the other address, the same way.
/// - Returns: the 16-octet check value, most significant octet first (the Pairing DHKey
///   Check PDU carries it reversed).
///
/// Traps unless the lengths are as above.
public func f6(w: [UInt8], n1: [UInt8], n2: [UInt8], r: [UInt8], ioCap: [UInt8], a1: [UInt8], a2: [UInt8])
    -> [UInt8]
{
    requireLength(w, 16, "W")
    requireLength(n1, 16, "N1")
    requireLength(n2, 16, "N2")
    requireLength(r, 16, "R")
    requireLength(ioCap, 3, "IOcap")
    requireLength(a1, 7, "A1")
    requireLength(a2, 7, "A2")
    return aesCMAC(key: w, message: n1 + n2 + r + ioCap + a1 + a2)
}
