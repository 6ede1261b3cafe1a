import Foundation

/// Who connects a peripheral in a fleet: the message retained at `PREFIX/lease/ADDRESS`
/// (docs/Gateway.md, "Fleets").
/// `{"holder":"gw2","leases":5,"rssi":-48,"state":"claimed","time":1764300000123}`, and
/// `"from":"gw1"` in a claim asking gw1 to hand the peripheral over (load spread).
public struct Lease: Sendable, Equatable, CustomStringConvertible {
    /// How far the holder has got.
    public enum State: String, Sendable {
        /// Asked for; another gateway with a better claim may still take it.
        case claimed
        /// Confirmed and connected (or connecting): no claim takes it while its holder is online.
        case held
    }

    /// The holding gateway's id.
    public var holder: String
    /// The RSSI (dBm) at which the holder heard the peripheral when it claimed it.
    public var rssi: Int
    /// When the holder published it, in milliseconds since 1970 (for people; with the
    /// holder, it also tells one claim of a gateway from its next).
    public var time: Int64
    /// Claimed or held.
    public var state: State
    /// How many other peripherals the holder carried or claimed when it published this: a
    /// tie of RSSI goes to the gateway carrying fewer, and a gateway hands a peripheral over
    /// only to one carrying at least two fewer than itself. 0 when absent (a gateway from
    /// before the load spread), which is read as "carries little".
    public var leases: Int
    /// In a claim: the gateway asked to hand this peripheral over (it holds it and carries
    /// more than its share); nil in an ordinary claim or a held lease.
    public var from: String?

    /// A lease.
    public init(holder: String, rssi: Int, time: Int64, state: State, leases: Int = 0, from: String? = nil) {
        (self.holder, self.rssi, self.time, self.state, self.leases, self.from) =
            (holder, rssi, time, state, leases, from)
    }

    /// The retained payload: JSON with sorted keys (`from` only in a handover claim).
    public var payload: [UInt8] {
        var object: [String: Any] = [
            "holder": holder, "rssi": rssi, "time": time, "state": state.rawValue, "leases": leases,
        ]
        if let from { object["from"] = from }
        return Array(JSONText.encode(object).utf8)
    }

    /// A lease from its payload; nil for an empty payload (a released lease) or anything
    /// not a lease (liberal in what we accept: unknown fields are ignored).
    public init?(payload: [UInt8]) {
        guard !payload.isEmpty,
            let object = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any],
            let holder = object["holder"] as? String, !holder.isEmpty,
            let rssi = (object["rssi"] as? NSNumber)?.intValue,
            let state = (object["state"] as? String).flatMap(State.init(rawValue:))
        else { return nil }
        let from = (object["from"] as? String).flatMap { $0.isEmpty ? nil : $0 }
        self.init(
            holder: holder, rssi: rssi, time: (object["time"] as? NSNumber)?.int64Value ?? 0, state: state,
            leases: max(0, (object["leases"] as? NSNumber)?.intValue ?? 0), from: from)
    }

    /// The deterministic order every gateway applies to two contending leases: a held lease
    /// beats a claim, then the stronger RSSI, then the holder carrying fewer leases, then
    /// the smaller gateway id.
    public func beats(_ other: Lease) -> Bool {
        if state != other.state { return state == .held }
        if rssi != other.rssi { return rssi > other.rssi }
        if leases != other.leases { return leases < other.leases }
        return holder < other.holder
    }

    /// `gw2 held at -48 dBm`, `gw3 claimed at -60 dBm from gw1`.
    public var description: String { "\(holder) \(state.rawValue) at \(rssi) dBm" + (from.map { " from \($0)" } ?? "") }
}
