import Bluejay
import Testing
@testable import Gateway

/// The configuration file: the issue's example is read as written, and every mistake is
/// refused with its line and field.
struct ConfigurationTests {
    static let example = """
        gateway: gw1                      # id, used in topics
        transport: hci0                   # any transport string
        broker: mqtt://127.0.0.1:1883     # mqtts:// for TLS; username/password keys too
        prefix: bluejay
        peripherals:
          - address: C0:FF:EE:00:00:11/random     # or name: / service: to match advertisements
            subscribe:
              - {service: 180D, characteristic: 2A37}
            poll:
              - {service: 180F, characteristic: 2A19, every: 60s}
        """

    @Test func theIssuesExampleIsReadAsWritten() throws {
        let configuration = try GatewayConfiguration(yaml: Self.example)
        #expect(configuration.gateway == "gw1")
        #expect(configuration.transport == "hci0")
        let broker = try BrokerAddress("mqtt://127.0.0.1:1883")
        #expect(configuration.broker == broker)
        #expect(configuration.broker.port == 1883 && !configuration.broker.tls)
        #expect(configuration.prefix == "bluejay")
        #expect(configuration.peripherals.count == 1)
        let peripheral = configuration.peripherals[0]
        let identifier = try PeripheralIdentifier("C0:FF:EE:00:00:11/random")
        #expect(peripheral.match == .address(identifier))
        #expect(peripheral.subscribe.map(\.topicPath) == ["180D/2A37"])
        #expect(peripheral.poll.map(\.topicPath) == ["180F/2A19"])
        #expect(peripheral.poll[0].every == .seconds(60))
        #expect(peripheral.policy == ConnectionPolicy())
        #expect(configuration.homeAssistantPrefix == "homeassistant")
        #expect(configuration.advertisements == .off)
    }

