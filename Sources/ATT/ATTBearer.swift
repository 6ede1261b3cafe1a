import BluetoothCore
import HCI
import L2CAP

/// One ATT bearer: the ATT fixed channel of one LE link (Core Vol 3, Part F, 3.3).
///
/// It owns the rule that a client has at most one request outstanding: requests wait in a
/// FIFO and the next goes out only when the previous one is answered. Commands (Write
/// Command) and confirmations are not requests and go out at once. A request that is not
/// answered in 30 s fails with ``ATTError/timeout`` and closes the bearer for good, as the
/// specification requires; so does a response that does not answer the pending request.
/// Server-initiated PDUs go to ``onNotification`` and ``onIndication`` (the confirmation is
/// sent once the handler returns); the peer's own requests go to ``server``.
///
/// The bearer talks to the link through a `transmit` closure, so it can be driven byte for
/// byte in a unit test; ``ATTBearers`` attaches it to a live connection. Each PDU is
/// encoded once, into an `OutgoingFrame` that L2CAP sends without copying.
@BluetoothActor
public final class ATTBearer {
    /// ATT_MTU before any exchange on an LE link.
    public nonisolated static let defaultMTU = 23
    /// The largest ATT_MTU worth asking for: a 512-byte value plus the largest header.
    public nonisolated static let maximumMTU: UInt16 = 517
    /// How long a request may wait for its response.
    public nonisolated static let transactionTimeout: Duration = .seconds(30)

    enum State {
        case open
        case closed(ATTError)
    }

    /// A request waiting to be sent or answered.
    private struct Transaction {
        let id: Int
        /// The request, until it is sent (then handed over, so L2CAP owns the only copy and
        /// fills in its header without copying the buffer).
        var frame: OutgoingFrame?
        let requestOpcode: ATTOpcode
        let responseOpcode: ATTOpcode
        /// Ends the caller's wait; returns an error when the response does not decode.
        let finish: (Result<ArraySlice<UInt8>, ATTError>) -> ATTError?
    }

    /// The connection handle of the link this bearer runs on.
    public let connection: ConnectionHandle
    /// The ATT_MTU now in effect on this bearer.
    public private(set) var mtu = ATTBearer.defaultMTU
    /// The receive MTU offered in an MTU exchange (ours, as client or server).
    public let preferredMTU: UInt16
    /// Answers the peer's requests; without one, every request is refused with
    /// `requestNotSupported`. The bearers of ``ATTBearers`` share their owner's: it is set
    /// once, there (``ATTBearers/server``), and each bearer asks for it.
    public var server: (any ATTServer)? {
        get { serverSlot.server }
        set { serverSlot.server = newValue }
    }
    /// Where ``server`` is kept: the bearer's own, or the one its owner shares.
    private let serverSlot: ATTServerSlot
    /// What the server keeps for this bearer's client (its prepare queue, its CCCDs): kept
    /// here, on the link, it goes with the link.
    public var serverState: AnyObject?
    /// Told when the link closes the bearer, after the server: its owner lets go of it.
    var onLinkClosed: (() -> Void)?
    /// Called with (attribute handle, value) for each notification, in arrival order.
    public var onNotification: ((AttributeHandle, ArraySlice<UInt8>) -> Void)?
    /// Called with (attribute handle, value) for each indication; the confirmation goes out
    /// when it returns.
    public var onIndication: ((AttributeHandle, ArraySlice<UInt8>) -> Void)?
    /// Called once when the bearer closes on its own (timeout or protocol error), so that
    /// its owner drops the link.
    public var onFatalError: ((ATTError) -> Void)?
    /// Asked when a request fails for want of security (Insufficient Authentication,
    /// Encryption or Encryption Key Size): true once the link was encrypted or paired, and
    /// the request is then sent again, once. This is what iOS does on demand.
    public var onSecurityRequired: ((ATTErrorCode) async -> Bool)?
    /// PDUs the peer sent that could not be used (malformed, or a response to nothing).
    public private(set) var discardedPDUs = 0

    let transmit: (consuming OutgoingFrame) throws(HCIError) -> Void
    /// Where the bearer, and the procedures run on it, log.
    public let logger: HCILogger
    private(set) var state = State.open
    private var pending: Transaction?
    private var queue: [Transaction] = []
    /// The link's ATT timeouts: the outstanding request's and indication's (Part F, 3.3.3).
    let deadlines: Deadlines
    private var timer: Deadlines.Token?
    var nextID = 0
    /// Our indications: the first is outstanding once sent (one at a time, Part F, 3.4.7.2),
    /// the rest wait for its confirmation.
    var indications: [Indication] = []
    var indicationTimer: Deadlines.Token?

