import BluetoothCore
import HCI
import Synchronization

/// Bluejay's own state, in one value behind a lock: what the seed API reads synchronously on
/// the main actor (`connect` and then `isConnecting` is true at once; a second `.trap` listen
/// fails at once) and what the operations read and change on the stack's actor, without
/// either waiting for the other's actor. Each change is one `withLock`; what it implies
/// (callbacks, observers) is posted to the main actor afterwards, outside the lock.
///
/// Where the link stands is not here: the link's ``Peripheral`` owns it and publishes it
/// (``LinkStatus``), as it owns the listens' subscriptions and the reconnection.
final class BluejayCore: Sendable {
    /// A listen, registered when asked for (so a second one is trapped at once).
    struct Listen: Sendable {
        /// Its callbacks, on the main actor.
        let listener: Bluejay.Listener
        /// Its subscriber token on the link's peripheral, once subscribed.
        var token: Int?

        init(listener: Bluejay.Listener, token: Int? = nil) { (self.listener, self.token) = (listener, token) }
    }

    struct State: Sendable {
        var host = Bluejay.HostState.notStarted
        var link = Bluejay.LinkState.idle
        var scan = Bluejay.ScanState.idle
        var shouldAutoReconnect = true
        var autoReconnectPolicy = AutoReconnectPolicy()
        var scanExpiry: Duration = .seconds(15)
        /// What every timer of Bluejay's own waits on (``StartOptions/clock``).
        var clock = ElapsedClock(ContinuousClock())
        /// How many values of one listen may wait for the app (``StartOptions/listenBufferLimit``).
        var listenBufferLimit = StartOptions.defaultListenBufferLimit
        /// How the host was made, to make it again after the controller is lost (nil for a
        /// host adopted with ``StartMode/use(_:)``: Bluejay cannot reopen what it did not open).
        var reopenOptions: StartOptions?
        /// Reopen attempts since the controller last stayed up, and when it last came back: a
        /// controller lost again soon after it came back goes on with the next delay, so one
        /// that keeps failing is given up on rather than reopened for ever.
        var recoveryAttempts = 0
        var recoveredAt: ElapsedClock.Instant?
        /// The last connection asked for, to reconnect to with the same timeout.
        var lastConnect: (PeripheralIdentifier, Timeout)?
        var statistics: [PeripheralIdentifier: PeripheralStatistics] = [:]
        /// The listens by characteristic; they outlive a link that ends unexpectedly, to be
        /// subscribed again once Bluejay has reconnected.
        var listens: [CharacteristicIdentifier: Listen] = [:]
        /// Characteristics whose unsolicited values were offered to the restorer on this link.
        var offeredUnsolicited: Set<CharacteristicIdentifier> = []
        var restoration: RestorationStore?
        /// Whether the app registered a disconnect handler, which is then asked (on the main
        /// actor) at each link's end; without one, a link's end waits for nothing there.
        var hasDisconnectHandler = false

        /// The host, while it is up.
        var upHost: BluetoothHost? { if case let .up(host) = host { host } else { nil } }

        /// The followed peripheral's link as it publishes it.
        var followed: (peripheral: Peripheral, link: LinkStatus.Snapshot)? {
            if case let .following(peripheral, _) = link { (peripheral, peripheral.status.snapshot) } else { nil }
        }

        /// The link while it is up, once the app has been told of it.
        var connection: Bluejay.Connection? {
            guard case let .following(peripheral, reported?) = link,
                let handle = peripheral.status.snapshot.connectedHandle, handle == reported
            else { return nil }
            return Bluejay.Connection(handle: handle, owner: peripheral)
        }

        var isConnecting: Bool {
            switch link {
            case .connecting, .awaitingController: true
            case .idle: false
            case let .following(peripheral, _):
                switch peripheral.status.snapshot.state {
                case .connecting, .reconnecting: true
                case .connected, .disconnecting, .disconnected: false
                }
            }
        }

        /// Whether `listener` is the characteristic's current listen.
        func isCurrent(_ listener: Bluejay.Listener) -> Bool {
            listens[listener.characteristic]?.listener === listener
        }

        /// Ends every listen: returns them, to be told why on the main actor.
        mutating func takeListens() -> [Bluejay.Listener] {
            defer { listens = [:] }
            return listens.values.map(\.listener)
        }

        /// The record of the connected peripheral and the active listens, for restoration.
        var restorationRecord: RestorationRecord {
            var record = RestorationRecord()
            if let connection {
                record.peripheral = connection.peripheral.address.description
                record.addressType =
                    connection.peripheral.addressType == .random || connection.peripheral.addressType == .randomIdentity
                    ? "random" : "public"
                record.listens = listens.keys.map {
                    RestorationRecord.Listen(service: $0.service.uuid.description, characteristic: $0.uuid.description)
                }
                .sorted { ($0.service, $0.characteristic) < ($1.service, $1.characteristic) }
            }
            return record
        }
    }

    let state = Mutex(State())

    init() {}

    /// Reads one thing of the state.
    func read<T: Sendable>(_ body: (State) -> T) -> T {
        state.withLock { body($0) }
    }
}
