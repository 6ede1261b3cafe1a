import Bluejay
import Foundation
import HCI
import Logging
import Yams

/// The gateway's configuration file (docs/Gateway.md): what it connects to, where it
/// publishes, and which characteristics of which peripherals it streams, polls and writes.
/// The keys are a contract scripts rely on; a file with an unknown key, a wrong type or a
/// bad value is refused with the line and the field named.
public struct GatewayConfiguration: Sendable, Equatable {
    /// The gateway's id (`gateway:`), the second level of every topic.
    public var gateway: String
    /// The controller: any transport string `bluejay` takes (`hci0`, `tcp:HOST:PORT`, …).
    public var transport: String
    /// The broker (`broker:`).
    public var broker: BrokerAddress
    /// `username:` and `password:` for the broker; the password never reaches a log.
    public var username: String?
    /// See ``username``.
    public var password: String?
    /// `ca_file:`: the certificate authorities (PEM) trusted for `mqtts://`, in place of the
    /// system's.
    public var caFile: String?
    /// The first level of every topic (`prefix:`, default `bluejay`).
    public var prefix: String
    /// MQTT keepalive (`keepalive:`, default 30 s).
    public var keepAlive: Duration
    /// How many values wait for the broker at most (`queue:`, default 10000); past it the
    /// oldest are dropped, and counted.
    public var queueLimit: Int
    /// Broker reconnection: the first wait (`broker_backoff:`, default 1 s), doubled after
    /// each failure up to ``brokerBackoffLimit`` (`broker_backoff_max:`, default 30 s).
    public var brokerBackoff: Duration
    /// See ``brokerBackoff``.
    public var brokerBackoffLimit: Duration
    /// The connection policy of every peripheral (`retries:`, `backoff:`,
    /// `connection_timeout:`), which a peripheral's own keys override.
    public var policy: ConnectionPolicy
    /// Advertisements forwarded to `…/ADDRESS/adv` (`advertisements:`): none, those of the
    /// configured peripherals, or all seen.
    public var advertisements: AdvertisementForwarding
    /// Home Assistant MQTT discovery (`homeassistant:`): the discovery prefix, or nil when off.
    public var homeAssistantPrefix: String?
    /// How often the counters are published to `PREFIX/GATEWAY/stats` (`stats_every:`, default 60 s).
    public var statsInterval: Duration
    /// The peripherals (`peripherals:`).
    public var peripherals: [PeripheralRule]
    /// Fleet mode (`fleet: on`, default off): this gateway connects a peripheral only while it
    /// holds its lease at `PREFIX/lease/ADDRESS`, shared with the other gateways of the fleet
    /// through the broker (docs/Gateway.md, "Fleets").
    public var fleet: Bool
    /// In a fleet, the most peripherals this gateway bids for and carries at once
    /// (`max_links:`); nil: the controller's own limit, learned when it first refuses a link
    /// for want of room (HCI has no command that tells it beforehand).
    public var maxLinks: Int?
    /// `metrics: HOST:PORT` (default none): the counters for Prometheus at `GET /metrics`.
    public var metrics: MetricsAddress?
    /// The least severe log lines written (`log_level:` `debug`, `info`, `notice`, `warning` or
    /// `error`; default `info`); `--verbose` makes it `debug` (``logLevel(verbose:)``).
    public var logLevel: Logger.Level
    /// Active or passive scanning (`scan:`, default `active`).
    public var scanMode: ScanMode
    /// The decoded advertisements (`decode:`, `rate_limit:`, `keys:`).
    public var decoding: AdvertisementDecoding
    /// The devices whose presence is tracked (`presence:`, `away_after:`, `irks:`).
    public var presence: PresenceTracking

