import ArgumentParser
import Bluejay
import BluetoothCore
import FoundationEssentials
import HCI
import TraceDecoding

/// `bluejay demo`: Bluejay's heart-rate demo as a terminal program, on the Bluejay API.
struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "The heart-rate demo: scan, connect, read, listen, a background task, listen again, disconnect.",
        discussion: """
            Runs against the bundled virtual heart-rate peripheral (Fixtures/peer/peer.py; `make demo` starts it) \
            or any heart-rate sensor. The virtual peripheral starts its 1 Hz measurements when its control \
            point (B1E70006-…) receives 05 01; a real sensor starts them on subscription, and the write is \
            skipped when the control point is absent.
            """)

    @OptionGroup var common: CommonOptions

    @Option(name: .long, help: "Heart beats to print before the background task, and again after it.")
    var beats: Int = 5

    func validate() throws {
        guard (1...1000).contains(beats) else { throw ValidationError("--beats must be between 1 and 1000") }
    }

    func run() async throws {
        let transport = try common.transportSpec().description
        let beats = beats
        let logger = common.logger
        let redact = common.captureRedacted != nil
        let capture = common.captureRedacted ?? common.capture ?? environment("BLUEJAY_BTSNOOP")
        try await HeartRateDemo(
            transport: transport, capture: capture, redactCapture: redact, beats: beats, logger: logger
        ).run()
    }
}

/// The Heart Rate Measurement characteristic's value (Bluejay's README example).
struct HeartRateMeasurement: Receivable {
    private var flags: UInt8 = 0
    private var measurement8bits: UInt8 = 0
    private var measurement16bits: UInt16 = 0
    private var isMeasurementIn8bits = true

    var measurement: Int { isMeasurementIn8bits ? Int(measurement8bits) : Int(measurement16bits) }

    init(bluetoothData: Data) throws {
        flags = try bluetoothData.extract(start: 0, length: 1)
        isMeasurementIn8bits = (flags & 0b0000_0001) == 0
        if isMeasurementIn8bits {
            measurement8bits = try bluetoothData.extract(start: 1, length: 1)
        } else {
            measurement16bits = try bluetoothData.extract(start: 1, length: 2)
        }
    }
}

@MainActor
final class HeartRateDemo {
    let transport: String
    let capture: String?
    /// Whether the capture is written with secrets zeroed (`--capture-redacted`).
    let redactCapture: Bool
    let beats: Int
    let logger: HCILogger
    let bluejay = Bluejay()

    let heartRateService = ServiceIdentifier(uuid: "180D")
    let sensorLocation = CharacteristicIdentifier(uuid: "2A38", service: ServiceIdentifier(uuid: "180D"))
    let heartRate = CharacteristicIdentifier(uuid: "2A37", service: ServiceIdentifier(uuid: "180D"))
    let controlPoint = CharacteristicIdentifier(
        uuid: "B1E70006-9D3B-4C7A-8A5E-6F2D0C1B0A00",
        service: ServiceIdentifier(uuid: "B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A00"))

    init(transport: String, capture: String?, redactCapture: Bool = false, beats: Int, logger: HCILogger) {
        (self.transport, self.capture, self.redactCapture, self.beats, self.logger) =
            (transport, capture, redactCapture, beats, logger)
    }

    static let locations = ["Other", "Chest", "Wrist", "Finger", "Hand", "Ear Lobe", "Foot"]

    func step(_ text: String) { print("== \(text)") }

    func run() async throws {
        do { try await steps() } catch {
            if let report = await replayReport(finished: false) { throw DemoError(report) }
            throw error
        }
        if let report = await replayReport(finished: true) { throw DemoError(report) }
    }

    /// Stops Bluejay and closes its host. On a `replay:` transport, returns the mismatch
    /// report if the host diverged from the recording, or — once the demo has finished —
    /// also if it stopped before the recording does; nil otherwise.
    func replayReport(finished: Bool) async -> String? {
        guard let host = bluejay.stopAndExtractBluetoothState().host else { return nil }
        return await Task { @BluetoothActor in
            defer { host.close() }
            guard let replay = host.controller.transport as? ReplayTransport else { return nil }
            return (finished ? replay.verdict : replay.mismatch)?.decodedReport
        }.value
    }

