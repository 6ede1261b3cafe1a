import BluetoothCore
import Foundation
import HCI
import Storage
import Testing
@testable import BluetoothCrypto
@testable import SMP

/// Our own random addresses (Core 6.0 Vol 6, Part B, 1.3.2): resolvable private addresses
/// made with our IRK, and the static random address kept in the store.
@Suite struct PrivateAddressTests {
    /// Each address made with an IRK is prand (top bits 0b01, the 22 random bits neither
    /// all 0 nor all 1) then ah(IRK, prand) as its low 24 bits, so it resolves with that IRK
    /// and not with another; no two of them are alike.
    @Test func resolvablePrivateAddressesAreAhOfPrandWithOurIRK() {
        let irk = SecretBytes((0..<16).map { UInt8(0x30 + $0) })
        var seen: Set<BluetoothAddress> = []
        for _ in 0..<50 {
            let address = ResolvablePrivateAddress.make(with: irk)
            let written = Array(address.bytes.reversed())  // most significant first
            #expect(written[0] >> 6 == 0b01, "prand's two top bits")
            #expect(address.randomKind == .resolvablePrivate)
            #expect(BluetoothAddress.randomPartIsValid(Array(address.bytes[3...]), bits: 22))
            #expect(ah(k: irk.reversed(), r: Array(written[0..<3])) == Array(written[3..<6]), "hash = ah(IRK, prand)")
            #expect(ResolvablePrivateAddress.resolves(address, with: irk))
            #expect(!ResolvablePrivateAddress.resolves(address, with: SecretBytes([UInt8](repeating: 0x30, count: 16))))
            seen.insert(address)
        }
        #expect(seen.count == 50)
    }

    /// A static random address has its two top bits 0b11 and the other 46 neither all 0
    /// nor all 1; the kinds are told apart by the top bits.
    @Test func staticRandomAddressesHaveTopBits11() throws {
        for _ in 0..<200 {
            let address = BluetoothAddress.makeStaticRandom()
            #expect(address.bytes[5] >> 6 == 0b11 && address.randomKind == .static && address.isValidStaticRandom)
        }
        #expect(!(try #require(BluetoothAddress("FF:FF:FF:FF:FF:FF"))).isValidStaticRandom, "all ones")
        #expect(!(try #require(BluetoothAddress("C0:00:00:00:00:00"))).isValidStaticRandom, "all zeros")
        #expect(try #require(BluetoothAddress("C0:00:00:00:00:01")).isValidStaticRandom)
        #expect(try #require(BluetoothAddress("7F:00:00:00:00:01")).randomKind == .resolvablePrivate)
        #expect(try #require(BluetoothAddress("3F:00:00:00:00:01")).randomKind == .nonResolvablePrivate)
        #expect(!(try #require(BluetoothAddress("40:00:00:00:00:01"))).isValidStaticRandom)
    }

    /// Our static random address is made once and kept: a second store over the same
    /// directory (the next run) finds the same one; a file holding no valid static address
    /// is replaced.
    @Test func ourStaticRandomAddressIsKept() throws {
        let path = NSTemporaryDirectory() + "bluejay-static-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let first = BondStore(store: StoreDirectory(path: path)).localStaticRandomAddress()
        #expect(first.isValidStaticRandom)
        #expect(BondStore(store: StoreDirectory(path: path)).localStaticRandomAddress() == first)
        #expect(
            try FileManager.default.attributesOfItem(atPath: path + "/bonds/local-static-address")[.posixPermissions]
                as? Int == 0o600)
        try Data("00:11:22:33:44:55\n".utf8).write(to: URL(fileURLWithPath: path + "/bonds/local-static-address"))
        let replaced = BondStore(store: StoreDirectory(path: path)).localStaticRandomAddress()
        #expect(replaced.isValidStaticRandom && replaced != BluetoothAddress("00:11:22:33:44:55"))
    }
}
