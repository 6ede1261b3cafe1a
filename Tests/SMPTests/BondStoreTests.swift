import BluetoothCore
import Foundation
import HCI
import Storage
import Testing
@testable import BluetoothCrypto
@testable import SMP

@Suite struct BondStoreTests {
    /// ah's sample of Core Vol 3, Part H, Appendix D.7: IRK ec0234a3…, prand 708194 gives
    /// hash 0dfbaa, so 70:81:94:0D:FB:AA resolves with that IRK and not with another.
    @Test func resolvesThePrivateAddressOfTheSpecSample() throws {
        let irk =
            Array(
                [0xEC, 0x02, 0x34, 0xA3, 0x57, 0xC8, 0xAD, 0x05, 0x34, 0x10, 0x10, 0xA6, 0x0A, 0x39, 0x7D, 0x9B]
                    .reversed()) as [UInt8]
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
        let bond = Bond(
            address: identity, addressType: .random, longTermKey: Array(0..<16), ediv: 0x1234, random: Array(0..<8),
            secureConnections: false, authenticated: true, identityResolvingKey: irk)
        try store.save(bond)
        let file = path + "/bonds/F00DB1E70001.json"
        #expect(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int == 0o600)
        #expect(store.all() == [bond])
        #expect(store.bond(for: identity, type: .random) == bond)
        #expect(store.bond(for: ResolvablePrivateAddress.make(with: irk), type: .random) == bond)
        #expect(
            store.bond(for: ResolvablePrivateAddress.make(with: [UInt8](repeating: 7, count: 16)), type: .random) == nil
        )
        #expect(bond.longTermKeyBytes == Array(0..<16) && bond.randomBytes == Array(0..<8))

        try "{\"format\": \"bluejay-bond\"".write(
            toFile: path + "/bonds/AABBCCDDEEFF.json", atomically: true, encoding: .utf8)
        #expect(store.all() == [bond])
        let storeUnreadable: [String] = ["AABBCCDDEEFF.json"]
        #expect(store.unreadable() == storeUnreadable)
        #expect(try store.remove(identity))
        #expect(try !store.remove(identity))
        #expect(store.all().isEmpty)
        // Our own IRK is made once and kept.
        #expect(store.localIdentityResolvingKey() == store.localIdentityResolvingKey())
    }

    /// A bond file is read and decoded once while it stays the same, by every copy of the
    /// store; a file written again (by this process or another) or removed is seen at once.
    @Test func anUnchangedBondFileIsReadOnce() throws {
        let path = NSTemporaryDirectory() + "bluejay-kept-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = BondStore(store: StoreDirectory(path: path))
        let copy = store
        let identity = try #require(BluetoothAddress("F0:0D:B1:E7:00:02"))
        var bond = Bond(
            address: identity, addressType: .random, longTermKey: Array(0..<16), ediv: 0x1234, random: Array(0..<8),
            secureConnections: false, authenticated: false)
        try store.save(bond)
        for _ in 0..<4 { #expect(copy.bond(for: identity, type: .random) == bond) }
        #expect(store.fileReads == 1, "four asks, one read")

        // Written again by another store (another process): the new bond, read anew.
        bond.authenticated = true
        try BondStore(store: StoreDirectory(path: path)).save(bond)
        #expect(store.bond(for: identity, type: .random) == bond)
        #expect(store.fileReads == 2)

        // Removed behind its back: gone at the next ask.
        #expect(try BondStore(store: StoreDirectory(path: path)).remove(identity))
        #expect(store.bond(for: identity, type: .random) == nil)
    }

    /// The store's modes: the store and `bonds/` folders 0700 when it makes them, every bond
    /// file and our IRK's file 0600, and no temporary file left behind.
    @Test func keyFilesAre0600InFolders0700() throws {
        let path = NSTemporaryDirectory() + "bluejay-modes-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = BondStore(store: StoreDirectory(path: path + "/store"))
        let identity = try #require(BluetoothAddress("F0:0D:B1:E7:00:02"))
        try store.save(
            Bond(
                address: identity, addressType: .public, longTermKey: Array(0..<16), secureConnections: true,
                authenticated: false))
        _ = store.localIdentityResolvingKey()
        func mode(_ path: String) throws -> Int? {
            try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        }
        #expect(try mode(path + "/store") == 0o700)
        #expect(try mode(path + "/store/bonds") == 0o700)
        #expect(try mode(path + "/store/bonds/F00DB1E70002.json") == 0o600)
        #expect(try mode(path + "/store/bonds/local-irk.key") == 0o600)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: path + "/store/bonds").sorted() == [
                "F00DB1E70002.json", "local-irk.key",
            ])
    }

    /// A bond's keys live in SecretBytes: zeroed when the last copy of the bond is gone (read
    /// back from the freed storage by the debug build's probe), never printed, compared
    /// whole; the file format is what it was (the same JSON, byte for byte).
    @Test func keysAreSecretBytesZeroedWithTheLastCopy() throws {
        let ltkHex = "000102030405060708090a0b0c0d0e0f", irkHex = "42424242424242424242424242424242",
            csrkHex = "f0e0d0c0b0a090807060504030201000"
        let file = """
            {
              "address" : "F0:0D:B1:E7:00:03",
              "addressType" : "random",
              "authenticated" : true,
              "ediv" : 4660,
              "format" : "bluejay-bond",
              "identityResolvingKey" : "\(irkHex)",
              "keySize" : 16,
              "longTermKey" : "\(ltkHex)",
              "random" : "0001020304050607",
              "secureConnections" : false,
              "signatureKey" : "\(csrkHex)",
              "version" : 1
            }
            """
        var bond: Bond? = try JSONDecoder().decode(Bond.self, from: Data(file.utf8))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        #expect(try String(decoding: encoder.encode(try #require(bond)), as: UTF8.self) == file)
        #expect(
            bond?.isUsable == true && bond?.longTermKeySecret == SecretBytes(Array(0..<16))
                && bond?.longTermKey == ltkHex)
        #expect(bond?.signatureKeySecret?.bytes == Array(stride(from: 0xF0, through: 0, by: -0x10)))

        // Printed, debug-printed or dumped, a bond shows no key.
        var dumped = ""
        dump(bond, to: &dumped)
        for text in ["\(try #require(bond))", String(reflecting: bond), dumped] {
            #expect(
                !text.contains(ltkHex) && !text.contains(irkHex) && !text.contains(csrkHex)
                    && text.contains("redacted"), "\(text)")
        }
        // Equal only when every key is. (In a scope of its own: this copy shares the LTK and IRK.)
        do {
            var other = try #require(bond)
            other.signatureKey = String(csrkHex.dropLast()) + "1"
            #expect(other != bond && other.signatureKeySecret != nil)
        }

        let texts = try [bond?.longTermKeyText, bond?.identityResolvingKeyText, bond?.signatureKeyText].map {
            SecretBytesProbe.watch(try #require($0))
        }
        var copy = bond
        bond = nil
        #expect(SecretBytesProbe.contentsAtRelease(texts[0]) == nil, "freed while a copy of the bond holds it")
        #expect(copy?.address == "F0:0D:B1:E7:00:03")
        copy = nil
        for (name, address) in zip(["LTK", "IRK", "CSRK"], texts) {
            #expect(
                SecretBytesProbe.contentsAtRelease(address) == [UInt8](repeating: 0, count: 32),
                "\(name): the freed storage still holds it")
        }
    }
}
