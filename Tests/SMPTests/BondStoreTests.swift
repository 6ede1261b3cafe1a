import BluetoothCore
import Foundation
import HCI
import Storage
import Testing
@testable import SMP

@Suite struct BondStoreTests {
    /// ah's sample of Core Vol 3, Part H, Appendix D.7: IRK ec0234a3…, prand 708194 gives
    /// hash 0dfbaa, so 70:81:94:0D:FB:AA resolves with that IRK and not with another.
    @Test func resolvesThePrivateAddressOfTheSpecSample() throws {
        let irk = Array([0xEC, 0x02, 0x34, 0xA3, 0x57, 0xC8, 0xAD, 0x05, 0x34, 0x10, 0x10, 0xA6, 0x0A, 0x39, 0x7D, 0x9B].reversed()) as [UInt8]
        let address = try #require(BluetoothAddress("70:81:94:0D:FB:AA"))
        #expect(ResolvablePrivateAddress.resolves(address, with: irk))
        #expect(!ResolvablePrivateAddress.resolves(try #require(BluetoothAddress("70:81:94:0D:FB:AB")), with: irk))
        #expect(!ResolvablePrivateAddress.resolves(address, with: [UInt8](repeating: 1, count: 16)))
        // Made by us, resolved by us; the two top bits say "resolvable".
        let made = ResolvablePrivateAddress.make(with: irk)
        #expect(ResolvablePrivateAddress.resolves(made, with: irk) && made.bytes[5] & 0xC0 == 0x40)
    }

    /// A bond is stored 0600, found by its identity address or by a private address its IRK
    /// resolves, and forgotten; a corrupt file is reported, not trusted.
    @Test func storesFindsAndForgets() throws {
        let path = NSTemporaryDirectory() + "bluejay-bonds-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = BondStore(store: StoreDirectory(path: path))
        let irk = [UInt8](repeating: 0x42, count: 16)
        let identity = try #require(BluetoothAddress("F0:0D:B1:E7:00:01"))
        let bond = Bond(address: identity, addressType: .random, longTermKey: Array(0..<16), ediv: 0x1234, random: Array(0..<8),
                        secureConnections: false, authenticated: true, identityResolvingKey: irk)
        try store.save(bond)
        let file = path + "/bonds/F00DB1E70001.json"
        #expect(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int == 0o600)
        #expect(store.all() == [bond])
        #expect(store.bond(for: identity, type: .random) == bond)
        #expect(store.bond(for: ResolvablePrivateAddress.make(with: irk), type: .random) == bond)
        #expect(store.bond(for: ResolvablePrivateAddress.make(with: [UInt8](repeating: 7, count: 16)), type: .random) == nil)
        #expect(bond.longTermKeyBytes == Array(0..<16) && bond.randomBytes == Array(0..<8))

        try "{\"format\": \"bluejay-bond\"".write(toFile: path + "/bonds/AABBCCDDEEFF.json", atomically: true, encoding: .utf8)
        #expect(store.all() == [bond])
        #expect(store.unreadable() == ["AABBCCDDEEFF.json"])
        #expect(try store.remove(identity))
        #expect(try !store.remove(identity))
        #expect(store.all().isEmpty)
        // Our own IRK is made once and kept.
        #expect(store.localIdentityResolvingKey() == store.localIdentityResolvingKey())
    }
}