    @Test func everyOtherKey() throws {
        let configuration = try GatewayConfiguration(
            yaml: """
                gateway: kitchen
                transport: tcp:127.0.0.1:9000
                broker: mqtts://broker.example:8884
                username: gw
                password: "s3cret"
                prefix: home
                keepalive: 10s
                queue: 500
                broker_backoff: 250ms
                broker_backoff_max: 5s
                retries: 2
                backoff: 2s
                connection_timeout: 3s
                advertisements: all
                homeassistant: off
                stats_every: 5m
                peripherals:
                  - name: Bluejay HRM 2
                    retries: 9
                    write:
                      - {service: B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A00, characteristic: b1e70005-9d3b-4c7a-8a5e-6f2d0c1b0a00, write: command}
                  - service: 181a
                    poll:
                      - {service: 181a, characteristic: 2a6e, every: 1.5}
                """)
        #expect(
            configuration.broker.tls && configuration.broker.port == 8884
                && configuration.broker.host == "broker.example")
        #expect(configuration.username == "gw" && configuration.password == "s3cret")
        #expect(
            !configuration.description.contains("s3cret") && configuration.description.contains("(password set)"),
            "no secret in logs")
        #expect(configuration.keepAlive == .seconds(10) && configuration.queueLimit == 500)
        #expect(configuration.brokerBackoff == .milliseconds(250) && configuration.brokerBackoffLimit == .seconds(5))
        #expect(
            configuration.advertisements == .all && configuration.homeAssistantPrefix == nil
                && configuration.statsInterval == .seconds(300))
        #expect(configuration.peripherals[0].match == .name("Bluejay HRM 2"))
        #expect(
            configuration.peripherals[0].policy.retries == 9
                && configuration.peripherals[0].policy.backoff == .seconds(2))
        #expect(
            configuration.peripherals[1].policy.retries == 2
                && configuration.peripherals[1].policy.connectionTimeout == .seconds(3))
        // UUIDs keep their spelling, upper case, in topics.
        #expect(
            configuration.peripherals[0].write[0].topicPath
                == "B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A00/B1E70005-9D3B-4C7A-8A5E-6F2D0C1B0A00")
        #expect(configuration.peripherals[0].write[0].writeWithoutResponse)
        #expect(configuration.peripherals[1].match == .service(BluetoothUUID(UInt16(0x181A))))
        #expect(
            configuration.peripherals[1].poll[0].topicPath == "181A/2A6E"
                && configuration.peripherals[1].poll[0].every == .milliseconds(1500))
    }

    /// Each mistake names its line and field.
    @Test(arguments: [
        (
            "gateway: gw1\ntransport: hci0\nbroker: mqtt://h\nperipherals:\n  - address: C0:FF:EE:00:00:11\n    poll:\n      - {service: 180F, characteristic: 2A19, every: soon}\n",
            "line 7: peripherals[0].poll[0].every: 'soon' is not a duration"
        ),
        (
            "gateway: gw1\ntransport: hci0\nbroker: http://h\nperipherals:\n  - address: C0:FF:EE:00:00:11\n",
            "line 3: broker: 'http://h' is not mqtt://"
        ),
        (
            "transport: hci0\nbroker: mqtt://h\nperipherals:\n  - address: C0:FF:EE:00:00:11\n",
            "line 1: gateway: missing"
        ),
        (
            "gateway: gw/1\ntransport: hci0\nbroker: mqtt://h\nperipherals:\n  - address: C0:FF:EE:00:00:11\n",
            "line 1: gateway: 'gw/1' is not one topic level"
        ),
        (
            "gateway: gw1\ntransport: hci0\nbroker: mqtt://h\nperipherals:\n  - address: C0:FF:EE:00:00:11\n    subscribe:\n      - {service: 180D, charcteristic: 2A37}\n",
            "line 7: peripherals[0].subscribe[0].characteristic: missing"
        ),
        (
            "gateway: gw1\ntransport: hci0\nbroker: mqtt://h\nperipherals:\n  - address: C0:FF:EE:00:00:11\n    subscribe:\n      - {service: 180D, characteristic: 2A37, colour: red}\n",
            "line 7: peripherals[0].subscribe[0].colour: unknown key"
        ),
        (
            "gateway: gw1\ntransport: hci0\nbroker: mqtt://h\nperipherals:\n  - address: nowhere\n",
            "line 5: peripherals[0].address: 'nowhere' is not ADDRESS"
        ),
        (
            "gateway: gw1\ntransport: hci0\nbroker: mqtt://h\nperipherals:\n  - address: C0:FF:EE:00:00:11\n    name: x\n",
            "line 5: peripherals[0]: give exactly one of address:, name: or service:"
        ),
        (
            "gateway: gw1\ntransport: hci0\nbroker: mqtt://h\nqueue: -3\nperipherals:\n  - address: C0:FF:EE:00:00:11\n",
            "line 4: queue: '-3' is not a whole number"
        ),
        (
            "gateway: gw1\ntransport: hci0\nbroker: mqtt://h:99999\nperipherals:\n  - address: C0:FF:EE:00:00:11\n",
            "line 3: broker: 'mqtt://h:99999': bad port"
        ),
        (
            "gateway: gw1\ntransport: hci0\nbroker: mqtt://h\nperipherals: []\n",
            "line 4: peripherals: empty"
        ),
        (
            "gateway: gw1\ntransport: hci0\nbroker: mqtt://h\nperipherals:\n  - address: C0:FF:EE:00:00:11\n  - address: C0:FF:EE:00:00:11/public\n",
            "line 6: peripherals[1]: address C0:FF:EE:00:00:11 is already peripherals[0]"
        ),
        (
            "gateway: gw1\ntransport: hci0\nbroker: [mqtt://h\n",
            "line 4: not YAML: did not find expected ',' or ']'"
        ),
        (
            "gateway: gw1\ntransport: bogus:xyz\nbroker: mqtt://h\nperipherals:\n  - address: C0:FF:EE:00:00:11\n",
            "line 2: transport: unknown transport 'bogus:xyz'"
        ),
        (
            "gateway: gw1\ntransport: hci0\nbroker: mqtt://h\nperipherals:\n  - address: C0:FF:EE:00:00:11\n    subscribe:\n      - {service: 180D, characteristic: 2A37-0000}\n",
            "line 7: peripherals[0].subscribe[0].characteristic: '2A37-0000' is not a UUID"
        ),
    ])
    func mistakesNameTheLineAndTheField(yaml: String, expected: String) {
        #expect(throws: ConfigurationError.self) { try GatewayConfiguration(yaml: yaml) }
        do { _ = try GatewayConfiguration(yaml: yaml) } catch {
            #expect(error.description.hasPrefix(expected), "got: \(error)")
        }
    }

    /// Every spelling of one UUID is one topic level (and so one Home Assistant entity):
    /// `0x2a37` once published on `…/0X2A37` beside `…/2A37`.
    @Test func uuidSpellingsAreOneTopic() throws {
        for (service, characteristic) in [
            ("180D", "2A37"), ("0x180d", "0x2a37"), ("0000180D", "00002a37"),
            ("0000180D-0000-1000-8000-00805F9B34FB", "00002A37-0000-1000-8000-00805f9b34fb"),
        ] {
            let yaml =
                "gateway: gw1\ntransport: hci0\nbroker: mqtt://h\nperipherals:\n  - address: C0:FF:EE:00:00:11\n"
                + "    subscribe:\n      - {service: \(service), characteristic: \(characteristic)}\n"
            #expect(
                try GatewayConfiguration(yaml: yaml).peripherals[0].subscribe.map(\.topicPath) == ["180D/2A37"],
                "\(service) \(characteristic)")
        }
    }

    @Test func brokerAddresses() throws {
        #expect(try BrokerAddress("mqtt://localhost").description == "mqtt://localhost:1883")
        #expect(try BrokerAddress("mqtts://10.0.0.1").port == 8883)
        #expect(try BrokerAddress("mqtt://[::1]:1884").description == "mqtt://[::1]:1884")
        #expect(throws: FieldError.self) { try BrokerAddress("mqtt://user:pw@host") }
        #expect(throws: FieldError.self) { try BrokerAddress("mqtt://") }
    }
}

