@testable import Advertisements
import Testing

// Govee, SwitchBot, Inkbird and Qingping, which publish no format (SwitchBot excepted):
// the frames are those of the community parsers' tests, taken out of their HCI reports:
// custom-components/ble_monitor (test_govee_parser, test_inkbird, test_switchbot,
// test_qingping_parser), sblibs/pySwitchbot (test_adv_parser: contact and motion sensors)
// and Bluetooth-Devices/inkbird-ble (test_ith_*). SwitchBot's layout is its own
// (OpenWonderLabs/SwitchBotAPI-BLE).

@Suite("Govee, SwitchBot, Inkbird, Qingping")
struct VendorTests {
    @Test("Govee H5075 (name GVH5075_CB9B): packed temperature and humidity, above and below zero")
    func goveeH5075() throws {
        let name = "0d09475648353037355f43423942030388ec020105"
        expect(
            try decode(name + "09ff88ec0003215d6400"), format: "govee",
            ["temperature": "20.5", "humidity": "14.9", "battery": "100", "extra.model": "\"H5075\""])
        expect(
            try decode(name + "09ff88ec0081c2896400"), format: "govee", ["temperature": "-11.5", "humidity": "33.7"])
        // Without its name, the family the table row gives.
        expect(try decode("09ff88ec0003215d6400"), format: "govee", ["extra.model": "\"H5072/H5075\""])
    }

    @Test("Govee H5074, H5102, H5179 (and H5051)")
    func goveeOthers() throws {
        expect(
            try decode("0aff88ec0088078c116402"), format: "govee",
            ["temperature": "19.28", "humidity": "44.92", "battery": "100", "extra.model": "\"H5074\""])
        expect(
            try decode("0d09475648353130325f43423942030388ec02010509ff0100010103cb0164"), format: "govee",
            ["temperature": "24.8", "humidity": "57.7", "battery": "100", "extra.model": "\"H5102\""])
        expect(
            try decode("0cff0188ec000101a00aa2175b"), format: "govee",
            ["temperature": "27.2", "humidity": "60.5", "battery": "91", "extra.model": "\"H5179\""])
        expect(
            try decode("0cff88ec00ba0af90f63020101"), format: "govee",
            ["temperature": "27.46", "humidity": "40.89", "battery": "99", "extra.model": "\"H5051\""])
    }

    @Test("Company 0x0001 without a Govee name or UUID is not Govee; an H5106 is not read as an H5102")
    func goveeNeedsItsMark() throws {
        #expect(error { try decode("09ff0100010103cb0164") } == .unknownFormat)
        // The H5106 frame carries an iBeacon too, and that is what decodes.
        let h5106 =
            "0201060d09475648353130365f34423939030388ec09ff010001010deeaa6f1aff4c000215494e54454c4c495f524f434b535f48575075f2ff0c"
        #expect(try decode(h5106).format == "ibeacon")
    }

    @Test("SwitchBot Meter (old UUID 0x0D00), Meter Plus above and below zero")
    func switchBotMeter() throws {
        expect(
            try decode("11071bc5d5a50200b89fe6114d22000da2cb0916000d54006400990e"), format: "switchbot",
            ["temperature": "25.0", "humidity": "14", "battery": "100", "extra.model": "\"meter\""])
        expect(
            try decode("09163dfd6900640098a6"), format: "switchbot",
            [
                "temperature": "24.0", "humidity": "38", "battery": "100", "extra.model": "\"meter_plus\"",
                "extra.fahrenheit_display": "true",
            ])
        expect(
            try decode("0201060eff6909c4f92675df22dc030096a909163dfd6900ba031938"), format: "switchbot",
            ["temperature": "-25.3", "humidity": "56", "battery": "58"])
    }

    @Test(
        "SwitchBot Contact Sensor: door open too long, open, closed",
        arguments: [
            ("6440640500750 0f812", "timeout_not_closed", "true", "true", "true", "100"),
            ("6440da02001700514 4", "open", "true", "true", "false", "90"),
            ("6440da00002b001984", "closed", "false", "true", "false", "90"),
        ])
    func switchBotContact(data: String, door: String, opening: String, motion: String, light: String, battery: String)
        throws
    {
        expect(
            try decode(serviceData(0xFD3D, data)), format: "switchbot",
            [
                "opening": opening, "motion": motion, "light": light, "battery": battery,
                "extra.door": "\"\(door)\"", "extra.model": "\"contact_sensor\"",
            ])
    }

    @Test("SwitchBot Contact Sensor's counters and times (pySwitchbot's first contact frame)")
    func switchBotContactCounters() throws {
        expect(
            try decode(serviceData(0xFD3D, "64406405007500f812")), format: "switchbot",
            ["extra.button_count": "2", "extra.seconds_since_motion": "117", "extra.seconds_since_door_change": "248"])
    }

