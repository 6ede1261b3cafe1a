/// A message the broker delivered to one of our subscriptions.
public struct MQTTMessage: Sendable, Equatable {
    /// Its topic.
    public var topic: String
    /// Its payload.
    public var payload: [UInt8]
    /// Whether the broker kept it (a retained message replayed on subscribe).
    public var retained: Bool
}

/// What the MQTT client has done so far (the gateway's counters publish these).
public struct MQTTCounters: Sendable, Equatable {
    /// Values waiting for the broker or in flight (the broker queue depth).
    public var queueDepth = 0
    /// Values dropped because the queue was full.
    public var dropped = 0
    /// Publications the broker acknowledged.
    public var acknowledged = 0
    /// Connections established after the first.
    public var reconnects = 0
    /// Connections the broker refused (CONNACK with a code).
    public var refusals = 0
    /// The broker's last refusal, by name (`Connection Refused: not authorised.`).
    public var lastRefusal: String?
    /// Connected now.
    public var connected = false
    /// Connections the broker ended right after accepting them, several in a row: another
    /// client connecting with our client id takes the session over (``MQTTClient``).
    public var takeovers = 0
}
