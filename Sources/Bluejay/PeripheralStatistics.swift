import FoundationEssentials

/// Connection statistics of a peripheral, as BlueCap keeps them: each ``Peripheral`` of a
/// ``Central`` keeps its own (``Peripheral/statistics``, and BlueCap's names on the
/// peripheral itself), and ``Bluejay`` keeps the same for the peripherals it connected
/// (``Bluejay/statistics(for:)``). Instants are on the continuous clock, so a wall-clock
/// change does not bend a duration.
public struct PeripheralStatistics: Sendable, Equatable {
    /// When a scan first reported the peripheral (nil when it was never scanned for).
    public var discoveredAt: ContinuousClock.Instant?
    /// When the last connection came up.
    public var connectedAt: ContinuousClock.Instant?
    /// When the last connection ended.
    public var disconnectedAt: ContinuousClock.Instant?
    /// Successful connections.
    public var connectionCount = 0
    /// Disconnections.
    public var disconnectionCount = 0
    /// Connection attempts that timed out.
    public var timeoutCount = 0
    /// Time spent connected, over all connections (the current one up to now not included).
    public var cumulativeConnected: Duration = .zero
    /// Where the statistics start: the discovery, or else when the peripheral was first asked
    /// for (what ``cumlativeSecondsDisconnected`` counts from).
    public var since: ContinuousClock.Instant?

    /// Statistics that start now.
    public init(since: ContinuousClock.Instant? = nil) {
        self.since = since
    }

    /// How long the current connection has lasted, if connected.
    public var connectedFor: Duration? {
        guard let connectedAt, disconnectedAt.map({ $0 < connectedAt }) ?? true else { return nil }
        return ContinuousClock.now - connectedAt
    }

    // MARK: BlueCap's names, in seconds

    /// The current connection's seconds if connected, else the last connection's (zero
    /// before the first): BlueCap's `secondsConnected`.
    public var secondsConnected: TimeInterval {
        if let connectedFor { return connectedFor.seconds }
        guard let connectedAt, let disconnectedAt else { return 0 }
        return (disconnectedAt - connectedAt).seconds
    }

    /// Seconds connected over all connections but the current one: BlueCap's
    /// `totalSecondsConnected`.
    public var totalSecondsConnected: TimeInterval { cumulativeConnected.seconds }

    /// Seconds connected over all connections, the current one included: BlueCap's
    /// `cumlativeSecondsConnected` (its spelling).
    public var cumlativeSecondsConnected: TimeInterval { (cumulativeConnected + (connectedFor ?? .zero)).seconds }

    /// Seconds not connected since the statistics started (``discoveredAt``, or ``since``):
    /// BlueCap's `cumlativeSecondsDisconnected` (its spelling).
    public var cumlativeSecondsDisconnected: TimeInterval {
        guard let start = discoveredAt ?? since else { return 0 }
        return max(0, (ContinuousClock.now - start).seconds - cumlativeSecondsConnected)
    }

    // MARK: Recording (one rule for every owner)

    /// A scan reported the peripheral at `instant` (only the first report counts).
    mutating func discovered(at instant: ContinuousClock.Instant = .now) {
        if discoveredAt == nil { discoveredAt = instant }
        if since.map({ instant < $0 }) ?? true { since = instant }
    }

    /// A connection came up.
    mutating func connected(at instant: ContinuousClock.Instant = .now) {
        connectedAt = instant
        connectionCount += 1
        if since == nil { since = instant }
    }

    /// The connection ended.
    mutating func disconnected(at instant: ContinuousClock.Instant = .now) {
        disconnectionCount += 1
        if let connectedAt, disconnectedAt.map({ $0 < connectedAt }) ?? true {
            cumulativeConnected += instant - connectedAt
        }
        disconnectedAt = instant
    }

    /// A connection attempt found no peer in its time.
    mutating func timedOut() { timeoutCount += 1 }
}

extension Duration {
    /// The duration in seconds, as iOS APIs give one (`TimeInterval`).
    var seconds: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
