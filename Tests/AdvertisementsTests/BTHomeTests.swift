@testable import Advertisements
import Testing

// BTHome v2 and v1 against bthome.io: the advertisement the format page explains, every
// example of its object tables (the Example and Result columns), and the encryption page's
// worked example. v1's encrypted example is the one in Bluetooth-Devices/bthome-ble's tests
// (test_bindkey_correct) and pvvx/ATC_MiThermometer's python-interface README.

@Suite("BTHome")
struct BTHomeTests {
    /// An object's example as the v2 tables print it, what it decodes to, and its name.
    struct Row: Sendable, CustomStringConvertible {
        let example: String, name: String, result: String
        var description: String { "\(example) → \(name) \(result)" }
    }

    @Test("bthome.io/format's example advertisement: DIY-sensor, 25.00 °C, 50.55 %")
    func formatPageExample() throws {
        let decoded = try decode("020106 0B094449592D73656E736F72 0A16D2FC4002C40903BF13")
        expect(decoded, format: "bthome-v2", ["temperature": "25.0", "humidity": "50.55"])
        #expect(decoded.extra.isEmpty)
    }

    static let sensorRows: [Row] = [
        Row(example: "518756", name: "acceleration", result: "22.151"),
        Row(example: "630057D0FF", name: "acceleration", result: "-3.123456"),
        Row(example: "0161", name: "battery", result: "97"),
        Row(example: "6001", name: "channel", result: "1"),
        Row(example: "12E204", name: "co2", result: "1250"),
        Row(example: "56E803", name: "conductivity", result: "1000"),
        Row(example: "0960", name: "count", result: "96"),
        Row(example: "3D0960", name: "count", result: "24585"),
        Row(example: "3E2A2C0960", name: "count", result: "1611213866"),
        Row(example: "59EA", name: "count", result: "-22"),
        Row(example: "5AEAEA", name: "count", result: "-5398"),
        Row(example: "5BEA0234EA", name: "count", result: "-365690134"),
        Row(example: "434E34", name: "current", result: "13.39"),
        Row(example: "5D02EA", name: "current", result: "-5.63"),
        Row(example: "08CA06", name: "dewpoint", result: "17.38"),
        Row(example: "5E9F8C", name: "direction", result: "359.99"),
        Row(example: "400C00", name: "distance_mm", result: "12"),
        Row(example: "414E00", name: "distance_m", result: "7.8"),
        Row(example: "424E3400", name: "duration", result: "13.39"),
        Row(example: "4d12138a14", name: "energy", result: "344593.17"),
        Row(example: "0A138A14", name: "energy", result: "1346.067"),
        Row(example: "4B138A14", name: "gas", result: "1346.067"),
        Row(example: "4C41018A01", name: "gas", result: "25821.505"),
        Row(example: "528756", name: "gyroscope", result: "22.151"),
        Row(example: "03BF13", name: "humidity", result: "50.55"),
        Row(example: "2E23", name: "humidity", result: "35"),
        Row(example: "05138A14", name: "illuminance", result: "13460.67"),
        Row(example: "6402", name: "light_level", result: "2"),
        Row(example: "065E1F", name: "mass_kg", result: "80.3"),
        Row(example: "073E1D", name: "mass_lb", result: "74.86"),
        Row(example: "14020C", name: "moisture", result: "30.74"),
        Row(example: "2F23", name: "moisture", result: "35"),
        Row(example: "0D120C", name: "pm25", result: "3090"),
        Row(example: "0E021C", name: "pm10", result: "7170"),
        Row(example: "0B021B00", name: "power", result: "69.14"),
        Row(example: "5C02FBFFFF", name: "power", result: "-12.78"),
        Row(example: "5FA00F", name: "precipitation", result: "400.0"),
        Row(example: "04138A01", name: "pressure", result: "1008.83"),
        Row(example: "540C48656C6C6F20576F726C6421", name: "raw", result: "\"48656c6c6f20576f726c6421\""),
        Row(example: "3F020C", name: "rotation", result: "307.4"),
        Row(example: "61AC0D", name: "rotational_speed", result: "3500"),
        Row(example: "6503", name: "settings_revision", result: "3"),
        Row(example: "444E34", name: "speed", result: "133.9"),
        Row(example: "624099DFFF", name: "speed", result: "-2.123456"),
        Row(example: "57EA", name: "temperature", result: "-22"),
        Row(example: "58EA", name: "temperature", result: "-7.7"),
        Row(example: "451101", name: "temperature", result: "27.3"),
        Row(example: "02CA09", name: "temperature", result: "25.06"),
        Row(example: "530C48656C6C6F20576F726C6421", name: "text", result: "\"Hello World!\""),
        Row(example: "505d396164", name: "timestamp", result: "1684093277"),
        Row(example: "133301", name: "tvoc", result: "307"),
        Row(example: "0C020C", name: "voltage", result: "3.074"),
        Row(example: "4A020C", name: "voltage", result: "307.4"),
        Row(example: "4E87562A01", name: "volume", result: "19551.879"),
        Row(example: "478756", name: "volume", result: "2215.1"),
        Row(example: "48DC87", name: "volume_ml", result: "34780"),
        Row(example: "5587562A01", name: "volume_storage", result: "19551.879"),
        Row(example: "49DC87", name: "volume_flow_rate", result: "34.78"),
        Row(example: "4632", name: "uv_index", result: "5.0"),
        Row(example: "4F87562A01", name: "water", result: "19551.879"),
        Row(example: "0009", name: "packet_counter", result: "9"),
    ]

