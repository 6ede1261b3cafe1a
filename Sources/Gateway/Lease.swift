import Foundation

/// One gateway's side of the fleet protocol for every peripheral it may connect, as a value:
/// events in (a sighting, a lease or a gateway status from the broker, the clock, a
/// connection given up), actions out (publish or clear a lease, connect, disconnect). No
/// clock and no I/O of its own; ``GatewayService`` runs it and carries out the actions.
///
/// The rules (docs/Gateway.md has the contract):
/// - A peripheral is free when it has no lease, or its lease's holder is offline (its
///   retained `PREFIX/GATEWAY/status`, which its last will sets to `offline`).
/// - A free peripheral heard by us is bid for after a delay that is shorter the stronger
///   the RSSI, so the nearest gateway usually claims first; a bid is dropped when a live
///   lease appears, unless it is a mere claim our bid beats.
/// - A claim is confirmed only once the broker has echoed it back to us and ``Timing/settle``
///   has passed without a better claim; then it is published as held and connected.
/// - Two claims meet: ``Lease/beats(_:)`` decides, the same way at every gateway; the
///   loser withdraws, the winner publishes its lease again (the broker retains only the
///   last message, which may have been the loser's).
/// - No bid past ``maxLinks``; a gateway carrying two fewer than another asks it for one of
///   its peripherals (LeaseLoadSpread.swift), so the fleet's load evens out.
public struct FleetLeases: Sendable {
    /// The protocol's delays.
    public struct Timing: Sendable, Equatable {
        /// No bid before this long after start: the retained leases and statuses arrive first.
        public var startupQuiet: Duration = .seconds(1)
        /// The bid delay at -30 dBm or stronger.
        public var bidBase: Duration = .milliseconds(100)
        /// Added per dB weaker than -30 dBm (at most 70 dB's worth).
        public var bidPerDecibel: Duration = .milliseconds(10)
        /// From the echo of our claim to holding it.
        public var settle: Duration = .milliseconds(300)
        /// A holder whose status we have never seen counts as online this long after start.
        public var statusGrace: Duration = .seconds(3)
        /// After giving a peripheral up, we bid for it again only after this long.
        public var quietAfterGivingUp: Duration = .seconds(30)
        /// Between two handovers we ask for (load spread): the fleet's view of the loads
        /// catches up with the last move before the next.
        public var handoverPause: Duration = .milliseconds(500)
        /// A handover we agreed to that the taker has not completed (held) in this long is
        /// called off: we keep the peripheral (a taker that died, or lost to another claim).
        public var handoverTimeout: Duration = .seconds(5)

        /// The defaults.
        public init() {}

        /// The delay of a bid at `rssi`: 100 ms at -30 dBm, 500 ms at -70 dBm.
        public func bidDelay(_ rssi: Int) -> Duration { bidBase + bidPerDecibel * min(70, max(0, -30 - rssi)) }
    }

    /// What the gateway is to do.
    public enum Action: Sendable, Equatable {
        /// Publish `lease` retained at `PREFIX/lease/ADDRESS`.
        case publish(address: String, Lease)
        /// Clear our lease of `address` (an empty retained message).
        case clear(address: String)
        /// Connect the peripheral: the lease is ours.
        case connect(address: String)
        /// Disconnect it: the lease is lost.
        case disconnect(address: String)
    }

    /// A clock reading: the instant for deadlines, the wall clock for the leases' `time`.
    public struct Now: Sendable {
        /// For deadlines.
        public var instant: ContinuousClock.Instant
        /// Milliseconds since 1970.
        public var epochMilliseconds: Int64

        /// A reading.
        public init(instant: ContinuousClock.Instant, epochMilliseconds: Int64) {
            (self.instant, self.epochMilliseconds) = (instant, epochMilliseconds)
        }

        /// The clocks now.
        public static var current: Now {
            Now(instant: .now, epochMilliseconds: Int64((Date().timeIntervalSince1970 * 1000).rounded()))
        }
    }

    /// Where we stand with one peripheral.
    enum Mine: Equatable {
        /// Nothing of ours.
        case idle
        /// We will claim it at `at` unless a live lease turns up first.
        case bidding(rssi: Int, at: ContinuousClock.Instant)
        /// Our claim is published; `confirmAt` is set once the broker echoed it.
        case claimed(Lease, confirmAt: ContinuousClock.Instant?)
        /// Ours: held and connected (or connecting).
        case holding(Lease)
        /// Ours still, connected and streaming, but promised to `taker` (its handover
        /// claim): we disconnect when its held lease arrives, so at most the time of one
        /// reconnection is lost; past `until` we keep it.
        case handing(Lease, to: String, until: ContinuousClock.Instant)

