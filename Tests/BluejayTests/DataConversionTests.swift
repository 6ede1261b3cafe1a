import Bluejay
import Foundation
import Testing

/// Receivable/BluejaySendable conformances and Data.extract.
struct DataConversionTests {
    @Test func integersTravelLittleEndianAtTheirWidth() throws {
        #expect(UInt16(0x1234).toBluetoothData() == Data([0x34, 0x12]))
        #expect(Int32(-2).toBluetoothData() == Data([0xFE, 0xFF, 0xFF, 0xFF]))
        #expect(try UInt32(bluetoothData: Data([0x78, 0x56, 0x34, 0x12])) == 0x1234_5678)
        #expect(try Int8(bluetoothData: Data([0xFF])) == -1)
        #expect(try UInt64(bluetoothData: UInt64.max.toBluetoothData()) == .max)
    }

    @Test func shortDataThrowsInsteadOfReadingPastTheEnd() {
        #expect(throws: BluejayError.self) { try UInt16(bluetoothData: Data([0x01])) }
        do {
            let _: UInt32 = try Data([1, 2, 3]).extract(start: 1, length: 4)
            Issue.record("expected notEnoughData")
        } catch {
            guard case .notEnoughData(expected: 5, actual: 3) = error as? BluejayError else {
                Issue.record("got \(error)"); return
            }
        }
        #expect(throws: BluejayError.self) { let _: UInt8 = try Data([1]).extract(start: 0, length: 2) }
    }

    @Test func extractReadsFromTheSliceStart() throws {
        let data = Data([0xAA, 0x01, 0x02, 0x03]).dropFirst()
        let value: UInt16 = try data.extract(start: 1, length: 2)
        #expect(value == 0x0302)
        let bytes: Data = try data.extract(start: 0, length: 2)
        #expect(bytes == Data([0x01, 0x02]))
    }

    @Test func stringsAndDataAndCombine() throws {
        #expect("Bluejay".toBluetoothData() == Data("Bluejay".utf8))
        #expect(String(bluetoothData: Data("héllo".utf8)) == "héllo")
        #expect(Data(bluetoothData: Data([1, 2])) == Data([1, 2]))
        let combined = Bluejay.combine(sendables: [UInt8(0x3A), UInt16(0x0102), "A", Data([0xFF])])
        #expect(combined == Data([0x3A, 0x02, 0x01, 0x41, 0xFF]))
    }

    @Test func identifiers() {
        let heartRate = ServiceIdentifier(uuid: "180D")
        #expect(
            CharacteristicIdentifier(uuid: "2A37", service: heartRate)
                == CharacteristicIdentifier(uuid: "00002A37-0000-1000-8000-00805F9B34FB", service: heartRate))
        #expect(heartRate.description == "180D Heart Rate")
    }
}
