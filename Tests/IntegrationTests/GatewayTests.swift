import Bluejay
import Foundation
import Gateway
import HCITestSupport
import Logging
import Testing
import VirtualController

/// The gateway (Sources/Gateway) between the Bumble peer's peripherals and a real broker
/// (Debian's mosquitto, started here on a free port): values on the documented topics, in
/// order; `/set` writes reaching the peripheral and malformed ones refused; availability
/// retained; a dropped sensor back under its policy; a broker restart losing no value.
extension IntegrationTests {
    static let heartRateTopic = "180D/2A37"
    static let quietLogger = Logger(label: "gateway") { _ in SwiftLogNoOpLogHandler() }

    /// A configuration for the peer's peripherals on `broker`; `body` is each peripheral's
    /// lines after its address.
    static func gatewayConfiguration(_ peer: TestPeer, _ broker: MosquittoBroker, extra: String = "", body: String)
        -> String
    {
        var yaml = """
            gateway: gw1
            transport: \(peer.transport)
            broker: \(broker.url)
            prefix: bluejay
            retries: 3
            backoff: 200ms
            connection_timeout: 5s
            broker_backoff: 100ms
            broker_backoff_max: 500ms
            stats_every: 1s
            \(extra)
            peripherals:

            """
        for address in peer.addresses { yaml += "  - address: \(address)/random\n" + body }
        return yaml
    }

    /// Runs a gateway until the returned task is cancelled.
    static func startGateway(_ yaml: String) throws -> (GatewayService, Task<Void, any Error>) {
        // As bluejay-gateway does: `transport: mock:FILE` runs it against a recording.
        VirtualController.enableMockTransport()
        let configuration = try GatewayConfiguration(yaml: yaml)
        let store = StoreDirectory(path: NSTemporaryDirectory() + "bluejay-gateway-\(UUID().uuidString)")
        let gateway = GatewayService(
            configuration: configuration, logger: quietLogger, store: store, hciLogger: .silent)
        let run = Task { @BluetoothActor in try await gateway.run() }
        return (gateway, run)
    }

    /// Heart-rate payloads (`00 bpm`) as bpm.
    static func beats(_ payloads: [String]) -> [Int] {
        payloads.compactMap { Hex.decode($0).flatMap { $0.count == 2 ? Int($0[1]) : nil } }
    }

    /// Each value one more than the last (the peer counts 60…200).
    static func consecutive(_ values: [Int]) -> Bool {
        zip(values, values.dropFirst()).allSatisfy { $1 == $0 + 1 || ($0 == 200 && $1 == 60) }
    }

