import ATT
import BluetoothCore
import FoundationEssentials
import GAP
import GATT
import HCI
import L2CAP
import SMP

/// Why the peripheral role could not do what was asked.
public enum PeripheralManagerError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Advertising could not start, change or stop.
    case advertising(AdvertisingError)
    /// A service could not be added.
    case service(GATTServerError)
    /// No served characteristic has this UUID.
    case unknownCharacteristic(BluetoothUUID)
    /// A notification or indication could not be sent.
    case att(ATTError)
    /// An L2CAP signaling request (connection parameters) failed.
    case signaling(CreditBasedChannelError)
    /// A Security Request could not be sent.
    case security(SMPError)
    /// Advertising runs already (BlueCap's `isAdvertising`, from ``PeripheralManager/startAdvertising(_:uuids:)``).
    case isAdvertising
    /// Advertising did not stop in the time given (BlueCap's `stopAdvertisingTimeout`).
    case stopAdvertisingTimeout

    /// Readable, with codes by name.
    public var description: String {
        switch self {
        case let .advertising(error): "advertising: \(error)"
        case let .service(error): "adding a service: \(error)"
        case let .unknownCharacteristic(uuid): "no served characteristic \(uuid)"
        case let .att(error): error.description
        case let .signaling(error): "L2CAP signaling: \(error)"
        case let .security(error): "security: \(error)"
        case .isAdvertising: "advertising runs already"
        case .stopAdvertisingTimeout: "advertising did not stop in time"
        }
    }
}

/// Something that happened to our peripheral, for ``PeripheralManager/events()``.
public enum PeripheralManagerEvent: Sendable, Equatable {
    /// A central connected (the link's handle, the central's address).
    case connected(ConnectionHandle, BluetoothAddress)
    /// A central's link ended, with the reason.
    case disconnected(ConnectionHandle, HCIStatus)
    /// A central turned notifications or indications on or off for a characteristic.
    case subscriptionChanged(GATTSubscription)
    /// A central wrote a characteristic's value (after the write handler, if any,
    /// accepted it).
    case valueWritten(GATTWriteRequest)
    /// A central paired with us on this link (by this method); its keys are stored when
    /// both sides bond.
    case paired(ConnectionHandle, PairingMethod)
}

/// Our side as a peripheral: BlueCap's `PeripheralManager`, with async/await. Advertise,
/// serve a GATT database, answer reads and writes (from stored values or async handlers),
/// and send notifications and indications to the centrals that subscribed.
///
/// ```swift
/// let manager = try await PeripheralManager(transport: "hci0", name: "Thermometer")
/// let served = try await manager.add(MutableService(uuid: BluetoothUUID(UInt16(0x181A)), characteristics: [
///     MutableCharacteristic(uuid: BluetoothUUID(UInt16(0x2A6E)), properties: [.read, .notify], value: [0x00, 0x00]),
/// ]))
/// try await manager.startAdvertising("Thermometer", uuids: [BluetoothUUID(UInt16(0x181A))])
/// try await manager.updateValue([0x2A, 0x09], for: BluetoothUUID(UInt16(0x2A6E)))
/// ```
///
/// It runs on a `BluetoothHost`: the host's GAP/GATT services come first in the database
/// (its Device Name is `name`), the app's services after them.
@BluetoothActor
public final class PeripheralManager {
    /// The stack this peripheral runs on.
    public let host: BluetoothHost
    /// The GATT server (for what this API does not cover: handles, raw values).
    public let server: GATTServer
    /// The advertiser.
    public let advertiser: Advertiser
    /// Whether each link a central makes is set up from our side: remote features read,
    /// data length and PHY raised when both sides support it (as a central's links are).
    public var setsUpLinks = true
    private var watchers: [Int: AsyncStream<PeripheralManagerEvent>.Continuation] = [:]
    /// What the manager itself has to say (a bonded central's state not restored).
    let logger: HCILogger
    private var nextWatcher = 0
    /// The characteristics served, by UUID (the first of a UUID that appears twice).
    private var servedByUUID: [BluetoothUUID: ServedCharacteristic] = [:]
    /// The services added, in order, with where each landed.
    var added: [(service: MutableService, served: ServedService)] = []
    /// The app's characteristics, by value handle: each holds its value (ServedServices.swift).
    var bound: [AttributeHandle: MutableCharacteristic] = [:]
    /// The streams of ``whenStateChanges()``.
    var stateWatchers: [AsyncStream<ManagerState>.Continuation] = []

