import Foundation
import Gateway
import HCITestSupport

/// `bluejay-gateway` processes of one fleet on one peer (`--hosts N`: a host-facing
/// controller each, on one link), each with its own store and log, started and killed one
/// by one; and a view of the fleet built from the broker's messages.
final class GatewayFleetRig {
    let directory: String
    let broker: MosquittoBroker
    let peer: TestPeer
    private(set) var processes: [String: Process] = [:]

    init(broker: MosquittoBroker, peer: TestPeer) throws {
        self.broker = broker
        self.peer = peer
        directory = NSTemporaryDirectory() + "bluejay-fleet-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// Starts gateway `id` on the peer's host-facing controller `host`, configured for
    /// every sensor of the peer; `extra` is more of the file's top-level keys.
    func start(_ id: String, host: Int, extra: String = "") throws {
        var yaml = """
            gateway: \(id)
            transport: \(peer.transports[host])
            broker: \(broker.url)
            fleet: on
            homeassistant: off
            retries: 3
            backoff: 200ms
            connection_timeout: 5s
            broker_backoff: 100ms
            broker_backoff_max: 500ms
            keepalive: 5s
            stats_every: 1s
            \(extra)
            peripherals:

            """
        for address in peer.addresses {
            yaml += "  - address: \(address)/random\n    subscribe:\n      - {service: 180D, characteristic: 2A37}\n"
        }
        let path = "\(directory)/\(id).yaml"
        try yaml.write(toFile: path, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = Repository.gateway
        process.arguments = [path]
        // Its own store (bonds, GATT cache), and its log kept for a failure's message.
        process.environment = ProcessInfo.processInfo.environment.merging(["BLUEJAY_STORE": "\(directory)/\(id)-store"])
        { $1 }
        process.standardOutput = FileHandle.nullDevice
        _ = FileManager.default.createFile(atPath: "\(directory)/\(id).log", contents: nil)
        process.standardError = FileHandle(forWritingAtPath: "\(directory)/\(id).log")
        try process.run()
        processes[id] = process
    }

    /// `kill -9`: no clean MQTT disconnect, so the broker publishes the gateway's will.
    func sigkill(_ id: String) {
        guard let process = processes[id] else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// The end of each gateway's log, for a failure's message.
    func logs() -> String {
        processes.keys.sorted().map {
            "--- \($0):\n"
                + ((try? String(contentsOfFile: "\(directory)/\($0).log", encoding: .utf8)) ?? "").suffix(1500)
        }
        .joined(separator: "\n")
    }

    /// Stops what still runs and returns; the files go once every gateway has ended.
    func stop() {
        for process in processes.values where process.isRunning { process.terminate() }
        let directory = directory
        cleanUpAfterExit(of: Array(processes.values)) { try? FileManager.default.removeItem(atPath: directory) }
    }
}

/// The fleet as the broker's messages tell it, read once each (the recorder keeps them all):
/// who streams each sensor (its availability `online`), each sensor's lease, the samples
/// that arrived and from whom, and the most sensors any gateway streamed at once.
struct FleetView {
    let sensors: [String]
    private var read = 0
    /// Per gateway, the sensors whose availability it last said `online`.
    private(set) var streaming: [String: Set<String>] = [:]
    private(set) var leases: [String: Lease] = [:]
    /// Per sensor, its samples' numbers in arrival order with the gateway that published each.
    private(set) var samples: [String: [(gateway: String, number: Int)]] = [:]
    /// Per sensor, the gateways that published a value of it at or after ``mark`` (a killed
    /// gateway's last values may arrive after its kill).
    private(set) var sinceMark: [String: Set<String>] = [:]
    /// The most sensors each gateway streamed at once.
    private(set) var mostStreamed: [String: Int] = [:]
    private var mark: ContinuousClock.Instant?

    init(sensors: [String]) { self.sensors = sensors }

    /// Takes in the messages that arrived since the last call.
    mutating func update(_ recorder: MQTTRecorder) async {
        let messages = await recorder.messages, arrivals = await recorder.arrivals
        while read < messages.count {
            let message = messages[read], arrival = arrivals[read]
            read += 1
            let levels = message.topic.split(separator: "/").map(String.init)
            if levels.count == 3, levels[1] == Topics.leaseLevel {
                leases[levels[2]] = Lease(payload: message.payload)
            } else if levels.count == 4, levels[3] == "status" {
                if message.payload == Array("online".utf8) {
                    streaming[levels[1], default: []].insert(levels[2])
                    mostStreamed[levels[1]] = max(mostStreamed[levels[1]] ?? 0, streaming[levels[1]]!.count)
                } else {
                    streaming[levels[1]]?.remove(levels[2])
                }
            } else if levels.count == 5, levels[3] == "180D", levels[4] == "2A37",
                let number = Self.sample(message.payload)
            {
                samples[levels[2], default: []].append((levels[1], number))
                if let mark, arrival >= mark { sinceMark[levels[2], default: []].insert(levels[1]) }
            }
        }
    }

    /// A sample's number: Heart Rate Measurement, uint16 (`01 LSB MSB`, the peer's `--sensor-period-ms`).
    static func sample(_ payload: [UInt8]) -> Int? {
        guard let bytes = Hex.decode(String(decoding: payload, as: UTF8.self)), bytes.count == 3, bytes[0] == 0x01
        else { return nil }
        return Int(bytes[1]) | Int(bytes[2]) << 8
    }

    /// From now on, ``sinceMark`` records who publishes each sensor's values.
    mutating func setMark(_ instant: ContinuousClock.Instant) {
        mark = instant
        sinceMark = [:]
    }

    /// The live gateways streaming `sensor` (a killed gateway's availability stays `online`:
    /// only its own status has a will).
    func holders(of sensor: String, among live: [String]) -> [String] {
        live.filter { streaming[$0]?.contains(sensor) == true }
    }

    /// Every sensor streamed by exactly one live gateway, which holds its lease.
    func settled(_ live: [String]) -> Bool {
        sensors.allSatisfy { sensor in
            let holders = holders(of: sensor, among: live)
            return holders.count == 1 && leases[sensor]?.holder == holders[0] && leases[sensor]?.state == .held
        }
    }

    /// How many sensors each live gateway streams.
    func loads(_ live: [String]) -> [String: Int] {
        Dictionary(
            uniqueKeysWithValues: live.map { id in (id, sensors.filter { holders(of: $0, among: live) == [id] }.count) }
        )
    }

    /// Settled, and each gateway within one of its fair share.
    func balanced(_ live: [String]) -> Bool {
        guard settled(live) else { return false }
        let share = Double(sensors.count) / Double(live.count)
        return loads(live).values.allSatisfy { abs(Double($0) - share) <= 1 }
    }

    /// Per sensor: samples lost (gaps in the numbers received, across every gateway) and
    /// the times its stream moved from one gateway to another.
    func lossesAndMoves() -> [String: (lost: Int, moves: Int)] {
        var result: [String: (lost: Int, moves: Int)] = [:]
        for (sensor, received) in samples {
            let numbers = Set(received.map(\.number)).sorted()
            guard let first = numbers.first, let last = numbers.last else { continue }
            let moves = zip(received, received.dropFirst()).filter { $0.gateway != $1.gateway }.count
            result[sensor] = ((last - first + 1) - numbers.count, moves)
        }
        return result
    }
}
