import BluetoothCore
import HCI
import L2CAP

/// Follows the connection-oriented L2CAP channels of one link of a capture from both
/// sides' signaling (``TraceWalk`` keeps one per link), so that each frame on a dynamic CID is read as what its channel
/// carries: its PSM, and its mode's framing (B-, K-, I- or S-frames).
///
/// Which way a CID maps (Core Vol 3, Part A, 2.1 and 4): each end of a channel is named by
/// the CID the device at that end allocated, and the frames travelling *to* a device carry
/// the CID it allocated. So a CID that a command's sender allocated for itself (a request's
/// Source CID, a response's Destination CID) maps the frames travelling opposite to the
/// command, and a CID the command names for its receiver (a Configuration Request's
/// Destination CID) maps the frames travelling the same way. Each side allocates its CIDs
/// on its own, so channel ends are kept per link and per direction.
///
/// What opens a channel: a Connection (or Create Channel) Response with result success, an
/// LE Credit Based Connection Response with result success, each non-zero Destination CID
/// of a Credit Based Connection Response; a pending response waits for the next one. A
/// Disconnection Request makes one closing (its frames are discarded:
/// ``DynamicFrame/closing``) until the Disconnection Response closes it; a link's end (or a
/// new link on its handle) forgets all of them, with the tracker. A CID opened again (reused after a
/// disconnection the capture missed) takes the new channel. A channel's mode is set by the
/// Configuration Requests the other side accepted.
struct ChannelTracker: Sendable {
    /// What one whole L2CAP PDU is.
    enum Content: Sendable {
        /// A fixed channel other than BR/EDR signaling (ATT, LE signaling, SMP, …), to be read
        /// by its fixed CID.
        case fixed
        /// A C-frame of the BR/EDR signaling channel, every command of it.
        case signaling(ControlFrame)
        /// A frame on a connection-oriented channel.
        case dynamic(DynamicFrame)
    }

    /// A frame on a dynamic CID, read by its channel's mode.
    struct DynamicFrame: Sendable {
        /// The CID the frame carries.
        var cid: UInt16
        /// The channel's PSM; nil when the capture did not show the channel open (its frames
        /// are then taken as B-frames).
        var psm: PSM?
        /// The frame's kind.
        var layout: Layout
        /// The SDU this frame completes, if any.
        var sdu: ArraySlice<UInt8>?
        /// The SDU under way, when this frame carried part of one without completing it.
        var partial: (received: Int, length: Int)?
        /// What is wrong with the frame or its SDU.
        var problem: Problem?
        /// Whether the FCS matched; nil for a frame that has none.
        var fcsValid: Bool?
        /// The channel is being disconnected: the frame is discarded (Core Vol 3, Part A,
        /// 4.6), shown but not read as its PSM's.
        var closing = false
    }

    /// The kinds of frame a connection-oriented channel carries.
    enum Layout: Sendable {
        /// A B-frame (basic mode): the payload is the SDU.
        case basic
        /// A K-frame (credit based modes).
        case kFrame
        /// An I-frame (a non-basic BR/EDR mode).
        case information(ControlFieldFrame.InformationFrame)
        /// An S-frame.
        case supervisory(ControlFieldFrame.SupervisoryFrame)
        /// A frame too short for its mode's fields.
        case undecodable
    }

    /// What went wrong with a frame on a connection-oriented channel.
    enum Problem: Sendable, CustomStringConvertible {
        /// The frame cannot hold its control field, SDU length or FCS.
        case frame(DecodingError)
        /// The SDU did not add up.
        case sdu(SDUProblem)

        var description: String {
            switch self {
            case .frame(let error): "\(error)"
            case .sdu(let problem): "\(problem)"
            }
        }
    }

    /// One end of a channel on a link: the frames travelling one way with one CID.
    private struct Endpoint: Hashable, Sendable {
        /// The direction of the frames, as their records'.
        var received: Bool
        var cid: UInt16
    }

