@testable import Advertisements
import Testing

// RuuviTag data formats 3 and 5 against the test vectors of docs.ruuvi.com ("Data format 3
// (RAWv1)" and "Data format 5 (RAWv2)"): valid data, maximum, minimum, and for format 5 the
// invalid-values vector, whose every field is «not available».

@Suite("Ruuvi")
struct RuuviTests {
    @Test("Format 5, valid data")
    func v5Valid() throws {
        expect(
            try decode(manufacturerData(0x0499, "0512FC5394C37C0004FFFC040CAC364200CDCBB8334C884F")),
            format: "ruuvi-v5",
            [
                "temperature": "24.3", "pressure": "1000.44", "humidity": "53.49", "acceleration_x": "0.004",
                "acceleration_y": "-0.004", "acceleration_z": "1.036", "voltage": "2.977", "movement_counter": "66",
                "packet_counter": "205", "extra.tx_power": "4", "extra.mac": "\"CB:B8:33:4C:88:4F\"",
            ])
    }

    @Test("Format 5, maximum values")
    func v5Maximum() throws {
        expect(
            try decode(manufacturerData(0x0499, "057FFFFFFEFFFE7FFF7FFF7FFFFFDEFEFFFECBB8334C884F")),
            format: "ruuvi-v5",
            [
                "temperature": "163.835", "pressure": "1155.34", "humidity": "163.835", "acceleration_x": "32.767",
                "acceleration_y": "32.767", "acceleration_z": "32.767", "voltage": "3.646", "movement_counter": "254",
                "packet_counter": "65534", "extra.tx_power": "20",
            ])
    }

    @Test("Format 5, minimum values")
    func v5Minimum() throws {
        expect(
            try decode(manufacturerData(0x0499, "058001000000008001800180010000000000CBB8334C884F")),
            format: "ruuvi-v5",
            [
                "temperature": "-163.835", "pressure": "500.0", "humidity": "0.0", "acceleration_x": "-32.767",
                "acceleration_y": "-32.767", "acceleration_z": "-32.767", "voltage": "1.6", "movement_counter": "0",
                "packet_counter": "0", "extra.tx_power": "-40",
            ])
    }

    @Test("Format 5, invalid values: every field null")
    func v5Invalid() throws {
        let decoded = try decode(manufacturerData(0x0499, "058000FFFFFFFF800080008000FFFFFFFFFFFFFFFFFFFFFF"))
        let names = [
            "temperature", "pressure", "humidity", "acceleration_x", "acceleration_y", "acceleration_z", "voltage",
            "movement_counter", "packet_counter",
        ]
        for name in names { #expect(decoded.values[name] == .null, "\(name)") }
        #expect(decoded.extra["tx_power"] == .null)
        #expect(decoded.extra["mac"] == .null)
    }

    @Test(
        "Format 3, valid data, maximum and minimum",
        arguments: [
            ("03291A1ECE1EFC18F94202CA0B53", ["26.3", "1027.66", "20.5", "-1.0", "-1.726", "0.714", "2.899"]),
            ("03FF7F63FFFF7FFF7FFF7FFFFFFF", ["127.99", "1155.35", "127.5", "32.767", "32.767", "32.767", "65.535"]),
            ("0300FF6300008001800180010000", ["-127.99", "500.0", "0.0", "-32.767", "-32.767", "-32.767", "0.0"]),
        ])
    func v3(vector: String, results: [String]) throws {
        let decoded = try decode(manufacturerData(0x0499, vector))
        let names = [
            "temperature", "pressure", "humidity", "acceleration_x", "acceleration_y", "acceleration_z", "voltage",
        ]
        #expect(decoded.format == "ruuvi-v3")
        for (name, result) in zip(names, results) { #expect(decoded.values[name]?.description == result, "\(name)") }
    }

    @Test("Other data formats and short data are named errors")
    func otherFormats() {
        #expect(
            error { try decode(manufacturerData(0x0499, "06170C5668C79E0065007004BD11CA00C90A0213E0AC")) }?.description
                == "ruuvi: data format 6 is not decoded (only 3 and 5)")
        #expect(
            error { try decode(manufacturerData(0x0499, "0512FC")) }
                == .malformed(format: "ruuvi-v5", reason: "3 byte(s), 24 needed"))
    }
}
