import BluetoothCore
import HCI
import Testing

@Suite struct AdvertisingDataTests {
    /// Every AD type the value interprets, from bytes laid out as in the Core Supplement.
    @Test func parsesEveryInterpretedType() {
        // Appended part by part, each typed: Swift 6.0's type checker gave up on one sum.
        var bytes: [UInt8] = [
            0x02, 0x01, 0x06,  // flags
            0x05, 0x03, 0x0D, 0x18, 0x0F, 0x18,  // complete 16-bit: 180D, 180F
            0x03, 0x02, 0x0A, 0x18,  // incomplete 16-bit: 180A
            0x05, 0x05, 0x78, 0x56, 0x34, 0x12,  // complete 32-bit: 12345678
            0x11, 0x07,
        ]
        bytes += Array<UInt8>(0x01...0x10)  // complete 128-bit
        bytes += [
            0x04, 0x08, 0x42, 0x4A, 0x2D,  // shortened name "BJ-"
            0x02, 0x0A, 0xF8,  // TX power -8 dBm
            0x03, 0x14, 0x00, 0x18,  // solicited 16-bit 1800
            0x05, 0x1F, 0x01, 0x00, 0x02, 0x00,  // solicited 32-bit 00020001
            0x11, 0x15,
        ]
        bytes += Array<UInt8>(0x21...0x30)  // solicited 128-bit
        bytes += [
            0x05, 0x16, 0x0F, 0x18, 0x57, 0x01,  // service data 180F: 57 01
            0x07, 0x20, 0x78, 0x56, 0x34, 0x12, 0xAA, 0xBB,  // service data 32-bit
            0x12, 0x21,
        ]
        bytes += Array<UInt8>(0x41...0x50)  // service data 128-bit
        bytes += [
            0x99,
            0x03, 0x19, 0x41, 0x03,  // appearance 0x0341 (heart rate belt)
            0x05, 0xFF, 0x4C, 0x00, 0x02, 0x15,  // manufacturer 0x004C
            0x04, 0xFF, 0xFF, 0xFF, 0xB1,  // manufacturer 0xFFFF
            0x03, 0x24, 0x01, 0x02,  // URI (0x24): kept raw
        ]
        let data = AdvertisingData(parsing: bytes)
        #expect(data.problem == nil)
        #expect(data.flags == 0x06)
        let uuid128 = BluetoothUUID(littleEndianBytes: Array<UInt8>(0x01...0x10))!
        // 16-bit lists (incomplete, then complete), then 32-bit, then 128-bit.
        let serviceUUIDs: [BluetoothUUID] = [
            BluetoothUUID(UInt16(0x180A)), BluetoothUUID(UInt16(0x180D)), BluetoothUUID(UInt16(0x180F)),
            BluetoothUUID(UInt32(0x1234_5678)), uuid128,
        ]
        #expect(data.serviceUUIDs == serviceUUIDs)
        #expect(uuid128.description == "100F0E0D-0C0B-0A09-0807-060504030201")
        #expect(data.hasIncompleteServiceList)
        #expect(data.localName == "BJ-")
        #expect(data.isLocalNameShortened)
        #expect(data.txPowerLevel == -8)
        let solicited128: BluetoothUUID = BluetoothUUID(littleEndianBytes: Array<UInt8>(0x21...0x30))!
        let solicited: Set<BluetoothUUID> = [
            BluetoothUUID(UInt16(0x1800)), BluetoothUUID(UInt32(0x0002_0001)), solicited128,
        ]
        #expect(Set(data.solicitedServiceUUIDs) == solicited)
        let batteryData: [UInt8] = [0x57, 0x01]
        #expect(data.serviceData[BluetoothUUID(UInt16(0x180F))] == batteryData)
        let data32: [UInt8] = [0xAA, 0xBB]
        #expect(data.serviceData[BluetoothUUID(UInt32(0x1234_5678))] == data32)
        let service128: BluetoothUUID = BluetoothUUID(littleEndianBytes: Array<UInt8>(0x41...0x50))!
        let data128: [UInt8] = [0x99]
        #expect(data.serviceData[service128] == data128)
        #expect(data.appearance == 0x0341)
        let manufacturers: [ManufacturerData] = [
            ManufacturerData(companyIdentifier: 0x004C, data: [0x02, 0x15]),
            ManufacturerData(companyIdentifier: 0xFFFF, data: [0xB1]),
        ]
        #expect(data.manufacturerData == manufacturers)
        let others: [ADStructure] = [ADStructure(type: 0x24, data: [0x01, 0x02])]
        #expect(data.otherStructures == others)
        // Encoding gives the bytes back.
        #expect(data.encoded() == bytes)
        #expect(AdvertisingData(parsing: data.encoded()) == data)
    }

