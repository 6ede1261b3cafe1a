import Foundation
import Gateway
import HCITestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The gateway's own MQTT client against a real mosquitto: TLS with a broker's own authority
/// and with one not trusted, and the keepalive (MQTT 3.1.1, 3.1.2.10) both ways.
extension IntegrationTests {
    /// `mqtts://` to a TLS broker whose authority is the configured `ca_file`: values and
    /// retained messages go both ways over TLS, as over a plain port.
    @Test(.hangGuard) func mqttsCarriesValuesWithTheConfiguredAuthority() async throws {
        let broker = try await MosquittoBroker(tls: true)
        let lines = RecordedLines()
        var options = MQTTClient.Options(
            broker: try BrokerAddress("mqtts://127.0.0.1:\(broker.port)"), clientID: "tls-ok")
        options.caFile = broker.caFile
        let client = MQTTClient(options: options, logger: lines.logger("tls"))
        client.subscribe("tls/#")
        client.start()
        #expect(await eventually { client.snapshot().connected }, "\(lines.all)")
        client.setRetained("tls/status", Array("online".utf8))
        for index in 0..<500 { client.send("tls/value", Array("\(index)".utf8)) }
        var received: [String] = []
        var retained = false
        for await message in client.messages {
            if message.topic == "tls/status" {
                retained = true
            } else {
                received.append(String(decoding: message.payload, as: UTF8.self))
            }
            if retained, received.count == 500 { break }
        }
        #expect(received == (0..<500).map(String.init), "every value, in order")
        #expect(await eventually { client.snapshot().acknowledged == 500 })
        client.close()
    }

    /// A TLS broker whose certificate no trusted authority signed: the handshake fails on the
    /// certificate, named as such, not as a plain port.
    @Test(.hangGuard) func mqttsToAnUntrustedCertificateIsNamed() async throws {
        let broker = try await MosquittoBroker(tls: true)
        let lines = RecordedLines()
        let client = MQTTClient(
            options: .init(
                broker: try BrokerAddress("mqtts://127.0.0.1:\(broker.port)"), clientID: "tls-untrusted",
                keepAlive: .seconds(600), backoff: .seconds(5)),
            logger: lines.logger("tls"))
        client.start()
        let expected = "TLS handshake with 127.0.0.1:\(broker.port) failed (certificate verify failed"
        #expect(await eventually { lines.all.contains { $0.contains(expected) } }, "\(lines.all)")
        #expect(!lines.all.contains { $0.contains("plain MQTT port") }, "\(lines.all)")
        #expect(!client.snapshot().connected)
        client.close()
    }

    /// A connection with nothing to say sends PINGREQ within the keepalive, and the broker's
    /// PINGRESP keeps it up: the broker logs the pings, and no reconnection happens.
    @Test(.hangGuard) func anIdleConnectionPingsWithinTheKeepalive() async throws {
        let broker = try await MosquittoBroker()
        let lines = RecordedLines()
        let client = MQTTClient(
            options: .init(broker: try BrokerAddress(broker.url), clientID: "idle-pinger", keepAlive: .seconds(5)),
            logger: lines.logger("idle"))
        client.start()
        #expect(await eventually { client.snapshot().connected })
        #expect(await eventually { broker.log.components(separatedBy: "Received PINGREQ from idle-pinger").count > 2 })
        #expect(client.snapshot().connected && client.snapshot().reconnects == 0, "\(lines.all)")
        client.close()
    }

    /// A broker that stops answering (SIGSTOP) is given up when a PINGREQ has no answer by
    /// the keepalive's next look, and the client connects again once it answers (SIGCONT).
    @Test(.hangGuard) func aSilentBrokerIsGivenUpAfterAnUnansweredPing() async throws {
        let broker = try await MosquittoBroker()
        let lines = RecordedLines()
        let client = MQTTClient(
            options: .init(
                broker: try BrokerAddress(broker.url), clientID: "ping-unanswered", keepAlive: .seconds(5),
                backoff: .milliseconds(200), backoffLimit: .milliseconds(400)),
            logger: lines.logger("silent"))
        client.start()
        #expect(await eventually { client.snapshot().connected })
        broker.pause()
        let expected = "did not answer a PINGREQ within 2.5 seconds"
        #expect(await eventually { lines.all.contains { $0.contains(expected) } }, "\(lines.all)")
        #expect(!client.snapshot().connected)
        broker.resume()
        #expect(await eventually { client.snapshot().connected && client.snapshot().reconnects == 1 }, "\(lines.all)")
        client.close()
    }
}