    /// Four sensors: each one's heart-rate values arrive on its own topic in order, decoded
    /// on `/json`, its battery polled; availability and Home Assistant's configuration are
    /// retained (a subscriber that comes later gets them); one sensor dropped by the peer
    /// comes back under the policy and streams again; stopping marks the gateway offline.
    @Test(.hangGuard) func gatewayBridgesFourSensorsToTheBroker() async throws {
        let broker = try await MosquittoBroker()
        let peer = try await TestPeer(arguments: ["--peripherals", "4", "--heart-rate-on-subscribe"])
        defer { peer.stop() }
        let recorder = try await MQTTRecorder(broker: broker, filter: "bluejay/#")
        // UUIDs written in lower case here come out upper case in the topics.
        let yaml = Self.gatewayConfiguration(
            peer, broker,
            body: """
                    subscribe:
                      - {service: 180d, characteristic: 2a37}
                    poll:
                      - {service: 180F, characteristic: 2A19, every: 1s}
                    write:
                      - {service: B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A00, characteristic: B1E70006-9D3B-4C7A-8A5E-6F2D0C1B0A00}

                """)
        let (gateway, run) = try Self.startGateway(yaml)
        let topics = gateway.topics
        let root = "bluejay/gw1"
        for address in peer.addresses {
            let values = "\(root)/\(address)/\(Self.heartRateTopic)"
            #expect(
                await eventually { await recorder.payloads(values).count >= 3 }, "\(address): three heart-rate values")
            let beats = Self.beats(await recorder.payloads(values))
            let payloads = await recorder.payloads(values)
            let lowerCase: Bool = payloads.allSatisfy { (payload: String) -> Bool in payload == payload.lowercased() }
            #expect(beats.count == payloads.count && lowerCase, "lower-case hex `00 bpm`: \(payloads)")
            #expect(Self.consecutive(beats), "\(address): in order, none lost: \(beats)")
            #expect(await eventually { await recorder.payloads(values + "/json").count >= 3 })
            let decoded = await recorder.payloads(values + "/json")
            #expect(decoded.first == #"{"heart_rate":\#(beats[0])}"#)
            #expect(
                await eventually { await recorder.payloads("\(root)/\(address)/180F/2A19").contains("57") },
                "battery polled")
            #expect(
                await eventually {
                    await recorder.payloads("\(root)/\(address)/180F/2A19/json").contains(#"{"battery_level":87}"#)
                })
        }
        // A subscriber that comes now gets the retained availability and discovery.
        let late = try await MQTTRecorder(broker: broker, filter: "#")
        let online: [UInt8] = Array("online".utf8)
        func retainedOnline(_ topic: String) async -> Bool {
            await late.messages.contains { (message: MQTTMessage) -> Bool in
                message.topic == topic && message.retained && message.payload == online
            }
        }
        #expect(await eventually { await retainedOnline(topics.status) })
        for address in peer.addresses {
            let status: String = "\(root)/\(address)/status"
            #expect(await eventually { await retainedOnline(status) }, "\(address) online, retained")
        }
        #expect(
            await eventually {
                await late.messages.filter { $0.topic.hasPrefix("homeassistant/sensor/") && $0.retained }.count == 8
            },
            "a heart rate and a battery sensor for each of the four")
        let discovery = try #require(await late.messages.first { $0.topic.hasSuffix("_2A37/config") })
        let fields = try #require(try JSONSerialization.jsonObject(with: Data(discovery.payload)) as? [String: Any])
        #expect((fields["state_topic"] as? String)?.hasSuffix("/180D/2A37/json") == true)
        #expect(fields["value_template"] as? String == "{{ value_json.heart_rate }}")
        await late.close()

        // The peer drops sensor 2 (control point 02 08: a supervision timeout, written
        // through /set); the policy reconnects it and its values go on.
        let dropped = peer.addresses[1]
        let droppedValues = "\(root)/\(dropped)/\(Self.heartRateTopic)"
        recorder.client.publish(
            "\(root)/\(dropped)/B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A00/B1E70006-9D3B-4C7A-8A5E-6F2D0C1B0A00/set",
            Array("0208".utf8))
        #expect(
            await eventually { await recorder.payloads("\(root)/\(dropped)/status").contains("offline") },
            "the drop is published")
        let offlineAt = await recorder.payloads(droppedValues).count
        #expect(
            await eventually { await recorder.payloads("\(root)/\(dropped)/status").last == "online" }, "and the return"
        )
        #expect(
            await eventually { await recorder.payloads(droppedValues).count >= offlineAt + 2 },
            "values again after the reconnection")
        #expect(
            await eventually {
                guard let stats = await recorder.payloads(topics.stats).last,
                    let object = try? JSONSerialization.jsonObject(with: Data(stats.utf8)) as? [String: Any]
                else { return false }
                let reconnects: Int = object["peripheral_reconnects"] as? Int ?? 0
                let links: Int? = object["links"] as? Int
                let values: Int = object["values"] as? Int ?? 0
                return reconnects >= 1 && links == 4 && values > 0
            }, "the counters say so")

        run.cancel()
        _ = await run.result
        #expect(
            await eventually { await recorder.payloads(topics.status).last == "offline" },
            "stopping marks the gateway offline")
        await recorder.close()
    }

    /// A `/set` reaches the peripheral (Body Sensor Location, polled back); a malformed one,
    /// or one for a characteristic not configured, is answered on the error topic and
    /// touches nothing. Listed under `write:`, the characteristic is a Home Assistant text
    /// entity whose command, published as Home Assistant would, writes it.
    @Test(.hangGuard) func gatewayWritesSetAndRefusesMalformedOnes() async throws {
        let broker = try await MosquittoBroker()
        let peer = try await TestPeer()
        defer { peer.stop() }
        let recorder = try await MQTTRecorder(broker: broker, filter: "bluejay/#")
        let (gateway, run) = try Self.startGateway(
            Self.gatewayConfiguration(
                peer, broker,
                body: """
                        poll:
                          - {service: 180D, characteristic: 2A38, every: 200ms}
                        write:
                          - {service: 180D, characteristic: 2A38}

                    """))
        let location = "bluejay/gw1/\(peer.address)/180D/2A38"
        #expect(await eventually { await recorder.payloads(location).count >= 1 })
        #expect(await recorder.payloads(location).allSatisfy { $0 == "01" })

        recorder.client.publish(location + "/set", Array("zz".utf8))
        recorder.client.publish("bluejay/gw1/\(peer.address)/180F/2A19/set", Array("05".utf8))
        #expect(await eventually { await recorder.payloads(gateway.topics.error).count == 2 })
        let errors = await recorder.payloads(gateway.topics.error)
        #expect(errors[0].contains("not hex") && errors[0].contains(location + "/set"), "\(errors)")
        #expect(errors[1].contains("not configured"), "\(errors)")
        // Nothing was written: polls after the refusals still read 01.
        let seen = await recorder.payloads(location).count
        #expect(await eventually { await recorder.payloads(location).count >= seen + 2 })
        #expect(await recorder.payloads(location).allSatisfy { $0 == "01" })

        // Home Assistant's view: the text entity, its state the polled value, its command
        // the /set topic, in hex its pattern lets through.
        let homeAssistant = try await MQTTRecorder(broker: broker, filter: "homeassistant/text/#")
        let textTopic =
            "homeassistant/text/bluejay_gw1_\(peer.address.uppercased().replacingOccurrences(of: ":", with: ""))_2A38_set/config"
        #expect(
            await eventually { await homeAssistant.messages.contains { $0.topic == textTopic && $0.retained } },
            "the text entity is announced")
        let text = try #require(await homeAssistant.messages.first { $0.topic == textTopic })
        await homeAssistant.close()
        let fields = try #require(try JSONSerialization.jsonObject(with: Data(text.payload)) as? [String: Any])
        let stateTopic = fields["state_topic"] as? String, pattern = fields["pattern"] as? String
        #expect(stateTopic == location && pattern == HomeAssistantDiscovery.hexPattern, "\(fields)")
        let command = try #require(fields["command_topic"] as? String)
        recorder.client.publish(command, Array("0x03".utf8))
        #expect(
            await eventually { await recorder.payloads(location).last == "03" },
            "the entity's command reached the peripheral")
        run.cancel()
        _ = await run.result
        await recorder.close()
    }

    /// The broker stops mid-stream and comes back: the values the gateway queued meanwhile
    /// reach the subscriber (its session kept by the broker), none lost, in order.
    @Test(.hangGuard) func brokerRestartLosesNoValue() async throws {
        let broker = try await MosquittoBroker(persistent: true)
        let peer = try await TestPeer(arguments: ["--heart-rate-on-subscribe"])
        defer { peer.stop() }
        let recorder = try await MQTTRecorder(
            broker: broker, filter: "bluejay/#", clientID: "restart-recorder", persistent: true)
        let (gateway, run) = try Self.startGateway(
            Self.gatewayConfiguration(
                peer, broker,
                body: """
                        subscribe:
                          - {service: 180D, characteristic: 2A37}

                    """))
        let values = "bluejay/gw1/\(peer.address)/\(Self.heartRateTopic)"
        #expect(await eventually { await recorder.payloads(values).count >= 2 })
        await broker.stop()
        // Values come on while the broker is away: they wait in the gateway's queue.
        #expect(
            await eventually { gateway.mqtt.snapshot().queueDepth >= 3 }, "values queued while the broker is down"
        )
        try await broker.restart()
        let queued = gateway.mqtt.snapshot()
        #expect(
            await eventually {
                let counters = gateway.mqtt.snapshot()
                return counters.queueDepth == 0 && counters.connected
            })
        #expect(await eventually { await Self.beats(recorder.payloads(values)).count >= 2 + queued.queueDepth + 1 })
        // QoS 1 may repeat a value; it may not lose one.
        var beats: [Int] = []
        for beat in Self.beats(await recorder.payloads(values)) where beats.last != beat && !beats.contains(beat) {
            beats.append(beat)
        }
        #expect(Self.consecutive(beats), "no value lost across the restart: \(beats)")
        let counters = gateway.mqtt.snapshot()
        #expect(counters.reconnects >= 1 && counters.dropped == 0)
        run.cancel()
        _ = await run.result
        await recorder.close()
    }

    /// A peripheral configured by its advertised name is found by a scan, connected and
    /// streamed under its address; its advertisements go to `…/adv` with their RSSI.
    @Test(.hangGuard) func gatewayFindsAPeripheralByNameAndForwardsItsAdvertisements() async throws {
        let broker = try await MosquittoBroker()
        let peer = try await TestPeer(arguments: ["--heart-rate-on-subscribe", "--rssi=-61"])
        defer { peer.stop() }
        let recorder = try await MQTTRecorder(broker: broker, filter: "bluejay/#")
        let (_, run) = try Self.startGateway(
            """
            gateway: gw1
            transport: \(peer.transport)
            broker: \(broker.url)
            advertisements: configured
            peripherals:
              - name: Bluejay HRM
                subscribe:
                  - {service: 180D, characteristic: 2A37}
            """)
        let root = "bluejay/gw1/\(peer.address)"
        #expect(
            await eventually { await recorder.payloads("\(root)/\(Self.heartRateTopic)").count >= 2 },
            "found by name, connected, streaming")
        #expect(await eventually { await !recorder.payloads("\(root)/adv").isEmpty })
        let advertisement = try #require(await recorder.payloads("\(root)/adv").first)
        let fields = try #require(try JSONSerialization.jsonObject(with: Data(advertisement.utf8)) as? [String: Any])
        let fieldsRSSI: Int? = fields["rssi"] as? Int
        let fieldsAddress: String? = fields["address"] as? String
        #expect(fieldsRSSI == -61 && fieldsAddress == peer.address, "\(advertisement)")
        run.cancel()
        _ = await run.result
        await recorder.close()
    }

    /// A broker that refuses us is named (CONNACK 5, not authorised), and tried again.
    @Test(.hangGuard) func aRefusingBrokerIsNamed() async throws {
        let broker = try await MosquittoBroker(anonymous: false)
        let client = MQTTClient(
            options: .init(
                broker: try BrokerAddress(broker.url), clientID: "refused", backoff: .milliseconds(50),
                backoffLimit: .milliseconds(100)), logger: Self.quietLogger)
        client.start()
        #expect(await eventually { client.snapshot().refusals >= 2 }, "refused, and tried again")
        let counters = client.snapshot()
        #expect(counters.lastRefusal?.contains("not authorised") == true, "\(String(describing: counters.lastRefusal))")
        #expect(!counters.connected)
        client.close()
    }

    /// `bluejay gateway` runs `bluejay-gateway`: a configuration error names its line and
    /// field (exit 78), a good one is checked.
    @Test(.hangGuard) func gatewayCommandChecksTheConfiguration() async throws {
        let directory = NSTemporaryDirectory() + "bluejay-gateway-cli-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let good = directory + "/good.yaml", bad = directory + "/bad.yaml"
        try """
        gateway: gw1
        transport: hci0
        broker: mqtt://127.0.0.1:1883
        peripherals:
          - address: C0:FF:EE:00:00:11/random
            poll:
              - {service: 180F, characteristic: 2A19, every: 60s}
        """.write(toFile: good, atomically: true, encoding: .utf8)
        try String(contentsOfFile: good, encoding: .utf8).replacingOccurrences(
            of: "every: 60s", with: "every: sometimes"
        )
        .write(toFile: bad, atomically: true, encoding: .utf8)
        let checked = try await runTool(Repository.bluejay.path, ["gateway", good, "--check"])
        #expect(checked.status == 0, "\(checked.error)")
        #expect(checked.output.contains("gateway gw1 on hci0, broker mqtt://127.0.0.1:1883"))
        let refused = try await runTool(Repository.bluejay.path, ["gateway", bad, "--check"])
        #expect(refused.status == 78)
        #expect(
            refused.error.contains("line 7: peripherals[0].poll[0].every: 'sometimes' is not a duration"),
            "\(refused.error)")
    }

    /// Runs `path` with `arguments` to its end: status, standard output and error.
    private func runTool(_ path: String, _ arguments: [String]) async throws -> (
        status: Int32, output: String, error: String
    ) {
        try await blocking {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: path)
            process.arguments = arguments
            let output = Pipe(), error = Pipe()
            process.standardOutput = output
            process.standardError = error
            try process.run()
            let out = output.fileHandleForReading.readDataToEndOfFile(),
                err = error.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (
                process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self)
            )
        }
    }
}