    /// An indication waiting to be sent or confirmed.
    struct Indication {
        let id: Int
        /// The PDU until it is sent.
        var frame: OutgoingFrame?
        let confirmed: Expectation<Result<Void, ATTError>>
    }

    /// A bearer for connection `connection` that sends each PDU, built in place, through
    /// `transmit`.
    public convenience init(
        connection: ConnectionHandle, preferredMTU: UInt16 = ATTBearer.maximumMTU,
        clock: any Clock<Duration> = ContinuousClock(), logger: HCILogger = .standardError,
        transmit: @escaping (consuming OutgoingFrame) throws(HCIError) -> Void
    ) {
        self.init(
            connection: connection, preferredMTU: preferredMTU, clock: clock, logger: logger,
            serverSlot: ATTServerSlot(),
            transmit: transmit)
    }

    /// A bearer whose server is the one `serverSlot` holds.
    init(
        connection: ConnectionHandle, preferredMTU: UInt16, clock: any Clock<Duration>, logger: HCILogger,
        serverSlot: ATTServerSlot, transmit: @escaping (consuming OutgoingFrame) throws(HCIError) -> Void
    ) {
        self.serverSlot = serverSlot
        self.connection = connection
        self.preferredMTU = max(preferredMTU, UInt16(ATTBearer.defaultMTU))
        deadlines = Deadlines(clock: clock)
        self.logger = logger.layer("att")
        self.transmit = transmit
    }

    /// A bearer that hands `transmit` each whole PDU as bytes (for a unit test's loopback).
    package convenience init(
        connection: ConnectionHandle, preferredMTU: UInt16 = ATTBearer.maximumMTU,
        clock: any Clock<Duration> = ContinuousClock(),
        logger: HCILogger = .standardError, transmit: @escaping ([UInt8]) throws(HCIError) -> Void
    ) {
        self.init(
            connection: connection, preferredMTU: preferredMTU, clock: clock, logger: logger,
            serverSlot: ATTServerSlot()
        ) { (frame: consuming OutgoingFrame) throws(HCIError) in
            try transmit(Array(frame.payload))
        }
    }

    /// Whether the bearer still carries PDUs.
    public var isOpen: Bool { if case .open = state { true } else { false } }

    /// Requests waiting behind the outstanding one.
    public var queuedRequests: Int { queue.count }

    /// Whether a request is waiting for its response.
    public var hasOutstandingRequest: Bool { pending != nil }

    // MARK: Client side

    /// Sends `request` once every earlier request has been answered, and returns its
    /// response. An Error Response for it throws ``ATTError/errorResponse(_:)``.
    public func request<Request: ATTPDU, Response: ATTPDU>(
        _ request: Request, expecting _: Response.Type = Response.self
    )
        async throws(ATTError) -> Response
    {
        do throws(ATTError) { return try await transact(request, expecting: Response.self) } catch {
            guard case let .errorResponse(response) = error, Self.securityErrors.contains(response.error),
                let onSecurityRequired
            else { throw error }
            let secured = await onSecurityRequired(response.error)
            // A link lost while it was being secured ends the request as it ends every request
            // under way, not with the refusal that started the pairing.
            if case let .closed(reason) = state { throw reason }
            guard secured else { throw error }
            return try await transact(request, expecting: Response.self)
        }
    }

    /// The error codes that security on the link can cure.
    static let securityErrors: Set<ATTErrorCode> = [
        .insufficientAuthentication, .insufficientEncryption, .encryptionKeySizeTooShort,
    ]

    /// One request and its response (or Error Response).
    private func transact<Request: ATTPDU, Response: ATTPDU>(_ request: Request, expecting _: Response.Type)
        async throws(ATTError) -> Response
    {
        if case let .closed(reason) = state { throw .closed(reason) }
        let frame = request.frame(capacity: mtu)
        guard frame.payloadCount <= mtu else { throw .pduTooLong(length: frame.payloadCount, mtu: mtu) }
        let outcome = Expectation<Result<Response, ATTError>>()
        nextID += 1
        queue.append(
            Transaction(id: nextID, frame: frame, requestOpcode: Request.opcode, responseOpcode: Response.opcode) {
                [connection, logger] result in
                switch result {
                case let .failure(error):
                    outcome.fulfill(.failure(error))
                    return nil
                case let .success(bytes):
                    do {
                        outcome.fulfill(
                            .success(try Self.received(Response.self, bytes, on: connection, logger: logger)))
                        return nil
                    } catch {
                        let problem = ATTError.protocolError("malformed \(Response.opcode.name): \(error)")
                        outcome.fulfill(.failure(problem))
                        return problem
                    }
                }
            })
        sendNext()
        return try await outcome.value().get()
    }

