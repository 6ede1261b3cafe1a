import ATT
import BluetoothCore
import DiscoveryCache
import GAP
import GATT
import HCI
import L2CAP
import SMP

/// Opens a controller's transport, recording to `capture` when given (what Bluejay's
/// `StartOptions.openTransport` holds).
public typealias TransportOpener = @Sendable (_ capture: BTSnoopWriter?) throws(TransportError) -> any HCITransport

/// What the app-facing objects on a host (Bluejay's central and peripheral manager) hear from
/// it: the controller's state changed, and the host closed. The host holds its central until
/// it closes, and its peripheral manager weakly.
@BluetoothActor
package protocol HostFace: AnyObject {
    /// The controller failed by itself (transport lost, Hardware Error).
    func hostStateChanged()
    /// The host closed: let go of it.
    func hostClosed()
}

/// One controller with the whole stack on it: connections, L2CAP, the ATT bearers with our
/// GAP/GATT server, a GATT client per link, the discovery cache and a scanner: the one
/// wiring of the layers, under the app-facing faces (Bluejay's `Bluejay`, `Central`,
/// `PeripheralManager`) and the `bluejay` tool. It is what `Bluejay` runs on, and what
/// `Bluejay.stopAndExtractBluetoothState()` hands back for other code to use.
@BluetoothActor
public final class BluetoothHost {
    /// The controller.
    public let controller: HCIController
    /// LE connections.
    public let connections: ConnectionManager
    /// L2CAP over the links.
    public let channels: L2CAPChannels
    /// The ATT bearers, one per link.
    public let bearers: ATTBearers
    /// The discovery cache.
    public let cache: DiscoveryCache
    /// The scanner.
    public let scanner: Scanner
    /// The Security Manager: pairing, bonds, encryption on demand.
    public let security: SecurityManager
    /// What the controller reported at bring-up.
    public let info: ControllerInfo
    /// The GATT client on each link that has one, kept on the link: what it discovered is
    /// saved when the link ends.
    private let clients: PerLink<GATTClient>
    /// The central on this host, once made (Bluejay's `BluetoothHost.central`).
    package private(set) var centralFace: (any HostFace)?
    /// The peripheral manager on this host, if one was made: told when the state changes.
    package weak var peripheralManager: (any HostFace)?
    /// Whether ``close()`` ran: a closed host does nothing more.
    public private(set) var isClosed = false
    /// The longest value a long read follows (`GATTClient.maximumValueLength`), for every
    /// link's client from now on.
    public var maximumValueLength = 65536
    /// Called with (connection handle, services) when a peer's Service Changed invalidates them.
    public var onServicesInvalidated: ((ConnectionHandle, [Service]) -> Void)?
    /// Called with (link handle, value handle, the characteristic there if discovered, value)
    /// for a notification or indication nobody listens to.
    public var onUnhandledValue:
        ((ConnectionHandle, AttributeHandle, CharacteristicIdentifier?, ArraySlice<UInt8>) -> Void)?
    /// The btsnoop writer the transport records to (closed with the host).
    package nonisolated let capture: BTSnoopWriter?
    /// What every timeout of this host sleeps on, so armed timers can be counted (nil for a
    /// controller brought up elsewhere, whose clock is its own).
    private let timers: CountingClock<ContinuousClock>?
    /// Called once if the controller stops by itself (transport lost, Hardware Error), after
    /// its links have been ended.
    public var onControllerFailure: ((HCIError) -> Void)?

    /// Opens `transport` (a transport string: `hci0`, `tcp:HOST:PORT`, …), optionally
    /// recording every packet to the btsnoop file `capture`, brings the controller up and
    /// attaches every layer.
    public convenience init(
        transport: String, capture capturePath: String? = nil, store: StoreDirectory = .standard,
        cacheEnabled: Bool = true,
        deviceName: String = "Bluejay", logger: HCILogger = .standardError
    ) async throws(BluejayError) {
        let writer = try Self.openCapture(capturePath)
        let opened: any HCITransport
        do { opened = try await Self.open(transport, capture: writer, clock: ContinuousClock()) } catch {
            writer?.close()
            throw error
        }
        try await self.init(
            transport: opened, capture: writer, store: store, cacheEnabled: cacheEnabled, deviceName: deviceName,
            logger: logger)
    }

