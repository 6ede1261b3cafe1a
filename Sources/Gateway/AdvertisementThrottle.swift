import Advertisements

/// Which decoded advertisements go on to `PREFIX/GATEWAY/ADDRESS/values`. A sensor repeats
/// each packet many times (BTHome and the thermometer firmware until the reading changes),
/// so a packet whose counter is the one last published from that device is a duplicate; and
/// past that, a device publishes at most once per `rateLimit`. A packet held back by the
/// limit is not lost for good: its repeats after the limit carry the same counter, which
/// is still new, so the newest reading goes out then. Events (`button`, `event`) are not
/// states a later packet restates, so they pass the limit (never the duplicate check).
///
/// A value type with no clock of its own: its owner says when each packet came.
struct AdvertisementThrottle {
    /// What to do with one decoded advertisement.
    enum Verdict: Equatable {
        /// Publish it.
        case publish
        /// Its packet counter is the one published last: a repeat.
        case duplicate
        /// The device published less than the rate limit ago.
        case rateLimited
    }

    /// The least time between two publications of one device; nil: no limit.
    let rateLimit: Duration?
    /// A device not heard for this long is forgotten: addresses come and go (a sensor
    /// replaced, one passing by), and a gateway runs for months.
    static let forgetAfter: Duration = .seconds(600)
    /// Each device's last publication: when, and the packet's identity (nil for a format
    /// with no counter); and when it was last heard.
    private var last: [String: (at: ContinuousClock.Instant, packet: PacketIdentity?, heard: ContinuousClock.Instant)] =
        [:]
    /// Decisions since the forgotten were last looked for.
    private var sincePruned = 0

    init(rateLimit: Duration?) {
        self.rateLimit = rateLimit
    }

    /// Decides for `decoded`, heard from `device` at `now`, and remembers a publication.
    mutating func admit(_ decoded: DecodedAdvertisement, from device: String, at now: ContinuousClock.Instant)
        -> Verdict
    {
        sincePruned += 1
        if sincePruned >= 4096 { prune(now) }
        let packet = PacketIdentity(decoded)
        if let previous = last[device] {
            last[device]?.heard = now
            if let packet, packet == previous.packet { return .duplicate }
            let isEvent = decoded.values["button"] != nil || decoded.values["event"] != nil
            if let rateLimit, !isEvent, now - previous.at < rateLimit { return .rateLimited }
        }
        last[device] = (now, packet, now)
        return .publish
    }

    /// Forgets the devices not heard for ``forgetAfter``.
    mutating func prune(_ now: ContinuousClock.Instant) {
        sincePruned = 0
        last = last.filter { now - $0.value.heard < Self.forgetAfter }
    }

    /// The devices heard in the last ``forgetAfter`` (give or take 4096 decisions).
    var devices: Int { last.count }
}

/// What tells one packet of a device from the next: the format and its counters (the
/// packet id or frame counter, `packet_counter`; an encrypted packet's counter), nil when
/// the format carries none (Govee, Inkbird, the beacons): those only the rate limit thins.
struct PacketIdentity: Equatable {
    let format: String
    let packetCounter: AdvertisementValue?
    let encryptionCounter: AdvertisementValue?

    init?(_ decoded: DecodedAdvertisement) {
        let packetCounter = decoded.values["packet_counter"], encryptionCounter = decoded.extra["encryption_counter"]
        // Ruuvi's «not available» sequence number counts nothing.
        guard packetCounter.map({ $0 != .null }) ?? false || encryptionCounter != nil else { return nil }
        format = decoded.format
        self.packetCounter = packetCounter
        self.encryptionCounter = encryptionCounter
    }
}