    private struct Channel: Sendable {
        var psm: PSM
        /// Opened by a credit based request: K-frames, whatever else is configured.
        var creditBased: Bool
        var mode = ChannelMode.basic
        var extendedControl = false
        /// The directions whose receiver asked for no FCS: it is left out only when both did
        /// (Core Vol 3, Part A, 5.5).
        var noFCS: Set<Bool> = []
        var ends: [Endpoint] = []
        /// A Disconnection Request was sent: frames on the channel are discarded.
        var closing = false
        /// Accepted options of a configuration still continued, by the direction of its requests.
        var configuring: [Bool: [ConfigurationOption]] = [:]

        /// Applies an accepted Configuration Request that travelled the way
        /// `requestReceived` says. A configuration ends with a request without the
        /// continuation flag; it sets the channel's mode (basic when no option names one:
        /// Core Vol 3, Part A, 5.4 makes basic the default) and the requester's FCS choice.
        mutating func configure(_ options: [ConfigurationOption], requestReceived: Bool, continued: Bool) {
            let all = configuring[requestReceived, default: []] + options
            if continued {
                configuring[requestReceived] = all
                return
            }
            configuring[requestReceived] = nil
            mode = .basic
            noFCS.remove(requestReceived)
            for option in all {
                switch option {
                case .retransmissionAndFlowControl(let parameters): mode = parameters.mode
                case .frameCheckSequence(let type) where type == 0x00: noFCS.insert(requestReceived)
                case .frameCheckSequence: noFCS.remove(requestReceived)
                case .extendedWindowSize: extendedControl = true
                default: break
                }
            }
        }
    }

    private struct EndpointState: Sendable {
        var channel: Int
        var sdu = SDUReassembler()
    }

    /// A request waiting for its response.
    private enum Request: Sendable {
        case connection(PSM, sourceCID: UInt16)
        case creditBased(PSM, sourceCIDs: [UInt16])
        /// A Configuration Request for a channel; `continued` when more options follow in
        /// the next request (the continuation flag).
        case configuration(channel: Int, options: [ConfigurationOption], continued: Bool)
    }

    /// Requests are paired with responses by signaling channel, direction and identifier
    /// (each side numbers its own requests).
    private struct RequestKey: Hashable, Sendable {
        var signalingChannel: UInt16
        var received: Bool
        var identifier: UInt8
    }

    /// The link's kind: announced, or inferred from the signaling channel it used; nil when
    /// neither has happened.
    private(set) var type: LinkType?
    private var endpoints: [Endpoint: EndpointState] = [:]
    private var channels: [Int: Channel] = [:]
    private var requests: [RequestKey: Request] = [:]
    private var nextChannel = 0

    /// The tracker of a link of kind `type` (nil: unknown until its signaling says), with no
    /// channel open.
    init(type: LinkType? = nil) { self.type = type }

    /// Reads one whole PDU of the link, travelling the way `received` says, and follows what
    /// its signaling opens and closes.
    mutating func process(_ frame: BasicFrame, received: Bool) -> Content {
        let cid = frame.channel.rawValue
        switch cid {
        case ChannelIdentifier.signaling.rawValue:
            let control = ControlFrame(payload: frame.payload)
            if type == nil { type = .bredr }
            for command in control.commands {
                Self.follow(command, signalingChannel: cid, received: received, link: &self)
            }
            return .signaling(control)
        case ChannelIdentifier.leSignaling.rawValue:
            let command = try? SignalingCommand(decoding: frame.payload)
            if type == nil { type = .le }
            if let command { Self.follow(command, signalingChannel: cid, received: received, link: &self) }
            return .fixed
        case ..<0x0040:
            return .fixed
        default:
            return .dynamic(dynamic(frame, received: received))
        }
    }

    // MARK: Signaling

