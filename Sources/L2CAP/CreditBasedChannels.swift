import BluetoothCore
import HCI

/// The credit-based channels of a host's LE links (Core Vol 3, Part A, 4.22–4.28 and 10.1):
/// opens them (``open(psm:on:parameters:)``, one LE credit based channel;
/// ``openEnhanced(psm:count:on:parameters:)``, up to five enhanced ones in one request),
/// accepts the peer's requests for the PSMs it serves (``serve(psm:parameters:accept:)``)
/// and refuses the rest by result code, routes K-frames and credits to each
/// ``CreditBasedChannel``, answers disconnection and reconfiguration, and ends every
/// channel of a link that ends.
///
/// Every request waits at most the RTX time (``responseTimeout``; ``extendedResponseTimeout``
/// after a pending answer) and then fails with ``CreditBasedChannelError/timeout(_:seconds:)``.
/// A request refused for want of security (insufficient authentication, encryption or key
/// size) asks ``onSecurityRequired`` to secure the link and is sent once more, as an ATT
/// request is.
@BluetoothActor
public final class CreditBasedChannels {
    /// Sends one L2CAP frame on a channel of a link.
    public typealias Transmit = (ConnectionHandle, ChannelIdentifier, consuming OutgoingFrame) throws(HCIError) -> Void

    /// The CIDs an LE link allocates to connection-oriented channels (Core Vol 3, Part A, 2.1).
    public static let dynamicCIDs: ClosedRange<UInt16> = 0x0040...0x007F

    /// How long a request waits for its response (RTX: 1 to 60 s).
    public var responseTimeout: Duration = .seconds(30)
    /// How long a request waits after a pending response (ERTX: 60 to 300 s).
    public var extendedResponseTimeout: Duration = .seconds(60)
    /// Asked when the peer refused a connection for want of security: secures the link
    /// (encryption with a stored key, or pairing) and answers whether to ask again.
    public var onSecurityRequired: ((ConnectionHandle, CreditBasedConnectionResult) async -> Bool)?
    /// Whether a link is up (nil: every handle is taken as up).
    public var isLinkUp: ((ConnectionHandle) -> Bool)?

    private let transmitFrame: Transmit
    /// The signaling requests' timeouts (RTX, and ERTX after a pending answer).
    private let deadlines: Deadlines
    private let logger: HCILogger
    /// Each link's channels and requests, kept on the link.
    let links: any CreditBasedLinkStore
    /// The last signaling identifier and dynamic CID given, on any link: one rotation for
    /// every link (as NimBLE's one identifier counter), which gives each link successive
    /// identifiers that differ, as Part A 4 asks, with no state per link to keep.
    private var lastIdentifier: UInt8 = 0
    private var lastCID: UInt16?
    var servers: [PSM: Server] = [:]
    private var nextToken = 0

    /// Frames for a CID no channel has, dropped (for diagnostics and tests).
    public private(set) var droppedFrames = 0

    struct Server {
        let parameters: CreditBasedChannelParameters
        let accept: (CreditBasedChannel) -> Void
    }

    /// Channels over links reached through `transmit`, their state kept in `links`; requests
    /// time out on `clock`. The owner delivers signaling commands (``signaling(_:handle:)``),
    /// K-frames (``receive(_:on:handle:)``) and the end of links (``linkEnded(_:reason:)``,
    /// unless the store ends them itself, as the controller's links do).
    public init(
        transmit: @escaping Transmit, links: any CreditBasedLinkStore, clock: any Clock<Duration> = ContinuousClock(),
        logger: HCILogger = .standardError
    ) {
        transmitFrame = transmit
        self.links = links
        deadlines = Deadlines(clock: clock)
        self.logger = logger.layer("l2cap")
    }

    /// Channels over `l2cap`'s links: it routes LE signaling and dynamic CIDs here; each
    /// link's state is kept on the link, and ends with it.
    convenience init(
        attachingTo l2cap: L2CAPChannels, controller: HCIController, logger: HCILogger
    ) {
        self.init(
            transmit: { (handle, channel, frame) throws(HCIError) in try l2cap.send(frame, on: channel, handle: handle)
            },
            links: LinkAttachedStore(controller: controller), clock: controller.clock, logger: logger)
        isLinkUp = { [controller] handle in controller.link(handle) != nil }
    }

