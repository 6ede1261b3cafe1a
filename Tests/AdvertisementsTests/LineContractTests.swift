@testable import Advertisements
import Testing

// The `bluejay adv decode` line contract (docs/Gateway.md) and the exact numbers it prints.

@Suite("adv decode lines and values")
struct LineContractTests {
    @Test("A decoded line: address, format, values with extra, keys sorted, exact decimals")
    func decodedLine() {
        let line = "54:48:e6:8f:80:a5 020106" + BTHomeTests.v2Encrypted + " 231D39C1D7CC1AB1AEE224CD096DB932"
        #expect(
            AdvertisementLine.decode(line) == """
                {"address":"54:48:E6:8F:80:A5","format":"bthome-v2","values":{"extra":{"encrypted":true,"encryption_counter":1122867},"humidity":50.55,"temperature":25.06}}
                """)
        #expect(
            AdvertisementLine.decode("A4:C1:38:AA:BB:CC/random\t0x12161a185cc8ee38c1a4b008c314ca0a501405") == """
                {"address":"A4:C1:38:AA:BB:CC","format":"pvvx","values":{"battery":80,"extra":{"flags":5,"mac":"A4:C1:38:EE:C8:5C","reed_switch":true,"trigger_output":false},"humidity":53.15,"packet_counter":20,"temperature":22.24,"voltage":2.762}}
                """)
    }

    @Test(
        "Errors: each a readable sentence, the address echoed as given when it is not one",
        arguments: [
            ("nonsense", #"{"address":"nonsense","error":"expected ADDRESS AD_HEX [KEY_HEX], got 1 field(s)"}"#),
            ("AA:BB 0201", #"{"address":"AA:BB","error":"'AA:BB' is not a Bluetooth address (AA:BB:CC:DD:EE:FF)"}"#),
            (
                "AA:BB:CC:DD:EE:FF 02010",
                #"{"address":"AA:BB:CC:DD:EE:FF","error":"AD_HEX is not an even number of hex digits"}"#
            ),
            (
                "AA:BB:CC:DD:EE:FF 02zz",
                #"{"address":"AA:BB:CC:DD:EE:FF","error":"AD_HEX is not an even number of hex digits"}"#
            ),
            (
                "AA:BB:CC:DD:EE:FF 020106 00ff",
                #"{"address":"AA:BB:CC:DD:EE:FF","error":"KEY_HEX must be 32 hex digits (a 16-byte key)"}"#
            ),
            ("AA:BB:CC:DD:EE:FF 020106", #"{"address":"AA:BB:CC:DD:EE:FF","error":"no known advertisement format"}"#),
            (
                "AA:BB:CC:DD:EE:FF 0a0201",
                #"{"address":"AA:BB:CC:DD:EE:FF","error":"malformed advertising data: AD structure at offset 0 claims 10 bytes but only 2 follow"}"#
            ),
            (
                "AA:BB:CC:DD:EE:FF 1a1695fe58585b05f4ccbbaa38c1a413df92a81cb30000acc46fda",
                #"{"address":"AA:BB:CC:DD:EE:FF","error":"mibeacon: the payload is encrypted; give the device's 16-byte key"}"#
            ),
        ])
    func errorLine(input: String, output: String) {
        #expect(AdvertisementLine.decode(input) == output)
    }

    @Test("Blank lines and comments get no answer")
    func silentLines() {
        #expect(AdvertisementLine.decode("") == nil)
        #expect(AdvertisementLine.decode("   \t") == nil)
        #expect(AdvertisementLine.decode("# a comment") == nil)
    }

    @Test(
        "Decimals print exactly, with one fractional digit kept for fractional scales",
        arguments: [
            (DecimalNumber(2506, exponent: -2), "25.06"), (DecimalNumber(2500, exponent: -2), "25.0"),
            (DecimalNumber(-163835, exponent: -3), "-163.835"), (DecimalNumber(0, exponent: -4), "0.0"),
            (DecimalNumber(-5, exponent: -3), "-0.005"), (DecimalNumber(97), "97"),
            (DecimalNumber(12, exponent: 2), "1200"),
            (DecimalNumber(rounding: 23.456, places: 2), "23.46"),
        ])
    func decimals(number: DecimalNumber, text: String) {
        #expect(number.description == text)
    }

    @Test("JSON strings escape quotes, backslashes and control characters")
    func strings() {
        #expect(JSONText.quoted("a\"b\\c\nd\u{01}é") == #""a\"b\\c\nd\u0001é""#)
    }
}