    @Test func completeNameWinsOverShortened() {
        let data = AdvertisingData(parsing: [0x03, 0x08, 0x41, 0x42, 0x04, 0x09, 0x41, 0x42, 0x43])
        #expect(data.localName == "ABC")
        #expect(!data.isLocalNameShortened)
    }

    @Test func malformedDataKeepsTheGoodStructuresBeforeIt() {
        // A length running past the end.
        let pastEnd = AdvertisingData(parsing: [0x02, 0x01, 0x06, 0x05, 0x09, 0x41, 0x42])
        #expect(pastEnd.flags == 0x06)
        #expect(pastEnd.structures.count == 1)
        #expect(pastEnd.problem == .runsPastEnd(offset: 3, length: 5, available: 3))
        // A zero length followed by data.
        let zero = AdvertisingData(parsing: [0x02, 0x01, 0x06, 0x00, 0x03, 0x09, 0x41, 0x42])
        #expect(zero.flags == 0x06)
        #expect(zero.problem == .zeroLength(offset: 3))
        // Zero padding after the last structure is not a problem.
        let padded = AdvertisingData(parsing: [0x02, 0x01, 0x06, 0x00, 0x00, 0x00])
        #expect(padded.problem == nil)
        #expect(padded.structures.count == 1)
        // Structures too short for their type yield nothing rather than garbage.
        let short = AdvertisingData(parsing: [0x02, 0xFF, 0x4C, 0x02, 0x19, 0x41, 0x02, 0x03, 0x0D])
        #expect(short.manufacturerData.isEmpty)
        #expect(short.appearance == nil)
        #expect(short.serviceUUIDs.isEmpty)
    }

    @Test func mergingAppendsTheScanResponse() {
        let advertisement = AdvertisingData(parsing: [0x02, 0x01, 0x06, 0x03, 0x03, 0x0D, 0x18])
        let response = AdvertisingData(parsing: [0x04, 0x09, 0x48, 0x52, 0x4D])
        let merged = advertisement.merging(response)
        #expect(merged.localName == "HRM")
        #expect(merged.serviceUUIDs == [BluetoothUUID(UInt16(0x180D))])
        #expect(merged.structures.count == 3)
    }

    @Test func uuidForms() {
        #expect(BluetoothUUID("180D") == BluetoothUUID(UInt16(0x180D)))
        #expect(BluetoothUUID("0x180d") == BluetoothUUID(UInt16(0x180D)))
        #expect(BluetoothUUID("0000180D-0000-1000-8000-00805F9B34FB") == BluetoothUUID(UInt16(0x180D)))
        #expect(BluetoothUUID(UInt16(0x180D)).description == "180D")
        #expect(BluetoothUUID(UInt16(0x180D)).littleEndianBytes == [0x0D, 0x18])
        #expect(BluetoothUUID(UInt32(0x1234_5678)).description == "12345678")
        let custom = BluetoothUUID("B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A00")!
        #expect(custom.description == "B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A00")
        #expect(BluetoothUUID(littleEndianBytes: custom.littleEndianBytes) == custom)
        #expect(
            BluetoothUUID("0000180d00001000800000805f9b34fb") == BluetoothUUID(UInt16(0x180D)),
            "128 bits without dashes")
        // Dashes only where the 128-bit form has them: "2A37-0000" is neither 32-bit nor 128-bit.
        for bad in [
            "", "18", "180G", "12345", "B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A", "2A37-0000", "-2A37", "2A-37",
            "0x2A37-0000",
            "B1E700019D3B-4C7A-8A5E-6F2D0C1B0A00", "0xB1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A00",
        ] {
            #expect(BluetoothUUID(bad) == nil, "\(bad)")
        }
        #expect(BluetoothUUID(littleEndianBytes: [0x01, 0x02, 0x03]) == nil)
    }
}

