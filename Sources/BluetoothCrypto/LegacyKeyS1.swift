/// The LE legacy pairing key generation function s1 (Core Vol 3, Part H, 2.2.4), which
/// makes the STK: `s1(k, r1, r2) = e(k, r')`, where r' is the least significant 64 bits of
/// r1 followed by the least significant 64 bits of r2.
///
/// - Parameters:
///   - k: 16 octets, most significant first: the TK.
///   - r1: 16 octets, most significant first: Srand (the responder's random).
///   - r2: 16 octets, most significant first: Mrand (the initiator's random).
/// - Returns: the 16-octet STK, most significant octet first (HCI takes it reversed).
///
/// Traps unless the lengths are as above.
public func s1(k: [UInt8], r1: [UInt8], r2: [UInt8]) -> [UInt8] {
    requireLength(k, 16, "k")
    requireLength(r1, 16, "r1")
    requireLength(r2, 16, "r2")
    return e(key: k, plaintext: Array(r1.suffix(8) + r2.suffix(8)))
}
