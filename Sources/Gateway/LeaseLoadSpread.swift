/// The fleet's load spread (docs/Gateway.md, "Fleets"): bidding already stops at
/// ``FleetLeases/maxLinks``; here a gateway carrying at least two fewer peripherals than
/// another asks it for one (a claim with `from`), and the one asked agrees when it still
/// carries two more than the taker. Each move lowers the spread of the loads, so moves end,
/// with every gateway within one of the others (within one of its fair share) unless its
/// `max_links` stops it.
///
/// A handover loses little: the giver keeps streaming until the taker's claim is confirmed
/// and its held lease arrives, and only then disconnects; the taker is already connecting,
/// so the peripheral's first advertisement after the disconnection is answered.
extension FleetLeases {
    /// The controller refused a link for want of room (Connection Limit Exceeded, Memory
    /// Capacity Exceeded) while we carried `links`: that is its limit, and ours from now on
    /// when `max_links:` did not set a smaller one.
    public mutating func controllerRefused(carrying links: Int) {
        maxLinks = max(1, min(maxLinks, links))
    }

    /// Whether we agree to hand `held` over to the claim `lease`: a claim asking us, from a
    /// live gateway that, with the peripheral, still carries no more than we would.
    func handsOver(_ held: Lease, to lease: Lease, now: Now) -> Bool {
        lease.state == .claimed && lease.from == gateway && lease.holder != gateway
            && isLive(lease.holder, now: now.instant) && load >= lease.leases + 2
    }

    /// A lease arrives for a peripheral we promised to `taker`.
    mutating func handing(
        _ address: String, _ entry: inout Entry, held: Lease, taker: String, until: ContinuousClock.Instant,
        lease: Lease?, now: Now
    ) -> [Action] {
        guard let lease, lease.holder != gateway else {
            // The claim withdrawn (cleared) or our own lease replayed: ours again, said so.
            entry.mine = .holding(held)
            return lease == held ? [] : [.publish(address: address, held)]
        }
        if lease.holder == taker {
            if lease.state == .held {
                entry.mine = .idle
                return [.disconnect(address: address)]
            }
            return []  // its claim again (it won a contention and published it anew)
        }
        if handsOver(held, to: lease, now: now) {
            // Another taker's claim replaced the first at the broker: theirs decide between them.
            entry.mine = .handing(held, to: lease.holder, until: until)
            return []
        }
        if isLive(lease.holder, now: now.instant), lease.beats(held) {
            entry.mine = .idle
            return [.disconnect(address: address)]
        }
        entry.mine = .holding(held)
        return [.publish(address: address, held)]
    }

    /// At most one handover at a time, and none while anyone claims, before the retained
    /// leases and statuses are in, past ``maxLinks`` or within ``Timing/handoverPause`` of
    /// the last: a claim asking the gateway carrying the most for one of its peripherals,
    /// when it carries at least two more than we do.
    mutating func askForHandover(now: Now) -> [Action] {
        guard now.instant >= started + timing.statusGrace, load < maxLinks else { return [] }
        if let nextHandover, now.instant < nextHandover { return [] }
        var loads: [String: Int] = [:]
        for entry in entries.values {
            switch entry.mine {
            case .bidding, .claimed: return []
            case .idle, .holding, .handing: break
            }
            guard let lease = entry.lease, lease.holder != gateway, isLive(lease.holder, now: now.instant) else {
                continue
            }
            // A live claim: peripherals still being bid for (a dead gateway's, say) or
            // another handover. The loads settle first: otherwise we would move a settled
            // peripheral where one just taken over could have moved instead.
            if lease.state == .claimed { return [] }
            loads[lease.holder, default: 0] += 1
        }
        let mine = load
        // The most loaded first, then the smaller id: every taker looks at the same one.
        guard
            let giver = loads.filter({ $0.value >= mine + 2 }).min(by: {
                $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key
            })?.key
        else { return [] }
        let candidates = entries.filter { address, entry in
            guard carriable.contains(address), case .idle = entry.mine, let lease = entry.lease,
                lease.holder == giver, lease.state == .held
            else { return false }
            if let quiet = entry.quietUntil, now.instant < quiet { return false }
            return true
        }
        // What we gain in signal over the giver, most first (one we never heard, last); then
        // the one the giver took most recently (one moved already, rather than one settled).
        func gain(_ entry: Entry) -> Int { (entry.heard ?? -127) - (entry.lease?.rssi ?? 0) }
        guard
            let (address, entry) = candidates.min(by: { a, b in
                if gain(a.value) != gain(b.value) { return gain(a.value) > gain(b.value) }
                let (ta, tb) = (a.value.lease?.time ?? 0, b.value.lease?.time ?? 0)
                return ta != tb ? ta > tb : a.key < b.key
            })
        else { return [] }
        let claim = Lease(
            holder: gateway, rssi: entry.heard ?? -127, time: now.epochMilliseconds, state: .claimed, leases: mine,
            from: giver)
        entries[address]?.mine = .claimed(claim, confirmAt: nil)
        nextHandover = now.instant + timing.handoverPause
        return [.publish(address: address, claim)]
    }
}
