import BluetoothCore
import HCI

/// One link's credit based channels (by our CID), the CIDs its requests under way hold,
/// and its signaling requests waiting for a response (by identifier). It is kept on the
/// link (``CreditBasedLinkStore``), so it ends with the link: every request fails and every
/// channel ends with ``CreditBasedChannelError/linkLost(_:)``.
@BluetoothActor
public final class CreditBasedLink: LinkAttachment {
    /// A request sent and not answered yet.
    struct PendingRequest {
        let code: SignalingCode
        let token: Int
        let done: CheckedContinuation<Result<SignalingCommand, CreditBasedChannelError>, Never>
        /// Its timeout, kept by the layer's ``Deadlines``.
        var timer: (deadlines: Deadlines, token: Deadlines.Token)?

        @BluetoothActor func cancelTimer() {
            if let timer { timer.deadlines.cancel(timer.token) }
        }
    }

    /// The link.
    public let handle: ConnectionHandle
    /// Open channels, by our (source) CID.
    var channels: [UInt16: CreditBasedChannel] = [:]
    /// CIDs of requests still under way.
    var reserved: Set<UInt16> = []
    /// Requests waiting for their response, by identifier.
    var pending: [UInt8: PendingRequest] = [:]
    /// Why the link ended, once it has: a request waiting on something else (securing the
    /// link) learns of the end here.
    private(set) var endReason: HCIStatus?

    /// State for link `handle`, nothing open yet.
    public init(handle: ConnectionHandle) { self.handle = handle }

    /// The channel whose peer's CID is `cid`.
    func channel(remoteCID cid: UInt16) -> CreditBasedChannel? { channels.values.first { $0.remoteCID == cid } }

    /// Whether `cid` is free for a new channel or request.
    func isFree(_ cid: UInt16) -> Bool { channels[cid] == nil && !reserved.contains(cid) }

    /// The link ended: its requests fail and its channels end.
    public func linkClosed(_ link: Link, _ reason: HCIStatus) { end(reason) }

    /// Fails every request and ends every channel: the link ended with `reason`.
    func end(_ reason: HCIStatus) {
        endReason = reason
        let requests = pending.values, open = channels.values
        pending.removeAll()
        channels.removeAll()
        for request in requests {
            request.cancelTimer()
            request.done.resume(returning: .failure(.linkLost(reason)))
        }
        for channel in open { channel.end(.linkLost(reason)) }
    }
}

/// Where ``CreditBasedChannels`` keeps each link's ``CreditBasedLink``: on the controller's
/// links in a host, wherever its owner chooses elsewhere (two instances wired back to back
/// in a test).
@BluetoothActor
public protocol CreditBasedLinkStore: AnyObject {
    /// The state on the open link `handle`, made by `make` on first use; nil when no link
    /// `handle` is open.
    func state(_ handle: ConnectionHandle, make: () -> CreditBasedLink) -> CreditBasedLink?
    /// The state on `handle`'s link, if it has one.
    func existing(_ handle: ConnectionHandle) -> CreditBasedLink?
    /// Every link's state.
    var all: [CreditBasedLink] { get }
    /// Takes `handle`'s state away, without ending it.
    func remove(_ handle: ConnectionHandle)
}

/// The controller's links as the store: each link's state is its attachment at L2CAP's
/// layer, closed with the link.
@BluetoothActor
final class LinkAttachedStore: CreditBasedLinkStore {
    private let controller: HCIController

    init(controller: HCIController) { self.controller = controller }

    func state(_ handle: ConnectionHandle, make: () -> CreditBasedLink) -> CreditBasedLink? {
        controller.link(handle)?.attachment(for: self, layer: .l2cap, make: make)
    }

    func existing(_ handle: ConnectionHandle) -> CreditBasedLink? { controller.link(handle)?.attachment(for: self) }

    var all: [CreditBasedLink] { controller.links.compactMap { $0.attachment(for: self, as: CreditBasedLink.self) } }

    func remove(_ handle: ConnectionHandle) { controller.link(handle)?.detach(self) }
}