    /// Opens `transport` (`hci0`, `tcp:HOST:PORT`, …), brings the stack up and serves the
    /// GAP service with Device Name `name`.
    public convenience init(
        transport: String, name: String = "Bluejay", capture: String? = nil, store: StoreDirectory = .standard,
        logger: HCILogger = .standardError
    ) async throws(BluejayError) {
        self.init(
            host: try await BluetoothHost(
                transport: transport, capture: capture, store: store, deviceName: name, logger: logger),
            logger: logger)
    }

    /// A peripheral on a stack already up: the host's ATT bearers answer from this
    /// manager's server from now on. `logger` takes the advertiser's diagnostics.
    public init(host: BluetoothHost, logger: HCILogger = .standardError) {
        self.host = host
        let base = (host.bearers.server as? LocalGATTServer) ?? LocalGATTServer()
        server = (host.bearers.server as? GATTServer) ?? GATTServer(base: base)
        host.bearers.server = server
        advertiser = Advertiser(controller: host.controller, logger: logger)
        self.logger = logger.layer("gatt")
        // Private addresses are made with the IRK the Security Manager keeps; pairing
        // hashes the address a central connected to (PrivateAddresses.swift).
        advertiser.privateAddressSource = { [weak host] in host?.security.makeResolvablePrivateAddress() }
        host.security.localAddress = { [weak advertiser] handle in advertiser?.localAddress(of: handle) }
        server.linkSecurity = { [weak host] handle in
            guard let host, host.security.isEncrypted(handle) else { return .none }
            return host.security.isAuthenticated(handle) ? .authenticated : .encrypted
        }
        host.peripheralManager = self
        server.onSubscriptionChanged = { [weak self] in self?.subscriptionChanged($0) }
        server.onValueWritten = { [weak self] write in
            // A write the table stored is the app's characteristic's value too.
            self?.bound[write.handle]?.state.withLock { $0.value = write.value }
            self?.emit(.valueWritten(write))
        }
        advertiser.onConnection = { [weak self] handle, address in
            guard let self else { return }
            emit(.connected(handle, address))
            // The longest data length and 2M PHY, when both sides have them: a peripheral
            // may start these procedures too, and notifications gain the most from them.
            if setsUpLinks { Task { @BluetoothActor in await host.connections.setUp(handle) } }
        }
        advertiser.onDisconnection = { [weak self] handle, reason in
            guard let self else { return }
            for characteristic in bound.values { characteristic.linkEnded(handle) }
            emit(.disconnected(handle, reason))
        }
        let paired = host.security.onPaired
        host.security.onPaired = { [weak self, weak host] handle, method, bond in
            paired?(handle, method, bond)
            // A central that bonded: its subscriptions are kept for its next links. A link
            // already gone has nothing to keep (and binding its handle would name the next
            // link that gets it).
            if let host, host.connections.connection(handle) != nil, let address = bond.identityAddress,
                host.security.bonds.bond(for: address, type: bond.identityAddressType) != nil,
                let bearer = try? host.bearers.bearer(for: handle)
            {
                self?.server.bind(bearer, toBondedClient: bond.address)
            }
            self?.emit(.paired(handle, method))
        }
        // A bonded central back, encrypted with its bond: its subscriptions apply again
        // and it hears of database changes made while it was away.
        host.security.onEncryptedWithBond = { [weak self, weak host] handle, bond in
            guard let self, let host else { return }
            do throws(ATTError) {
                restoreBondedCentral(bond, on: try host.bearers.bearer(for: handle))
            } catch {
                logger.log(
                    .warning,
                    "handle \(hex(handle, digits: 4)): the bonded central's subscriptions are not restored: \(error)")
            }
        }
        keepBondedCentralsInStore()
    }

    /// Stops watching, ends every link and closes the stack.
    public func close() {
        advertiser.close()
        for watcher in watchers.values { watcher.finish() }
        watchers = [:]
        for characteristic in bound.values { characteristic.unbind() }
        bound = [:]
        host.close()
    }

    // MARK: - Advertising

    /// Whether advertising runs now.
    public var isAdvertising: Bool { advertiser.isAdvertising }

    /// Advertises `advertisement` (its structures shared out between advertising data and
    /// scan response), connectable by default; after a central connects, advertising starts
    /// again as `resumption` says.
    public func startAdvertising(
        _ advertisement: Advertisement, parameters: AdvertisingParameters = AdvertisingParameters(),
        resumption: AdvertisingResumption = .afterDisconnection
    ) async throws(PeripheralManagerError) {
        do throws(AdvertisingError) {
            let (data, scanResponse) = try advertisement.split(kind: parameters.kind)
            advertiser.resumption = resumption
            try await advertiser.start(data: data, scanResponse: scanResponse, parameters: parameters)
        } catch {
            throw .advertising(error)
        }
    }