    private static func follow(
        _ command: SignalingCommand, signalingChannel: UInt16, received: Bool, link: inout ChannelTracker
    ) {
        // The key a request of this command's direction is kept under, and the key of the
        // request a response of this direction answers.
        let asRequest = RequestKey(
            signalingChannel: signalingChannel, received: received, identifier: command.identifier)
        let answering = RequestKey(
            signalingChannel: signalingChannel, received: !received, identifier: command.identifier)
        switch command.code {
        case .connectionRequest, .createChannelRequest:
            guard let request = connectionRequest(command) else { return }
            link.requests[asRequest] = .connection(request.psm, sourceCID: request.sourceCID)
        case .connectionResponse, .createChannelResponse:
            guard let response = connectionResponse(command),
                case let .connection(psm, sourceCID)? = link.requests[answering]
            else { return }
            if response.result == .pending { return }
            link.requests[answering] = nil
            guard response.result == .success else { return }
            openChannel(
                psm, creditBased: false, requesterCID: sourceCID, responderCID: response.destinationCID,
                responseReceived: received, link: &link)
        case .leCreditBasedConnectionRequest:
            guard let request = decode(LECreditBasedConnectionRequest.self, command) else { return }
            link.requests[asRequest] = .creditBased(request.psm, sourceCIDs: [request.sourceCID])
        case .leCreditBasedConnectionResponse:
            guard let response = decode(LECreditBasedConnectionResponse.self, command),
                case let .creditBased(psm, sourceCIDs)? = link.requests[answering], let sourceCID = sourceCIDs.first
            else { return }
            link.requests[answering] = nil
            guard response.result.isSuccess else { return }
            openChannel(
                psm, creditBased: true, requesterCID: sourceCID, responderCID: response.destinationCID,
                responseReceived: received, link: &link)
        case .creditBasedConnectionRequest:
            guard let request = decode(CreditBasedConnectionRequest.self, command) else { return }
            link.requests[asRequest] = .creditBased(request.psm, sourceCIDs: request.sourceCIDs)
        case .creditBasedConnectionResponse:
            guard let response = decode(CreditBasedConnectionResponse.self, command),
                case let .creditBased(psm, sourceCIDs)? = link.requests[answering]
            else { return }
            if response.result.isPending { return }
            link.requests[answering] = nil
            // Channels are answered in the request's order; a refused one gets 0x0000, even
            // when the result says only some were refused.
            for (sourceCID, destinationCID) in zip(sourceCIDs, response.destinationCIDs) where destinationCID != 0 {
                openChannel(
                    psm, creditBased: true, requesterCID: sourceCID, responderCID: destinationCID,
                    responseReceived: received, link: &link)
            }
        case .configurationRequest:
            // Options take effect once accepted: a refused request (unacceptable parameters,
            // say, an Enhanced Retransmission mode the other side cannot do) changes nothing.
            guard let request = decode(ConfigurationRequest.self, command),
                let index = link.endpoints[Endpoint(received: received, cid: request.destinationCID)]?.channel
            else { return }
            link.requests[asRequest] = .configuration(
                channel: index, options: request.options, continued: request.flags & 1 == 1)
        case .configurationResponse:
            guard let response = decode(ConfigurationResponse.self, command),
                case let .configuration(index, options, continued)? = link.requests[answering]
            else { return }
            if response.result == ConfigurationResult(rawValue: 0x0004) { return }  // pending: another response follows
            link.requests[answering] = nil
            guard response.result == .success else {
                link.channels[index]?.configuring[!received] = nil
                return
            }
            // The request travelled opposite to its response.
            link.channels[index]?.configure(options, requestReceived: !received, continued: continued)
        case .disconnectionRequest:
            // From the request on, its sender discards whatever still arrives on the channel
            // (Core Vol 3, Part A, 4.6), and Wireshark reads no more frames as the channel's:
            // the channel is closing until the response closes it. Its Destination CID is the
            // receiver's (frames travelling with it), its Source CID the sender's.
            guard let request = decode(DisconnectionRequest.self, command) else { return }
            for end in [
                Endpoint(received: received, cid: request.destinationCID),
                Endpoint(received: !received, cid: request.sourceCID),
            ] {
                guard let index = link.endpoints[end]?.channel else { continue }
                link.channels[index]?.closing = true
            }
        case .disconnectionResponse:
            // Its Destination CID is its sender's (the request's receiver), its Source CID the
            // request's sender's: the ends of frames travelling opposite to it and with it.
            guard let response = decode(DisconnectionResponse.self, command) else { return }
            for end in [
                Endpoint(received: !received, cid: response.destinationCID),
                Endpoint(received: received, cid: response.sourceCID),
            ] {
                guard let index = link.endpoints[end]?.channel else { continue }
                closeChannel(index, link: &link)
            }
        default:
            break
        }
    }

