import Testing
@testable import BluetoothCrypto

// SecretBytes: secrets zeroed when the last owner lets go (issue 38, item 4), read back
// from the freed storage through the debug build's probe (SecretBytesProbe), which copies
// the buffer after deinit's zeroing and before it is deallocated. Without the zeroing these
// tests see the secret's own octets there and fail.

#if DEBUG
    @Suite("SecretBytes")
    struct SecretBytesTests {
        /// What the buffer at `address` held when it was freed, as a failure message's text.
        private func freed(_ address: UInt) -> [UInt8]? { SecretBytesProbe.contentsAtRelease(address) }

        @Test("The storage is zeroed when the last owner lets go, not before")
        func zeroedWhenTheLastOwnerLetsGo() throws {
            var first: SecretBytes? = SecretBytes([UInt8](repeating: 0xA5, count: 32))
            let address = SecretBytesProbe.watch(try #require(first))
            var second = first
            first = nil
            #expect(freed(address) == nil, "freed while a second owner holds it")
            #expect(second?.bytes == [UInt8](repeating: 0xA5, count: 32))
            second = nil
            #expect(freed(address) == [UInt8](repeating: 0, count: 32), "the freed storage still holds the secret")
        }

        @Test("A private key's scalar, the DHKey, and f5's MacKey and LTK are zeroed when let go")
        func keysAreZeroedWhenLetGo() throws {
            var key = P256PrivateKey(rawRepresentation: Curve.debugPrivate)
            let scalar = SecretBytesProbe.watch(try #require(key?.secret))
            var peer = P256PrivateKey(rawRepresentation: Curve.privateB)
            var dhKey: SecretBytes? = key?.dhKey(with: try #require(peer?.publicKey))
            #expect(dhKey?.bytes == Curve.dhKey)
            let dhKeyAddress = SecretBytesProbe.watch(try #require(dhKey))
            var keys: (macKey: SecretBytes, ltk: SecretBytes)? = f5(
                w: SecretBytes(Sample.dhKey), n1: Sample.na, n2: Sample.nb, a1: Sample.a1, a2: Sample.a2)
            let macKey = SecretBytesProbe.watch(try #require(keys?.macKey)),
                ltk = SecretBytesProbe.watch(try #require(keys?.ltk))
            #expect(keys?.macKey.bytes == Sample.macKey)

            key = nil
            peer = nil
            dhKey = nil
            keys = nil
            #expect(peer == nil && dhKey == nil && keys == nil)
            for (name, address, count) in [
                ("d", scalar, 32), ("DHKey", dhKeyAddress, 32), ("MacKey", macKey, 16), ("LTK", ltk, 16),
            ] {
                #expect(
                    freed(address) == [UInt8](repeating: 0, count: count), "\(name): the freed storage still holds it")
            }
        }

        @Test("Equality compares every octet; a different length is never equal")
        func equality() {
            let a = SecretBytes([1, 2, 3, 4]), same = SecretBytes([1, 2, 3, 4])
            #expect(a == same)
            #expect(a != SecretBytes([1, 2, 3, 5]))
            #expect(a != SecretBytes([0, 2, 3, 4]))
            #expect(a != SecretBytes([1, 2, 3]))
            #expect(SecretBytes([]) == SecretBytes(count: 0))
        }

        @Test("Printing, debug printing and dump show the length, never the octets")
        func redacted() {
            let secret = SecretBytes([0xDE, 0xAD, 0xBE, 0xEF])
            var dumped = ""
            dump(secret, to: &dumped)
            for text in ["\(secret)", String(reflecting: secret), dumped, "\([secret])", "\(Optional(secret) as Any)"] {
                // Neither as hex nor as decimal octets.
                #expect(
                    text.contains("4") && !text.lowercased().contains("dead")
                        && !["222", "173", "190", "239"].contains { text.contains($0) }, "\(text)")
            }
            #expect("\(secret)" == "<redacted 4 octets>")
        }

        @Test("wipe zeroes an array in place; reversed and withTemporaryCopy keep the octets")
        func helpers() {
            var array: [UInt8] = [1, 2, 3]
            SecretBytes.wipe(&array)
            #expect(array == [0, 0, 0])
            let secret = SecretBytes([1, 2, 3])
            #expect(secret.reversed().bytes == [3, 2, 1])
            #expect(secret.withTemporaryCopy { $0 } == [1, 2, 3])
        }

        @Test("The toolbox's SecretBytes overloads give what the Array ones give (Appendix D and 2.2.3/2.2.4 samples)")
        func overloadsAgree() throws {
            let f5Keys = f5(w: SecretBytes(Sample.dhKey), n1: Sample.na, n2: Sample.nb, a1: Sample.a1, a2: Sample.a2)
            let arrayKeys = f5(w: Sample.dhKey, n1: Sample.na, n2: Sample.nb, a1: Sample.a1, a2: Sample.a2)
            #expect(f5Keys.macKey.bytes == arrayKeys.macKey && f5Keys.ltk.bytes == arrayKeys.ltk)
            let r = hex("12a3343b b453bb54 08da42d2 0c2d0fc8")
            #expect(
                f6(
                    w: SecretBytes(Sample.macKey), n1: Sample.na, n2: Sample.nb, r: SecretBytes(r),
                    ioCap: hex("010102"), a1: Sample.a1, a2: Sample.a2)
                    == hex("e3c47398 9cd0e8c5 d26c0b09 da958f61"))
            #expect(ah(k: SecretBytes(Sample.key128), r: hex("708194")) == hex("0dfbaa"))
            #expect(
                e(key: SecretBytes(Sample.key128), plaintext: Sample.na) == e(key: Sample.key128, plaintext: Sample.na))
            #expect(
                aesCMAC(key: SecretBytes(Sample.key128), message: Sample.u)
                    == aesCMAC(key: Sample.key128, message: Sample.u))
            let zeroTK = SecretBytes(count: 16)
            #expect(
                c1(
                    k: zeroTK, r: hex("5783D521 56AD6F0E 6388274E C6702EE0"), preq: hex("07071000000101"),
                    pres: hex("05000800000302"),
                    iat: 1, ia: hex("A1A2A3A4A5A6"), rat: 0, ra: hex("B1B2B3B4B5B6"))
                    == hex("1e1e3fef 878988ea d2a74dc5 bef13b86"))
            #expect(
                s1(
                    k: zeroTK, r1: hex("000F0E0D 0C0B0A09 11223344 55667788"),
                    r2: hex("01020304 05060708 99AABBCC DDEEFF00")
                ).bytes
                    == hex("9a1fe1f0 e8b0f49b 5b4216ae 796da062"))
            let key = try #require(P256PrivateKey(secretRepresentation: SecretBytes(Curve.debugPrivate)))
            #expect(key.rawRepresentation == Curve.debugPrivate)
            #expect(P256PrivateKey(secretRepresentation: SecretBytes(Curve.n)) == nil)
        }
    }
#endif
