/// The LE Secure Connections check value generation function f6 (Core Vol 3, Part H,
/// 2.2.8), for the DHKey checks Ea and Eb:
/// `f6(W, N1, N2, R, IOcap, A1, A2) = AES-CMAC_W(N1 || N2 || R || IOcap || A1 || A2)`.
///
/// - Parameters:
///   - w: 16 octets, most significant first: the MacKey from `f5(w:n1:n2:a1:a2:)`.
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
    return aesCMAC(key: w, message: f6Message(n1: n1, n2: n2, r: r, ioCap: ioCap, a1: a1, a2: a2))
}

/// `f6(w:n1:n2:r:ioCap:a1:a2:)` with the MacKey and r held in ``SecretBytes`` (r is the
/// passkey in Passkey Entry). The check value is sent on the air, so it is an `Array`.
///
/// Traps unless the lengths are as in `f6(w:n1:n2:r:ioCap:a1:a2:)`.
public func f6(w: SecretBytes, n1: [UInt8], n2: [UInt8], r: SecretBytes, ioCap: [UInt8], a1: [UInt8], a2: [UInt8])
    -> [UInt8]
{
    requireLength(w, 16, "W")
    // r passes through the message's array, wiped after.
    var message = r.withTemporaryCopy { f6Message(n1: n1, n2: n2, r: $0, ioCap: ioCap, a1: a1, a2: a2) }
    defer { SecretBytes.wipe(&message) }
    return aesCMAC(key: w, message: message)
}

/// N1 || N2 || R || IOcap || A1 || A2, the lengths checked.
private func f6Message(
    n1: [UInt8], n2: [UInt8], r: [UInt8], ioCap: [UInt8], a1: [UInt8], a2: [UInt8], function: StaticString = #function
) -> [UInt8] {
    requireLength(n1, 16, "N1", function: function)
    requireLength(n2, 16, "N2", function: function)
    requireLength(r, 16, "R", function: function)
    requireLength(ioCap, 3, "IOcap", function: function)
    requireLength(a1, 7, "A1", function: function)
    requireLength(a2, 7, "A2", function: function)
    return n1 + n2 + r + ioCap + a1 + a2
}
