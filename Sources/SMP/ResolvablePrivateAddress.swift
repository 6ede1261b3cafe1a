import BluetoothCore
import BluetoothCrypto
import HCI

/// Resolvable private addresses (Core Vol 6, Part B, 1.3.2.2; Vol 3, Part H, 2.2.2): the
/// two most significant bits are 01, the upper 24 bits are prand and the lower 24 bits
/// `ah(IRK, prand)`, so a peer that rotates its address is recognised by its IRK.
public enum ResolvablePrivateAddress {
    /// Whether `address` is a resolvable private address made with `irk` (wire order).
    public static func resolves(_ address: BluetoothAddress, with irk: [UInt8]) -> Bool {
        resolves(address, with: SecretBytes(irk))
    }

    /// Whether `address` is a resolvable private address made with `irk` (wire order), the
    /// IRK held in `SecretBytes`.
    public static func resolves(_ address: BluetoothAddress, with irk: SecretBytes) -> Bool {
        let written = Array(address.bytes.reversed())  // most significant first
        guard irk.count == 16, address.randomKind == .resolvablePrivate else { return false }
        return ah(k: irk.reversed(), r: Array(written[0..<3])) == Array(written[3..<6])
    }

    /// A fresh resolvable private address for `irk` (wire order), e.g. for tests.
    public static func make(with irk: [UInt8]) -> BluetoothAddress {
        make(with: SecretBytes(irk))
    }

    /// A fresh resolvable private address for `irk` (wire order, in `SecretBytes`): prand's
    /// two top bits 0b01 and its 22 random bits neither all 0 nor all 1 (1.3.2.2), then
    /// `hash = ah(IRK, prand)`.
    public static func make(with irk: SecretBytes) -> BluetoothAddress {
        var generator = SystemRandomNumberGenerator()
        var prand: [UInt8]  // wire order
        repeat {
            prand = (0..<3).map { _ in UInt8.random(in: 0...255, using: &generator) }
            prand[2] = prand[2] & 0x3F | 0x40
        } while !BluetoothAddress.randomPartIsValid(prand, bits: 22)
        let hash = ah(k: irk.reversed(), r: Array(prand.reversed()))  // most significant first
        return BluetoothAddress(littleEndianBytes: Array(hash.reversed()) + prand)
    }
}
