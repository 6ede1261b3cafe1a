import BluetoothCore
import HCI

/// The L2CAP layer of a host's LE links: rebuilds PDUs from ACL fragments per connection
/// handle, fragments outgoing frames to the controller's ACL buffer size, and hands each
/// fixed channel's payloads to its protocol (ATT 0x0004, SMP 0x0006). It answers the LE
/// signaling channel (0x0005) itself: Connection Parameter Update Requests are accepted
/// when ``acceptParameters`` agrees and applied with LE Connection Update; credit-based
/// channels and their signaling go to ``creditBased``; anything it does not understand gets a
/// Command Reject.
@BluetoothActor
public final class L2CAPChannels {
    private let controller: HCIController
    private let logger: HCILogger
    /// Decides whether to accept the parameters a peripheral asks for in a Connection
    /// Parameter Update Request (connection handle, request); by default every request
    /// inside the specification's limits. The host sets GAP's policy here, so both ways a
    /// peer can ask (this one and the link layer's) get one answer.
    public var acceptParameters: (ConnectionHandle, LEConnectionRequest) -> Bool = { _, request in request.isValid }
    /// What L2CAP keeps on a link: the PDU being reassembled. Made when the link's first
    /// packet arrives; it ends with the link, taking a half-received PDU with it.
    private final class LinkState: LinkAttachment {
        let handle: ConnectionHandle
        var reassembler = Reassembler()
        var isOpen = true

        init(_ handle: ConnectionHandle) { self.handle = handle }

        func linkClosed(_ link: Link, _ reason: HCIStatus) {
            isOpen = false
            reassembler = Reassembler()  // a half-received PDU goes now, not when `recent` moves on
        }
    }

    /// The state found last: packets come link after link, so most need no search (a
    /// concrete class, not a generic ``PerLink``: a generic lookup per packet cost the
    /// receive path 15%).
    private var recent: LinkState?
    private var handlers = SmallMap<ChannelIdentifier, (Link, ArraySlice<UInt8>) -> Void>()
    private var closeHandler: Int?
    private var creditBasedChannels: CreditBasedChannels?

    /// The credit-based channels over these links (made on first use, or when the peer first
    /// asks for one): LE signaling's credit-based commands and every dynamic CID go there.
    public var creditBased: CreditBasedChannels {
        if let creditBasedChannels { return creditBasedChannels }
        let made = CreditBasedChannels(
            attachingTo: self, controller: controller, logger: logger)
        creditBasedChannels = made
        return made
    }

    /// Credit based channels open and requests for them under way, on every link (without
    /// making ``creditBased``).
    public var creditBasedInUse: Int { creditBasedChannels.map { $0.openChannels + $0.requestsPending } ?? 0 }

    /// Frames that broke L2CAP's rules and were dropped (for diagnostics and tests).
    public private(set) var droppedFrames = 0

    /// Takes over `controller`'s ACL data.
    public init(controller: HCIController, logger: HCILogger = .standardError) {
        self.controller = controller
        self.logger = logger.layer("l2cap")
        // The controller holds this object strongly until ``close()``, which its own close
        // calls: a weakly referenced object carries a side table that makes every retain
        // and release on the receive path slow.
        controller.onACLData = { packet, link in self.receive(packet, on: link) }
        closeHandler = controller.addCloseHandler { self.close() }
    }

    /// Stops handling ACL data.
    public func close() {
        controller.onACLData = nil
        if let closeHandler { controller.removeCloseHandler(closeHandler) }
        closeHandler = nil
        creditBasedChannels?.close()
        creditBasedChannels = nil
        handlers.removeAll()
        for link in controller.links { (link.detach(self) as? LinkState)?.isOpen = false }
        recent = nil
    }

    /// Links with reassembly state (zero once every link has ended).
    public var trackedLinks: Int { states.count }

    /// Connections with a partly received PDU.
    public var pendingReassemblies: Int { states.filter(\.reassembler.isCollecting).count }

    private var states: [LinkState] { controller.links.compactMap { $0.attachment(for: self, as: LinkState.self) } }

    /// L2CAP's state on `link`, made on first use.
    private func state(on link: Link) -> LinkState {
        if let recent, recent.handle == link.handle, recent.isOpen { return recent }
        let state = link.attachment(for: self, layer: .l2cap) { LinkState(link.handle) }
        recent = state
        return state
    }

    /// Delivers every frame of `channel` to `handler`, with the link it came on.
    public func setHandler(for channel: ChannelIdentifier, _ handler: @escaping (Link, ArraySlice<UInt8>) -> Void) {
        handlers[channel] = handler
    }

