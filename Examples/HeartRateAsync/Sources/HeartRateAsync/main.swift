// The heart-rate walk-through on Bluejay's async API: scan, connect, read, listen, a
// background task, disconnect, each a `try await`, errors thrown.
//
//     swift run HeartRateAsync [TRANSPORT]
//
// TRANSPORT as for HeartRateMonitor: `hci0` (the default), `serial:/dev/ttyUSB0`, or
// `tcp:127.0.0.1:PORT` for the bundled virtual peripheral (see ../README.md).
import Bluejay
import FoundationEssentials

/// Heart Rate (0x180D), as the specification's GATT services define it.
enum HeartRate {
    static let service = ServiceIdentifier(uuid: "180D")
    static let measurement = CharacteristicIdentifier(uuid: "2A37", service: service)
    static let sensorLocation = CharacteristicIdentifier(uuid: "2A38", service: service)
}

/// A Heart Rate Measurement: flags, then the rate in 8 or 16 bits (Heart Rate Service 3.1).
/// Decoding from a view of the received bytes copies nothing.
struct HeartRateMeasurement: Receivable, Sendable {
    let beatsPerMinute: Int

    init(bluetoothData: Data) throws { try self.init(bluetoothBytes: ArraySlice(bluetoothData)) }

    init(bluetoothBytes bytes: ArraySlice<UInt8>) throws {
        let flags: UInt8 = try bytes.extract(start: 0, length: 1)
        if flags & 0x01 == 0 {
            beatsPerMinute = Int(try bytes.extract(start: 1, length: 1) as UInt8)
        } else {
            beatsPerMinute = Int(try bytes.extract(start: 1, length: 2) as UInt16)
        }
    }
}

/// The app runs on the main actor, where Bluejay lives.
@main @MainActor
struct HeartRateAsync {
    static func main() async throws {
        let transport = CommandLine.arguments.dropFirst().first ?? "hci0"
        let bluejay = Bluejay()
        bluejay.start(mode: .new(StartOptions(transport: transport)))
        print("scanning for a heart-rate sensor")
        var sensor: PeripheralIdentifier?
        for try await discovery in bluejay.discoveries(serviceIdentifiers: [HeartRate.service], duration: 15) {
            print(
                "found \(discovery.peripheralIdentifier.name) (\(discovery.peripheralIdentifier)), RSSI \(discovery.rssi) dBm"
            )
            sensor = discovery.peripheralIdentifier
            break
        }
        guard let sensor else { throw MonitorError("no heart-rate sensor found in 15 s") }

        let peripheral = try await bluejay.connect(sensor, timeout: .seconds(10))
        print("connected to \(peripheral)")
        let location: UInt8 = try await bluejay.read(from: HeartRate.sensorLocation)
        print("sensor location: \(location)")

        var heard = 0
        for try await measurement: HeartRateMeasurement in bluejay.values(of: HeartRate.measurement) {
            print("heart rate: \(measurement.beatsPerMinute) bpm")
            heard += 1
            if heard == 3 { break }  // leaving the loop ends the listen
        }

        // Blocking calls on a thread of their own, holding Bluejay's queue until they return.
        let rates = try await bluejay.run { peripheral -> [Int] in
            var rates: [Int] = []
            try peripheral.listen(to: HeartRate.measurement, timeout: .seconds(10)) {
                (measurement: HeartRateMeasurement) in
                rates.append(measurement.beatsPerMinute)
                return rates.count == 3 ? .done : .keepListening
            }
            return rates
        }
        print("background task: heart rates \(rates.map(String.init).joined(separator: ", ")) bpm")

        try await bluejay.disconnect()
        print("disconnected from \(peripheral) after \(heard + rates.count) heart beats")
    }
}

struct MonitorError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