/// Topics as the issue spells them; hex both ways; the SIG decoders.
struct TopicAndValueTests {
    static let rule = try! GatewayConfiguration(yaml: ConfigurationTests.example).peripherals[0].subscribe[0]

    @Test func topicsAreTheContract() throws {
        let topics = Topics(prefix: "bluejay", gateway: "gw1")
        let address = try #require(BluetoothAddress("c0:ff:ee:00:00:11"))
        #expect(topics.value(address, Self.rule) == "bluejay/gw1/C0:FF:EE:00:00:11/180D/2A37")
        #expect(topics.json(address, Self.rule) == "bluejay/gw1/C0:FF:EE:00:00:11/180D/2A37/json")
        #expect(topics.set(address, Self.rule) == "bluejay/gw1/C0:FF:EE:00:00:11/180D/2A37/set")
        #expect(topics.advertisement(address) == "bluejay/gw1/C0:FF:EE:00:00:11/adv")
        #expect(topics.status(address) == "bluejay/gw1/C0:FF:EE:00:00:11/status")
        #expect(topics.status == "bluejay/gw1/status")
        #expect(topics.setFilter == "bluejay/gw1/+/+/+/set")
        #expect(topics.parseSet("bluejay/gw1/C0:FF:EE:00:00:11/180D/2A37/set")! == ("C0:FF:EE:00:00:11", "180D/2A37"))
        #expect(topics.parseSet("bluejay/gw2/C0:FF:EE:00:00:11/180D/2A37/set") == nil)
        #expect(topics.parseSet("bluejay/gw1/C0:FF:EE:00:00:11/180D/2A37") == nil)
    }

