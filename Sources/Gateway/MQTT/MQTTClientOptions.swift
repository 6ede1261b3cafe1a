/// ``MQTTClient``'s options, apart from the connection logic that reads them.
extension MQTTClient {
    /// What the client needs to know.
    public struct Options: Sendable {
        /// Where the broker is.
        public var broker: BrokerAddress
        /// The MQTT client identifier.
        public var clientID: String
        /// `username:` / `password:`.
        public var username: String?
        /// See ``username``; never logged.
        public var password: String?
        /// MQTT keepalive.
        public var keepAlive: Duration
        /// The last will: published by the broker, retained, when we vanish.
        public var will: (topic: String, payload: String)?
        /// The first wait before connecting again, doubled after each failure up to ``backoffLimit``.
        public var backoff: Duration
        /// See ``backoff``.
        public var backoffLimit: Duration
        /// Values held at most (``Outbox``).
        public var queueLimit: Int
        /// A clean session (the gateway's: its outbox holds what the broker has not
        /// acknowledged); false keeps the broker's session of ``clientID``: its subscriptions
        /// and the QoS 1 messages queued for it while away (a subscriber that must miss nothing).
        public var cleanSession = true
        /// The certificate authorities (a PEM file) trusted for `mqtts://`, in place of the
        /// system's (`ca_file:`; a broker with its own authority).
        public var caFile: String?
        /// What the takeover error gives as the cause when the broker keeps closing our
        /// connections right after accepting them (the gateway's: `another gateway uses the id
        /// 'gw1' on this broker`); nil says another client uses ``clientID``.
        public var duplicateID: String?

        /// Options for a broker.
        public init(
            broker: BrokerAddress, clientID: String, username: String? = nil, password: String? = nil,
            keepAlive: Duration = .seconds(30),
            will: (topic: String, payload: String)? = nil, backoff: Duration = .seconds(1),
            backoffLimit: Duration = .seconds(30),
            queueLimit: Int = 10_000
        ) {
            self.broker = broker
            self.clientID = clientID
            self.username = username
            self.password = password
            self.keepAlive = keepAlive
            self.will = will
            self.backoff = backoff
            self.backoffLimit = backoffLimit
            self.queueLimit = queueLimit
        }
    }
}
