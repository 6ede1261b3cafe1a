import BluetoothCrypto
import Testing

// LE legacy pairing: c1 and s1 against the examples of Core Vol 3, Part H, 2.2.3 and
// 2.2.4 (also in Bumble's tests/smp_test.py).

@Suite("LE legacy pairing functions")
struct LegacyPairingTests {
    @Test("2.2.3 c1 example: TK 0, the sample Pairing Request/Response and addresses")
    func c1Example() {
        let confirm = c1(
            k: [UInt8](repeating: 0, count: 16),
            r: hex("5783D521 56AD6F0E 6388274E C6702EE0"),
            preq: hex("07071000000101"),
            pres: hex("05000800000302"),
            iat: 1, ia: hex("A1A2A3A4A5A6"),
            rat: 0, ra: hex("B1B2B3B4B5B6"))
        #expect(confirm == hex("1e1e3fef 878988ea d2a74dc5 bef13b86"))
    }

    @Test("c1's preq is the Pairing Request PDU as sent, reversed")
    func c1PDUOrder() {
        // The example's Pairing Request as it goes over L2CAP: code 0x01 first.
        let pairingRequestPDU: [UInt8] = [0x01, 0x01, 0x00, 0x00, 0x10, 0x07, 0x07]
        #expect(msbFirst(fromLSBFirst: pairingRequestPDU) == hex("07071000000101"))
    }

    @Test("2.2.4 s1 example: TK 0, r1 and r2 give the STK")
    func s1Example() {
        let stk = s1(
            k: [UInt8](repeating: 0, count: 16),
            r1: hex("000F0E0D 0C0B0A09 11223344 55667788"),
            r2: hex("01020304 05060708 99AABBCC DDEEFF00"))
        #expect(stk == hex("9a1fe1f0 e8b0f49b 5b4216ae 796da062"))
    }

    #if compiler(>=6.2)  // exit tests are Swift Testing 6.2's: on 6.0 and 6.1, no such test
        @Test("An address type other than 0 or 1 is a programming error")
        func addressType() async {
            await #expect(processExitsWith: .failure) {
                let zero = [UInt8](repeating: 0, count: 16)
                _ = c1(
                    k: zero, r: zero, preq: hex("07071000000101"), pres: hex("05000800000302"),
                    iat: 2, ia: hex("A1A2A3A4A5A6"), rat: 0, ra: hex("B1B2B3B4B5B6"))
            }
        }
    #endif
}