    /// Advertises `name` and `uuids`, connectable (BlueCap's `startAdvertising(_:uuids:)`);
    /// fails with ``PeripheralManagerError/isAdvertising`` while advertising runs, as BlueCap's.
    public func startAdvertising(_ name: String, uuids: [BluetoothUUID]? = nil) async throws(PeripheralManagerError) {
        guard !isAdvertising else { throw .isAdvertising }
        try await startAdvertising(Advertisement(localName: name, serviceUUIDs: uuids ?? []))
    }

    /// The earlier spelling of ``startAdvertising(_:uuids:)``.
    @available(*, deprecated, renamed: "startAdvertising(_:uuids:)")
    public func startAdvertising(name: String, uuids: [BluetoothUUID] = []) async throws(PeripheralManagerError) {
        try await startAdvertising(name, uuids: uuids)
    }

    /// Stops advertising (BlueCap's `stopAdvertising(timeout:)`); links already up stay.
    /// Fails with ``PeripheralManagerError/stopAdvertisingTimeout`` when the controller has
    /// not confirmed within `timeout` seconds (`.infinity`: no limit).
    public func stopAdvertising(timeout: TimeInterval = 10.0) async throws(PeripheralManagerError) {
        let outcome = Expectation<Result<Void, PeripheralManagerError>>()
        let advertiser = advertiser
        Task { @BluetoothActor in
            do throws(AdvertisingError) {
                try await advertiser.stop()
                outcome.fulfill(.success(()))
            } catch {
                outcome.fulfill(.failure(.advertising(error)))
            }
        }
        let timer = Duration(seconds: timeout).map { limit in
            Task { @BluetoothActor in
                try await Task.sleep(for: limit)
                outcome.fulfill(.failure(.stopAdvertisingTimeout))
            }
        }
        defer { timer?.cancel() }
        try await outcome.value().get()
    }

    // MARK: - Services

    /// Adds `service` to the database (after every service there) and returns where its
    /// characteristics landed. Centrals subscribed to Service Changed are told; bonded
    /// centrals away now are told when they come back.
    /// Each ``MutableCharacteristic`` holds its value from now on: centrals read it there,
    /// and their writes land there (BlueCap's `add(_:)`).
    @discardableResult
    public func add(_ service: MutableService) throws(PeripheralManagerError) -> ServedService {
        try add(services: [service])[0]
    }

    /// Adds `services` together, as a database file declares them: each at the handles it
    /// gives (``MutableService/layout``), else after the one before; includes may name one
    /// another; a GAP or GATT service among them replaces the host's (as `GATTServer.add(services:)` does).
    /// All are added, or none.
    @discardableResult
    public func add(services: [MutableService]) throws(PeripheralManagerError) -> [ServedService] {
        let served: [ServedService]
        do { served = try server.add(services: services.map(\.definition)) } catch { throw .service(error) }
        for (service, landed) in zip(services, served) {
            for characteristic in landed.characteristics where servedByUUID[characteristic.uuid] == nil {
                servedByUUID[characteristic.uuid] = characteristic
            }
            serve(service, at: landed)
        }
        return served
    }

    /// `characteristic` is served no more: its UUID names the next one served with it, if any.
    func forgetServed(_ characteristic: ServedCharacteristic) {
        guard servedByUUID[characteristic.uuid]?.valueHandle == characteristic.valueHandle else { return }
        servedByUUID[characteristic.uuid] = added.lazy.flatMap(\.served.characteristics)
            .first { $0.uuid == characteristic.uuid && $0.valueHandle != characteristic.valueHandle }
    }

    /// The served characteristic of `uuid`.
    public func characteristic(_ uuid: BluetoothUUID) throws(PeripheralManagerError) -> ServedCharacteristic {
        guard let characteristic = servedByUUID[uuid] else { throw .unknownCharacteristic(uuid) }
        return characteristic
    }

    /// Answers reads of `uuid` with `handler` from now on: the value to serve, or the ATT
    /// error code to refuse with.
    public func onRead(_ uuid: BluetoothUUID, _ handler: @escaping GATTServer.ReadHandler)
        throws(PeripheralManagerError)
    {
        server.setReadHandler(for: try characteristic(uuid).valueHandle, handler)
    }