    static let binaryRows: [Row] = [
        ("1501", "battery_low", true), ("1601", "battery_charging", true), ("1700", "carbon_monoxide", false),
        ("1801", "cold", true), ("1900", "connectivity", false), ("1A00", "door", false), ("1B01", "garage_door", true),
        ("1C01", "gas_detected", true), ("0F01", "generic_boolean", true), ("1D00", "heat", false),
        ("1E01", "light", true),
        ("1F01", "lock", true), ("2001", "moisture_detected", true), ("2100", "motion", false),
        ("2201", "moving", true),
        ("2301", "occupancy", true), ("1100", "opening", false), ("2400", "plug", false), ("1001", "power_on", true),
        ("2500", "presence", false), ("2601", "problem", true), ("2701", "running", true), ("2800", "safety", false),
        ("2901", "smoke", true), ("2A00", "sound", false), ("2B00", "tamper", false), ("2C01", "vibration", true),
        ("2D01", "window", true),
    ].map { Row(example: $0.0, name: $0.1, result: "\($0.2)") }

    static let eventRows: [Row] = [
        Row(example: "3A01", name: "button", result: "\"press\""),
        Row(example: "3A02", name: "button", result: "\"double_press\""),
        Row(example: "3A03", name: "button", result: "\"triple_press\""),
        Row(example: "3A04", name: "button", result: "\"long_press\""),
        Row(example: "3A05", name: "button", result: "\"long_double_press\""),
        Row(example: "3A06", name: "button", result: "\"long_triple_press\""),
        Row(example: "3A80", name: "button", result: "\"hold_press\""),
        Row(example: "3B0000", name: "command", result: "\"off\""),
        Row(example: "3B0001", name: "command", result: "\"on\""),
        Row(example: "3B0002", name: "command", result: "\"toggle\""),
        Row(example: "3C0103", name: "event", result: "\"rotate_left\""),
        Row(example: "3C020A", name: "event", result: "\"rotate_right\""),
    ]

    @Test(
        "Every example of bthome.io/format's tables gives the table's result",
        arguments: sensorRows + binaryRows + eventRows)
    func tableExample(_ row: Row) throws {
        let decoded = try decode(serviceData(0xFCD2, "40" + row.example))
        expect(decoded, format: "bthome-v2", [row.name: row.result])
    }

    @Test("Events: a 0x00 event keeps its button's place; a dimmer's steps; a command's arguments; device information")
    func eventsAndDeviceInformation() throws {
        expect(try decode(serviceData(0xFCD2, "40 3A00 3A01")), format: "bthome-v2", ["button_2": "\"press\""])
        #expect(try decode(serviceData(0xFCD2, "40 3A00 3A01")).values["button"] == nil)
        expect(
            try decode(serviceData(0xFCD2, "40 3C0103")), format: "bthome-v2",
            ["event": "\"rotate_left\"", "steps": "3"])
        expect(
            try decode(serviceData(0xFCD2, "40 3B010305")), format: "bthome-v2",
            ["command": "\"step_up\"", "extra.command_arguments": "\"05\""])
        expect(
            try decode(serviceData(0xFCD2, "40 F00100 F100010204")), format: "bthome-v2",
            ["extra.device_type_id": "1", "extra.firmware_version": "\"4.2.1.0\""])
        expect(
            try decode(serviceData(0xFCD2, "40 F2000106")), format: "bthome-v2", ["extra.firmware_version": "\"6.1.0\""]
        )
    }

    @Test("Several measurements of one type get _2, _3 in order; an unknown object id ends the parse")
    func repeatsAndUnknownObjects() throws {
        let decoded = try decode(serviceData(0xFCD2, "44 02CA09 02C409 451101 7F 0161"))
        expect(
            decoded, format: "bthome-v2",
            [
                "temperature": "25.06", "temperature_2": "25.0", "temperature_3": "27.3",
                "extra.trigger_based": "true", "extra.unknown_object": "\"0x7f\"",
            ])
        #expect(decoded.values["battery"] == nil)
    }

