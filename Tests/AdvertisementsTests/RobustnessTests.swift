@testable import Advertisements
import TestTraits
import Testing

// Advertisements come from anyone in radio range: whatever the bytes, a decoder answers
// with values or an error, never a trap.

@Suite("Arbitrary bytes")
struct RobustnessTests {
    @Test("Random payloads under every format's marks decode or fail with an error")
    func randomPayloads() {
        var generator = SeededGenerator(seed: 52)
        let serviceUUIDs: [UInt16] = [0xFCD2, 0x181C, 0x181E, 0xFE95, 0x181A, 0xFDCD, 0xFEAA, 0xFD3D, 0x0D00]
        let companies: [UInt16] = [0x0499, 0x004C, 0xEC88, 0x8801, 0x0001, 0x2449]
        let names = ["", "0409737073", "0409747073", "0d09475648353130325f43423942", "09094954482d31332d42"]
        let key = [UInt8](repeating: 0xAA, count: 16)
        for round in 0..<5_000 {
            let length = Int.random(in: 0...26, using: &generator)
            var payload = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            // Half the time, a plausible first octet: a BTHome device information, a format.
            if round % 2 == 0, !payload.isEmpty {
                payload[0] = [0x40, 0x41, 0x44, 0x05, 0x03, 0x00, 0x10, 0x20, 0x54, 0x64][round % 10]
            }
            let structure: [UInt8]
            if round % 3 == 0 {
                let company = companies[round % companies.count]
                structure = [UInt8(payload.count + 3), 0xFF, UInt8(company & 0xFF), UInt8(company >> 8)] + payload
            } else {
                let uuid = serviceUUIDs[round % serviceUUIDs.count]
                structure = [UInt8(payload.count + 3), 0x16, UInt8(uuid & 0xFF), UInt8(uuid >> 8)] + payload
            }
            let advertisement = hex(names[round % names.count]) + structure
            _ = try? AdvertisementDecoder.decode(bytes: advertisement, address: nil, key: round % 4 == 0 ? key : nil)
            _ = AdvertisementLine.decode(
                "AA:BB:CC:DD:EE:FF " + Bytes.hex(advertisement) + (round % 4 == 0 ? " " + Bytes.hex(key) : ""))
        }
    }
}
