import BluetoothCrypto
import Testing

// Our AES-128 block (behind the security function e) against FIPS-197's examples and against
// OpenSSL's AES (OracleVectors.swift, written by Fixtures/crypto/oracle_vectors.py).

@Suite("AES-128")
struct AES128Tests {
    @Test("FIPS-197 Appendix C.1: AES-128 example vector")
    func appendixC1() {
        #expect(
            e(key: hex("00010203 04050607 08090a0b 0c0d0e0f"), plaintext: hex("00112233 44556677 8899aabb ccddeeff"))
                == hex("69c4e0d8 6a7b0430 d8cdb780 70b4c55a"))
    }

    @Test("FIPS-197 Appendix B: cipher example")
    func appendixB() {
        #expect(
            e(key: hex("2b7e1516 28aed2a6 abf71588 09cf4f3c"), plaintext: hex("3243f6a8 885a308d 313198a2 e0370734"))
                == hex("3925841d 02dc09fb dc118597 196a0b32"))
    }

    @Test("200 keys and blocks, all-zero and all-one among them, encrypt as OpenSSL encrypts them")
    func againstOpenSSL() {
        #expect(aesOracle.count == 200)
        for (key, block, expected) in aesOracle {
            #expect(e(key: hex(key), plaintext: hex(block)) == hex(expected), "key \(key), block \(block)")
        }
    }
}
