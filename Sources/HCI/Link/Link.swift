import BluetoothCore

/// State one layer keeps for one link, let go of when the link closes.
@BluetoothActor
public protocol LinkAttachment: AnyObject {
    /// `link` ended with `reason` (its Disconnection Complete's, or why the controller or
    /// the host stopped): end what waits on it and let go. Called once.
    func linkClosed(_ link: Link, _ reason: HCIStatus)
}

/// One LE connection, from the LE (Enhanced) Connection Complete that made it to the
/// Disconnection Complete that ends it: what the controller reported of it, and what each
/// layer keeps for it.
///
/// The controller makes it and closes it, once (``HCIController/link(_:)``). A layer keeps
/// its state for the link here (``attachment(for:layer:make:)``, or ``PerLink``) instead of
/// in a map of its own, so nothing outlives the link: closing it closes every attachment in
/// one defined order, the highest layer first (what stands on a layer goes before it), the
/// newest first within a layer. Then the waits on its end and on its ACL data end.
/// Bumble's `Connection`, NimBLE's `ble_hs_conn` and BTstack's `hci_connection_t` are the
/// models.
@BluetoothActor
public final class Link {
    /// Where the link is in its life.
    public enum State: Sendable, Equatable {
        /// Up.
        case open
        /// Ended with this reason; every attachment has been closed.
        case closed(HCIStatus)
    }

    /// The layers that keep state on a link, from the bottom up. A closing link closes
    /// them from the top down.
    public enum Layer: Int, Sendable, Comparable {
        /// GAP's procedures: connecting, advertising, privacy.
        case gap
        /// Reassembly, signaling, credit-based channels.
        case l2cap
        /// The Security Manager's session and the link's encryption.
        case security
        /// The ATT bearer. Above security, as its requests wait on it (a request refused for
        /// want of encryption waits for pairing): closed first, they end as disconnected
        /// rather than with the pairing's failure.
        case att
        /// The GATT client and the GATT server's per-client state.
        case gatt
        /// What tells the app of the link's end (GAP's connection manager and advertiser) and
        /// the app-facing objects: closed first, so the app hears of the
        /// end before any layer's waiters fail for it, and sees their failures as the end's.
        case host

        /// Lower layers first.
        public static func < (lhs: Layer, rhs: Layer) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    private struct Attached {
        let owner: ObjectIdentifier
        let layer: Layer
        let state: any LinkAttachment
    }

    /// The connection handle, unique among open links (a later link may reuse it).
    public let handle: ConnectionHandle
    /// What the controller reported of the link: roles, addresses, parameters, PHY, data
    /// length, the peer's features (kept current by the controller, from the LE events that
    /// report them: ``HCIController/request(_:on:awaiting:timeout:until:)``).
    public internal(set) var connection: LEConnection
    /// Open or closed.
    public private(set) var state: State = .open
    private var attached: [Attached] = []
    private var endWaiters: [Expectation<HCIStatus>] = []
    /// ACL packets sent on this link that the controller has not yet reported complete
    /// (Number Of Completed Packets): the link's share of the controller's buffers, all
    /// given back when it closes (Core Vol 4, Part E, 4.1.1).
    public internal(set) var packetsInController = 0
    /// Waiting for this link's queued ACL packets to be completed (``HCIController/waitUntilDelivered(handle:timeout:)``).
    var drainWaiters: [Expectation<Bool>] = []
    /// Procedures on this link waiting for the LE event that ends them
    /// (``HCIController/request(_:on:awaiting:timeout:until:)``).
    var eventWaits: [LinkEventWait] = []

    init(_ connection: LEConnection) {
        handle = connection.handle
        self.connection = connection
    }

    /// Whether the link is up.
    public var isOpen: Bool { state == .open }

    /// Takes back `count` packets the controller reports complete, at most as many as the
    /// link has there (a controller that over-reports must not let us overrun it later);
    /// returns how many it took.
    func completePackets(_ count: Int) -> Int {
        let taken = min(count, packetsInController)
        packetsInController -= taken
        return taken
    }

    /// How many layers keep state on the link now.
    public var attachmentCount: Int { attached.count }

    /// What `owner` keeps on this link, if anything.
    public func attachment<Attachment: LinkAttachment>(for owner: AnyObject, as _: Attachment.Type = Attachment.self)
        -> Attachment?
    {
        let key = ObjectIdentifier(owner)
        for entry in attached where entry.owner == key { return entry.state as? Attachment }
        return nil
    }

    /// What `owner` keeps on this link, made with `make` and attached at `layer` if there
    /// is none yet. On a closed link the made state is closed at once (and not kept), so a
    /// late caller sees the link's end instead of waiting on it.
    public func attachment<Attachment: LinkAttachment>(for owner: AnyObject, layer: Layer, make: () -> Attachment)
        -> Attachment
    {
        if let existing: Attachment = attachment(for: owner) { return existing }
        let made = make()
        if case let .closed(reason) = state {
            made.linkClosed(self, reason)
        } else {
            attached.append(Attached(owner: ObjectIdentifier(owner), layer: layer, state: made))
        }
        return made
    }

    /// Takes `owner`'s state off the link without closing it, and returns it.
    @discardableResult
    public func detach(_ owner: AnyObject) -> (any LinkAttachment)? {
        let key = ObjectIdentifier(owner)
        guard let index = attached.firstIndex(where: { $0.owner == key }) else { return nil }
        return attached.remove(at: index).state
    }

    /// Fulfils `waiter` with the reason when the link closes (at once if it has).
    public func whenClosed(_ waiter: Expectation<HCIStatus>) {
        if case let .closed(reason) = state { return waiter.fulfill(reason) }
        endWaiters.append(waiter)
    }

    /// Stops telling `waiter` of the link's end.
    public func stopWaiting(_ waiter: Expectation<HCIStatus>) {
        endWaiters.removeAll { $0 === waiter }
    }

    /// Closes the link once: every attachment, the highest layer first and the newest
    /// first within a layer; then the waits on its ACL data (nothing of it is left to
    /// send), its procedures (failed with the reason) and the waits on its end.
    func close(_ reason: HCIStatus) {
        guard state == .open else { return }
        state = .closed(reason)
        let order = attached.indices.sorted { (attached[$0].layer, $0) > (attached[$1].layer, $1) }
        let closing = order.map { attached[$0].state }
        attached.removeAll()
        for state in closing { state.linkClosed(self, reason) }
        for waiter in drainWaiters { waiter.fulfill(true) }
        drainWaiters.removeAll()
        let procedures = eventWaits
        eventWaits.removeAll()
        for wait in procedures { wait.outcome.fulfill(.failure(.disconnected(reason))) }
        for waiter in endWaiters { waiter.fulfill(reason) }
        endWaiters.removeAll()
    }
}