    /// Reads and checks the file at `path`.
    public init(contentsOf path: String) throws(ConfigurationError) {
        let text: String
        do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
            throw ConfigurationError(
                line: nil, field: nil, message: "cannot read \(path): \(error.localizedDescription)")
        }
        try self.init(yaml: text)
    }

    /// Parses and checks a configuration.
    public init(yaml: String) throws(ConfigurationError) {
        let root: Node?
        do { root = try Yams.compose(yaml: yaml) } catch let error as YamlError {
            throw ConfigurationError(yaml: error)
        } catch {
            throw ConfigurationError(line: nil, field: nil, message: "\(error)")
        }
        guard let root else { throw ConfigurationError(line: nil, field: nil, message: "the file is empty") }
        let top = try Fields(root, path: "")
        gateway = try top.required("gateway", TopicLevel.make)
        transport = try top.required("transport", Fields.transport)
        broker = try top.required("broker", BrokerAddress.init)
        username = try top.optional("username", Fields.nonEmpty)
        password = try top.optional("password", { $0 })
        caFile = try top.optional("ca_file", Fields.nonEmpty)
        prefix = try top.optional("prefix", TopicLevel.make) ?? "bluejay"
        keepAlive = try top.optional("keepalive", Fields.duration) ?? .seconds(30)
        queueLimit = try top.optional("queue", Fields.count(1...10_000_000)) ?? 10_000
        brokerBackoff = try top.optional("broker_backoff", Fields.duration) ?? .seconds(1)
        brokerBackoffLimit = try top.optional("broker_backoff_max", Fields.duration) ?? .seconds(30)
        policy = try ConnectionPolicy(top, base: ConnectionPolicy())
        advertisements = try top.optional("advertisements", AdvertisementForwarding.init) ?? .off
        homeAssistantPrefix = try top.optional("homeassistant", Fields.homeAssistant) ?? "homeassistant"
        statsInterval = try top.optional("stats_every", Fields.duration) ?? .seconds(60)
        fleet = try top.optional("fleet", Fields.onOff) ?? false
        maxLinks = try top.optional("max_links", Fields.count(1...1000))
        metrics = try top.optional("metrics", MetricsAddress.init)
        logLevel = try top.optional("log_level", Fields.logLevel) ?? .info
        scanMode = try top.optional("scan", ScanMode.init) ?? .active
        decoding = try AdvertisementDecoding(top)
        presence = try PresenceTracking(top)
        if fleet, gateway == Topics.leaseLevel {
            throw ConfigurationError(
                line: top.line, field: "gateway",
                message: "'\(Topics.leaseLevel)' is the fleet's lease topic level; choose another id")
        }
        if maxLinks != nil, !fleet {
            // Outside a fleet every configured peripheral is connected: the key would be ignored.
            throw ConfigurationError(
                line: top.line, field: "max_links", message: "max_links applies to a fleet (fleet: on)")
        }
        let policy = policy
        peripherals = try top.requiredList("peripherals") { node, path throws(ConfigurationError) in
            try PeripheralRule(try Fields(node, path: path), base: policy)
        }
        try top.rejectUnknown(
            Set([
                "gateway", "transport", "broker", "username", "password", "ca_file", "prefix", "keepalive", "queue",
                "broker_backoff",
                "broker_backoff_max", "retries", "backoff", "connection_timeout", "advertisements", "homeassistant",
                "stats_every", "peripherals", "fleet", "max_links", "metrics", "log_level", "scan",
            ])
            .union(AdvertisementDecoding.keysRead).union(PresenceTracking.keysRead))
        var seen: [String: Int] = [:]
        for (index, rule) in peripherals.enumerated() {
            if let previous = seen[rule.match.description] {
                throw ConfigurationError(
                    line: rule.line, field: "peripherals[\(index)]",
                    message: "\(rule.match) is already peripherals[\(previous)]")
            }
            seen[rule.match.description] = index
        }
    }
}

extension GatewayConfiguration {
    /// The level the gateway logs at: `debug` with `--verbose`, whatever `log_level:` says.
    public func logLevel(verbose: Bool) -> Logger.Level { verbose ? .debug : logLevel }
}

extension GatewayConfiguration: CustomStringConvertible {
    /// In short, for logs; the password and the keys are never in it.
    public var description: String {
        "gateway \(gateway) on \(transport), broker \(broker)\(username.map { " as \($0)" } ?? "")\(password == nil ? "" : " (password set)"), "
            + "prefix \(prefix), \(peripherals.count) peripheral(s)"
            + (decoding.enabled
                ? ", decoding advertisements (\(scanMode.rawValue) scan, rate limit \(decoding.rateLimit.map { "\($0)" } ?? "off"), "
                    + "\(decoding.keys.count) key(s))" : "")
            + (fleet ? ", in a fleet" + (maxLinks.map { " (at most \($0) links)" } ?? "") : "")
    }
}

/// Where the broker is: `mqtt://HOST[:PORT]` (1883) or `mqtts://HOST[:PORT]` (8883, TLS).
public struct BrokerAddress: Sendable, Equatable, CustomStringConvertible {
    /// The host name or address.
    public var host: String
    /// The TCP port.
    public var port: Int
    /// `mqtts://`: TLS, verified against the system's certificate authorities.
    public var tls: Bool

