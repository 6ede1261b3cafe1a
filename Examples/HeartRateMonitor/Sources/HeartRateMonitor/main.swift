// Bluejay's walk-through as a Linux program, on the callback API: scan for a heart-rate
// sensor, connect, read where it is worn, listen to its heart rate, run a background task
// of blocking calls, disconnect.
//
//     swift run HeartRateMonitor [TRANSPORT]
//
// TRANSPORT is the controller: `hci0` (the default; the user channel needs
// CAP_NET_ADMIN and the adapter down), `serial:/dev/ttyUSB0`, or `tcp:127.0.0.1:PORT` for
// the bundled virtual peripheral (see ../README.md).
import Bluejay
import Dispatch
import FoundationEssentials
import Glibc

/// The characteristics this app uses: Heart Rate (0x180D) of the specification's GATT services.
enum HeartRate {
    static let service = ServiceIdentifier(uuid: "180D")
    static let measurement = CharacteristicIdentifier(uuid: "2A37", service: service)
    static let sensorLocation = CharacteristicIdentifier(uuid: "2A38", service: service)
    /// Body Sensor Location's values (Heart Rate Service 3.2).
    static let locations = ["Other", "Chest", "Wrist", "Finger", "Hand", "Ear Lobe", "Foot"]
}

/// A Heart Rate Measurement: flags, then the rate in 8 or 16 bits (Heart Rate Service 3.1).
struct HeartRateMeasurement: Receivable {
    let beatsPerMinute: Int

    init(bluetoothData: Data) throws {
        let flags: UInt8 = try bluetoothData.extract(start: 0, length: 1)
        if flags & 0x01 == 0 {
            beatsPerMinute = Int(try bluetoothData.extract(start: 1, length: 1) as UInt8)
        } else {
            beatsPerMinute = Int(try bluetoothData.extract(start: 1, length: 2) as UInt16)
        }
    }
}

/// The app: it lives on the main actor, where Bluejay calls back.
@MainActor
final class HeartRateMonitor {
    let bluejay = Bluejay()
    let beats = 3
    var heard: [Int] = []

    func start(transport: String) {
        bluejay.start(mode: .new(StartOptions(transport: transport)))
        print("scanning for a heart-rate sensor")
        bluejay.scan(
            duration: 15, serviceIdentifiers: [HeartRate.service],
            discovery: { discovery, _ in
                print(
                    "found \(discovery.peripheralIdentifier.name) (\(discovery.peripheralIdentifier)), RSSI \(discovery.rssi) dBm"
                )
                return .connect(discovery, { result in self.connected(result) })
            },
            stopped: { found, error in
                if let error { self.fail("scan: \(error)") }
                if found.isEmpty { self.fail("no heart-rate sensor found in 15 s") }
            })
    }

    func connected(_ result: ConnectionResult) {
        guard case let .success(peripheral) = result else { return fail("connect: \(result)") }
        print("connected to \(peripheral)")
        bluejay.read(from: HeartRate.sensorLocation) { (result: ReadResult<UInt8>) in
            guard case let .success(location) = result else { return self.fail("read: \(result)") }
            print("sensor location: \(HeartRate.locations[safe: Int(location)] ?? "reserved (\(location))")")
            self.listen()
        }
    }

    func listen() {
        bluejay.listen(to: HeartRate.measurement) { (result: ReadResult<HeartRateMeasurement>) in
            switch result {
            case let .success(measurement):
                print("heart rate: \(measurement.beatsPerMinute) bpm")
                self.heard.append(measurement.beatsPerMinute)
                if self.heard.count == self.beats {
                    self.bluejay.endListen(to: HeartRate.measurement) { _ in self.backgroundTask() }
                }
            case .cancelled: break
            case let .failure(error): self.fail("listen: \(error)")
            }
        }
    }

    /// Blocking calls on a thread of their own, holding Bluejay's queue until they return.
    /// The task is @Sendable: it cannot touch this main-actor object, so it returns what it
    /// found and the completion, back on the main actor, keeps it.
    func backgroundTask() {
        let beats = beats
        bluejay.run(
            backgroundTask: { peripheral -> (UInt8, [Int]) in
                let location: UInt8 = try peripheral.read(from: HeartRate.sensorLocation)
                var rates: [Int] = []
                try peripheral.listen(to: HeartRate.measurement, timeout: .seconds(10)) {
                    (measurement: HeartRateMeasurement) in
                    rates.append(measurement.beatsPerMinute)
                    return rates.count == beats ? .done : .keepListening
                }
                return (location, rates)
            },
            completionOnMainThread: { result in
                guard case let .success((location, rates)) = result else {
                    return self.fail("background task: \(result)")
                }
                print(
                    "background task: sensor location \(location), heart rates \(rates.map(String.init).joined(separator: ", ")) bpm"
                )
                self.heard += rates
                self.disconnect()
            })
    }

    func disconnect() {
        bluejay.disconnect { result in
            guard case let .success(peripheral) = result else { return self.fail("disconnect: \(result)") }
            print("disconnected from \(peripheral) after \(self.heard.count) heart beats")
            exit(0)
        }
    }

    func fail(_ message: String) {
        print("error: \(message)")
        exit(1)
    }
}

extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}

let monitor = HeartRateMonitor()
monitor.start(transport: CommandLine.arguments.dropFirst().first ?? "hci0")
dispatchMain()
