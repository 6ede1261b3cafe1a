import BluetoothCrypto
import Testing

// The LE Secure Connections functions against the sample data of Core Vol 3, Part H,
// Appendix D (values as printed there, most significant octet first; the same values
// appear in Bumble's tests/smp_test.py and BlueZ's unit/test-crypto.c).

/// The Appendix D sample values shared by several functions.
enum Sample {
    /// PKax, the initiator's public key X coordinate.
    static let u = hex("20b003d2 f297be2c 5e2c83a7 e9f9a5b9 eff49111 acf4fddb cc030148 0e359de6")
    /// PKbx, the responder's public key X coordinate.
    static let v = hex("55188b3d 32f6bb9a 900afcfb eed4e72a 59cb9ac2 f19d7cfb 6b4fdd49 f47fc5fd")
    /// Na.
    static let na = hex("d5cb8454 d177733e ffffb2ec 712baeab")
    /// Nb.
    static let nb = hex("a6e8e7cc 25a75f6e 216583f7 ff3dc4cf")
    /// DHKey.
    static let dhKey = hex("ec0234a3 57c8ad05 341010a6 0a397d9b 99796b13 b4f866f1 868d34f3 73bfa698")
    /// A1: public address 56:12:37:37:BF:CE.
    static let a1 = hex("00561237 37bfce")
    /// A2: public address A7:13:70:2D:CF:C1.
    static let a2 = hex("00a71370 2dcfc1")
    /// The MacKey that f5 derives.
    static let macKey = hex("2965f176 a1084a02 fd3f6a20 ce636e20")
    /// The 128-bit key of the h6, h7 and ah samples.
    static let key128 = hex("ec0234a3 57c8ad05 341010a6 0a397d9b")
}

@Suite("LE Secure Connections functions")
struct SecureConnectionsTests {
    @Test("D.2 f4(PKax, PKbx, Na, 0)")
    func f4Sample() {
        #expect(f4(u: Sample.u, v: Sample.v, x: Sample.na, z: 0x00) == hex("f2c916f1 07a9bd1c f1eda1be a974872d"))
    }

    @Test("D.3 f5(DHKey, Na, Nb, A1, A2): MacKey and LTK")
    func f5Sample() {
        let keys = f5(w: Sample.dhKey, n1: Sample.na, n2: Sample.nb, a1: Sample.a1, a2: Sample.a2)
        #expect(keys.macKey == Sample.macKey)
        #expect(keys.ltk == hex("69867911 69d7cd23 980522b5 94750a38"))
    }

    @Test("D.4 f6(MacKey, Na, Nb, R, IOcap, A1, A2)")
    func f6Sample() {
        let check = f6(
            w: Sample.macKey, n1: Sample.na, n2: Sample.nb, r: hex("12a3343b b453bb54 08da42d2 0c2d0fc8"),
            ioCap: hex("010102"), a1: Sample.a1, a2: Sample.a2)
        #expect(check == hex("e3c47398 9cd0e8c5 d26c0b09 da958f61"))
    }

    @Test("D.5 g2(PKax, PKbx, Na, Nb) = 0x2f9ed5ba, so the user compares 938554")
    func g2Sample() {
        let value = g2(u: Sample.u, v: Sample.v, x: Sample.na, y: Sample.nb)
        #expect(value == 0x2F9E_D5BA)
        #expect(value % 1_000_000 == 938_554)
    }

    @Test("D.6 h6(key, \"lebr\")")
    func h6Sample() {
        #expect(h6(w: Sample.key128, keyID: Array("lebr".utf8)) == hex("2d9ae102 e76dc91c e8d3a9e2 80b16399"))
        #expect(Array("lebr".utf8) == hex("6c656272"))
    }

    @Test("D.7 ah(IRK, prand 0x708194) = 0x0dfbaa")
    func ahSample() {
        #expect(ah(k: Sample.key128, r: hex("708194")) == hex("0dfbaa"))
    }

    @Test("D.8 h7(SALT \"tmp1\", key)")
    func h7Sample() {
        let salt = hex("00000000 00000000 00000000 746D7031")
        #expect(h7(salt: salt, w: Sample.key128) == hex("fb173597 c6a3c0ec d2998c2a 75a57011"))
    }

    @Test(
        "Cross-transport key derivation samples: LTK to link key and back, with and without CT2",
        arguments: [
            (true, false, "368df9bc e3264b58 bd066c33 334fbf64", "bc1ca4ef 633fc1bd 0d8230af ee388fb0"),
            (true, true, "368df9bc e3264b58 bd066c33 334fbf64", "287ad379 dca40253 0a39f1f4 3047b835"),
            (false, false, "05040302 01000908 07060504 03020100", "a813fb72 f1a3dfa1 8a2c9a43 f10d0a30"),
            (false, true, "05040302 01000908 07060504 03020100", "e85e09eb 5eccb3e2 69418a13 3211bc79"),
        ])
    func crossTransport(leToBREDR: Bool, ct2: Bool, key: String, expected: String) {
        // LE to BR/EDR: intermediate key with "tmp1", then "lebr"; the reverse with "tmp2", "brle".
        let (intermediateID, finalID) = leToBREDR ? ("tmp1", "lebr") : ("tmp2", "brle")
        let intermediate =
            ct2
            ? h7(salt: [UInt8](repeating: 0, count: 12) + Array(intermediateID.utf8), w: hex(key))
            : h6(w: hex(key), keyID: Array(intermediateID.utf8))
        #expect(h6(w: intermediate, keyID: Array(finalID.utf8)) == hex(expected))
    }

    #if compiler(>=6.2)  // exit tests are Swift Testing 6.2's: on 6.0 and 6.1, no such test
        @Test("Wrong lengths are programming errors")
        func wrongLengths() async {
            await #expect(processExitsWith: .failure) {
                _ = f4(u: Array(Sample.u.dropFirst()), v: Sample.v, x: Sample.na, z: 0)
            }
            await #expect(processExitsWith: .failure) {
                _ = f5(w: Sample.dhKey, n1: Sample.na, n2: Sample.nb, a1: Array(Sample.a1.dropFirst()), a2: Sample.a2)
            }
            await #expect(processExitsWith: .failure) {
                _ = ah(k: Sample.key128, r: hex("70819400"))
            }
        }
    #endif
}