    @Test("SwitchBot Motion Sensor: clear and motion")
    func switchBotMotion() throws {
        expect(
            try decode(serviceData(0xFD3D, "7300e2006601")), format: "switchbot",
            [
                "motion": "false", "battery": "98", "light": "false", "extra.seconds_since_motion": "102",
                "extra.sensing_distance": "\"long\"", "extra.model": "\"motion_sensor\"",
            ])
        expect(
            try decode(serviceData(0xFD3D, "7340e2003801")), format: "switchbot",
            ["motion": "true", "extra.seconds_since_motion": "56"])
    }

    @Test("Inkbird IBS-TH (sps): internal and external probe; IBS-TH2 (tps): temperature only, below zero")
    func inkbirdIBSTH() throws {
        expect(
            try decode("04097370730aff9c08f41000ba4e6408"), format: "inkbird",
            [
                "temperature": "22.04", "humidity": "43.4", "battery": "100", "extra.probe": "\"internal\"",
                "extra.model": "\"IBS-TH\"",
            ])
        expect(
            try decode("04097370730aff3b0af815018cbc6408"), format: "inkbird",
            ["temperature": "26.19", "humidity": "56.24", "extra.probe": "\"external\""])
        let th2 = try decode("0201060302f0ff04097470730aff9ef8000000bcbc6406")
        expect(th2, format: "inkbird", ["temperature": "-18.9", "battery": "100", "extra.model": "\"IBS-TH2\""])
        #expect(th2.values["humidity"] == nil)
        expect(
            try decode("04097470730affff0700000031603306"), format: "inkbird",
            ["temperature": "20.47", "battery": "51"])
    }

    @Test(
        "Inkbird ITH-21-B, ITH-13-B, ITH-11-B (company 0x2449)",
        arguments: [
            ("ITH-21-B", "07110098d80013026401900400000000", "21.6", "53.1"),
            ("ITH-13-B", "1223052f0e0110026400000000000000", "27.0", "52.8"),
            ("ITH-13-B", "1223052ff000f9016400000400000000", "24.0", "50.5"),
            ("ITH-11-B", "0812005e00005d036400640800000000", "0.0", "86.1"),
            ("ITH-11-B", "0812005efeff48036400640800000000", "-0.2", "84.0"),
        ])
    func inkbirdITH(name: String, data: String, temperature: String, humidity: String) throws {
        let nameStructure = Bytes.hex([UInt8(name.utf8.count + 1), 0x09] + Array(name.utf8))
        expect(
            try decode("0303f0ff" + nameStructure + manufacturerData(0x2449, data)), format: "inkbird",
            ["temperature": temperature, "humidity": humidity, "battery": "100", "extra.model": "\"\(name)\""])
    }

    @Test("Qingping CGP1W, CGD1, CGP22C, CGPR1, CGDN1")
    func qingping() throws {
        expect(
            try decode("0201061816cdfd08096f1c40342d580104be000d0207027226020157"), format: "qingping",
            [
                "temperature": "19.0", "humidity": "52.5", "pressure": "984.2", "battery": "87",
                "extra.model": "\"CGP1W\"",
                "extra.mac": "\"58:2D:34:40:1C:6F\"",
            ])
        expect(
            try decode("0201061416cdfd080cbf6552342d580104f100ad01020125"), format: "qingping",
            ["temperature": "24.1", "humidity": "42.9", "battery": "37", "extra.model": "\"CGD1\""])
        expect(
            try decode("0201061816cdfd0a5dc11b86342d580104ff00af0102016413024702"), format: "qingping",
            ["temperature": "25.5", "humidity": "43.1", "battery": "100", "co2": "583", "extra.model": "\"CGP22C\""])
        expect(
            try decode("0201061716cdfd0812005e60342d580201640f011c09048b090000"), format: "qingping",
            ["illuminance": "2443", "battery": "100", "packet_counter": "28", "extra.model": "\"CGPR1\""])
        expect(
            try decode("0201061416cdfd4812005e60342d580804008b09000f0122"), format: "qingping",
            ["illuminance": "2443", "motion": "false", "packet_counter": "34"])
        expect(try decode("0201061116cdfd4812005e60342d581101010f0130"), format: "qingping", ["light": "true"])
        expect(
            try decode("0201061b16cdfd080ea3808fe64854010422014c011204710072001302ed03"), format: "qingping",
            [
                "temperature": "29.0", "humidity": "33.2", "co2": "1005", "pm25": "113", "pm10": "114",
                "extra.model": "\"CGDN1\"",
            ])
    }
}