@Suite struct AdvertisingReportTests {
    let address = BluetoothAddress("F0:0D:B1:E7:00:01")!

    @Test func legacyReportBytesFromTheSpecification() throws {
        // LE Advertising Report: 1 report, ADV_IND, random, address, 3 bytes data, RSSI -60.
        let parameters: [UInt8] = [0x01, 0x00, 0x01, 0x01, 0x00, 0xE7, 0xB1, 0x0D, 0xF0, 0x03, 0x02, 0x01, 0x06, 0xC4]
        let reports = try #require(
            try AdvertisingReport.decode(LEMetaEvent(subeventCode: 0x02, parameters: parameters[...])))
        #expect(
            reports == [
                AdvertisingReport(
                    connectable: true, scannable: true, directed: false, isScanResponse: false, legacy: true,
                    addressType: .random, address: address, rssi: -60, data: [0x02, 0x01, 0x06])
            ])
        #expect(Array(AdvertisingReport.encode(reports, extended: false).parameters) == parameters)
        for length in 0..<parameters.count {
            #expect(throws: DecodingError.self) {
                try AdvertisingReport.decode(LEMetaEvent(subeventCode: 0x02, parameters: parameters.prefix(length)))
            }
        }
    }

    @Test func extendedReportsRoundTripWithEveryFlag() throws {
        let reports = [
            AdvertisingReport(
                connectable: true, scannable: true, directed: false, isScanResponse: false, legacy: true,
                addressType: .random, address: address, rssi: -40, txPower: 4, data: [0x02, 0x01, 0x06]),
            AdvertisingReport(
                connectable: false, scannable: true, directed: false, isScanResponse: true, legacy: false,
                addressType: .public, address: address, rssi: nil, dataStatus: 1,
                data: Array(repeating: 0xAB, count: 200)),
        ]
        let event = AdvertisingReport.encode(reports, extended: true)
        #expect(event.subeventCode == 0x0D)
        #expect(try AdvertisingReport.decode(event) == reports)
        #expect(try AdvertisingReport.decode(LEMetaEvent(subeventCode: 0x03, parameters: [])) == nil)
    }

    @Test func legacyEventTypes() throws {
        // ADV_DIRECT_IND, ADV_SCAN_IND, ADV_NONCONN_IND, SCAN_RSP.
        let expected: [(connectable: Bool, scannable: Bool, directed: Bool, response: Bool)] =
            [
                (true, false, true, false), (false, true, false, false), (false, false, false, false),
                (false, true, false, true),
            ]
        for (type, flags) in zip(UInt8(1)...4, expected) {
            let parameters: [UInt8] = [0x01, type, 0x00] + address.bytes + [0x00, 0x7F]
            let report = try #require(
                try AdvertisingReport.decode(LEMetaEvent(subeventCode: 0x02, parameters: parameters[...]))?.first)
            #expect(
                report.connectable == flags.connectable && report.scannable == flags.scannable
                    && report.directed == flags.directed && report.isScanResponse == flags.response,
                "event type \(type)")
            #expect(report.rssi == nil, "127 means no RSSI")
        }
        let badType: [UInt8] = [0x01, 0x05, 0x00] + address.bytes + [0x00, 0x7F]
        #expect(throws: DecodingError.self) {
            try AdvertisingReport.decode(LEMetaEvent(subeventCode: 0x02, parameters: badType[...]))
        }
    }
}