    @Test("A truncated object or a version other than 2 is a readable error")
    func malformed() {
        #expect(
            error { try decode(serviceData(0xFCD2, "40 02CA")) }
                == .malformed(format: "bthome-v2", reason: "object 0x02 needs 2 byte(s), 1 left"))
        #expect(error { try decode(serviceData(0xFCD2, "20 02CA09")) }?.description.contains("version 1") == true)
    }

    static let v2Address = "54:48:E6:8F:80:A5", v2Key = "231d39c1d7cc1ab1aee224cd096db932"
    static let v2Encrypted = serviceData(0xFCD2, "41 e445f3c9962b 33221100 6c7c4519")

    @Test("bthome.io/encryption's example: d2fc41e445f3c9962b332211006c7c4519 with its key and MAC")
    func encryptedV2() throws {
        let decoded = try decode("020106" + Self.v2Encrypted, address: Self.v2Address, key: Self.v2Key)
        expect(
            decoded, format: "bthome-v2",
            [
                "temperature": "25.06", "humidity": "50.55",
                "extra.encrypted": "true", "extra.encryption_counter": "1122867",
            ])
    }

    @Test("Encrypted without a key, with a wrong key or with another MAC: clear errors, no values")
    func encryptedV2Failures() {
        #expect(error { try decode(Self.v2Encrypted, address: Self.v2Address) } == .keyRequired(format: "bthome-v2"))
        let wrongKey = error {
            try decode(Self.v2Encrypted, address: Self.v2Address, key: "00112233445566778899aabbccddeeff")
        }
        #expect(wrongKey == .authenticationFailed(format: "bthome-v2"))
        #expect(wrongKey?.description.contains("wrong key") == true)
        #expect(
            error { try decode(Self.v2Encrypted, address: "54:48:E6:8F:80:A6", key: Self.v2Key) }
                == .authenticationFailed(format: "bthome-v2"))
        #expect(error { try decode(Self.v2Encrypted, key: Self.v2Key) } == .addressRequired(format: "bthome-v2"))
        #expect(
            error { try decode(Self.v2Encrypted, address: Self.v2Address, key: "0011") }
                == .badKeyLength(format: "bthome-v2", length: 2))
    }

    @Test(
        "bthome.io/v1's example advertisement and table examples (UUID 0x181C)",
        arguments: [
            ("2302CA09", "temperature", "25.06"), ("0303BF13", "humidity", "50.55"), ("022E23", "humidity", "35"),
            ("0404138A01", "pressure", "1008.83"), ("0405138A14", "illuminance", "13460.67"),
            ("03065E1F", "mass_kg", "80.3"),
            ("2308CA06", "dewpoint", "17.38"), ("020960", "count", "96"), ("040A138A14", "energy", "1346.067"),
            ("040B021B00", "power", "69.14"), ("030C020C", "voltage", "3.074"), ("030D120C", "pm25", "3090"),
            ("0312E204", "co2", "1250"), ("0314020C", "moisture", "30.74"), ("03518756", "acceleration", "22.151"),
            ("0D5348656C6C6F20576F726C6421", "text", "\"Hello World!\""),
            ("0D5448656C6C6F20576F726C6421", "raw", "\"48656c6c6f20576f726c6421\""),
            ("020F01", "generic_boolean", "true"), ("021100", "opening", "false"), ("021501", "battery_low", "true"),
            ("023A01", "button", "\"press\""), ("033C0103", "event", "\"rotate_left\""),
            ("020009", "packet_counter", "9"),
        ])
    func v1Examples(example: String, name: String, result: String) throws {
        expect(try decode(serviceData(0x181C, example)), format: "bthome-v1", [name: result])
    }

    @Test("v1: the page's advertisement, and the pvvx firmware's frames (README samples)")
    func v1Advertisements() throws {
        expect(
            try decode("020106 0B094449592D73656E736F72 0B161C182302C4090303BF13"), format: "bthome-v1",
            ["temperature": "25.0", "humidity": "50.55"])
        expect(
            try decode("11161c1802005623026c070303ff1302014e"), format: "bthome-v1",
            ["packet_counter": "86", "temperature": "19.0", "humidity": "51.19", "battery": "78"])
    }

    @Test("v1 encrypted (0x181E): bthome-ble's test_bindkey_correct and the pvvx README's bt_home_enc example")
    func encryptedV1() throws {
        let bthomeBLE = serviceData(0x181E, "fba435e4d3c312fb 00112233 57d90a99")
        expect(
            try decode(bthomeBLE, address: "54:48:E6:8F:80:A5", key: "231d39c1d7cc1ab1aee224cd096db932"),
            format: "bthome-v1", ["temperature": "25.06", "humidity": "50.55", "extra.encrypted": "true"])
        let pvvx = "16161e18231b90117ccde04ba173265c7d0300688c9b84"
        expect(
            try decode(pvvx, address: "A4:C1:38:AA:BB:CC", key: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
            format: "bthome-v1",
            ["temperature": "19.11", "humidity": "50.0", "battery": "80", "extra.encryption_counter": "228700"])
        #expect(
            error { try decode(pvvx, address: "A4:C1:38:AA:BB:CC", key: "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb") }
                == .authenticationFailed(format: "bthome-v1"))
    }
}