    /// Opens the btsnoop file at `path` to record to (nil: no capture); `redacted`, with
    /// every packet's secrets zeroed (``PacketSecrets``).
    package static func openCapture(_ path: String?, redacted: Bool = false) throws(BluejayError) -> BTSnoopWriter? {
        guard let path else { return nil }
        do { return try BTSnoopWriter(path: path, redactor: redacted ? PacketSecrets() : nil) } catch {
            throw .startFailed("capture \(path): \(error)")
        }
    }

    /// Opens the transport string `transport` names, or calls `opener` instead when given
    /// (then `transport` only names it in the error), recording to `capture`. A user channel
    /// still busy is retried on `clock`, off this actor, so the stack is not held up.
    package static func open(
        _ transport: String, capture: BTSnoopWriter?, using opener: TransportOpener? = nil,
        clock: any Clock<Duration>
    ) async throws(BluejayError) -> any HCITransport {
        do {
            if let opener { return try opener(capture) }
            return try await TransportSpec(parsing: transport).open(capture: capture, clock: clock)
        } catch {
            throw .startFailed("\(transport): \(error)")
        }
    }

    /// Brings up the controller behind a transport already open (one of your own, or a
    /// wrapper around one), and attaches every layer. `capture` is the btsnoop writer that
    /// transport records to, if any; once up, the host closes it with itself. On failure
    /// the transport is closed and the capture left open.
    public convenience init(
        transport opened: any HCITransport, capture: BTSnoopWriter? = nil, store: StoreDirectory = .standard,
        cacheEnabled: Bool = true,
        deviceName: String = "Bluejay", logger: HCILogger = .standardError
    ) async throws(BluejayError) {
        let timers = CountingClock(ContinuousClock())
        let controller = HCIController(transport: opened, clock: timers, configuration: .init(logger: logger))
        let info: ControllerInfo
        do { info = try await controller.start() } catch {
            // The capture is the caller's until the host is up (it may go on in a retry);
            // a writer nobody keeps closes itself.
            controller.close()
            throw .startFailed("\(opened): \(error)")
        }
        self.init(
            controller: controller, info: info, timers: timers, capture: capture, store: store,
            cacheEnabled: cacheEnabled,
            deviceName: deviceName, logger: logger)
    }

    /// Attaches every layer to a controller already brought up (`info`, what it reported):
    /// the one wiring of the stack, for the library and for the `bluejay` tool, which starts
    /// its controller itself to report a replay's verdict.
    public convenience init(
        controller: HCIController, info: ControllerInfo, store: StoreDirectory = .standard, cacheEnabled: Bool = true,
        deviceName: String = "Bluejay", logger: HCILogger = .standardError
    ) {
        self.init(
            controller: controller, info: info, timers: nil, capture: nil, store: store, cacheEnabled: cacheEnabled,
            deviceName: deviceName, logger: logger)
    }

    private init(
        controller: HCIController, info: ControllerInfo, timers: CountingClock<ContinuousClock>?,
        capture: BTSnoopWriter?,
        store: StoreDirectory, cacheEnabled: Bool, deviceName: String, logger: HCILogger
    ) {
        self.capture = capture
        self.timers = timers
        self.controller = controller
        self.info = info
        connections = ConnectionManager(controller: controller, logger: logger)
        channels = L2CAPChannels(controller: controller, logger: logger)
        // GAP's one policy for new parameters, however the peer asks (L2CAP or the link layer).
        channels.acceptParameters = { [connections] handle, request in connections.acceptParameters(handle, request) }
        bearers = ATTBearers(controller: controller, channels: channels, logger: logger)
        bearers.server = LocalGATTServer(deviceName: deviceName)
        cache = DiscoveryCache(store: store, enabled: cacheEnabled, logger: logger)
        scanner = Scanner(controller: controller, logger: logger)
        security = SecurityManager(
            controller: controller, channels: channels, store: store, logger: logger)
        // Handles are reused: a link that ends takes its client with it, whoever asked for it.
        clients = PerLink(controller: controller, layer: .gatt)
        clients.onClose = { [cache] _, client, _ in cache.finish(client) }
        controller.onFailure = { [weak self] error in
            self?.centralFace?.hostStateChanged()
            self?.peripheralManager?.hostStateChanged()
            self?.onControllerFailure?(error)
        }
    }

