import BluetoothCore
import HCI

/// One open credit-based channel (Core Vol 3, Part A, 3.4.3, 5.1 and 10.1): LE credit based
/// or enhanced credit based, opened by us or accepted from the peer through
/// ``CreditBasedChannels``. SDUs go out with ``send(_:)``, cut into K-frames of the peer's
/// MPS and sent only against the credits the peer granted; SDUs come in through
/// ``receive()`` or ``sdus``, and credits go back to the peer as the app reads, so a slow
/// reader holds the peer back instead of growing memory.
///
/// A K-frame that breaks the rules (no credit left, longer than our MPS, an SDU longer
/// than our MTU or than its length field, credits past 65535) disconnects this channel
/// with ``CreditBasedChannelError/protocolViolation(_:)``, as the specification requires;
/// the link and other channels go on.
@BluetoothActor
public final class CreditBasedChannel {
    /// Which signaling procedure opened the channel.
    public enum Mode: Sendable, Equatable {
        /// L2CAP_LE_CREDIT_BASED_CONNECTION_REQ (4.22): one channel, LE only.
        case leCreditBased
        /// L2CAP_CREDIT_BASED_CONNECTION_REQ (4.25): up to five channels per request.
        case enhancedCreditBased
    }

    /// Where the channel stands.
    public enum State: Sendable, Equatable {
        /// Open: SDUs flow both ways.
        case open
        /// We asked the peer to close it and wait for its answer.
        case disconnecting
        /// Closed, and why (``CreditBasedChannelError/closed`` when we closed it,
        /// ``CreditBasedChannelError/closedByPeer`` when the peer did).
        case closed(CreditBasedChannelError)
    }

    /// What went over the channel, for diagnostics and tests.
    public struct Statistics: Sendable, Equatable {
        /// K-frames sent.
        public var framesSent = 0
        /// K-frames received.
        public var framesReceived = 0
        /// Credits the peer granted us, its initial credits included.
        public var creditsReceived = 0
        /// Credits we granted the peer, our initial credits included.
        public var creditsGranted = 0
        /// Whole SDUs sent.
        public var sdusSent = 0
        /// Whole SDUs received.
        public var sdusReceived = 0
        /// The most credits we ever held at once (never above 65535).
        public var mostSendCredits = 0
    }

    /// The link.
    public nonisolated let handle: ConnectionHandle
    /// What the channel carries.
    public nonisolated let psm: PSM
    /// How it was opened.
    public nonisolated let mode: Mode
    /// Our CID: the peer's K-frames carry it.
    public nonisolated let localCID: UInt16
    /// The peer's CID: our K-frames carry it.
    public nonisolated let remoteCID: UInt16
    /// What we receive: our MTU, MPS and initial credits.
    public nonisolated let local: CreditBasedChannelParameters
    /// The largest SDU the peer accepts.
    public private(set) var remoteMTU: UInt16
    /// The largest K-frame payload the peer accepts.
    public private(set) var remoteMPS: UInt16
    /// K-frames we may send before the peer grants more.
    public private(set) var sendCredits: Int
    /// Where the channel stands.
    public private(set) var state = State.open
    /// What went over the channel so far.
    public private(set) var statistics = Statistics()

    private let manager: CreditBasedChannels
    /// K-frames the peer may still send us.
    private var receiveCredits: Int
    private var reassembler = SDUReassembler()
    private var received: [[UInt8]] = []
    private var bufferedOctets = 0
    private var receivers: [CheckedContinuation<Result<[UInt8]?, CreditBasedChannelError>, Never>] = []
    private var sends:
        [(segmenter: KFrameSegmenter, done: CheckedContinuation<Result<Void, CreditBasedChannelError>, Never>)] = []