        /// Connected by us (held, or being handed over).
        var carrying: Bool {
            switch self {
            case .holding, .handing: true
            case .idle, .bidding, .claimed: false
            }
        }
    }

    struct Entry {
        /// The lease as the broker last told us.
        var lease: Lease?
        var mine = Mine.idle
        var quietUntil: ContinuousClock.Instant?
        /// The RSSI we last heard it advertise at (nil: never heard), for choosing which
        /// peripheral to take over.
        var heard: Int?
    }

    /// This gateway's id.
    public let gateway: String
    /// The delays.
    public let timing: Timing
    /// The most peripherals we carry or claim at once (`max_links:`, else the controller's
    /// limit once it has refused a link): no bid and no handover past it.
    public var maxLinks: Int
    let started: ContinuousClock.Instant
    var entries: [String: Entry] = [:]
    /// The gateways' statuses as the broker last told us: true online.
    var online: [String: Bool] = [:]
    /// The peripherals we may connect (configured, their address known): only these are
    /// asked for in a handover.
    var carriable: Set<String> = []
    /// No handover asked for before this (``Timing/handoverPause``).
    var nextHandover: ContinuousClock.Instant?

    /// The protocol for `gateway`, started at `started`, carrying at most `maxLinks`.
    public init(gateway: String, timing: Timing = Timing(), maxLinks: Int = .max, started: ContinuousClock.Instant) {
        self.gateway = gateway
        self.timing = timing
        self.maxLinks = max(1, maxLinks)
        self.started = started
    }

    // MARK: - Events

    /// We may connect `address` (configured, its address known): a handover may ask for it.
    public mutating func mayCarry(_ address: String) { carriable.insert(address) }

    /// We heard `address` advertise at `rssi`.
    public mutating func sighted(_ address: String, rssi: Int, now: Now) -> [Action] {
        var entry = entries[address] ?? Entry()
        defer { entries[address] = entry }
        entry.heard = rssi
        guard case .idle = entry.mine, isFree(entry.lease, now: now.instant), load < maxLinks else { return [] }
        if let quiet = entry.quietUntil, now.instant < quiet { return [] }
        entry.mine = .bidding(rssi: rssi, at: max(now.instant, started + timing.startupQuiet) + timing.bidDelay(rssi))
        return []
    }

    /// The broker delivered the lease of `address` (nil: released, an empty message).
    public mutating func received(_ address: String, lease: Lease?, now: Now) -> [Action] {
        var entry = entries[address] ?? Entry()
        defer { entries[address] = entry }
        entry.lease = lease
        switch entry.mine {
        case .idle:
            // Ours, but we hold nothing: left from a previous run of this gateway.
            if lease?.holder == gateway { return [.clear(address: address)] }
            return []
        case .bidding(let rssi, _):
            guard let lease, lease.holder != gateway, isLive(lease.holder, now: now.instant) else { return [] }
            let bid = Lease(holder: gateway, rssi: rssi, time: now.epochMilliseconds, state: .claimed, leases: load)
            if lease.state == .claimed, bid.beats(lease), load < maxLinks {
                entry.mine = .claimed(bid, confirmAt: nil)
                return [.publish(address: address, bid)]
            }
            entry.mine = .idle
            return []
        case .claimed(let claim, let confirmAt):
            if lease == claim {
                if confirmAt == nil { entry.mine = .claimed(claim, confirmAt: now.instant + timing.settle) }
                return []
            }
            guard let lease, lease.holder != gateway else {
                // Cleared, or an older lease of ours: our claim is still in flight or must go again.
                return lease == nil ? [.publish(address: address, claim)] : []
            }
            if isLive(lease.holder, now: now.instant), lease.beats(claim) {
                entry.mine = .idle
                // A handover refused (the giver's view of the loads differs from ours): ask
                // again only once the leases have had time to tell us the same.
                if claim.from != nil { nextHandover = now.instant + timing.handoverPause * 4 }
                return []
            }
            return [.publish(address: address, claim)]
        case .holding(let held):
            if lease == held { return [] }
            if let lease, handsOver(held, to: lease, now: now) {
                // A handover claim we agree to: silence lets it confirm; we stream on until its held lease.
                entry.mine = .handing(held, to: lease.holder, until: now.instant + timing.handoverTimeout)
                return []
            }
            if let lease, lease.holder != gateway, isLive(lease.holder, now: now.instant), lease.beats(held) {
                // Two held leases (the broker lost one gateway's session a while): the better keeps it.
                entry.mine = .idle
                return [.disconnect(address: address)]
            }
            return [.publish(address: address, held)]
        case .handing(let held, let taker, let until):
            return handing(address, &entry, held: held, taker: taker, until: until, lease: lease, now: now)
        }
    }