    /// Ends every channel and request (as a lost controller does).
    public func close() {
        for state in links.all {
            links.remove(state.handle)
            state.end(.connectionTerminatedByLocalHost)
        }
        servers.removeAll()
        deadlines.cancelAll()
    }

    /// Open channels, on every link.
    public var openChannels: Int { links.all.reduce(0) { $0 + $1.channels.count } }

    /// Requests sent and not answered yet, on every link.
    public var requestsPending: Int { links.all.reduce(0) { $0 + $1.pending.count } }

    /// `handle`'s state, made on first use; `.notConnected` when the link is not open.
    func state(_ handle: ConnectionHandle) throws(CreditBasedChannelError) -> CreditBasedLink {
        guard let state = links.state(handle, make: { CreditBasedLink(handle: handle) }) else { throw .notConnected }
        return state
    }

    func log(_ level: HCILogger.Level, _ message: @autoclosure () -> String) { logger.log(level, message()) }

    // MARK: Serving

    /// Accepts the peer's requests for `psm` (LE and enhanced): each channel opened gets our
    /// `parameters` and is handed to `accept`. Requests for a PSM nobody serves are refused
    /// with SPSM not supported (0x0002).
    public func serve(
        psm: PSM, parameters: CreditBasedChannelParameters = .init(), accept: @escaping (CreditBasedChannel) -> Void
    ) {
        servers[psm] = Server(parameters: parameters, accept: accept)
    }

    /// Stops accepting requests for `psm` (open channels stay open).
    public func stopServing(psm: PSM) { servers[psm] = nil }

    /// The PSMs served now.
    public var servedPSMs: Set<PSM> { Set(servers.keys) }

    // MARK: Opening

    /// Opens one LE credit based channel to `psm` on link `handle` (L2CAP_LE_CREDIT_BASED_CONNECTION_REQ).
    public func open(psm: PSM, on handle: ConnectionHandle, parameters: CreditBasedChannelParameters = .init())
        async throws(CreditBasedChannelError) -> CreditBasedChannel
    {
        if let problem = parameters.problem(enhanced: false) ?? Self.problem(psm) { throw .invalidParameters(problem) }
        var securityAsked = false
        while true {
            guard isLinkUp?(handle) ?? true else { throw .notConnected }
            let link = try state(handle)
            let cid = try allocateCIDs(1, on: link)[0]
            link.reserved.insert(cid)
            defer { link.reserved.remove(cid) }
            let request = LECreditBasedConnectionRequest(
                psm: psm, sourceCID: cid, mtu: parameters.mtu, mps: parameters.mps,
                initialCredits: parameters.initialCredits)
            let answer = try await exchange(request, on: handle, timeout: responseTimeout)
            let response: LECreditBasedConnectionResponse = try decodeResponse(answer)
            if response.result.isSuccess {
                let dcid = response.destinationCID
                guard Self.dynamicCIDs.contains(dcid), link.channel(remoteCID: dcid) == nil,
                    CreditBasedChannelParameters(mtu: response.mtu, mps: response.mps).problem(enhanced: false) == nil
                else {
                    let what =
                        "the peer opened CID \(hex(dcid, digits: 4)) with MTU \(response.mtu), MPS \(response.mps)"
                    if dcid != 0 { Task { await self.disconnect(localCID: cid, remoteCID: dcid, on: handle) } }
                    throw .protocolViolation(what)
                }
                return makeChannel(
                    on: link, psm: psm, mode: .leCreditBased, localCID: cid, remoteCID: dcid, local: parameters,
                    remoteMTU: response.mtu, remoteMPS: response.mps, remoteCredits: response.initialCredits)
            }
            if !securityAsked, Self.wantsSecurity(response.result), let onSecurityRequired {
                securityAsked = true
                let secured = await onSecurityRequired(handle, response.result)
                if let reason = link.endReason { throw .linkLost(reason) }
                if secured { continue }
            }
            throw .refused(response.result)
        }
    }