    /// `command`'s data as a `PDU` under the tolerance rule, or nil when it does not decode
    /// (the printer and the checker say why; tracking only passes it by).
    private static func decode<PDU: SignalingPDU>(_: PDU.Type, _ command: SignalingCommand) -> PDU? {
        try? PDU.decodeCountingExtraOctets(command).pdu
    }

    /// A Connection Request, or a Create Channel Request: the same request, naming an AMP
    /// controller besides.
    private static func connectionRequest(_ command: SignalingCommand) -> ConnectionRequest? {
        command.code == .createChannelRequest
            ? decode(CreateChannelRequest.self, command)?.request : decode(ConnectionRequest.self, command)
    }

    /// A Connection Response, or a Create Channel Response (the same fields).
    private static func connectionResponse(_ command: SignalingCommand) -> ConnectionResponse? {
        command.code == .createChannelResponse
            ? decode(CreateChannelResponse.self, command)?.response : decode(ConnectionResponse.self, command)
    }

    /// Opens a channel whose response travelled the way `responseReceived` says: frames to
    /// the requester (with the response) carry its CID, frames to the responder the other.
    private static func openChannel(
        _ psm: PSM, creditBased: Bool, requesterCID: UInt16, responderCID: UInt16, responseReceived: Bool,
        link: inout ChannelTracker
    ) {
        let ends = [
            Endpoint(received: responseReceived, cid: requesterCID),
            Endpoint(received: !responseReceived, cid: responderCID),
        ]
        .filter { ChannelIdentifier(rawValue: $0.cid).isDynamic }
        guard !ends.isEmpty else { return }
        for end in ends {
            if let previous = link.endpoints[end]?.channel { closeChannel(previous, link: &link) }
        }
        let index = link.nextChannel
        link.nextChannel += 1
        link.channels[index] = Channel(psm: psm, creditBased: creditBased, ends: ends)
        for end in ends { link.endpoints[end] = EndpointState(channel: index) }
    }

    private static func closeChannel(_ index: Int, link: inout ChannelTracker) {
        guard let channel = link.channels.removeValue(forKey: index) else { return }
        for end in channel.ends where link.endpoints[end]?.channel == index { link.endpoints[end] = nil }
    }

    // MARK: Data

    private mutating func dynamic(_ frame: BasicFrame, received: Bool) -> DynamicFrame {
        let cid = frame.channel.rawValue
        let end = Endpoint(received: received, cid: cid)
        guard let index = endpoints[end]?.channel, let channel = channels[index] else {
            return DynamicFrame(cid: cid, psm: nil, layout: .basic, sdu: frame.payload)
        }
        var result = DynamicFrame(cid: cid, psm: channel.psm, layout: .basic)
        if channel.closing {
            result.closing = true
        } else if channel.creditBased {
            result.layout = .kFrame
            let outcome = endpoints[end]?.sdu.appendKFrame(frame.payload) ?? (.none, nil)
            result.take(outcome)
        } else if channel.mode == .basic {
            result.sdu = frame.payload
        } else {
            let hasFCS = channel.noFCS.count < 2
            do {
                let (decoded, fcsValid) = try ControlFieldFrame.decode(
                    frame, extendedControl: channel.extendedControl, hasFCS: hasFCS)
                result.fcsValid = fcsValid
                switch decoded {
                case .supervisory(let supervisory):
                    result.layout = .supervisory(supervisory)
                case .information(let information):
                    result.layout = .information(information)
                    let outcome =
                        endpoints[end]?.sdu.appendSegment(
                            information.sar, sduLength: information.sduLength,
                            information: information.information) ?? (.none, nil)
                    result.take(outcome)
                }
            } catch {
                result.layout = .undecodable
                result.problem = .frame(error)
            }
        }
        return result
    }
}

extension ChannelTracker.DynamicFrame {
    /// Records what the SDU reassembler made of the frame.
    fileprivate mutating func take(_ outcome: (progress: SDUReassembler.Progress, problem: SDUProblem?)) {
        switch outcome.progress {
        case .complete(let sdu): self.sdu = sdu
        case let .partial(received, length): partial = (received, length)
        case .none: break
        }
        if let problem = outcome.problem { self.problem = .sdu(problem) }
    }
}
