import Foundation
import TestTraits
import Testing

@testable import Gateway

/// `…/json` is written by hand (``KnownCharacteristic/json(_:)``) for speed; its text must
/// stay byte for byte what JSONSerialization wrote before (``JSONText``), every value.
struct ValueJSONTests {
    /// Every one- and two-octet value of each characteristic, empty and cut ones included.
    @Test func everyShortValueAsJSONSerializationWritesIt() {
        var values: [[UInt8]] = [[]]
        for byte in 0...255 { values.append([UInt8(byte)]) }
        for raw in 0...0xFFFF { values.append([UInt8(raw & 0xFF), UInt8(raw >> 8)]) }
        for known in KnownCharacteristic.allCases {
            var mismatches: [String] = []
            for value in values {
                let expected = known.decode(value).map(JSONText.encode)
                let written = known.json(value).map { String(decoding: $0, as: UTF8.self) }
                if written != expected, mismatches.count < 5 {
                    mismatches.append("\(value): \(written ?? "nil") against \(expected ?? "nil")")
                }
            }
            #expect(mismatches.isEmpty, "\(known): \(mismatches)")
        }
    }

    /// Heart Rate Measurements with every flag, energy and RR-intervals (1/1024 s fractions),
    /// of lengths 1 to 12, their octets drawn from a seeded generator.
    @Test func heartRateMeasurementsAsJSONSerializationWritesThem() {
        var generator = SeededGenerator(seed: 52)
        var mismatches: [String] = []
        for flags in 0...0x1F {
            for _ in 0..<400 {
                let length = Int.random(in: 1...12, using: &generator)
                let value = [UInt8(flags)] + (1..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
                let expected = KnownCharacteristic.heartRate.decode(value).map(JSONText.encode)
                let written = KnownCharacteristic.heartRate.json(value).map { String(decoding: $0, as: UTF8.self) }
                if written != expected, mismatches.count < 5 {
                    mismatches.append("\(value): \(written ?? "nil") against \(expected ?? "nil")")
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches)")
        #expect(
            KnownCharacteristic.heartRate.json([0x1F, 0x2C, 0x01, 0x02, 0x01, 0x00, 0x04])
                == Array(#"{"energy_expended":258,"heart_rate":300,"rr_intervals":[1],"sensor_contact":true}"#.utf8))
    }
}