    /// Opens `count` (1–5) enhanced credit based channels to `psm` on link `handle` in one
    /// request (L2CAP_CREDIT_BASED_CONNECTION_REQ). Returns those the peer opened, in the
    /// order asked; throws when it opened none. MTU and MPS must be at least 64.
    public func openEnhanced(
        psm: PSM, count: Int, on handle: ConnectionHandle,
        parameters: CreditBasedChannelParameters = .init()
    ) async throws(CreditBasedChannelError) -> [CreditBasedChannel] {
        guard (1...CreditBasedConnectionRequest.maximumChannels).contains(count) else {
            throw .invalidParameters(
                "an enhanced request opens 1 to \(CreditBasedConnectionRequest.maximumChannels) channels, not \(count)")
        }
        if let problem = parameters.problem(enhanced: true) ?? Self.problem(psm) { throw .invalidParameters(problem) }
        var securityAsked = false
        while true {
            guard isLinkUp?(handle) ?? true else { throw .notConnected }
            let link = try state(handle)
            let cids = try allocateCIDs(count, on: link)
            link.reserved.formUnion(cids)
            defer { link.reserved.subtract(cids) }
            let request = CreditBasedConnectionRequest(
                psm: psm, mtu: parameters.mtu, mps: parameters.mps,
                initialCredits: parameters.initialCredits, sourceCIDs: cids)
            var answer = try await exchange(request, on: handle, timeout: responseTimeout)
            var response: CreditBasedConnectionResponse = try decodeResponse(answer)
            while response.result.isPending {
                // 4.26: a pending result promises another response with the same identifier.
                answer = try await awaitResponse(
                    to: answer.identifier, code: CreditBasedConnectionRequest.code, on: handle,
                    timeout: extendedResponseTimeout
                ).get()
                response = try decodeResponse(answer)
            }
            var opened: [CreditBasedChannel] = []
            let acceptable =
                CreditBasedChannelParameters(mtu: response.mtu, mps: response.mps).problem(enhanced: true) == nil
            for (cid, dcid) in zip(cids, response.destinationCIDs) where dcid != 0 {
                guard acceptable, Self.dynamicCIDs.contains(dcid), link.channel(remoteCID: dcid) == nil else {
                    log(
                        .warning,
                        "handle \(hex(handle, digits: 4)): the peer opened CID \(hex(dcid, digits: 4)) with MTU \(response.mtu), MPS \(response.mps); closing it"
                    )
                    Task { await self.disconnect(localCID: cid, remoteCID: dcid, on: handle) }
                    continue
                }
                opened.append(
                    makeChannel(
                        on: link, psm: psm, mode: .enhancedCreditBased, localCID: cid, remoteCID: dcid,
                        local: parameters,
                        remoteMTU: response.mtu, remoteMPS: response.mps, remoteCredits: response.initialCredits))
            }
            if !opened.isEmpty { return opened }
            if !securityAsked, Self.wantsSecurity(response.result), let onSecurityRequired {
                securityAsked = true
                let secured = await onSecurityRequired(handle, response.result)
                if let reason = link.endReason { throw .linkLost(reason) }
                if secured { continue }
            }
            if response.result.isSuccess { throw .protocolViolation("all successful, but no valid Destination CID") }
            throw .refused(response.result)
        }
    }

    /// The SPSM of an LE request is 0x0001–0x00FF (4.22, 4.25): nil if so, else what is wrong.
    private static func problem(_ psm: PSM) -> String? {
        (0x0001...0x00FF).contains(psm.rawValue) ? nil : "SPSM \(hex(psm.rawValue, digits: 4)) is outside 0x0001…0x00FF"
    }

    /// Insufficient authentication (0x0005), encryption key size too short (0x0007),
    /// insufficient encryption (0x0008): what securing the link can mend.
    private static func wantsSecurity(_ result: CreditBasedConnectionResult) -> Bool {
        [0x0005, 0x0007, 0x0008].contains(result.rawValue)
    }

    private func decodeResponse<Response: SignalingPDU>(_ command: SignalingCommand) throws(CreditBasedChannelError)
        -> Response
    {
        do { return try Response.decodeCountingExtraOctets(command).pdu } catch {
            throw .protocolViolation("malformed \(Response.name): \(error)")
        }
    }

    func makeChannel(
        on link: CreditBasedLink, psm: PSM, mode: CreditBasedChannel.Mode, localCID: UInt16, remoteCID: UInt16,
        local: CreditBasedChannelParameters, remoteMTU: UInt16, remoteMPS: UInt16, remoteCredits: UInt16
    ) -> CreditBasedChannel {
        let handle = link.handle
        let channel = CreditBasedChannel(
            manager: self, handle: handle, psm: psm, mode: mode, localCID: localCID, remoteCID: remoteCID,
            local: local, remoteMTU: remoteMTU, remoteMPS: remoteMPS, remoteCredits: remoteCredits)
        link.channels[localCID] = channel
        log(
            .debug,
            "handle \(hex(handle, digits: 4)): \(mode) channel \(psm) open, CID \(hex(localCID, digits: 4)) ↔ \(hex(remoteCID, digits: 4)), "
                + "MTU \(local.mtu)/\(remoteMTU), MPS \(local.mps)/\(remoteMPS), credits \(local.initialCredits)/\(remoteCredits)"
        )
        return channel
    }

