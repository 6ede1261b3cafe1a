@testable import Advertisements
import Testing

// MiBeacon (service data 0xFE95). Mi Flora (HHCCJCY01) frames are the ones in
// Bluetooth-Devices/xiaomi-ble's tests (test_Xiaomi_HHCCJCY01, …_all_values); the
// LYWSD03MMC frames, clear and encrypted with the bindkey aa…aa, are the samples of
// pvvx/ATC_MiThermometer's python-interface (atc_mi_format_test.py, MAC A4:C1:38:AA:BB:CC).

@Suite("MiBeacon")
struct MiBeaconTests {
    static let pvvxKey = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", pvvxAddress = "A4:C1:38:AA:BB:CC"

    @Test(
        "Mi Flora: temperature, illuminance, conductivity and moisture objects (MiBeacon v2, MAC included)",
        arguments: [
            ("712098006 97a3e6a8d7cc40d 041002f400", "temperature", "24.4"),
            ("712098006 67a3e6a8d7cc40d 0710030000 00", "illuminance", "0"),
            ("712098006 87a3e6a8d7cc40d 0910025702", "conductivity", "599"),
            ("712098004 77a3e6a8d7cc40d 08100140", "moisture", "64"),
        ])
    func miFlora(payload: String, name: String, result: String) throws {
        let decoded = try decode(serviceData(0xFE95, payload))
        expect(
            decoded, format: "mibeacon",
            [
                name: result, "extra.model": "\"HHCCJCY01\"", "extra.product_id": "\"0x0098\"",
                "extra.mac": "\"C4:7C:8D:6A:3E:7A\"",
            ])
    }

    @Test("Mi Flora, first xiaomi-ble sample: 19.6 °C from C4:7C:8D:6B:4F:F3")
    func miFloraTemperature() throws {
        let decoded = try decode(serviceData(0xFE95, "71209800 12 f34f6b8d7cc4 0d 041002c400"))
        expect(
            decoded, format: "mibeacon",
            ["temperature": "19.6", "packet_counter": "18", "extra.mac": "\"C4:7C:8D:6B:4F:F3\""])
    }

    @Test("LYWSD03MMC in MiBeacon v5, clear: temperature and humidity (0x100D), battery (0x100A)")
    func clearV5() throws {
        expect(
            try decode("151695fe50585b051bccbbaa38c1a40d1004be000002"), format: "mibeacon",
            [
                "temperature": "19.0", "humidity": "51.2", "extra.model": "\"LYWSD03MMC\"",
                "extra.mac": "\"A4:C1:38:AA:BB:CC\"",
            ])
        expect(
            try decode("121695fe50585b0522ccbbaa38c1a40a10014f"), format: "mibeacon",
            ["battery": "79", "packet_counter": "34"])
    }

    @Test(
        "LYWSD03MMC in MiBeacon v5, encrypted with the bindkey: temperature, humidity, battery",
        arguments: [
            ("1a1695fe58585b05f4ccbbaa38c1a413df92a81cb30000acc46fda", "temperature", "19.0"),
            ("1a1695fe58585b0595ccbbaa38c1a4d525d974ec1400009be1de3c", "humidity", "45.0"),
            ("191695fe58585b05edccbbaa38c1a4de6df074b30000f2ef0e53", "battery", "67"),
        ])
    func encryptedV5(advertisement: String, name: String, result: String) throws {
        let decoded = try decode(advertisement, address: Self.pvvxAddress, key: Self.pvvxKey)
        expect(decoded, format: "mibeacon", [name: result, "extra.encrypted": "true"])
    }

    @Test("Encrypted with a wrong bindkey, or none: a clear error")
    func encryptedFailures() {
        let frame = "1a1695fe58585b05f4ccbbaa38c1a413df92a81cb30000acc46fda"
        let wrong = error { try decode(frame, address: Self.pvvxAddress, key: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab") }
        #expect(wrong == .authenticationFailed(format: "mibeacon"))
        #expect(
            wrong?.description
                == "mibeacon: decryption failed (the message integrity check does not match): wrong key, or the data was altered"
        )
        #expect(error { try decode(frame, address: Self.pvvxAddress) } == .keyRequired(format: "mibeacon"))
    }

    @Test("Legacy (v2/v3) encryption is refused by name; a frame without objects still names the device")
    func legacyAndIdentityOnly() throws {
        #expect(
            error { try decode(serviceData(0xFE95, "7820 9800 12 f34f6b8d7cc4 0d 041002c400")) }?.description
                == "mibeacon: MiBeacon v2 legacy encryption is not decoded (only v4 and v5)")
        let identity = try decode(serviceData(0xFE95, "3020 5b05 01 ccbbaa38c1a4 08"))
        expect(identity, format: "mibeacon", ["extra.model": "\"LYWSD03MMC\"", "packet_counter": "1"])
    }

    @Test("Objects Xiaomi's object definition describes: a button press, a door, formaldehyde; unknown ones kept raw")
    func otherObjects() throws {
        let decoded = try decode(serviceData(0xFE95, "4030 9800 05 011003 000002 0f1001 00 1010021000 ff0102abcd"))
        expect(
            decoded, format: "mibeacon",
            [
                "button": "\"long_press\"", "extra.button_index": "0", "opening": "true",
                "extra.door": "\"open\"", "formaldehyde": "0.16", "extra.object_01ff": "\"abcd\"",
            ])
    }
}
