import BluetoothCrypto
import Testing

// AES-CCM against the published examples: RFC 3610's packet vector #1 (M = 8, L = 2) and
// NIST SP 800-38C's Appendix C examples 1 to 3 (M = 4, 6, 8; nonces of 7, 8 and 12 octets).

@Suite("AES-CCM")
struct AESCCMTests {
    struct Vector: Sendable, CustomStringConvertible {
        let name: String
        let key: String, nonce: String, associatedData: String, plaintext: String
        /// Ciphertext followed by the tag, as the documents print them.
        let output: String
        let tagLength: Int
        var description: String { name }
    }

    static let vectors = [
        Vector(
            name: "RFC 3610 packet vector #1", key: "c0c1c2c3 c4c5c6c7 c8c9cacb cccdcecf",
            nonce: "00000003 020100a0 a1a2a3a4 a5", associatedData: "00010203 04050607",
            plaintext: "08090a0b 0c0d0e0f 10111213 14151617 18191a1b 1c1d1e",
            output: "588c979a 61c663d2 f066d0c2 c0f98980 6d5f6b61 dac38417 e8d12cfd f926e0", tagLength: 8),
        Vector(
            name: "SP 800-38C C.1", key: "40414243 44454647 48494a4b 4c4d4e4f", nonce: "10111213 141516",
            associatedData: "00010203 04050607", plaintext: "20212223", output: "7162015b 4dac255d", tagLength: 4),
        Vector(
            name: "SP 800-38C C.2", key: "40414243 44454647 48494a4b 4c4d4e4f", nonce: "10111213 14151617",
            associatedData: "00010203 04050607 08090a0b 0c0d0e0f",
            plaintext: "20212223 24252627 28292a2b 2c2d2e2f",
            output: "d2a1f0e0 51ea5f62 081a7792 073d593d 1fc64fbf accd", tagLength: 6),
        Vector(
            name: "SP 800-38C C.3", key: "40414243 44454647 48494a4b 4c4d4e4f", nonce: "10111213 14151617 18191a1b",
            associatedData: "00010203 04050607 08090a0b 0c0d0e0f 10111213",
            plaintext: "20212223 24252627 28292a2b 2c2d2e2f 30313233 34353637",
            output: "e3b201a9 f5b71a7a 9b1ceaec cd97e70b 6176aad9 a4428aa5 484392fb c1b09951", tagLength: 8),
    ]

    @Test("Encryption gives the published ciphertext and tag", arguments: vectors)
    func encrypts(_ vector: Vector) {
        let result = aesCCMEncrypt(
            key: hex(vector.key), nonce: hex(vector.nonce), plaintext: hex(vector.plaintext),
            associatedData: hex(vector.associatedData), tagLength: vector.tagLength)
        #expect(result.ciphertext + result.tag == hex(vector.output))
    }

    @Test("Decryption gives the plaintext back, and nothing once any octet is changed", arguments: vectors)
    func decrypts(_ vector: Vector) {
        let output = hex(vector.output)
        let ciphertext = Array(output.dropLast(vector.tagLength)), tag = Array(output.suffix(vector.tagLength))
        func open(_ ciphertext: [UInt8], _ tag: [UInt8], _ data: [UInt8]) -> [UInt8]? {
            aesCCMDecrypt(
                key: hex(vector.key), nonce: hex(vector.nonce), ciphertext: ciphertext, tag: tag, associatedData: data)
        }
        #expect(open(ciphertext, tag, hex(vector.associatedData)) == hex(vector.plaintext))
        var flipped = ciphertext
        flipped[0] ^= 0x01
        #expect(open(flipped, tag, hex(vector.associatedData)) == nil)
        var wrongTag = tag
        wrongTag[wrongTag.count - 1] ^= 0x80
        #expect(open(ciphertext, wrongTag, hex(vector.associatedData)) == nil)
        #expect(open(ciphertext, tag, hex(vector.associatedData) + [0]) == nil)
    }

    @Test("An empty message still has a tag over the associated data")
    func emptyMessage() {
        let key = hex("40414243 44454647 48494a4b 4c4d4e4f"), nonce = hex("10111213 141516")
        let sealed = aesCCMEncrypt(key: key, nonce: nonce, plaintext: [], associatedData: [0x11], tagLength: 4)
        #expect(sealed.ciphertext.isEmpty && sealed.tag.count == 4)
        #expect(aesCCMDecrypt(key: key, nonce: nonce, ciphertext: [], tag: sealed.tag, associatedData: [0x11]) == [])
        #expect(aesCCMDecrypt(key: key, nonce: nonce, ciphertext: [], tag: sealed.tag, associatedData: [0x12]) == nil)
    }
}