    /// Gateway `gateway`'s status (`PREFIX/GATEWAY/status`) is `online` or not. An offline
    /// holder's leases are free: the next sighting bids for them.
    public mutating func status(of gateway: String, online: Bool) { self.online[gateway] = online }

    /// Deadlines: bids become claims, confirmed claims become held leases.
    public mutating func tick(now: Now) -> [Action] {
        var actions: [Action] = []
        for address in entries.keys.sorted() {
            guard var entry = entries[address] else { continue }
            switch entry.mine {
            case .bidding(let rssi, let at) where now.instant >= at:
                if isFree(entry.lease, now: now.instant), load < maxLinks {
                    let claim = Lease(
                        holder: gateway, rssi: rssi, time: now.epochMilliseconds, state: .claimed, leases: load)
                    entry.mine = .claimed(claim, confirmAt: nil)
                    actions.append(.publish(address: address, claim))
                } else {
                    entry.mine = .idle
                }
            case .claimed(let claim, let confirmAt?) where now.instant >= confirmAt:
                let held = Lease(
                    holder: gateway, rssi: claim.rssi, time: now.epochMilliseconds, state: .held, leases: load - 1)
                entry.mine = .holding(held)
                actions += [.publish(address: address, held), .connect(address: address)]
            case .handing(let held, _, let until) where now.instant >= until:
                // The taker never confirmed: ours again, said so.
                entry.mine = .holding(held)
                actions.append(.publish(address: address, held))
            default:
                continue
            }
            entries[address] = entry
        }
        return actions + askForHandover(now: now)
    }

    /// We could not keep `address` connected (its policy gave up): the lease goes, and we
    /// stay out of the bidding a while so a gateway that hears it better gets it.
    public mutating func gaveUp(_ address: String, now: Now) -> [Action] {
        guard var entry = entries[address] else { return [] }
        defer { entries[address] = entry }
        entry.quietUntil = now.instant + timing.quietAfterGivingUp
        switch entry.mine {
        case .holding, .claimed:
            entry.mine = .idle
            return [.clear(address: address)]
        case .handing:
            // The broker's lease is the taker's claim now: ours to let go of, not to clear.
            entry.mine = .idle
            return []
        case .bidding:
            entry.mine = .idle
            return []
        case .idle:
            return []
        }
    }

    /// Shutting down: every lease and claim of ours is cleared (not one being handed over:
    /// the broker holds its taker's claim by then).
    public mutating func releaseAll() -> [Action] {
        var actions: [Action] = []
        for address in entries.keys.sorted() {
            switch entries[address]?.mine {
            case .holding, .claimed:
                entries[address]?.mine = .idle
                actions.append(.clear(address: address))
            default:
                entries[address]?.mine = .idle
            }
        }
        return actions
    }

    // MARK: - Queries

    /// The peripherals we hold now (those being handed over too: still connected).
    public var held: [String] {
        entries.keys.sorted().filter { entries[$0]?.mine.carrying == true }
    }

    /// How many peripherals we carry or have claimed: what ``maxLinks`` bounds.
    public var load: Int {
        entries.values.reduce(0) { count, entry in
            switch entry.mine {
            case .holding, .handing, .claimed: count + 1
            case .idle, .bidding: count
            }
        }
    }

    /// The lease of `address` as the broker last told us.
    public func lease(of address: String) -> Lease? { entries[address]?.lease }

    func isLive(_ holder: String, now: ContinuousClock.Instant) -> Bool {
        if let known = online[holder] { return known }
        return now < started + timing.statusGrace
    }

    /// No lease, a lease of an offline holder, or a stale one of ours.
    func isFree(_ lease: Lease?, now: ContinuousClock.Instant) -> Bool {
        guard let lease else { return true }
        if lease.holder == gateway { return true }
        return !isLive(lease.holder, now: now)
    }
}