    // MARK: CIDs and identifiers

    /// Free CIDs, taken in turn after the last one given rather than lowest first: a CID just closed is not offered again at once, so a peer still forgetting it
    /// (Bumble 0.0.236 never forgets the CIDs of a channel it accepted) does not refuse the
    /// next request with Source CID already allocated.
    func allocateCIDs(_ count: Int, on link: CreditBasedLink) throws(CreditBasedChannelError) -> [UInt16] {
        var cids: [UInt16] = []
        let range = Self.dynamicCIDs
        let start = lastCID.map { $0 - range.lowerBound + 1 } ?? 0
        for step in 0..<UInt16(range.count) where cids.count < count {
            let cid = range.lowerBound + (start + step) % UInt16(range.count)
            if link.isFree(cid) { cids.append(cid) }
        }
        guard cids.count == count else { throw .noFreeCID }
        lastCID = cids.last
        return cids
    }

    /// A fresh non-zero identifier for `handle`, none of its requests under way using it.
    private func nextIdentifier(_ handle: ConnectionHandle) -> UInt8 {
        let pending = links.existing(handle)?.pending ?? [:]
        var identifier = lastIdentifier
        repeat { identifier = identifier == 255 ? 1 : identifier + 1 } while pending[identifier] != nil
        lastIdentifier = identifier
        return identifier
    }

    // MARK: Requests and responses

    /// Sends `request` and waits for its response (or Command Reject, or the timeout).
    private func exchange(_ request: some SignalingPDU, on handle: ConnectionHandle, timeout: Duration)
        async throws(CreditBasedChannelError) -> SignalingCommand
    {
        let identifier = nextIdentifier(handle)
        let command = request.command(identifier: identifier)
        return try await awaitResponse(to: identifier, code: command.code, on: handle, timeout: timeout) {
            () throws(HCIError) in
            try self.transmitSignaling(command, on: handle)
        }.get()
    }

    /// Waits for the response carrying `identifier`, after `send` (if any) sent the request.
    private func awaitResponse(
        to identifier: UInt8, code: SignalingCode, on handle: ConnectionHandle, timeout: Duration,
        send: (() throws(HCIError) -> Void)? = nil
    ) async -> Result<SignalingCommand, CreditBasedChannelError> {
        guard let link = links.state(handle, make: { CreditBasedLink(handle: handle) }) else {
            return .failure(.notConnected)
        }
        nextToken += 1
        let token = nextToken
        return await withCheckedContinuation {
            (done: CheckedContinuation<Result<SignalingCommand, CreditBasedChannelError>, Never>) in
            do throws(HCIError) { try send?() } catch {
                done.resume(returning: .failure(.transport(error)))
                return
            }
            // Held strongly, not weakly: a weakly referenced object gets a side table that
            // slows every retain of it, and this one is on the receive path. Answers, the end
            // of the link and close() cancel the timer.
            let timer = deadlines.schedule(after: timeout) {
                self.timedOut(identifier, on: link, token: token, seconds: Double(timeout.components.seconds))
            }
            link.pending[identifier] = CreditBasedLink.PendingRequest(
                code: code, token: token, done: done,
                timer: (deadlines, timer))
        }
    }

    private func timedOut(_ identifier: UInt8, on link: CreditBasedLink, token: Int, seconds: Double) {
        guard let request = link.pending[identifier], request.token == token else { return }
        link.pending[identifier] = nil
        log(.error, "handle \(hex(link.handle, digits: 4)): no response to \(request.code) in \(seconds) s")
        request.done.resume(returning: .failure(.timeout(request.code, seconds: seconds)))
    }

    /// Completes the request a response answers; false when none waits for it.
    func complete(_ command: SignalingCommand, handle: ConnectionHandle) -> Bool {
        guard let request = links.existing(handle)?.pending.removeValue(forKey: command.identifier) else {
            return false
        }
        request.cancelTimer()
        if command.code == .commandReject {
            let reason = (try? CommandReject(command: command).reason) ?? .commandNotUnderstood
            request.done.resume(returning: .failure(.rejected(reason)))
        } else {
            request.done.resume(returning: .success(command))
        }
        return true
    }