    /// Sends `payload` on `channel` of connection `handle`, fragmented to the controller's
    /// ACL buffer size.
    public func send(_ payload: [UInt8], on channel: ChannelIdentifier, handle: ConnectionHandle) throws(HCIError) {
        try send(OutgoingFrame(payload: payload), on: channel, handle: handle)
    }

    /// Sends a frame built in place on `channel` of connection `handle`: its header is
    /// filled in and its ACL packets are views of its buffer, so the PDU is not copied.
    public func send(_ frame: consuming OutgoingFrame, on channel: ChannelIdentifier, handle: ConnectionHandle)
        throws(HCIError)
    {
        guard let bufferLength = controller.info?.aclBuffers.length else { throw .notRunning }
        let bytes = frame.sealed(for: channel)
        try ACLDataPacket.forEachFragment(of: bytes[...], handle: handle, bufferLength: bufferLength) {
            (packet) throws(HCIError) in
            try controller.sendACL(packet)
        }
    }

    private func receive(_ packet: ACLDataPacket, on link: Link) {
        let state = state(on: link)
        let (frame, problem) = state.reassembler.append(packet)
        if let problem {
            droppedFrames += 1
            logger.log(.error, "handle \(hex(packet.handle, digits: 4)): \(problem); frame dropped")
        }
        guard let frame else { return }
        switch frame.channel {
        case .leSignaling:
            signaling(frame.payload, handle: packet.handle)
        case let channel where channel.isDynamic:
            creditBased.receive(frame.payload, on: channel, handle: packet.handle)
        default:
            if let handler = handlers[frame.channel] {
                handler(link, frame.payload)
            } else {
                logger.log(
                    .info,
                    "handle \(hex(packet.handle, digits: 4)): frame for \(frame.channel) with no protocol attached; dropped"
                )
            }
        }
    }

    private func signaling(_ payload: ArraySlice<UInt8>, handle: ConnectionHandle) {
        let command: SignalingCommand
        do { command = try SignalingCommand(decoding: payload) } catch {
            logger.log(.warning, "malformed LE signaling command on \(hex(handle, digits: 4)): \(error)")
            let identifier = payload.dropFirst().first ?? 0
            reply(
                SignalingCommand(
                    code: .commandReject, identifier: identifier, data: CommandRejectReason.commandNotUnderstood.data),
                handle)
            return
        }
        if CreditBasedChannels.handles(command.code) || (command.code == .commandReject && creditBasedChannels != nil) {
            if creditBased.signaling(command, handle: handle) { return }
        }
        switch command.code {
        case .connectionParameterUpdateRequest:
            guard let request = try? ConnectionParameterUpdateRequest(command: command) else {
                reply(
                    SignalingCommand(
                        code: .commandReject, identifier: command.identifier,
                        data: CommandRejectReason.commandNotUnderstood.data), handle)
                return
            }
            let accept = acceptParameters(handle, request.parameters)
            reply(
                SignalingCommand(
                    code: .connectionParameterUpdateResponse, identifier: command.identifier,
                    data: ConnectionParameterUpdateResponse(accepted: accept).encoded()), handle)
            guard accept, let link = controller.link(handle) else { return }
            Task { @BluetoothActor [controller, logger] in
                do { try await controller.updateParameters(link, request.parameters) } catch {
                    logger.log(.warning, "applying the peripheral's parameters on \(hex(handle, digits: 4)): \(error)")
                }
            }
        case .commandReject:
            logger.log(.info, "peer rejected a signaling command on \(hex(handle, digits: 4)): \(command.data.hexDump)")
        case .connectionParameterUpdateResponse:
            // The answer to our request as peripheral (``CreditBasedChannels/requestParameterUpdate(_:on:)``).
            if creditBasedChannels?.signaling(command, handle: handle) != true {
                logger.log(
                    .info,
                    "handle \(hex(handle, digits: 4)): a Connection Parameter Update Response to no request of ours; ignored"
                )
            }
        default:
            reply(
                SignalingCommand(
                    code: .commandReject, identifier: command.identifier,
                    data: CommandRejectReason.commandNotUnderstood.data), handle)
        }
    }

    private func reply(_ command: SignalingCommand, _ handle: ConnectionHandle) {
        do { try send(command.encoded(), on: .leSignaling, handle: handle) } catch {
            logger.log(.warning, "sending \(command.code) on \(hex(handle, digits: 4)): \(error)")
        }
    }
}
