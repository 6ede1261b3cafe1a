import BluetoothCrypto
import Testing

// AES-CMAC (RFC 4493) and the security function e, which the rest of the toolbox is made of.

@Suite("AES-CMAC and e")
struct AESCMACTests {
    /// The RFC 4493 key, also the key of Core Vol 3, Part H, Appendix D.1.
    static let key = hex("2b7e1516 28aed2a6 abf71588 09cf4f3c")
    /// The RFC 4493 message, of which the examples take the first 0, 16, 40 and 64 octets.
    static let message = hex(
        """
        6bc1bee2 2e409f96 e93d7e11 7393172a ae2d8a57 1e03ac9c 9eb76fac 45af8e51
        30c81c46 a35ce411 e5fbc119 1a0a52ef f69f2445 df4f9b17 ad2b417b e66c3710
        """)

    @Test(
        "Appendix D.1 / RFC 4493 examples 1-4: empty, one block, a partial last block, four blocks",
        arguments: [
            (0, "bb1d6929 e9593728 7fa37d12 9b756746"),
            (16, "070a16b4 6b4d4144 f79bdd9d d04a287c"),
            (40, "dfa66747 de9ae630 30ca3261 1497c827"),
            (64, "51f0bebf 7e3b9d92 fc497417 79363cfe"),
        ])
    func rfc4493(length: Int, mac: String) {
        #expect(aesCMAC(key: Self.key, message: Array(Self.message.prefix(length))) == hex(mac))
    }

    @Test("e is AES-128: RFC 4493 subkey L = AES-128(K, 0), and SP 800-38A ECB block 1")
    func securityFunctionE() {
        #expect(
            e(key: Self.key, plaintext: [UInt8](repeating: 0, count: 16))
                == hex("7df76b0c 1ab899b3 3e42f047 b91b546f"))
        #expect(
            e(key: Self.key, plaintext: Array(Self.message.prefix(16)))
                == hex("3ad77bb4 0d7a3660 a89ecaf3 2466ef97"))
    }

    @Test("Messages one octet either side of a block boundary give different, 16-octet MACs")
    func blockBoundaries() {
        let lengths = [15, 16, 17, 31, 32, 33, 47, 48, 49, 63]
        let macs = lengths.map { aesCMAC(key: Self.key, message: Array(Self.message.prefix($0))) }
        #expect(macs.allSatisfy { $0.count == 16 })
        #expect(Set(macs).count == lengths.count)
    }

    @Test("The byte order helpers reverse, and undo each other")
    func byteOrder() {
        let wire: [UInt8] = [0x01, 0x02, 0x03]
        #expect(msbFirst(fromLSBFirst: wire) == [0x03, 0x02, 0x01])
        #expect(lsbFirst(fromMSBFirst: msbFirst(fromLSBFirst: wire)) == wire)
        #expect(msbFirst(fromLSBFirst: wire[1...]) == [0x03, 0x02])
    }

    #if compiler(>=6.2)  // exit tests are Swift Testing 6.2's: on 6.0 and 6.1, no such test
        @Test("A key that is not 16 octets is a programming error")
        func shortKey() async {
            await #expect(processExitsWith: .failure) {
                _ = aesCMAC(key: [UInt8](repeating: 0, count: 15), message: [])
            }
            await #expect(processExitsWith: .failure) {
                _ = e(key: [UInt8](repeating: 0, count: 16), plaintext: [UInt8](repeating: 0, count: 17))
            }
        }
    #endif
}
