import Bluejay
import SMP
import Yams

/// Presence (`presence:`, `away_after:`, `irks:`): which devices the gateway tracks, and
/// when one that has not been heard counts as gone.
public struct PresenceTracking: Sendable, Equatable {
    /// `presence: [ADDRESS, …]`: devices tracked by their address.
    public var devices: [BluetoothAddress]
    /// `away_after:` (default 3 minutes): how long a device may go unheard before it is
    /// `not_home`. A phone advertises every second or so; a sensor every few seconds.
    public var awayAfter: Duration
    /// `irks: {IDENTITY_ADDRESS: IRK}`: devices tracked behind their resolvable private
    /// addresses, each by its identity address and Identity Resolving Key (32 hex digits).
    public var irks: [BluetoothAddress: [UInt8]]

    /// Tracking of `devices` and the devices behind `irks`.
    public init(
        devices: [BluetoothAddress] = [], awayAfter: Duration = .seconds(180), irks: [BluetoothAddress: [UInt8]] = [:]
    ) {
        (self.devices, self.awayAfter, self.irks) = (devices, awayAfter, irks)
    }

    /// Every tracked device by the address its topics use.
    public var tracked: [BluetoothAddress] {
        (Set(devices).union(irks.keys)).sorted { $0.description < $1.description }
    }

    init(_ fields: Fields) throws(ConfigurationError) {
        devices = try fields.optionalList("presence") { node, path throws(ConfigurationError) in
            guard let text = node.scalar?.string, let address = try? BluetoothAddress.parse(typed: text).address else {
                throw ConfigurationError(
                    line: node.mark?.line, field: path, message: "not a Bluetooth address (AA:BB:CC:DD:EE:FF)")
            }
            return address
        }
        awayAfter = try fields.optional("away_after", Fields.duration) ?? .seconds(180)
        irks = try fields.optionalMapping("irks", Fields.addressKey("IRK"))
    }

    /// The keys this part of the file reads.
    static let keysRead: Set<String> = ["presence", "away_after", "irks"]
}

/// Whether a tracked device is around, as `…/ADDRESS/presence` says it (Home Assistant's
/// `device_tracker` payloads).
public enum PresenceState: String, Sendable, Equatable {
    /// Heard within `away_after`.
    case home
    /// Not heard for `away_after`, or never since the gateway started that long ago.
    case notHome = "not_home"
}

/// The tracked devices' presence: sightings in, changes out. A value with no clock of its
/// own (the caller gives the time), so its rules are tested without waiting.
struct PresenceTracker {
    let tracking: PresenceTracking
    private let started: ContinuousClock.Instant
    private var lastSeen: [BluetoothAddress: ContinuousClock.Instant] = [:]
    private var states: [BluetoothAddress: PresenceState] = [:]
    /// Private addresses already tried against the IRKs: AES for each IRK on every
    /// advertisement would cost more than the rest of the scan. Bounded: cleared when full.
    private var resolved: [BluetoothAddress: BluetoothAddress?] = [:]
    private static let resolvedLimit = 4096

    init(_ tracking: PresenceTracking, started: ContinuousClock.Instant) {
        (self.tracking, self.started) = (tracking, started)
    }

    /// The tracked device `address` is, if any: itself, or the identity whose IRK made it.
    /// An IRK is tried as written (most significant octet first, as the Core Specification
    /// prints keys) and reversed (as some tools store them): a wrong match is one chance in
    /// 2^24 per address.
    mutating func identity(of address: BluetoothAddress) -> BluetoothAddress? {
        if tracking.devices.contains(address) || tracking.irks[address] != nil { return address }
        guard !tracking.irks.isEmpty, address.randomKind == .resolvablePrivate else { return nil }
        if let known = resolved[address] { return known }
        let identity = tracking.irks.first { _, irk in
            ResolvablePrivateAddress.resolves(address, with: Array(irk.reversed()))
                || ResolvablePrivateAddress.resolves(address, with: irk)
        }?.key
        if resolved.count >= Self.resolvedLimit { resolved.removeAll(keepingCapacity: true) }
        resolved[address] = .some(identity)
        return identity
    }

    /// `address` was heard at `now`: the change to publish, if its device is tracked and was
    /// not `home`.
    mutating func sighted(_ address: BluetoothAddress, at now: ContinuousClock.Instant) -> (
        BluetoothAddress, PresenceState
    )? {
        guard let device = identity(of: address) else { return nil }
        lastSeen[device] = now
        guard states[device] != .home else { return nil }
        states[device] = .home
        return (device, .home)
    }

    /// The devices that went unheard for `away_after` by `now`, now `not_home`.
    mutating func expire(at now: ContinuousClock.Instant) -> [(BluetoothAddress, PresenceState)] {
        var changes: [(BluetoothAddress, PresenceState)] = []
        for device in tracking.tracked where states[device] != .notHome {
            guard now - (lastSeen[device] ?? started) >= tracking.awayAfter else { continue }
            states[device] = .notHome
            changes.append((device, .notHome))
        }
        return changes
    }
}