    /// Lets `handler` accept (nil) or refuse (an ATT error code) each write of `uuid`.
    public func onWrite(_ uuid: BluetoothUUID, _ handler: @escaping GATTServer.WriteHandler)
        throws(PeripheralManagerError)
    {
        server.setWriteHandler(for: try characteristic(uuid).valueHandle, handler)
    }

    /// The value of `uuid` now.
    public func value(of uuid: BluetoothUUID) throws(PeripheralManagerError) -> [UInt8] {
        let handle = try characteristic(uuid).valueHandle
        if let owner = bound[handle] { return owner.state.withLock { $0.value } }
        return server.value(of: handle) ?? []
    }

    /// Sets the value of `uuid` and sends it to every central subscribed: a notification
    /// to those with notifications on, an indication to those with indications on, and
    /// returns once each indication is confirmed (or its link went).
    public func updateValue(_ value: [UInt8], for uuid: BluetoothUUID) async throws(PeripheralManagerError) {
        let handle = try characteristic(uuid).valueHandle
        try await send(value, at: handle)
    }

    /// Sets the value at `handle` and sends it to every central subscribed, as
    /// ``updateValue(_:for:)`` says.
    func send(_ value: [UInt8], at handle: AttributeHandle) async throws(PeripheralManagerError) {
        bound[handle]?.state.withLock { $0.value = value }
        server.setValue(value, of: handle)
        server.notify(handle, value: value)
        for subscription in server.subscribers(of: handle) where subscription.indications {
            do { try await server.indicate(handle, value: value, to: subscription.connection) } catch {
                // A link that went is not the app's failure; an unconfirmed indication on a
                // live link (timeout) is.
                if host.connections.connection(subscription.connection) != nil { throw .att(error) }
            }
        }
    }

    /// The centrals subscribed to `uuid`.
    public func subscribers(of uuid: BluetoothUUID) throws(PeripheralManagerError) -> [GATTSubscription] {
        server.subscribers(of: try characteristic(uuid).valueHandle)
    }

    // MARK: - Links

    /// Asks the central on link `handle` for new connection parameters (L2CAP Connection
    /// Parameter Update Request) and returns whether it accepted; the central then applies
    /// them. Fails if the link is gone or the central does not answer in time.
    public func requestConnectionParameters(_ parameters: LEConnectionRequest, on handle: ConnectionHandle)
        async throws(PeripheralManagerError) -> Bool
    {
        do { return try await host.channels.creditBased.requestParameterUpdate(parameters, on: handle) } catch {
            throw .signaling(error)
        }
    }

    /// Asks the central on link `handle` to secure it (an SMP Security Request): it pairs
    /// with us (we answer as responder) or encrypts with its bond; watch
    /// `host.security.isEncrypted(handle)`, or let values that need encryption wait for it.
    public func requestSecurity(on handle: ConnectionHandle) throws(PeripheralManagerError) {
        do { try host.security.requestSecurity(handle) } catch { throw .security(error) }
    }

    // MARK: - Security

    /// How centrals pair with us: our IO capability (with the central's, it picks Just
    /// Works, Passkey Entry or Numeric Comparison), bonding, MITM, whether legacy pairing is
    /// refused. Set it before a central pairs.
    public var pairingPolicy: PairingPolicy {
        get { host.security.policy }
        set { host.security.policy = newValue }
    }

    /// Shows the passkey a central's user types, takes the passkey a central shows, and
    /// confirms the numeric comparison value; without one only Just Works completes.
    public var pairingDelegate: (any PairingDelegate)? {
        get { host.security.delegate }
        set { host.security.delegate = newValue }
    }

    /// Sets ``pairingPolicy`` and ``pairingDelegate`` at once (from outside the stack's
    /// actor, where the properties cannot be set).
    public func configurePairing(_ policy: PairingPolicy, delegate: (any PairingDelegate)?) {
        pairingPolicy = policy
        pairingDelegate = delegate
    }

    // MARK: - Events

    /// Connections, disconnections, subscriptions and writes from now on, in order.
    public func events() -> AsyncStream<PeripheralManagerEvent> {
        let (stream, continuation) = AsyncStream<PeripheralManagerEvent>.makeStream()
        nextWatcher += 1
        let id = nextWatcher
        watchers[id] = continuation
        continuation.onTermination = { _ in Task { @BluetoothActor [weak self] in self?.watchers[id] = nil } }
        return stream
    }

    func emit(_ event: PeripheralManagerEvent) {
        for watcher in watchers.values { watcher.yield(event) }
    }
}
