/// The kinds of random device address (Core 6.0 Vol 6, Part B, 1.3.2), told apart by the
/// two most significant bits of the address.
public enum RandomAddressKind: Sendable, Equatable, CustomStringConvertible {
    /// 0b11: a static address, kept for at least a power cycle (1.3.2.1).
    case `static`
    /// 0b01: a resolvable private address, prand and ah(IRK, prand) (1.3.2.2).
    case resolvablePrivate
    /// 0b00: a non-resolvable private address (1.3.2.2).
    case nonResolvablePrivate
    /// 0b10: reserved for future use.
    case reserved

    /// `static`, `resolvable private`, `non-resolvable private` or `reserved`.
    public var description: String {
        switch self {
        case .static: "static"
        case .resolvablePrivate: "resolvable private"
        case .nonResolvablePrivate: "non-resolvable private"
        case .reserved: "reserved"
        }
    }
}

extension BluetoothAddress {
    /// The kind this address would be as a random address, from its two most significant bits.
    public var randomKind: RandomAddressKind {
        switch bytes[5] >> 6 {
        case 0b11: .static
        case 0b01: .resolvablePrivate
        case 0b00: .nonResolvablePrivate
        default: .reserved
        }
    }

    /// Whether this is a valid static random address: top bits 0b11, and the 46 random
    /// bits neither all 0 nor all 1 (1.3.2.1).
    public var isValidStaticRandom: Bool {
        randomKind == .static && Self.randomPartIsValid(bytes, bits: 46)
    }

    /// A fresh static random address (top bits 0b11, the rest random, neither all 0 nor
    /// all 1).
    public static func makeStaticRandom() -> BluetoothAddress {
        var generator = SystemRandomNumberGenerator()
        while true {
            var octets = (0..<6).map { _ in UInt8.random(in: 0...255, using: &generator) }
            octets[5] |= 0xC0
            if randomPartIsValid(octets, bits: 46) { return BluetoothAddress(littleEndianBytes: octets) }
        }
    }

    /// Whether the low `bits` bits of `octets` (wire order, least significant first) hold
    /// at least one 0 and at least one 1: the rule for a static address (46 bits) and for
    /// the random part of prand (22 bits of prand's 3 octets, wire order).
    public static func randomPartIsValid(_ octets: [UInt8], bits: Int) -> Bool {
        var zeros = 0, ones = 0
        for bit in 0..<bits {
            if octets[bit / 8] >> UInt8(bit % 8) & 1 == 1 { ones += 1 } else { zeros += 1 }
        }
        return zeros > 0 && ones > 0
    }
}
