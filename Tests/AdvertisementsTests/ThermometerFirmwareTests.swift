@testable import Advertisements
import Testing

// The pvvx and ATC1441 custom firmware (service data 0x181A). Frames and results are
// pvvx/ATC_MiThermometer's: the python-interface README (its parse examples, with the
// bindkey aa…aa and MAC A4:C1:38:AA:BB:CC) and atc_mi_format_test.py's samples.

@Suite("pvvx and ATC1441 firmware")
struct ThermometerFirmwareTests {
    static let key = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", address = "A4:C1:38:AA:BB:CC"

    @Test("pvvx custom format, the README's parse example")
    func pvvxCustom() throws {
        expect(
            try decode("12161a185cc8ee38c1a4b008c314ca0a501405"), format: "pvvx",
            [
                "temperature": "22.24", "humidity": "53.15", "voltage": "2.762", "battery": "80",
                "packet_counter": "20",
                "extra.mac": "\"A4:C1:38:EE:C8:5C\"", "extra.flags": "5", "extra.reed_switch": "true",
                "extra.trigger_output": "false",
            ])
        expect(
            try decode("12161a18ccbbaa38c1a47707881 3ca0a500107"), format: "pvvx",
            ["temperature": "19.11", "humidity": "50.0", "battery": "80", "packet_counter": "1"])
    }

    @Test("pvvx encrypted: the README's example (19.11 °C, 50 %, 93 %) and the format test's sample")
    func pvvxEncrypted() throws {
        expect(
            try decode("0e161a18bd9dc54efab5000e8bb807", address: Self.address, key: Self.key), format: "pvvx",
            ["temperature": "19.11", "humidity": "50.0", "battery": "93", "extra.encrypted": "true"])
        expect(
            try decode("0e161a18bd86c53ffab900c1515859", address: Self.address, key: Self.key), format: "pvvx",
            ["temperature": "19.0", "humidity": "51.13", "battery": "81", "extra.flags": "15"])
    }

    @Test("pvvx encrypted with a wrong key or another MAC: a clear error")
    func pvvxEncryptedFailures() {
        #expect(
            error {
                try decode("0e161a18bd9dc54efab5000e8bb807", address: Self.address, key: "ab" + Self.key.dropFirst(2))
            }
                == .authenticationFailed(format: "pvvx"))
        #expect(
            error { try decode("0e161a18bd9dc54efab5000e8bb807", address: "A4:C1:38:AA:BB:CD", key: Self.key) }
                == .authenticationFailed(format: "pvvx"))
        #expect(error { try decode("0e161a18bd9dc54efab5000e8bb807") } == .keyRequired(format: "pvvx"))
    }

    @Test("ATC1441 format, the format test's sample: big-endian, 0.1 °C")
    func atc1441() throws {
        expect(
            try decode("10161a18a4c138aabbcc00ce33430a6ec3"), format: "atc1441",
            [
                "temperature": "20.6", "humidity": "51", "battery": "67", "voltage": "2.67", "packet_counter": "195",
                "extra.mac": "\"A4:C1:38:AA:BB:CC\"",
            ])
    }

    @Test("ATC1441 encrypted, the format test's sample: half degrees above −40 °C")
    func atc1441Encrypted() throws {
        expect(
            try decode("0b161a18bde9b75db856f303", address: Self.address, key: Self.key), format: "atc1441",
            ["temperature": "19.0", "humidity": "25.0", "battery": "86", "extra.trigger_output": "true"])
    }
}