    // MARK: Connection parameters

    /// As the peripheral of link `handle`: asks the central for new connection parameters
    /// (L2CAP_CONNECTION_PARAMETER_UPDATE_REQ, Core Vol 3, Part A, 4.20) on the same
    /// request machinery as the channels' (identifiers, RTX), and returns whether it
    /// accepted; a Command Reject counts as no. The central applies accepted parameters
    /// itself, and LE Connection Update Complete follows.
    public func requestParameterUpdate(_ parameters: LEConnectionRequest, on handle: ConnectionHandle)
        async throws(CreditBasedChannelError) -> Bool
    {
        let response: SignalingCommand
        do {
            response = try await exchange(
                ConnectionParameterUpdateRequest(parameters: parameters), on: handle, timeout: responseTimeout)
        } catch {
            if case .rejected = error { return false }
            throw error
        }
        do { return try ConnectionParameterUpdateResponse(command: response).accepted } catch {
            throw .protocolViolation("malformed Connection Parameter Update Response: \(error)")
        }
    }

    // MARK: Disconnecting

    /// Asks the peer to close `channel` and waits for its answer (or the RTX time).
    func disconnect(_ channel: CreditBasedChannel) async {
        await disconnect(localCID: channel.localCID, remoteCID: channel.remoteCID, on: channel.handle)
    }

    private func disconnect(localCID: UInt16, remoteCID: UInt16, on handle: ConnectionHandle) async {
        guard isLinkUp?(handle) ?? true else { return }
        do throws(CreditBasedChannelError) {
            _ = try await exchange(
                DisconnectionRequest(destinationCID: remoteCID, sourceCID: localCID), on: handle,
                timeout: responseTimeout)
        } catch {
            log(.info, "handle \(hex(handle, digits: 4)): closing CID \(hex(localCID, digits: 4)): \(error)")
        }
    }

    /// A channel that ended lets go of its CID.
    func forget(_ channel: CreditBasedChannel) {
        guard let link = links.existing(channel.handle), link.channels[channel.localCID] === channel else { return }
        link.channels[channel.localCID] = nil
    }

    /// Ends every channel and request of a link that ended (a store that keeps the state on
    /// the controller's links does this itself).
    public func linkEnded(_ handle: ConnectionHandle, reason: HCIStatus) {
        guard let link = links.existing(handle) else { return }
        links.remove(handle)
        link.end(reason)
    }

    // MARK: Frames

    func transmit(_ frame: consuming OutgoingFrame, on cid: UInt16, handle: ConnectionHandle) throws(HCIError) {
        try transmitFrame(handle, ChannelIdentifier(rawValue: cid), frame)
    }

    private func transmitSignaling(_ command: SignalingCommand, on handle: ConnectionHandle) throws(HCIError) {
        try transmitFrame(handle, .leSignaling, OutgoingFrame(payload: command.encoded()))
    }

    func reply(_ pdu: some SignalingPDU, identifier: UInt8, on handle: ConnectionHandle) {
        do { try transmitSignaling(pdu.command(identifier: identifier), on: handle) } catch {
            log(.warning, "handle \(hex(handle, digits: 4)): sending \(type(of: pdu).name): \(error)")
        }
    }

    /// Grants the peer `credits` more K-frames on `channel` (L2CAP_FLOW_CONTROL_CREDIT_IND).
    func grant(_ credits: UInt16, on channel: CreditBasedChannel) throws(HCIError) {
        let indication = FlowControlCreditIndication(cid: channel.localCID, credits: credits)
        try transmitSignaling(indication.command(identifier: nextIdentifier(channel.handle)), on: channel.handle)
    }

    /// A frame on dynamic CID `cid` of link `handle`: a K-frame for the channel whose CID it is.
    public func receive(_ payload: ArraySlice<UInt8>, on cid: ChannelIdentifier, handle: ConnectionHandle) {
        guard let channel = links.existing(handle)?.channels[cid.rawValue] else {
            droppedFrames += 1
            log(.info, "handle \(hex(handle, digits: 4)): frame for \(cid), which no channel has; dropped")
            return
        }
        channel.receiveFrame(payload)
    }
}