    /// Sends a command (Write Command, Signed Write Command) at once; no response follows.
    public func send<Command: ATTPDU>(command: Command) throws(ATTError) {
        if case let .closed(reason) = state { throw .closed(reason) }
        let frame = command.frame(capacity: mtu)
        guard frame.payloadCount <= mtu else { throw .pduTooLong(length: frame.payloadCount, mtu: mtu) }
        do { try transmit(consume frame) } catch { throw .transport(error) }
    }

    /// Exchanges MTUs (the client's first request after connecting) and returns the ATT_MTU
    /// now in effect: the smaller of the two receive MTUs. A server MTU below 23 breaks the
    /// specification; ATT_MTU then stays 23, as the specification says.
    @discardableResult
    public func exchangeMTU() async throws(ATTError) -> Int {
        let response = try await request(
            ExchangeMTURequest(clientRxMTU: preferredMTU), expecting: ExchangeMTUResponse.self)
        guard Int(response.serverRxMTU) >= ATTBearer.defaultMTU else {
            // Part F, 3.4.2.2: an Rx MTU below the default leaves ATT_MTU at 23.
            logger.log(
                .warning,
                "handle \(hex(connection, digits: 4)): the server's Rx MTU \(response.serverRxMTU) is below 23; ATT_MTU stays 23"
            )
            return mtu
        }
        mtu = Int(min(preferredMTU, response.serverRxMTU))
        return mtu
    }

    private func sendNext() {
        while pending == nil, !queue.isEmpty, case .open = state {
            var next = queue.removeFirst()
            guard let frame = next.frame.take() else { continue }
            do { try transmit(consume frame) } catch {
                _ = next.finish(.failure(.transport(error)))
                continue
            }
            pending = next
            let id = next.id
            // An outstanding request keeps its bearer until it is answered, times out or the
            // bearer closes (each cancels this timer).
            timer = deadlines.schedule(after: ATTBearer.transactionTimeout) { self.timedOut(id) }
        }
    }

    private func timedOut(_ id: Int) {
        guard let pending, pending.id == id else { return }
        logger.log(.error, "handle \(hex(connection, digits: 4)): no response to \(pending.requestOpcode.name) in 30 s")
        fail(.timeout)
    }

    /// Completes the outstanding request and moves on to the next.
    private func complete(_ result: Result<ArraySlice<UInt8>, ATTError>) {
        guard let transaction = pending else { return }
        pending = nil
        if let timer { deadlines.cancel(timer) }
        timer = nil
        if let problem = transaction.finish(result) {
            fail(problem)
            return
        }
        sendNext()
    }

    // MARK: Closing

    /// Closes the bearer: the outstanding and every queued request end with `reason`, and
    /// nothing more is sent or delivered. Used when the link goes down.
    public func close(_ reason: ATTError) {
        guard case .open = state else { return }
        state = .closed(reason)
        deadlines.cancelAll()
        timer = nil
        let ended = (pending.map { [$0] } ?? []) + queue
        pending = nil
        queue = []
        for transaction in ended { _ = transaction.finish(.failure(reason)) }
        indicationTimer = nil
        let unconfirmed = indications
        indications = []
        for indication in unconfirmed { indication.confirmed.fulfill(.failure(.closed(reason))) }
        // A closed bearer delivers nothing more: letting go of the handlers ends the cycles
        // their owners made with strong references (see ``GATTClient/init(bearer:)``).
        onNotification = nil
        onIndication = nil
        onFatalError = nil
        onSecurityRequired = nil
    }

    /// Closes the bearer for a fault of the protocol and tells the owner to drop the link.
    func fail(_ reason: ATTError) {
        guard case .open = state else { return }
        let onFatalError = self.onFatalError
        close(reason)
        onFatalError?(reason)
    }

    // MARK: Receiving

    /// Handles one PDU received on the ATT channel of this link.
    public func receive(_ pdu: ArraySlice<UInt8>) {
        guard case .open = state else { return }
        guard let first = pdu.first else {
            discard("an empty ATT PDU")
            return
        }
        let opcode = ATTOpcode(rawValue: first)
        if opcode.isResponse {
            receiveResponse(opcode, pdu)
            return
        }
        switch opcode {
        case .handleValueNotification:
            do {
                let notification = try received(HandleValueNotification.self, pdu)
                onNotification?(notification.handle, notification.value)
            } catch {
                discard("a malformed notification (\(error))")
            }
        case .multipleHandleValueNotification:
            do {
                for entry in try MultipleHandleValueNotification(decoding: pdu).entries {
                    onNotification?(entry.handle, entry.value)
                }
            } catch {
                discard("a malformed Multiple Handle Value Notification (\(error))")
            }
        case .handleValueIndication:
            do {
                let indication = try received(HandleValueIndication.self, pdu)
                onIndication?(indication.handle, indication.value)
                reply(HandleValueConfirmation())
            } catch {
                discard("a malformed indication (\(error)); not confirmed")
            }
        case .exchangeMTURequest:
            answerMTUExchange(pdu)
        case .handleValueConfirmation:
            confirmIndication(pdu)
        default:
            serve(opcode, pdu)
        }
    }