    /// Parses `mqtt://HOST[:PORT]` or `mqtts://HOST[:PORT]`.
    public init(_ text: String) throws(FieldError) {
        let scheme: String
        if text.hasPrefix("mqtt://") {
            scheme = "mqtt"
        } else if text.hasPrefix("mqtts://") {
            scheme = "mqtts"
        } else {
            throw FieldError("'\(text)' is not mqtt://HOST[:PORT] or mqtts://HOST[:PORT]")
        }
        tls = scheme == "mqtts"
        var rest = Substring(text.dropFirst(scheme.count + 3))
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        var host = String(rest), port = tls ? 8883 : 1883
        if rest.hasPrefix("[") {
            // [IPv6]:PORT
            guard let close = rest.firstIndex(of: "]") else {
                throw FieldError("'\(text)': no ] after the IPv6 address")
            }
            host = String(rest[rest.index(after: rest.startIndex)..<close])
            let tail = rest[rest.index(after: close)...]
            if !tail.isEmpty {
                guard tail.hasPrefix(":"), let value = Int(tail.dropFirst()), (1...65535).contains(value) else {
                    throw FieldError("'\(text)': bad port")
                }
                port = value
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = String(rest[..<colon])
            guard let value = Int(rest[rest.index(after: colon)...]), (1...65535).contains(value) else {
                throw FieldError("'\(text)': bad port")
            }
            port = value
        }
        guard !host.isEmpty, !host.contains("/"), !host.contains("@") else {
            throw FieldError("'\(text)': no host (credentials go in username: and password:)")
        }
        self.host = host
        self.port = port
    }

    /// `mqtt://HOST:PORT`.
    public var description: String { "\(tls ? "mqtts" : "mqtt")://\(host.contains(":") ? "[\(host)]" : host):\(port)" }
}

/// Where the Prometheus endpoint listens: `127.0.0.1:9464` (an IPv4 address and a port).
public struct MetricsAddress: Sendable, Equatable, CustomStringConvertible {
    /// The IPv4 address.
    public var host: String
    /// The TCP port.
    public var port: Int

    /// Parses `HOST:PORT`.
    public init(_ text: String) throws(FieldError) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (1...65535).contains(port)
        else {
            throw FieldError("'\(text)' is not HOST:PORT, e.g. 127.0.0.1:9464")
        }
        let host = String(text[..<colon])
        guard host.split(separator: ".").count == 4, host.split(separator: ".").allSatisfy({ UInt8($0) != nil }) else {
            throw FieldError("'\(host)' is not an IPv4 address such as 127.0.0.1")
        }
        self.host = host
        self.port = port
    }

    /// `HOST:PORT`.
    public var description: String { "\(host):\(port)" }
}

/// A peripheral's connection policy: `retries` connection attempts after a timeout and
/// reconnections after a drop, the first after `backoff`, then doubling (Central's rule, at
/// most 30 s).
public struct ConnectionPolicy: Sendable, Equatable {
    /// `retries:` (default 5).
    public var retries = 5
    /// `backoff:` (default 1 s).
    public var backoff: Duration = .seconds(1)
    /// `connection_timeout:` (default 10 s).
    public var connectionTimeout: Duration = .seconds(10)

    /// The defaults.
    public init() {}

    init(_ fields: Fields, base: ConnectionPolicy) throws(ConfigurationError) {
        retries = try fields.optional("retries", Fields.count(0...1_000_000)) ?? base.retries
        backoff = try fields.optional("backoff", Fields.duration) ?? base.backoff
        connectionTimeout = try fields.optional("connection_timeout", Fields.duration) ?? base.connectionTimeout
    }
}

/// Which advertisements go to `PREFIX/GATEWAY/ADDRESS/adv`.
public enum AdvertisementForwarding: Sendable, Equatable {
    /// None (`advertisements: off`, the default).
    case off
    /// Those of the configured peripherals (`advertisements: configured` or `true`).
    case configured
    /// Every one seen (`advertisements: all`).
    case all

    init(_ text: String) throws(FieldError) {
        switch text.lowercased() {
        case "off", "false", "no", "none": self = .off
        case "configured", "true", "yes", "on": self = .configured
        case "all": self = .all
        default: throw FieldError("'\(text)' is not off, configured or all")
        }
    }
}

/// How a configured peripheral is found.
public enum PeripheralMatch: Sendable, Equatable, CustomStringConvertible {
    /// By address (`address:`): connected without a scan.
    case address(PeripheralIdentifier)
    /// The first advertiser of this local name (`name:`).
    case name(String)
    /// The first advertiser of this service UUID (`service:`).
    case service(BluetoothUUID)

    /// For messages: `address C0:FF:EE:00:00:11`.
    public var description: String {
        switch self {
        case .address(let identifier): "address \(identifier.address)"
        case .name(let name): "name '\(name)'"
        case .service(let uuid): "service \(uuid)"
        }
    }
}

/// One entry of `peripherals:`.
public struct PeripheralRule: Sendable, Equatable {
    /// How it is found.
    public var match: PeripheralMatch
    /// Characteristics whose notifications or indications are published (`subscribe:`).
    public var subscribe: [CharacteristicRule]
    /// Characteristics read every so often (`poll:`).
    public var poll: [CharacteristicRule]
    /// Characteristics that accept `/set` beside those above (`write:`).
    public var write: [CharacteristicRule]
    /// Its connection policy.
    public var policy: ConnectionPolicy
    /// Where it is in the file (for messages).
    public var line: Int?

