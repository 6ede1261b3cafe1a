import Bluejay
import Foundation

/// The Home Assistant configurations an earlier run of this gateway left retained that the
/// current configuration would no longer announce (docs/Gateway.md, "Home Assistant"). The
/// broker replays every retained configuration when the gateway subscribes to ``filter``;
/// the gateway deletes those ``isStale(_:payload:)`` names, so Home Assistant drops entities
/// of peripherals and characteristics taken out of the file.
public struct StaleDiscovery: Sendable {
    /// `HA_PREFIX/+/+/config`: every configuration without a node id. A wildcard cannot match
    /// the start of a level, so ours (`bluejay_GATEWAY_…`) are picked out of them here.
    public let filter: String
    private let discovery: HomeAssistantDiscovery
    /// What this configuration announces whatever the scan finds: the gateway's device, the
    /// peripherals configured by address, the tracked devices.
    private let current: Set<String>
    /// Rules matching by name or service: each announces at whatever address it matches,
    /// which is not known before the scan finds it.
    private let matchedLater: [PeripheralRule]
    /// The addresses of `address:` rules, which a name or service rule never binds.
    private let configuredAddresses: Set<BluetoothAddress>
    /// `decode: all`: any device heard may announce its decoded values again.
    private let decoding: Bool

    /// The clean-up of `discovery`'s leftovers under `configuration`.
    public init(_ discovery: HomeAssistantDiscovery, configuration: GatewayConfiguration) {
        self.discovery = discovery
        filter = "\(discovery.prefix)/+/+/config"
        var current: Set<String> = [discovery.gatewayStatus.topic]
        var matchedLater: [PeripheralRule] = []
        var configuredAddresses: Set<BluetoothAddress> = []
        for rule in configuration.peripherals {
            guard case .address(let identifier) = rule.match else {
                matchedLater.append(rule)
                continue
            }
            configuredAddresses.insert(identifier.address)
            let messages =
                discovery.sensors(of: rule, at: identifier.address) + discovery.texts(of: rule, at: identifier.address)
            current.formUnion(messages.map(\.topic))
        }
        current.formUnion(configuration.presence.tracked.map { discovery.tracker(of: $0).topic })
        self.current = current
        self.matchedLater = matchedLater
        self.configuredAddresses = configuredAddresses
        decoding = configuration.decoding.enabled
    }

    /// Whether `topic` is one ``filter`` matches (a discovery configuration, ours or not).
    public func matches(_ topic: String) -> Bool {
        let head = "\(discovery.prefix)/"
        guard topic.hasPrefix(head) else { return false }
        let levels = topic.dropFirst(head.count).split(separator: "/", omittingEmptySubsequences: false)
        return levels.count == 3 && levels[2] == "config"
    }

    /// Whether the retained configuration `payload` at `topic` is this gateway's and no
    /// longer announced. Ours: the object id starts `bluejay_GATEWAY_` and the device is the
    /// gateway's or names it as `via_device` (the id alone would also match a gateway called
    /// `GATEWAY_x`). Kept: what `current` lists; a decoded value while decoding is on (any
    /// device heard may send it again); at an address no `address:` rule has, what a name or
    /// service rule would announce there. Anything else of ours is stale; anything not ours,
    /// or already empty, is left alone.
    public func isStale(_ topic: String, payload: [UInt8]) -> Bool {
        guard matches(topic), !payload.isEmpty, !current.contains(topic) else { return false }
        let object = topic.dropFirst(discovery.prefix.count + 1).split(
            separator: "/", omittingEmptySubsequences: false)[1]
        let objectHead = "bluejay_\(discovery.gateway)_"
        guard object.hasPrefix(objectHead), namesOurDevice(payload) else { return false }
        let rest = object.dropFirst(objectHead.count)
        // Not a peripheral's: one of the gateway's own entities this version no longer has.
        guard let (address, suffix) = Self.address(rest) else { return true }
        if decoding, discovery.decodedValueTopic(String(suffix), at: address) == topic { return false }
        if !configuredAddresses.contains(address) {
            for rule in matchedLater {
                let announced = discovery.sensors(of: rule, at: address) + discovery.texts(of: rule, at: address)
                if announced.contains(where: { $0.topic == topic }) { return false }
            }
        }
        return true
    }

    /// Whether a configuration's device is the gateway's, or names it as `via_device`.
    private func namesOurDevice(_ payload: [UInt8]) -> Bool {
        guard let object = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any],
            let device = object["device"] as? [String: Any]
        else { return false }
        if device["via_device"] as? String == discovery.gatewayDevice { return true }
        return (device["identifiers"] as? [String])?.contains(discovery.gatewayDevice) == true
    }

    /// `C0FFEE000011_REST` as an object id spells an address (`HomeAssistantDiscovery.addressID(_:)`):
    /// the address and `REST`.
    private static func address(_ text: Substring) -> (BluetoothAddress, Substring)? {
        let digits = text.prefix(12)
        guard digits.count == 12, digits.allSatisfy({ $0.isHexDigit && !$0.isLowercase }),
            text.dropFirst(12).first == "_"
        else { return nil }
        var spelled = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, index.isMultiple(of: 2) { spelled += ":" }
            spelled.append(digit)
        }
        guard let address = BluetoothAddress(spelled) else { return nil }
        return (address, text.dropFirst(13))
    }
}