    init(
        manager: CreditBasedChannels, handle: ConnectionHandle, psm: PSM, mode: Mode, localCID: UInt16,
        remoteCID: UInt16,
        local: CreditBasedChannelParameters, remoteMTU: UInt16, remoteMPS: UInt16, remoteCredits: UInt16
    ) {
        self.manager = manager
        self.handle = handle
        self.psm = psm
        self.mode = mode
        self.localCID = localCID
        self.remoteCID = remoteCID
        self.local = local
        self.remoteMTU = remoteMTU
        self.remoteMPS = remoteMPS
        sendCredits = Int(remoteCredits)
        receiveCredits = Int(local.initialCredits)
        statistics.creditsReceived = Int(remoteCredits)
        statistics.creditsGranted = Int(local.initialCredits)
        statistics.mostSendCredits = sendCredits
    }

    // MARK: Sending

    /// Sends one SDU (at most ``remoteMTU`` octets; empty is allowed) and returns once its
    /// last K-frame went to the controller. Waits while the peer grants no credits. SDUs
    /// go out whole and in the order they were sent.
    public func send(_ sdu: [UInt8]) async throws(CreditBasedChannelError) {
        switch state {
        case let .closed(error): throw error
        case .disconnecting: throw .closed
        case .open: break
        }
        guard sdu.count <= Int(remoteMTU) else { throw .sduTooLong(length: sdu.count, mtu: Int(remoteMTU)) }
        let result = await withCheckedContinuation {
            (done: CheckedContinuation<Result<Void, CreditBasedChannelError>, Never>) in
            sends.append((KFrameSegmenter(sdu: sdu, mps: Int(remoteMPS)), done))
            pump()
        }
        try result.get()
    }

    /// Sends K-frames while credits last.
    private func pump() {
        while sendCredits > 0, state == .open, !sends.isEmpty {
            guard let frame = sends[0].segmenter.next() else { break }
            do { try manager.transmit(frame, on: remoteCID, handle: handle) } catch {
                fail(.transport(error))
                return
            }
            sendCredits -= 1
            statistics.framesSent += 1
            if sends[0].segmenter.isDone {
                statistics.sdusSent += 1
                sends.removeFirst().done.resume(returning: .success(()))
            }
        }
    }

    /// The peer granted `credits` more (L2CAP_FLOW_CONTROL_CREDIT_IND).
    func addCredits(_ credits: UInt16) {
        guard state == .open else { return }
        // 10.1: more than 65535 outstanding credits is an error that disconnects the channel.
        guard sendCredits + Int(credits) <= Int(UInt16.max) else {
            return violation("credits past 65535: \(sendCredits) held, \(credits) more granted")
        }
        sendCredits += Int(credits)
        statistics.creditsReceived += Int(credits)
        statistics.mostSendCredits = max(statistics.mostSendCredits, sendCredits)
        pump()
    }

    /// The peer lowered or raised its MTU and MPS (L2CAP_CREDIT_BASED_RECONFIGURE_REQ).
    func reconfigure(mtu: UInt16, mps: UInt16) {
        remoteMTU = mtu
        remoteMPS = mps
    }

    // MARK: Receiving

    /// The SDUs the peer sends, in order; the sequence ends when the channel is closed (by
    /// either side) and throws when it was lost (link lost, protocol violation). One
    /// reader at a time.
    public nonisolated var sdus: SDUs { SDUs(channel: self) }

    /// The next SDU; nil once the channel is closed and every SDU received before was read.
    /// Throws the reason when the channel was lost instead of closed.
    public func receive() async throws(CreditBasedChannelError) -> [UInt8]? {
        if !received.isEmpty {
            let sdu = received.removeFirst()
            bufferedOctets -= sdu.count
            grantCredits()
            return sdu
        }
        switch state {
        case .closed(.closed), .closed(.closedByPeer): return nil
        case let .closed(error): throw error
        case .open, .disconnecting: break
        }
        return try await withCheckedContinuation { receivers.append($0) }.get()
    }

