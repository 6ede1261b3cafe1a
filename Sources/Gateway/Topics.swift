import Bluejay
import BluetoothCore
import Foundation

/// The topic layout (docs/Gateway.md, a contract): `PREFIX/GATEWAY/…`, addresses upper case
/// with colons and no `/random`, UUIDs as the configuration writes them, upper case.
public struct Topics: Sendable, Equatable {
    /// `PREFIX/GATEWAY`.
    public let root: String
    /// `PREFIX`.
    public let prefix: String

    /// The topics of gateway `gateway` under `prefix`.
    public init(prefix: String, gateway: String) {
        root = "\(prefix)/\(gateway)"
        self.prefix = prefix
    }

    /// The second level of the fleet's lease topics (so no gateway of a fleet may be called so).
    public static let leaseLevel = "lease"
    /// `PREFIX/lease/ADDRESS`: who of the fleet connects the peripheral (retained, ``Lease``).
    public func lease(_ address: String) -> String { "\(prefix)/\(Self.leaseLevel)/\(address)" }
    /// What a fleet's gateway subscribes to for the leases: `PREFIX/lease/+`.
    public var leaseFilter: String { "\(prefix)/\(Self.leaseLevel)/+" }
    /// What a fleet's gateway subscribes to for the other gateways' statuses: `PREFIX/+/status`.
    public var gatewayStatusFilter: String { "\(prefix)/+/status" }
    /// A lease topic's address, or nil when `topic` is not one.
    public func parseLease(_ topic: String) -> String? {
        let head = "\(prefix)/\(Self.leaseLevel)/"
        guard topic.hasPrefix(head) else { return nil }
        let address = topic.dropFirst(head.count)
        return address.isEmpty || address.contains("/") ? nil : String(address)
    }
    /// A gateway status topic's gateway id, or nil when `topic` is not one.
    public func parseGatewayStatus(_ topic: String) -> String? {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count == 3, levels[0] == prefix, levels[2] == "status", levels[1] != Self.leaseLevel else {
            return nil
        }
        return String(levels[1])
    }

    /// `PREFIX/GATEWAY/status`: `online` or `offline` (retained; the last will says offline).
    public var status: String { "\(root)/status" }
    /// `PREFIX/GATEWAY/stats`: the counters, JSON (retained).
    public var stats: String { "\(root)/stats" }
    /// `PREFIX/GATEWAY/error`: what a `/set` was refused for, JSON.
    public var error: String { "\(root)/error" }
    /// What the gateway subscribes to for writes: `PREFIX/GATEWAY/+/+/+/set`.
    public var setFilter: String { "\(root)/+/+/+/set" }

    /// What the gateway subscribes to for its peripherals' statuses (a killed run's
    /// leftovers): `PREFIX/GATEWAY/+/status`.
    public var peripheralStatusFilter: String { "\(root)/+/status" }
    /// A peripheral status topic's address level, or nil when `topic` is not one of ours.
    public func parsePeripheralStatus(_ topic: String) -> String? {
        guard topic.hasPrefix(root + "/") else { return nil }
        let levels = topic.dropFirst(root.count + 1).split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count == 2, levels[1] == "status", !levels[0].isEmpty else { return nil }
        return String(levels[0])
    }

    /// `PREFIX/GATEWAY/ADDRESS`.
    public func peripheral(_ address: BluetoothAddress) -> String { "\(root)/\(address.description.uppercased())" }
    /// `PREFIX/GATEWAY/ADDRESS/status`: `online` while connected, else `offline` (retained).
    public func status(_ address: BluetoothAddress) -> String { "\(peripheral(address))/status" }
    /// `PREFIX/GATEWAY/ADDRESS/adv`: an advertisement with its RSSI, JSON.
    public func advertisement(_ address: BluetoothAddress) -> String { "\(peripheral(address))/adv" }
    /// `PREFIX/GATEWAY/ADDRESS/values`: a decoded advertisement's values, JSON.
    public func values(_ address: BluetoothAddress) -> String { "\(peripheral(address))/values" }
    /// `PREFIX/GATEWAY/ADDRESS/presence`: `home` or `not_home` (retained), for a tracked device.
    public func presence(_ address: BluetoothAddress) -> String { "\(peripheral(address))/presence" }
    /// `PREFIX/GATEWAY/ADDRESS/SERVICE/CHARACTERISTIC`: the value in lower-case hex.
    public func value(_ address: BluetoothAddress, _ rule: CharacteristicRule) -> String {
        "\(peripheral(address))/\(rule.topicPath)"
    }
    /// `…/CHARACTERISTIC/json`: the value decoded, for the characteristics ``ValueDecoding`` knows.
    public func json(_ address: BluetoothAddress, _ rule: CharacteristicRule) -> String {
        "\(value(address, rule))/json"
    }
    /// `…/CHARACTERISTIC/set`: a hex payload written to the characteristic.
    public func set(_ address: BluetoothAddress, _ rule: CharacteristicRule) -> String { "\(value(address, rule))/set" }

    /// A `/set` topic taken apart: its address and `SERVICE/CHARACTERISTIC` (nil when it is
    /// not one of this gateway's).
    public func parseSet(_ topic: String) -> (address: String, path: String)? {
        guard topic.hasPrefix(root + "/") else { return nil }
        let levels = topic.dropFirst(root.count + 1).split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count == 4, levels[3] == "set" else { return nil }
        return (String(levels[0]), "\(levels[1])/\(levels[2])")
    }
}

/// Bytes as lower-case hex without separators (the value topics' payload), and back.
public enum Hex {
    /// `0a1b`.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        String(decoding: self.bytes(bytes), as: UTF8.self)
    }

    /// ``encode(_:)``'s text as its UTF-8 bytes (a value's MQTT payload, with no String between).
    public static func bytes(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            text.append(digit(byte >> 4))
            text.append(digit(byte & 0x0F))
        }
        return text
    }

    /// The lower-case hex digit of `nibble` (0–15), as ASCII.
    private static func digit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? 0x30 + nibble : 0x57 + nibble }

    /// Hex digits as ``parseHexBytes(_:)`` reads them (spaces, `:`, `-`, `_`, a `0x`
    /// prefix), around any whitespace; nil for anything else or nothing at all.
    public static func decode(_ text: String) -> [UInt8]? {
        guard let bytes = parseHexBytes(text.trimmingCharacters(in: .whitespacesAndNewlines)), !bytes.isEmpty else {
            return nil
        }
        return bytes
    }
}
