@testable import Advertisements
import Testing

// iBeacon and Eddystone. The iBeacon frame (Apple's AirLocate UUID) is the one in
// custom-components/ble_monitor's test_ibeacon_parser; the Eddystone-URL frame is a
// RuuviTag's data format 4 from its test_ruuvitag_parser, and the URL of docs.ruuvi.com's
// format 4 page; the UID and TLM frames are built from google/eddystone's frame tables
// (its TX power and namespace examples), which print no frames.

@Suite("iBeacon and Eddystone")
struct BeaconTests {
    @Test("iBeacon: UUID lower case with dashes, major, minor, measured power at 1 m")
    func iBeacon() throws {
        expect(
            try decode("02011a1aff4c000215e2c56db5dffb48d2b060d0f5a71096e000640000c5"), format: "ibeacon",
            [
                "uuid": "\"e2c56db5-dffb-48d2-b060-d0f5a71096e0\"", "major": "100", "minor": "0", "rssi_at_1m": "-59",
            ])
    }

    @Test("Apple data that is not an iBeacon is no format; a short iBeacon is an error")
    func notIBeacon() {
        #expect(error { try decode(manufacturerData(0x004C, "1005031c")) } == .unknownFormat)
        #expect(
            error { try decode(manufacturerData(0x004C, "0215e2c5")) }
                == .malformed(format: "ibeacon", reason: "4 byte(s), 23 needed"))
    }

    @Test("Eddystone-URL: a RuuviTag's format 4 frame (TX power 0xEE: −18 dBm)")
    func url() throws {
        expect(
            try decode("0201060303aafe1616aafe10ee037275752e76692f23416a7759414d4666"), format: "eddystone-url",
            ["tx_power": "-18", "url": "\"https://ruu.vi/#AjwYAMFf\""])
        let ruuviDocs = "10ee03" + Bytes.hex(Array("ruu.vi/#BFwaAMjlQ".utf8))
        expect(
            try decode(serviceData(0xFEAA, ruuviDocs)), format: "eddystone-url",
            ["url": "\"https://ruu.vi/#BFwaAMjlQ\""])
    }

    @Test("Eddystone-URL expansion codes (0x12: +18 dBm), and a reserved byte is an error")
    func urlExpansions() throws {
        let frame = "1012 00" + Bytes.hex(Array("example".utf8)) + "07" + "02" + Bytes.hex(Array("x".utf8)) + "0a"
        expect(
            try decode(serviceData(0xFEAA, frame)), format: "eddystone-url",
            ["tx_power": "18", "url": "\"http://www.example.com.edu/x.net\""])
        #expect(
            error { try decode(serviceData(0xFEAA, "1012 03 41 0e")) }
                == .malformed(format: "eddystone-url", reason: "URL byte 0x0e is reserved"))
        #expect(
            error { try decode(serviceData(0xFEAA, "1012 04 41")) }
                == .malformed(format: "eddystone-url", reason: "URL scheme 0x04 is reserved"))
    }

    @Test("Eddystone-UID: namespace and instance as lower-case hex, with or without the RFU bytes")
    func uid() throws {
        let frame = "00ee 8b0ca750095477cb3e77 0102030405a6"
        for ending in ["", "0000"] {
            expect(
                try decode(serviceData(0xFEAA, frame + ending)), format: "eddystone-uid",
                [
                    "tx_power": "-18", "namespace": "\"8b0ca750095477cb3e77\"", "instance": "\"0102030405a6\"",
                ])
        }
    }

    @Test("Eddystone-TLM: volts, 8.8 fixed-point °C, counts; zero volts and 0x8000 are null; encrypted TLM refused")
    func tlm() throws {
        expect(
            try decode(serviceData(0xFEAA, "2000 0bb8 1880 00000064 00000e10")), format: "eddystone-tlm",
            [
                "voltage": "3.0", "temperature": "24.5", "extra.advertising_pdu_count": "100", "extra.uptime": "360.0",
            ])
        expect(
            try decode(serviceData(0xFEAA, "2000 0000 8000 00000001 00000001")), format: "eddystone-tlm",
            ["voltage": "null", "temperature": "null"])
        expect(
            try decode(serviceData(0xFEAA, "2000 0c1c ff80 00000001 00000001")), format: "eddystone-tlm",
            ["voltage": "3.1", "temperature": "-0.5"])
        #expect(
            error { try decode(serviceData(0xFEAA, "2001 00112233445566778899aabbccdd 0000")) }?.description
                == "eddystone-tlm: TLM version 0x01 (encrypted TLM) is not decoded")
    }
}
