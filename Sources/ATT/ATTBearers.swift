import BluetoothCore
import HCI
import L2CAP

/// The ATT bearers of a host: one ``ATTBearer`` per LE link, attached to the link's ATT
/// fixed channel (0x0004). A bearer is made when it is first asked for or when the peer
/// sends the first ATT PDU; it closes with ``ATTError/disconnected(_:)`` when the link
/// goes down; when it fails on its own (timeout, protocol error) the link is disconnected.
@BluetoothActor
public final class ATTBearers {
    private let controller: HCIController
    private let channels: L2CAPChannels
    private let logger: HCILogger
    private var closeHandler: Int?

    /// The bearer found last (each bearer is kept on its link, and closes with it): PDUs
    /// come link after link, so most need no search.
    private var recent: ATTBearer?

    /// The live bearers, one per link that has one, in the controller's order of links.
    public var bearers: [ATTBearer] { controller.links.compactMap { $0.attachment(for: self, as: ATTBearer.self) } }
    /// The receive MTU offered in MTU exchanges on new bearers.
    public var preferredMTU: UInt16
    /// The server that answers the peers' requests on every bearer, those open now
    /// included (none: every request is refused with `requestNotSupported`).
    public var server: (any ATTServer)? {
        get { serverSlot.server }
        set { serverSlot.server = newValue }
    }
    /// Where ``server`` is kept, shared with every bearer.
    private let serverSlot = ATTServerSlot()
    /// Called when a bearer is made, before it carries any PDU, so the layer above can attach
    /// its handlers.
    public var onBearer: ((ATTBearer) -> Void)?

    /// Takes over the ATT channel of `channels`.
    public init(
        controller: HCIController, channels: L2CAPChannels,
        preferredMTU: UInt16 = ATTBearer.maximumMTU, logger: HCILogger = .standardError
    ) {
        self.controller = controller
        self.channels = channels
        self.preferredMTU = preferredMTU
        self.logger = logger.layer("att")
        // Held strongly by the channels and the controller until ``close()``, which the
        // controller's close calls (no weak references on the receive path: see L2CAPChannels).
        closeHandler = controller.addCloseHandler { self.close() }
        channels.setHandler(for: .att) { link, payload in self.bearer(on: link).receive(payload) }
    }

    /// Detaches from the ATT channel and closes every bearer.
    public func close() {
        channels.setHandler(for: .att) { _, _ in }
        if let closeHandler { controller.removeCloseHandler(closeHandler) }
        closeHandler = nil
        for link in controller.links { (link.detach(self) as? ATTBearer)?.close(.transport(.notRunning)) }
        recent = nil
    }

    /// The bearer of connection `handle`, made on first use.
    public func bearer(for handle: ConnectionHandle) throws(ATTError) -> ATTBearer {
        if let recent, recent.connection == handle, recent.isOpen { return recent }
        guard let link = controller.link(handle) else { throw .notConnected(handle) }
        return bearer(on: link)
    }

    /// The bearer of `link`, made on first use.
    public func bearer(on link: Link) -> ATTBearer {
        if let recent, recent.connection == link.handle, recent.isOpen { return recent }
        let handle = link.handle
        if let bearer = link.attachment(for: self, as: ATTBearer.self) {
            recent = bearer
            return bearer
        }
        let bearer = ATTBearer(
            connection: handle, preferredMTU: preferredMTU, clock: controller.clock, logger: logger,
            serverSlot: serverSlot
        ) { [channels] (frame: consuming OutgoingFrame) throws(HCIError) in
            try channels.send(consume frame, on: .att, handle: handle)
        }
        bearer.onFatalError = { reason in self.drop(handle, because: reason) }
        // Its link's end: nothing here keeps it either.
        bearer.onLinkClosed = { [unowned bearer] in if self.recent === bearer { self.recent = nil } }
        _ = link.attachment(for: self, layer: .att) { bearer }
        recent = bearer
        onBearer?(bearer)
        return bearer
    }

    private func drop(_ handle: ConnectionHandle, because reason: ATTError) {
        logger.log(.error, "handle \(hex(handle, digits: 4)): \(reason)")
        guard let link = controller.link(handle) else { return }
        Task { @BluetoothActor [controller, logger] in
            do { try await controller.disconnect(link, reason: .remoteUserTerminatedConnection) } catch {
                logger.log(.warning, "disconnecting \(hex(handle, digits: 4)) after an ATT failure: \(error)")
            }
        }
    }
}