    /// Hands a request or command to the server, decoded once; what cannot be decoded is
    /// answered here (Invalid PDU, Request Not Supported), or dropped if it is a command.
    private func serve(_ opcode: ATTOpcode, _ pdu: ArraySlice<UInt8>) {
        guard let server else {
            if !opcode.isCommand { reply(ErrorResponse(requestOpcode: opcode, handle: 0, error: .requestNotSupported)) }
            return
        }
        let request: ATTRequest
        do throws(ATTRequestRefusal) {
            request = try ATTRequest(decoding: pdu)
        } catch {
            guard let response = error.response else {
                discard(error.reason)
                return
            }
            logger.log(.info, "handle \(hex(connection, digits: 4)): \(error.reason); answered \(response.error)")
            reply(response)
            return
        }
        if let answer = server.respond(to: request, on: self) { reply(OutgoingFrame(payload: answer)) }
    }

    /// Decodes what the server sent under the tolerance rule: octets past a fixed format
    /// (a newer server's fields) are ignored, with a debug line.
    func received<PDU: ATTPDU>(_ type: PDU.Type, _ pdu: ArraySlice<UInt8>) throws(DecodingError) -> PDU {
        try Self.received(type, pdu, on: connection, logger: logger)
    }

    private static func received<PDU: ATTPDU>(
        _: PDU.Type, _ pdu: ArraySlice<UInt8>, on connection: ConnectionHandle,
        logger: HCILogger
    ) throws(DecodingError) -> PDU {
        let (decoded, extra) = try PDU.decodeCountingExtraOctets(pdu)
        if extra > 0 {
            logger.log(
                .debug,
                "handle \(hex(connection, digits: 4)): \(PDU.opcode.name) carries \(extra) octet(s) past its format, ignored: \(pdu.hexDump)"
            )
        }
        return decoded
    }

    private func receiveResponse(_ opcode: ATTOpcode, _ pdu: ArraySlice<UInt8>) {
        guard let transaction = pending else {
            discard("a \(opcode.name) that answers no request")
            return
        }
        if opcode == .errorResponse {
            do {
                let response = try received(ErrorResponse.self, pdu)
                guard response.requestOpcode == transaction.requestOpcode else {
                    // Closing ends the outstanding request (and every queued one) with this.
                    fail(
                        .protocolError(
                            "an Error Response for \(response.requestOpcode.name) while \(transaction.requestOpcode.name) was outstanding"
                        ))
                    return
                }
                complete(.failure(.errorResponse(response)))
            } catch {
                fail(.protocolError("malformed Error Response (\(error))"))
            }
            return
        }
        guard opcode == transaction.responseOpcode else {
            fail(.protocolError("\(opcode.name) received while \(transaction.requestOpcode.name) was outstanding"))
            return
        }
        complete(.success(pdu))
    }

    private func answerMTUExchange(_ pdu: ArraySlice<UInt8>) {
        do {
            let request = try ExchangeMTURequest(decoding: pdu)
            reply(ExchangeMTUResponse(serverRxMTU: preferredMTU))
            // The new MTU applies once the response has gone out (Vol 3, Part F, 3.4.2.2).
            mtu = max(ATTBearer.defaultMTU, Int(min(request.clientRxMTU, preferredMTU)))
        } catch {
            reply(ErrorResponse(requestOpcode: .exchangeMTURequest, handle: 0, error: .invalidPDU))
        }
    }

    func reply(_ pdu: some ATTPDU) {
        reply(pdu.frame(capacity: mtu))
    }

    func reply(_ frame: consuming OutgoingFrame) {
        let opcode = ATTOpcode(rawValue: frame.payload.first ?? 0)
        do { try transmit(consume frame) } catch {
            logger.log(.warning, "handle \(hex(connection, digits: 4)): sending \(opcode.name): \(error)")
        }
    }

    func discard(_ what: String) {
        discardedPDUs += 1
        logger.log(.warning, "handle \(hex(connection, digits: 4)): \(what); dropped")
    }
}

/// A bearer lives on its link (``ATTBearers``) and closes with it.
extension ATTBearer: LinkAttachment {
    /// The link ended: every request and indication fails as disconnected, and the server
    /// lets go of the link's client.
    public func linkClosed(_ link: Link, _ reason: HCIStatus) {
        close(.disconnected(reason))
        server?.bearerClosed(self)
        serverState = nil
        onLinkClosed?()
        onLinkClosed = nil
    }
}