    init(_ fields: Fields, base: ConnectionPolicy) throws(ConfigurationError) {
        line = fields.line
        let address = try fields.optional(
            "address",
            { (text: String) throws(FieldError) in
                do { return try PeripheralIdentifier(text) } catch {
                    throw FieldError("'\(text)' is not ADDRESS, ADDRESS/random or ADDRESS/public")
                }
            })
        let name = try fields.optional("name", Fields.nonEmpty)
        let service = try fields.optional("service", Fields.uuid)
        let given = [
            address.map(PeripheralMatch.address), name.map(PeripheralMatch.name), service.map(PeripheralMatch.service),
        ].compactMap { $0 }
        guard given.count == 1, let match = given.first else {
            throw ConfigurationError(
                line: line, field: fields.path, message: "give exactly one of address:, name: or service:")
        }
        self.match = match
        subscribe = try fields.optionalList("subscribe") { node, path throws(ConfigurationError) in
            try CharacteristicRule(Fields(node, path: path), poll: false)
        }
        poll = try fields.optionalList("poll") { node, path throws(ConfigurationError) in
            try CharacteristicRule(Fields(node, path: path), poll: true)
        }
        write = try fields.optionalList("write") { node, path throws(ConfigurationError) in
            try CharacteristicRule(Fields(node, path: path), poll: false)
        }
        policy = try ConnectionPolicy(fields, base: base)
        try fields.rejectUnknown([
            "address", "name", "service", "subscribe", "poll", "write", "retries", "backoff", "connection_timeout",
        ])
    }

    /// Every characteristic a `/set` may write: subscribed, polled or listed under `write:`.
    public var writable: [CharacteristicRule] { subscribe + poll + write }
}

/// One characteristic of a peripheral rule: `{service: 180F, characteristic: 2A19}`, with
/// `every:` in `poll:`, and `write: command` for a Write Command (no response) on `/set`.
public struct CharacteristicRule: Sendable, Equatable {
    /// The service UUID in its canonical form, whatever its spelling in the file (`0x180f`,
    /// `0000180F-0000-1000-8000-00805F9B34FB` and `180F` are one service, one topic level).
    public var serviceText: String
    /// The characteristic UUID in its canonical form (``BluetoothUUID/description``).
    public var characteristicText: String
    /// The characteristic.
    public var characteristic: CharacteristicIdentifier
    /// How often a polled characteristic is read.
    public var every: Duration?
    /// `/set` writes without response (`write: command`) instead of with (`write: request`).
    public var writeWithoutResponse: Bool

    init(_ fields: Fields, poll: Bool) throws(ConfigurationError) {
        let service = try fields.required("service", Fields.uuid)
        let characteristic = try fields.required("characteristic", Fields.uuid)
        serviceText = service.description
        characteristicText = characteristic.description
        self.characteristic = CharacteristicIdentifier(uuid: characteristic, service: ServiceIdentifier(uuid: service))
        if poll {
            every = try fields.required("every", Fields.duration)
        } else {
            every = nil
        }
        writeWithoutResponse =
            try fields.optional(
                "write",
                { (text: String) throws(FieldError) in
                    switch text {
                    case "request": return false
                    case "command": return true
                    default: throw FieldError("'\(text)' is not request or command")
                    }
                }) ?? false
        try fields.rejectUnknown(
            poll ? ["service", "characteristic", "every", "write"] : ["service", "characteristic", "write"])
    }

    /// `SERVICE/CHARACTERISTIC`, as the topics spell it.
    public var topicPath: String { "\(serviceText)/\(characteristicText)" }
}

/// A configuration refused: where (line, field) and why.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The line in the file (1-based), when known.
    public var line: Int?
    /// The field, as a path (`peripherals[0].poll[1].every`), when known.
    public var field: String?
    /// What is wrong.
    public var message: String

    /// An error at `line` in `field`.
    public init(line: Int?, field: String?, message: String) {
        (self.line, self.field, self.message) = (line, field, message)
    }

    init(yaml error: YamlError) {
        switch error {
        case .scanner(_, let problem, let mark, _), .parser(_, let problem, let mark, _),
            .composer(_, let problem, let mark, _):
            self.init(line: mark.line, field: nil, message: "not YAML: \(problem)")
        default:
            self.init(line: nil, field: nil, message: "not YAML: \(error)")
        }
    }

    /// `line 7: peripherals[0].poll[0].every: '60 s' is not a duration …`.
    public var description: String {
        var text = ""
        if let line { text += "line \(line): " }
        if let field, !field.isEmpty { text += "\(field): " }
        return text + message
    }
}

/// A value refused, before the field is known.
public struct FieldError: Error, Sendable {
    let message: String
    init(_ message: String) { self.message = message }
}
