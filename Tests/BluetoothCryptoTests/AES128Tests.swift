import BluetoothCrypto
import Crypto
import Testing
import _CryptoExtras

// Our AES-128 block (behind the security function e) against FIPS-197's examples and against
// swift-crypto's AES.permute.

@Suite("AES-128")
struct AES128Tests {
    @Test("FIPS-197 Appendix C.1: AES-128 example vector")
    func appendixC1() {
        #expect(e(key: hex("00010203 04050607 08090a0b 0c0d0e0f"), plaintext: hex("00112233 44556677 8899aabb ccddeeff"))
                == hex("69c4e0d8 6a7b0430 d8cdb780 70b4c55a"))
    }

    @Test("FIPS-197 Appendix B: cipher example")
    func appendixB() {
        #expect(e(key: hex("2b7e1516 28aed2a6 abf71588 09cf4f3c"), plaintext: hex("3243f6a8 885a308d 313198a2 e0370734"))
                == hex("3925841d 02dc09fb dc118597 196a0b32"))
    }

    @Test("All-zero and all-one keys and blocks, as swift-crypto encrypts them")
    func extremes() throws {
        for key in [[UInt8](repeating: 0, count: 16), [UInt8](repeating: 0xff, count: 16)] {
            for block in [[UInt8](repeating: 0, count: 16), [UInt8](repeating: 0xff, count: 16)] {
                #expect(e(key: key, plaintext: block) == (try reference(key: key, block: block)))
            }
        }
    }

    @Test("1000 random keys and blocks encrypt as swift-crypto's AES.permute does")
    func randomAgainstSwiftCrypto() throws {
        var generator = SeededGenerator(seed: 0xAE5_128)
        for _ in 0..<1000 {
            let key = generator.octets(16), block = generator.octets(16)
            let ours = e(key: key, plaintext: block)
            let theirs = try reference(key: key, block: block)
            #expect(ours == theirs, "key \(key), block \(block)")
            if ours != theirs { return }
        }
    }

    /// swift-crypto's single-block AES encryption.
    private func reference(key: [UInt8], block: [UInt8]) throws -> [UInt8] {
        var output = block
        try AES.permute(&output, key: SymmetricKey(data: key))
        return output
    }
}
