import Bluejay
import Foundation
import Gateway
import HCITestSupport
import Testing

/// A gateway started with a configuration that no longer has something an earlier run
/// announced to Home Assistant deletes that configuration (an empty retained message), and
/// nothing else. Against mosquitto alone: the gateway runs on a mock controller.
extension IntegrationTests {
    @Test(.hangGuard) func aRestartWithoutAPeripheralOrAWriteDeletesTheirDiscovery() async throws {
        let broker = try await MosquittoBroker()
        func configuration(_ peripherals: String) -> String {
            """
            gateway: gw1
            transport: \(Self.mockTransport)
            broker: \(broker.url)
            peripherals:
            \(peripherals)
            """
        }
        let kept = "homeassistant/sensor/bluejay_gw1_C0FFEE000011_2A19/config"
        let writeRemoved = "homeassistant/text/bluejay_gw1_C0FFEE000011_2A39_set/config"
        let peripheralRemoved = "homeassistant/sensor/bluejay_gw1_C0FFEE000022_2A37/config"
        // Run A: two peripherals, the first polled and written.
        let (_, runA) = try Self.startGateway(
            configuration(
                """
                  - address: C0:FF:EE:00:00:11/random
                    poll:
                      - {service: 180F, characteristic: 2A19, every: 60s}
                    write:
                      - {service: 180D, characteristic: 2A39}
                  - address: C0:FF:EE:00:00:22/random
                    subscribe:
                      - {service: 180D, characteristic: 2A37}
                """))
        let firstLook = try await MQTTRecorder(broker: broker, filter: "homeassistant/#")
        for topic in [kept, writeRemoved, peripheralRemoved] {
            #expect(
                await eventually { await firstLook.messages.contains { $0.topic == topic && !$0.payload.isEmpty } },
                "run A announces \(topic)")
        }
        await firstLook.close()
        runA.cancel()
        _ = await runA.result

        // Beside them: what this gateway's decoder announced, and another gateway's (whose
        // object ids start `bluejay_gw1_` too); neither is run B's to delete.
        let decoded = "homeassistant/sensor/bluejay_gw1_A4C138000001_temperature/config"
        let otherGateway = "homeassistant/sensor/bluejay_gw1_x_C0FFEE000022_2A37/config"
        let others = try await MQTTRecorder(broker: broker, filter: "bluejay/#")
        #expect(await eventually { others.client.snapshot().connected })
        others.client.setRetained(
            decoded, Array(#"{"device":{"identifiers":["bluejay_A4C138000001"],"via_device":"bluejay_gw1"}}"#.utf8))
        others.client.setRetained(
            otherGateway,
            Array(#"{"device":{"identifiers":["bluejay_C0FFEE000022"],"via_device":"bluejay_gw1_x"}}"#.utf8))
        #expect(await others.client.flushRetained(within: hangGuardWait))
        await others.close()

        // Run B: the write and the second peripheral gone.
        let recorder = try await MQTTRecorder(broker: broker, filter: "#")
        let (gateway, runB) = try Self.startGateway(
            configuration(
                """
                  - address: C0:FF:EE:00:00:11/random
                    poll:
                      - {service: 180F, characteristic: 2A19, every: 60s}
                """))
        func deleted(_ topic: String) async -> Bool {
            await recorder.messages.contains { $0.topic == topic && $0.payload.isEmpty }
        }
        for topic in [writeRemoved, peripheralRemoved] {
            #expect(await eventually { await deleted(topic) }, "\(topic) deleted")
        }
        // The gateway reads its messages in order, and the broker sent the replay before this
        // /set: once it is refused, every replayed configuration has been looked at.
        recorder.client.publish("bluejay/gw1/C0:FF:EE:00:00:99/180D/2A39/set", Array("01".utf8))
        #expect(await eventually { await !recorder.payloads(gateway.topics.error).isEmpty })
        for topic in [kept, decoded, otherGateway, "homeassistant/binary_sensor/bluejay_gw1_status/config"] {
            #expect(await !deleted(topic), "\(topic) kept")
        }
        // What Home Assistant, subscribing now, is given.
        let late = try await MQTTRecorder(broker: broker, filter: "homeassistant/#")
        for topic in [kept, decoded, otherGateway] {
            #expect(
                await eventually { await late.messages.contains { $0.topic == topic && $0.retained } },
                "\(topic) retained")
        }
        let retained = Set(await late.messages.filter(\.retained).map(\.topic))
        #expect(!retained.contains(writeRemoved) && !retained.contains(peripheralRemoved), "\(retained)")
        runB.cancel()
        _ = await runB.result
        await late.close()
        await recorder.close()
    }
}
