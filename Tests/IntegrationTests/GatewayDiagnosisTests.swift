import Bluejay
import Foundation
import Gateway
import HCITestSupport
import Logging
import Synchronization
import Testing
import TraceTestSupport

/// What a gateway's operator is told (issue 52): two gateways with one id, `mqtts://` to a
/// plain port, `--verbose` and `log_level:`; and what a killed run leaves on the broker.
/// Against mosquitto alone: the gateway runs on a mock controller, no Bumble peer.
extension IntegrationTests {
    /// A gateway on a virtual controller (a recording's peers, none of them configured).
    static let mockTransport = "mock:" + RealTraces.shipped + "/android-mediatek-horizon-treadmill-write-notify.btsnoop"

    /// Two clients with one client id take the session from each other at once, forever; the
    /// one whose connections keep ending right after they come up says why, naming the id,
    /// and waits the backoff before connecting again (no longer the 100 ms of a lost link).
    @Test(.hangGuard) func twoClientsWithOneIDAreNamedAndBackOff() async throws {
        let broker = try await MosquittoBroker()
        let lines = RecordedLines()
        var options = MQTTClient.Options(
            broker: try BrokerAddress(broker.url), clientID: "bluejay-gw1", backoff: .milliseconds(500),
            backoffLimit: .seconds(2))
        options.duplicateID = "another gateway uses the id 'gw1' on this broker"
        let first = MQTTClient(options: options, logger: lines.logger("first"))
        let second = MQTTClient(options: options, logger: lines.logger("second"))
        first.start()
        #expect(await eventually { first.snapshot().connected })
        second.start()
        #expect(
            await eventually { first.snapshot().takeovers + second.snapshot().takeovers >= 1 },
            "\(lines.all.suffix(10))")
        let named = try #require(lines.all.first { $0.contains("another gateway uses the id 'gw1' on this broker") })
        #expect(named.contains(" error ") && named.contains("bluejay-gw1"), "\(named)")
        #expect(named.hasSuffix("connecting again in 0.5 seconds"), "the backoff, not at once: \(named)")
        first.close()
        second.close()
    }

    /// `mqtts://` to a plain MQTT port: the broker hangs up on the ClientHello, and the client
    /// says so well before its keepalive (10 minutes here) would end the attempt.
    @Test(.hangGuard) func mqttsToAPlainPortIsNamedAtOnce() async throws {
        let broker = try await MosquittoBroker()
        let lines = RecordedLines()
        let address = try BrokerAddress("mqtts://127.0.0.1:\(broker.port)")
        let client = MQTTClient(
            options: .init(broker: address, clientID: "tls-to-plain", keepAlive: .seconds(600), backoff: .seconds(5)),
            logger: lines.logger("tls"))
        client.start()
        let expected = "TLS handshake with 127.0.0.1:\(broker.port) failed"
        #expect(await eventually { lines.all.contains { $0.contains(expected) } }, "\(lines.all)")
        let line = try #require(lines.all.first { $0.contains(expected) })
        #expect(line.contains("is it a plain MQTT port? (mqtt:// for plain)"), "\(line)")
        #expect(!lines.all.contains { $0.contains("did not answer") }, "named, not timed out")
        #expect(!client.snapshot().connected)
        client.close()
    }

    /// A run killed outright left its peripherals `online` (retained; the will covers only
    /// the gateway's status). The next run makes them `offline` before it connects anything:
    /// a configured address, and an address it does not serve (found by name last time).
    /// It also announces itself to Home Assistant, the device its peripherals' `via_device` names.
    @Test(.hangGuard) func gatewayClearsStaleStatusesAndAnnouncesItself() async throws {
        let broker = try await MosquittoBroker()
        let configured = "C0:FF:EE:00:00:11", foundByName = "C0:FF:EE:00:00:22"
        let killedRun = try await MQTTRecorder(broker: broker, filter: "bluejay/#")
        #expect(await eventually { killedRun.client.snapshot().connected })
        for address in [configured, foundByName] {
            killedRun.client.setRetained("bluejay/gw1/\(address)/status", Array("online".utf8))
        }
        #expect(await killedRun.client.flushRetained(within: hangGuardWait))
        await killedRun.close()

        let recorder = try await MQTTRecorder(broker: broker, filter: "#")
        let (_, run) = try Self.startGateway(
            """
            gateway: gw1
            transport: \(Self.mockTransport)
            broker: \(broker.url)
            peripherals:
              - address: \(configured)/random
                subscribe:
                  - {service: 180D, characteristic: 2A37}
              - name: Nobody Here
            """)
        for address in [configured, foundByName] {
            #expect(
                await eventually { await recorder.payloads("bluejay/gw1/\(address)/status").last == "offline" },
                "\(address)")
        }
        // What a subscriber coming now is given: the retained state.
        let late = try await MQTTRecorder(broker: broker, filter: "#")
        func retained(_ topic: String, _ payload: String? = nil) async -> MQTTMessage? {
            await late.messages.last { (message: MQTTMessage) -> Bool in
                message.topic == topic && message.retained
                    && (payload == nil || message.payload == Array(payload!.utf8))
            }
        }
        for address in [configured, foundByName] {
            let topic = "bluejay/gw1/\(address)/status"
            #expect(await eventually { await retained(topic, "offline") != nil }, "\(topic) offline, retained")
        }
        let gatewayTopic = "homeassistant/binary_sensor/bluejay_gw1_status/config"
        #expect(await eventually { await retained(gatewayTopic) != nil }, "the gateway's own device")
        let gatewayConfig = try #require(await retained(gatewayTopic))
        let fields = try #require(try JSONSerialization.jsonObject(with: Data(gatewayConfig.payload)) as? [String: Any])
        let stateTopic: String? = fields["state_topic"] as? String
        let identifiers: [String]? = (fields["device"] as? [String: Any])?["identifiers"] as? [String]
        #expect(stateTopic == "bluejay/gw1/status" && identifiers == ["bluejay_gw1"], "\(fields)")
        let sensorTopic = "homeassistant/sensor/bluejay_gw1_C0FFEE000011_2A37/config"
        #expect(await eventually { await retained(sensorTopic) != nil })
        let sensor = try #require(await retained(sensorTopic))
        let sensorFields = try #require(try JSONSerialization.jsonObject(with: Data(sensor.payload)) as? [String: Any])
        let via: String? = (sensorFields["device"] as? [String: Any])?["via_device"] as? String
        #expect(via == "bluejay_gw1", "names the announced device")
        run.cancel()
        _ = await run.result
        await late.close()
        await recorder.close()
    }

    /// `--verbose` adds debug lines; `log_level:` sets the least severe line written. The
    /// gateway runs until its controller cannot be opened (nothing listens on port 1).
    @Test(.hangGuard) func verboseAddsDebugLines() async throws {
        let directory = NSTemporaryDirectory() + "bluejay-gateway-log-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func configuration(_ extra: String) throws -> String {
            let path = directory + "/\(UUID().uuidString).yaml"
            try """
            gateway: gw1
            transport: tcp:127.0.0.1:1
            broker: mqtt://127.0.0.1:1
            \(extra)
            peripherals:
              - address: C0:FF:EE:00:00:11/random
            """.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        let plain = try await runGateway([try configuration("")])
        let verbose = try await runGateway([try configuration(""), "--verbose"])
        let quiet = try await runGateway([try configuration("log_level: error")])
        let debugByKey = try await runGateway([try configuration("log_level: debug")])
        for run in [plain, verbose, quiet, debugByKey] {
            #expect(run.status == 1 && run.error.contains("cannot open the controller"), "\(run.error)")
        }
        #expect(!plain.error.contains(" debug "), "\(plain.error)")
        #expect(
            verbose.error.contains(" debug ") && verbose.error.contains("gateway gw1 on tcp:127.0.0.1:1"),
            "\(verbose.error)")
        #expect(debugByKey.error.contains(" debug "), "\(debugByKey.error)")
        #expect(!quiet.error.contains(" info ") && !quiet.error.contains(" debug "), "\(quiet.error)")
    }

    /// Runs `bluejay-gateway` with `arguments` to its end: its status and standard error.
    private func runGateway(_ arguments: [String]) async throws -> (status: Int32, error: String) {
        try await blocking {
            let process = Process()
            process.executableURL = Repository.gateway
            process.arguments = arguments
            let error = Pipe()
            process.standardOutput = FileHandle.nullDevice
            process.standardError = error
            try process.run()
            let text = error.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: text, as: UTF8.self))
        }
    }
}

/// Log lines (`LABEL LEVEL MESSAGE`) kept from any thread, for a test to read.
final class RecordedLines: Sendable {
    private let lines = Mutex<[String]>([])
    var all: [String] { lines.withLock { $0 } }
    func append(_ line: String) { lines.withLock { $0.append(line) } }

    /// A logger whose lines, at every level, are kept here.
    func logger(_ label: String) -> Logger {
        Logger(label: label) { label in RecordedLinesHandler(label: label, lines: self) }
    }
}

/// A swift-log handler writing into ``RecordedLines``.
struct RecordedLinesHandler: LogHandler {
    let label: String
    let lines: RecordedLines
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) { lines.append("\(label) \(event.level) \(event.message)") }
}
