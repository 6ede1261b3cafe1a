import FoundationEssentials

/// BlueCap's statistics on the peripheral itself, from ``Peripheral/statistics``. BlueCap's
/// dates are `Date`s; here the three instants are optional (a peripheral asked for by its
/// identifier was never discovered, nor connected before its first connection).
extension Peripheral {
    /// When a scan of this central first reported the peripheral (BlueCap's `discoveredAt`).
    public var discoveredAt: Date? { statistics.discoveredAt.map(Self.date) }
    /// When the last connection came up (BlueCap's `connectedAt`).
    public var connectedAt: Date? { statistics.connectedAt.map(Self.date) }
    /// When the last connection ended (BlueCap's `disconnectedAt`).
    public var disconnectedAt: Date? { statistics.disconnectedAt.map(Self.date) }
    /// Connection attempts that timed out (BlueCap's `timeoutCount`).
    public var timeoutCount: UInt { UInt(statistics.timeoutCount) }
    /// Connections that ended (BlueCap's `disconnectionCount`).
    public var disconnectionCount: UInt { UInt(statistics.disconnectionCount) }
    /// Connections made (BlueCap's `connectionCount`).
    public var connectionCount: UInt { UInt(statistics.connectionCount) }
    /// Seconds of the current connection, or of the last one when disconnected (BlueCap's
    /// `secondsConnected`).
    public var secondsConnected: TimeInterval { statistics.secondsConnected }
    /// Seconds connected since discovery, the current connection not included (BlueCap's
    /// `totalSecondsConnected`).
    public var totalSecondsConnected: TimeInterval { statistics.totalSecondsConnected }
    /// Seconds connected since discovery, the current connection included (BlueCap's
    /// `cumlativeSecondsConnected`, its spelling).
    public var cumlativeSecondsConnected: TimeInterval { statistics.cumlativeSecondsConnected }
    /// Seconds disconnected since discovery (or since the peripheral was first asked for),
    /// BlueCap's `cumlativeSecondsDisconnected`, its spelling.
    public var cumlativeSecondsDisconnected: TimeInterval { statistics.cumlativeSecondsDisconnected }

    /// The wall-clock date of a continuous-clock instant in the past.
    private nonisolated static func date(_ instant: ContinuousClock.Instant) -> Date {
        Date(timeIntervalSinceNow: -(ContinuousClock.now - instant).seconds)
    }
}