    /// A K-frame on our CID.
    func receiveFrame(_ payload: ArraySlice<UInt8>) {
        guard state == .open else { return }  // a channel being closed drops what still comes in
        statistics.framesReceived += 1
        guard receiveCredits > 0 else { return violation("a K-frame arrived with no credit left") }
        receiveCredits -= 1
        guard payload.count <= Int(local.mps) else {
            return violation("a K-frame of \(payload.count) octets exceeds our MPS of \(local.mps)")
        }
        if !reassembler.isCollecting, payload.count >= 2 {
            let length = Int(payload[payload.startIndex]) | Int(payload[payload.startIndex + 1]) << 8
            guard length <= Int(local.mtu) else {
                return violation("an SDU of \(length) octets exceeds our MTU of \(local.mtu)")
            }
        }
        let (progress, problem) = reassembler.appendKFrame(payload)
        if let problem { return violation(problem.description) }
        if case let .complete(sdu) = progress { deliver(Array(sdu)) }
        grantCredits()
    }

    private func deliver(_ sdu: [UInt8]) {
        statistics.sdusReceived += 1
        if !receivers.isEmpty {
            receivers.removeFirst().resume(returning: .success(sdu))
        } else {
            received.append(sdu)
            bufferedOctets += sdu.count
        }
    }

    /// Tops the peer's credits up to our initial credits once half are spent, unless SDUs
    /// the app has not read hold more than that many K-frames' worth.
    private func grantCredits() {
        let window = max(1, Int(local.initialCredits))
        let deficit = window - receiveCredits
        guard state == .open, deficit > 0, deficit >= max(1, window / 2),
            bufferedOctets < max(Int(local.mtu), window * Int(local.mps))
        else { return }
        do { try manager.grant(UInt16(deficit), on: self) } catch {
            return fail(.transport(error))
        }
        receiveCredits = window
        statistics.creditsGranted += deficit
    }

    // MARK: Closing

    /// Closes the channel (L2CAP_DISCONNECTION_REQ) and returns once the peer answered or
    /// the RTX time passed. Sends not yet out fail with ``CreditBasedChannelError/closed``;
    /// SDUs already received can still be read.
    public func disconnect() async {
        guard state == .open else { return }
        state = .disconnecting
        failSends(.closed)
        await manager.disconnect(self)
        end(.closed)
    }

    /// The peer broke the rules: closed at once, and the peer asked to close too.
    private func violation(_ what: String) {
        manager.log(
            .warning,
            "handle \(hex(handle, digits: 4)) CID \(hex(localCID, digits: 4)): \(what); disconnecting the channel")
        fail(.protocolViolation(what))
    }

    /// Ends the channel with `error` and asks the peer to close its end.
    private func fail(_ error: CreditBasedChannelError) {
        guard state == .open else { return }
        end(error)
        let manager = manager
        Task { @BluetoothActor in await manager.disconnect(self) }
    }

    /// Ends the channel: pending sends fail, readers waiting get the end (or the error).
    func end(_ error: CreditBasedChannelError) {
        if case .closed = state { return }
        state = .closed(error)
        failSends(error)
        let normal = error == .closed || error == .closedByPeer
        for receiver in receivers { receiver.resume(returning: normal ? .success(nil) : .failure(error)) }
        receivers.removeAll()
        manager.forget(self)
    }

    private func failSends(_ error: CreditBasedChannelError) {
        let pending = sends
        sends.removeAll()
        for send in pending { send.done.resume(returning: .failure(error)) }
    }
}

extension CreditBasedChannel {
    /// The SDUs a channel receives, as an `AsyncSequence` (``CreditBasedChannel/sdus``).
    public struct SDUs: AsyncSequence, Sendable {
        /// One SDU.
        public typealias Element = [UInt8]
        /// How reading can fail.
        public typealias Failure = CreditBasedChannelError
        let channel: CreditBasedChannel

        /// An iterator reading the channel.
        public func makeAsyncIterator() -> Iterator { Iterator(channel: channel) }

        /// Reads SDUs one by one (``CreditBasedChannel/receive()``).
        public struct Iterator: AsyncIteratorProtocol, Sendable {
            let channel: CreditBasedChannel

            /// The next SDU, or nil at the end.
            public mutating func next() async throws(CreditBasedChannelError) -> [UInt8]? {
                try await channel.receive()
            }
        }
    }
}