    /// A fleet's topics: the leases under `PREFIX/lease/`, the gateways' statuses.
    @Test func fleetTopicsAreTheContract() {
        let topics = Topics(prefix: "bluejay", gateway: "gw1")
        #expect(topics.lease("C0:FF:EE:00:00:11") == "bluejay/lease/C0:FF:EE:00:00:11")
        #expect(topics.leaseFilter == "bluejay/lease/+" && topics.gatewayStatusFilter == "bluejay/+/status")
        #expect(topics.parseLease("bluejay/lease/C0:FF:EE:00:00:11") == "C0:FF:EE:00:00:11")
        #expect(topics.parseLease("bluejay/lease/") == nil && topics.parseLease("home/lease/C0:FF:EE:00:00:11") == nil)
        #expect(topics.parseGatewayStatus("bluejay/gw3/status") == "gw3")
        #expect(topics.parseGatewayStatus("bluejay/gw3/C0:FF:EE:00:00:11/status") == nil, "a peripheral's availability")
        #expect(topics.parseGatewayStatus("bluejay/lease/status") == nil)
    }

    @Test func fleetKey() throws {
        let base =
            "gateway: gw1\ntransport: hci0\nbroker: mqtt://127.0.0.1\nperipherals:\n  - address: C0:FF:EE:00:00:11/random\n"
        #expect(try GatewayConfiguration(yaml: base).fleet == false)
        #expect(try GatewayConfiguration(yaml: base + "fleet: on\n").fleet)
        #expect(try GatewayConfiguration(yaml: base + "fleet: on\n").description.hasSuffix("in a fleet"))
        #expect(throws: ConfigurationError.self) { try GatewayConfiguration(yaml: base + "fleet: maybe\n") }
        #expect(throws: ConfigurationError.self) {
            try GatewayConfiguration(yaml: base.replacingOccurrences(of: "gw1", with: "lease") + "fleet: on\n")
        }
    }

    /// `max_links:` (issue 52 item 9): a fleet's bound on what a gateway bids for; absent,
    /// the controller's limit (learned); meaningless, so refused, outside a fleet.
    @Test func maxLinksKey() throws {
        let base =
            "gateway: gw1\ntransport: hci0\nbroker: mqtt://127.0.0.1\nperipherals:\n  - address: C0:FF:EE:00:00:11/random\nfleet: on\n"
        #expect(try GatewayConfiguration(yaml: base).maxLinks == nil)
        let bounded = try GatewayConfiguration(yaml: base + "max_links: 7\n")
        #expect(bounded.maxLinks == 7)
        #expect(bounded.description.hasSuffix("in a fleet (at most 7 links)"))
        for bad in ["0", "-1", "many", "1001"] {
            #expect(throws: ConfigurationError.self) { try GatewayConfiguration(yaml: base + "max_links: \(bad)\n") }
        }
        #expect(throws: ConfigurationError.self) {
            try GatewayConfiguration(yaml: base.replacingOccurrences(of: "fleet: on\n", with: "") + "max_links: 7\n")
        }
    }

    @Test func hex() {
        #expect(Hex.encode([0x00, 0x3C, 0xAB]) == "003cab")
        #expect(Hex.decode("003CAB") == [0x00, 0x3C, 0xAB])
        #expect(Hex.decode("0x01 02:03") == [1, 2, 3])
        #expect(Hex.decode("") == nil)
        #expect(Hex.decode("abc") == nil)
        #expect(Hex.decode("zz") == nil)
    }

    @Test func sigCharacteristicsDecode() {
        #expect(JSONText.encode(KnownCharacteristic.batteryLevel.decode([87])!) == #"{"battery_level":87}"#)
        #expect(KnownCharacteristic.batteryLevel.decode([101]) == nil)
        #expect(JSONText.encode(KnownCharacteristic.heartRate.decode([0x00, 60])!) == #"{"heart_rate":60}"#)
        // uint16 value, contact detected, energy 0x0102, one RR-interval of 1024/1024 s.
        #expect(
            JSONText.encode(KnownCharacteristic.heartRate.decode([0x1F, 0x2C, 0x01, 0x02, 0x01, 0x00, 0x04])!)
                == #"{"energy_expended":258,"heart_rate":300,"rr_intervals":[1],"sensor_contact":true}"#)
        #expect(KnownCharacteristic.heartRate.decode([0x01, 60]) == nil)
        #expect(JSONText.encode(KnownCharacteristic.temperature.decode([0x66, 0x08])!) == #"{"temperature":21.5}"#)
        #expect(JSONText.encode(KnownCharacteristic.temperature.decode([0x00, 0x80])!) == #"{"temperature":null}"#)
        #expect(JSONText.encode(KnownCharacteristic.humidity.decode([0x10, 0x27])!) == #"{"humidity":100}"#)
        #expect(KnownCharacteristic(BluetoothUUID(UInt16(0x2A6F))) == .humidity)
        #expect(KnownCharacteristic(BluetoothUUID(UInt16(0x2A38))) == nil)
    }
}