    /// The GATT client of link `handle`: made on first use, MTU exchanged and the cached
    /// database validated for `identity` (by its Database Hash; on a link encrypted with the
    /// peer's bond whose entry was saved subscribed to Service Changed, trusted without).
    public func client(for handle: ConnectionHandle, identity: String) async throws(BluejayError) -> GATTClient {
        if let client = clients[handle], client.bearer.isOpen { return client }
        let bearer: ATTBearer
        do { bearer = try bearers.bearer(for: handle) } catch { throw .gatt(.att(error)) }
        let client = GATTClient(bearer: bearer)
        client.maximumValueLength = maximumValueLength
        clients[handle] = client
        do throws(GATTError) {
            _ = try await LinkSetUp.run(client, handle: handle, identity: identity, security: security, cache: cache)
            // So the peer can tell us when its database changes (iOS does this too); a peer
            // that refuses (e.g. wants encryption first) just does not tell us. On a trusted
            // bonded reconnection the peer kept the subscription: nothing is sent.
            do throws(GATTError) { try await client.subscribeToServiceChanged() } catch {
                guard case .att(.errorResponse) = error else { throw error }
            }
        } catch {
            throw BluejayError.from(error)
        }
        client.onServicesInvalidated = { [weak self] services in self?.onServicesInvalidated?(handle, services) }
        // `unowned client`: the client calls its own closure, so it is alive then (a weak
        // reference would give it a side table that slows every retain of it).
        client.onUnhandledValue = { [weak self, unowned client] valueHandle, value in
            let found = client.database.characteristic(valueHandle: valueHandle)
            let identifier = found.map {
                CharacteristicIdentifier(
                    uuid: $0.characteristic.uuid, service: ServiceIdentifier(uuid: $0.service.uuid))
            }
            self?.onUnhandledValue?(handle, valueHandle, identifier, value)
        }
        return client
    }

    /// `central` is this host's central from now on (a new one replaces the last); a closed
    /// host keeps none, so the two do not hold each other for ever.
    package func register(_ central: any HostFace) { if !isClosed { centralFace = central } }

    /// The client of a live link, if one was made.
    public func existingClient(for handle: ConnectionHandle) -> GATTClient? { clients[handle] }

    /// Forgets the client of a link that ended, saving what it discovered.
    public func linkEnded(_ handle: ConnectionHandle) {
        if let client = clients.removeValue(forKey: handle) { cache.finish(client) }
    }

    /// Detaches every layer and closes the transport and the capture.
    public func close() { close(keepingCapture: false) }

    /// Detaches every layer and closes the transport; the capture stays open when it is to
    /// go on in the host that replaces this one.
    package func close(keepingCapture: Bool) {
        onControllerFailure = nil
        // The central and its host hold each other until now.
        isClosed = true
        let closing = centralFace
        centralFace = nil
        closing?.hostClosed()
        peripheralManager?.hostClosed()
        for handle in clients.handles { linkEnded(handle) }
        security.close()
        bearers.close()
        channels.close()
        connections.close()
        controller.close()
        if !keepingCapture { capture?.close() }
    }

    /// What the host holds right now: links and their per-layer state, commands and ACL
    /// packets in flight, timers armed. Zero everywhere once every link has ended and
    /// nothing is under way; anything else after that is a leak.
    public var resources: HostResources {
        HostResources(
            links: connections.connections.count,
            commandsOutstanding: controller.outstandingCommandCount + controller.queuedCommandCount,
            aclPacketsQueued: controller.aclFlow?.queuedCount ?? 0,
            aclPacketsInController: controller.aclFlow?.inFlight ?? 0,
            l2capLinks: channels.trackedLinks,
            l2capChannels: channels.creditBasedInUse,
            attBearers: bearers.bearers.count,
            attRequestsPending: bearers.bearers.reduce(0) {
                $0 + $1.queuedRequests + ($1.hasOutstandingRequest ? 1 : 0)
            },
            gattClients: clients.count,
            smpLinks: security.trackedLinks,
            pairings: security.pairingsInProgress,
            timersArmed: timers?.sleeping ?? 0)
    }
}