    func steps() async throws {
        step("start Bluejay on \(transport)")
        bluejay.start(
            mode: .new(
                StartOptions(transport: transport, capture: capture, logger: logger, redactCapture: redactCapture)))

        step("scan for a heart-rate sensor (180D)")
        let connected: ConnectionResult = await withCheckedContinuation { done in
            bluejay.scan(
                duration: 15, serviceIdentifiers: [heartRateService],
                discovery: { discovery, _ in
                    print(
                        "   found \(discovery.peripheralIdentifier.name) \(discovery.peripheralIdentifier) RSSI \(discovery.rssi) dBm"
                    )
                    return .connect(discovery, { done.resume(returning: $0) })
                },
                stopped: { discoveries, error in
                    if let error {
                        done.resume(returning: .failure(error))
                    } else if discoveries.isEmpty {
                        done.resume(returning: .failure(DemoError("no heart-rate sensor found in 15 s")))
                    }
                })
        }
        guard case let .success(peripheral) = connected else { throw DemoError("connect: \(connected)") }
        step("connected to \(peripheral)")

        let location: ReadResult<UInt8> = await withCheckedContinuation { done in
            bluejay.read(from: sensorLocation) { done.resume(returning: $0) }
        }
        guard case let .success(value) = location else { throw DemoError("read body sensor location: \(location)") }
        step(
            "body sensor location: \(Self.locations.indices.contains(Int(value)) ? Self.locations[Int(value)] : "Unknown") (\(value))"
        )

        // The virtual peripheral's switch for its measurements; a real sensor has none.
        let started: WriteResult = await withCheckedContinuation { done in
            bluejay.write(to: controlPoint, value: Data([0x05, 0x01])) { done.resume(returning: $0) }
        }
        if case let .failure(error) = started { print("   (no demo control point: \(error))") }

        try await listen(beats)

        step("background task: end listen, set sensor location to 0, read it back")
        let heartRate = heartRate, bodySensorLocation = sensorLocation
        let reset: RunResult<UInt8> = await withCheckedContinuation { done in
            bluejay.run(
                backgroundTask: { peripheral -> UInt8 in
                    try peripheral.endListen(to: heartRate)
                    try peripheral.write(to: bodySensorLocation, value: UInt8(0))
                    return try peripheral.read(from: bodySensorLocation)
                }, completionOnMainThread: { done.resume(returning: $0) })
        }
        guard case let .success(newLocation) = reset else { throw DemoError("background task: \(reset)") }
        step("sensor location is now \(newLocation)")

        try await listen(beats)

        let ended: DisconnectionResult = await withCheckedContinuation { done in
            bluejay.disconnect { done.resume(returning: $0) }
        }
        guard case .success = ended else { throw DemoError("disconnect: \(ended)") }
        step("disconnected")
    }

    /// Listens until `count` beats have been printed; the listen stays on (the background
    /// task ends the first, the disconnection the second).
    func listen(_ count: Int) async throws {
        step("listen to heart rate (\(count) beats)")
        var seen = 0
        let failure: (any Error)? = await withCheckedContinuation { done in
            bluejay.listen(to: heartRate, multipleListenOption: .replaceable) {
                (result: ReadResult<HeartRateMeasurement>) in
                switch result {
                case let .success(measurement):
                    seen += 1
                    print("   ♥ \(measurement.measurement) bpm")
                    if seen == count { done.resume(returning: nil) }
                case .cancelled:
                    if seen < count { done.resume(returning: DemoError("listen cancelled")) }
                case let .failure(error):
                    if seen < count { done.resume(returning: error) }
                }
            }
        }
        if let failure { throw DemoError("listen: \(failure)") }
    }
}

struct DemoError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