/// The outbox's bounds and its order across a lost connection.
struct OutboxTests {
    static func message(_ index: Int) -> Outbox.Message { Outbox.Message(topic: "t", payload: [UInt8(index)], qos: 1) }

    /// Takes what the window allows, numbers it from `id` on; the payloads taken.
    static func send(_ outbox: inout Outbox, from id: Int32) -> [UInt8] {
        var next = id
        var taken: [UInt8] = []
        while let (message, _) = outbox.next(numbered: {
            defer { next += 1 }; return next
        }) {
            taken.append(message.payload[0])
        }
        return taken
    }

    /// Sends and acknowledges everything left, a window at a time; the payloads in the order sent.
    static func drain(_ outbox: inout Outbox, firstID: Int32) -> [UInt8] {
        var order: [UInt8] = []
        var id = firstID
        while case let sent = send(&outbox, from: id), !sent.isEmpty {
            order += sent
            for _ in sent {
                outbox.acknowledged(id: id)
                id += 1
            }
        }
        return order
    }

    @Test func unacknowledgedValuesGoBackInFrontInOrder() {
        var outbox = Outbox(limit: 10, window: 2)
        for index in 0..<5 { outbox.append(Self.message(index)) }
        let sent = Self.send(&outbox, from: 1), none = Self.send(&outbox, from: 3)
        #expect(sent == [0, 1] && none.isEmpty, "the window is full")
        let first = outbox.acknowledged(id: 1), again = outbox.acknowledged(id: 1)
        #expect(first && !again)
        let next = Self.send(&outbox, from: 3)
        #expect(next == [2])
        outbox.connectionLost()
        #expect(Self.drain(&outbox, firstID: 10) == [1, 2, 3, 4])
        #expect(outbox.depth == 0 && outbox.dropped == 0)
    }

    @Test func aFullQueueDropsTheOldestWaiting() {
        var outbox = Outbox(limit: 3, window: 1)
        for index in 0..<3 { outbox.append(Self.message(index)) }
        let sent = Self.send(&outbox, from: 1)
        #expect(sent == [0])
        outbox.append(Self.message(3))
        #expect(outbox.depth == 3 && outbox.dropped == 1)
        outbox.acknowledged(id: 1)
        #expect(Self.drain(&outbox, firstID: 2) == [2, 3], "0 went out, 1 was dropped for 3")
    }

    /// A QoS 0 message takes no room in the window and waits for no acknowledgement: a
    /// lost connection sends it no second time.
    @Test func qos0MessagesAreDoneOnceSent() {
        var outbox = Outbox(limit: 10, window: 1)
        outbox.append(Self.message(0))
        outbox.append(Outbox.Message(topic: "t", payload: [1], qos: 0))
        outbox.append(Outbox.Message(topic: "t", payload: [2], qos: 0))
        outbox.append(Self.message(3))
        let first = outbox.next { 5 }
        #expect(first?.id == 5 && first?.message.payload == [0])
        #expect(outbox.next { 6 } == nil, "the window is full")
        outbox.acknowledged(id: 5)
        let second = outbox.next { 6 }, third = outbox.next { 7 }
        #expect(second?.id == nil && second?.message.payload == [1])
        #expect(third?.id == nil && third?.message.payload == [2])
        let fourth = outbox.next { 8 }
        #expect(fourth?.id == 8 && outbox.inFlightCount == 1)
        outbox.connectionLost()
        #expect(Self.drain(&outbox, firstID: 10) == [3], "the QoS 0 messages are not sent again")
    }
}
