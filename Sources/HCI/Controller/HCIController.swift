import BluetoothCore

/// The host's side of one controller: bring-up, commands with flow control and
/// timeouts, ACL buffer credits, and dispatch of events and data to the layers above.
///
/// Isolated to `BluetoothActor`: packets from the transport's reader thread arrive in
/// order through one stream, and everything here runs without locks.
@BluetoothActor
public final class HCIController {
    /// Tunables.
    public struct Configuration: Sendable {
        /// How long a command may go unanswered before it fails with
        /// ``HCIError/commandTimeout(_:seconds:)``.
        public var commandTimeout: Duration = .seconds(5)
        /// Where diagnostics go.
        public var logger: HCILogger = .standardError

        /// Tunables with the given command timeout and logger.
        public init(commandTimeout: Duration = .seconds(5), logger: HCILogger = .standardError) {
            (self.commandTimeout, self.logger) = (commandTimeout, logger)
        }
    }

    /// Where the controller is in its life.
    public enum State: Sendable, Equatable {
        /// Created, transport not started.
        case idle
        /// Bring-up commands are running.
        case initializing
        /// Ready for LE work.
        case running(ControllerInfo)
        /// Stopped by an error; every operation fails with it.
        case failed(HCIError)
        /// Closed by the host.
        case closed
    }

    private final class PendingCommand {
        let packet: HCICommandPacket
        let continuation: CheckedContinuation<Result<CommandResult, HCIError>, Never>
        /// Its timeout, from when it was sent.
        var timeout: Deadlines.Token?

        init(packet: HCICommandPacket, continuation: CheckedContinuation<Result<CommandResult, HCIError>, Never>) {
            (self.packet, self.continuation) = (packet, continuation)
        }
    }

    /// Answers `command`'s sender, its timeout no longer needed.
    private func finish(_ command: PendingCommand, _ result: Result<CommandResult, HCIError>) {
        if let timeout = command.timeout { deadlines.cancel(timeout) }
        command.continuation.resume(returning: result)
    }

    /// The current state.
    public private(set) var state: State = .idle
    /// Why the controller stopped, once it has failed (transport lost, Hardware Error).
    public var failure: HCIError? { if case let .failed(error) = state { error } else { nil } }
    /// Layers that watch the events the HCI layer does not consume itself (LE Meta,
    /// Disconnection Complete, Encryption Change, vendor and unknown events, …), by token:
    /// the one way to hear of events, called in the order they were added.
    private var eventObservers: [Int: (HCIEvent) -> Void] = [:]
    /// Layers that watch the LE connection events, decoded once here, by token.
    private var leConnectionObservers: [Int: (LEConnectionEvent, LEMetaEvent) -> Void] = [:]
    private var nextObserverToken = 0

    /// Adds a handler for the events the HCI layer does not consume itself; returns a token
    /// for ``removeEventObserver(_:)``.
    public func addEventObserver(_ handler: @escaping (HCIEvent) -> Void) -> Int {
        nextObserverToken += 1
        eventObservers[nextObserverToken] = handler
        return nextObserverToken
    }

    /// Adds a handler for the LE connection events (``LEConnectionEvent``), each decoded
    /// once, here, with the LE Meta event it came in (a malformed one is logged here and
    /// reaches no handler); returns a token for ``removeEventObserver(_:)``. They reach
    /// these handlers before the event observers.
    public func addLEConnectionObserver(_ handler: @escaping (LEConnectionEvent, LEMetaEvent) -> Void) -> Int {
        nextObserverToken += 1
        leConnectionObservers[nextObserverToken] = handler
        return nextObserverToken
    }

    /// Removes a handler added with ``addEventObserver(_:)`` or ``addLEConnectionObserver(_:)``.
    public func removeEventObserver(_ token: Int) {
        eventObservers[token] = nil
        leConnectionObservers[token] = nil
    }

    /// How many event observers are registered (zero once every layer has let go).
    public var eventObserverCount: Int { eventObservers.count + leConnectionObservers.count }

    /// What layers registered here do when the controller closes (close themselves), by token.
    private var closeHandlers: [Int: () -> Void] = [:]

    /// Adds `handler`, run once when ``close()`` is called; returns a token for
    /// ``removeCloseHandler(_:)``. The layers above hold the controller and it holds their
    /// handlers strongly (the receive path pays for no weak references), so closing the
    /// controller closes them, which ends every such cycle.
    public func addCloseHandler(_ handler: @escaping () -> Void) -> Int {
        nextObserverToken += 1
        closeHandlers[nextObserverToken] = handler
        return nextObserverToken
    }

    /// Removes a handler added with ``addCloseHandler(_:)``.
    public func removeCloseHandler(_ token: Int) { closeHandlers[token] = nil }

    private func dispatch(_ event: HCIEvent) {
        for token in eventObservers.keys.sorted() { eventObservers[token]?(event) }
    }

    /// Called for every ACL packet from the controller with its open link, found once here
    /// so the layers above are handed the link rather than look it up. A packet on a handle
    /// no open link has (vendor debug data, a link we never saw) is logged and dropped.
    public var onACLData: ((ACLDataPacket, Link) -> Void)?
    /// The link of the last ACL packet: packets come link after link, so most need no search.
    /// Always open: a link's end takes it off.
    var lastACLLink: Link?
    /// Called once when the controller stops because of an error.
    public var onFailure: ((HCIError) -> Void)?
    /// The open links, the one record of them (each layer keeps its per-link state on the
    /// ``Link``). A failed controller reports no end: ``fail(_:)`` ends them.
    var openLinks = SmallMap<ConnectionHandle, Link>()

    /// The open link with `handle`, if any.
    public func link(_ handle: ConnectionHandle) -> Link? {
        guard let index = openLinks.index(forKey: handle) else { return nil }
        return openLinks.values[index]
    }

    /// Every open link, oldest first.
    public var links: [Link] { openLinks.values }

    /// The transport this controller talks through.
    public nonisolated let transport: any HCITransport
    /// The clock timeouts are measured on (injectable for tests).
    public let clock: any Clock<Duration>
    /// This layer's timeouts on `clock`: each command's, and each wait for a link's data.
    let deadlines: Deadlines
    private let configuration: Configuration
    /// The configuration's logger, for this layer (`bluejay.hci`).
    let logger: HCILogger

    /// Commands the controller may accept now (Num_HCI_Command_Packets).
    public private(set) var commandCredits = 1
    private var waitingCommands: [PendingCommand] = []
    /// Commands waiting for a credit from the controller.
    public var queuedCommandCount: Int { waitingCommands.count }
    private var sentCommands: [PendingCommand] = []
    /// Commands sent and not yet answered.
    public var outstandingCommandCount: Int { sentCommands.count }
    /// ACL buffer accounting; set once the buffer size is known.
    public internal(set) var aclFlow: ACLFlowControl?
    /// The packets one ``transmitReleased()`` hands the transport, kept for its capacity.
    var released: [ACLDataPacket] = []
    /// At most this many deliveries (one read each) wait between the transport and us. A
    /// read of a flood holds up to 64 KiB, so this bounds what waits to about 0.5 MiB (64
    /// deliveries held about 4 MiB under the peer's flood: most of `bluejay listen`'s heap).
    /// Eight reads are still thousands of packets ahead of the stack.
    private let backlog = DeliveryBacklog(limit: 8)

    /// A controller behind `transport`. Nothing is sent until ``start()``.
    public init(
        transport: any HCITransport, clock: any Clock<Duration> = ContinuousClock(),
        configuration: Configuration = .init()
    ) {
        self.transport = transport
        self.clock = clock
        deadlines = Deadlines(clock: clock)
        self.configuration = configuration
        logger = configuration.logger.layer("hci")
    }

    /// The controller's facts, once running.
    public var info: ControllerInfo? {
        if case let .running(info) = state { return info }
        return nil
    }

    // MARK: Life cycle

    /// Starts the transport and brings the controller up: Reset, versions, supported
    /// commands and features, address, event masks chosen from what it supports, buffer
    /// sizes (LE v2 → LE v1 → shared BR/EDR) and the maximum data length.
    @discardableResult
    public func start() async throws(HCIError) -> ControllerInfo {
        guard state == .idle else { throw .notRunning }
        state = .initializing
        do {
            let backlog = backlog, inTurn = transport.deliversOnStackLoop
            try transport.start { [weak self] delivery in
                // A descriptor transport reads on the stack's own thread: the batch is
                // handled now, in the same turn. Others (a replay, a mock) hand it over to
                // the loop, in order; one delivering on the loop itself must not wait for
                // the loop to drain.
                guard inTurn else {
                    backlog.enter(waiting: !EventLoop.stack.isCurrent)
                    EventLoop.stack.execute { [weak self] in
                        backlog.leave()
                        BluetoothActor.assumeIsolated { self?.receive(delivery) }
                    }
                    return
                }
                BluetoothActor.assumeIsolated { self?.receive(delivery) }
            }
        } catch {
            fail(.transport(error))
            throw .transport(error)
        }
        do {
            let info = try await bringUp()
            aclFlow = ACLFlowControl(bufferCount: info.aclBuffers.count, bufferLength: info.aclBuffers.length)
            guard state == .initializing else { throw HCIError.notRunning }
            state = .running(info)
            return info
        } catch {
            let error = error as? HCIError ?? .notRunning
            if case .initializing = state { fail(error) }
            if case let .failed(reason) = state { throw reason }
            throw error
        }
    }

    /// Stops: every queued and running command fails with ``HCIError/notRunning``, the
    /// transport closes (its thread joined, its descriptors closed).
    public func close() {
        switch state {
        case .closed: return
        default: break
        }
        state = .closed
        failAllCommands(.notRunning)
        stopReceiving()
        // The layers registered here hold on to this controller and it to them: closing
        // them (newest first, so the layers above go before the ones they stand on) and
        // letting go of what they left ends those cycles.
        let handlers = closeHandlers
        closeHandlers.removeAll()
        for token in handlers.keys.sorted(by: >) { handlers[token]?() }
        // What the layers left on the links ends with them; no Disconnection Complete will come.
        let ended = openLinks.values
        openLinks.removeAll()
        lastACLLink = nil
        for link in ended { link.close(.connectionTerminatedByLocalHost) }
        onACLData = nil
        eventObservers.removeAll()
        deadlines.cancelAll()
    }

    /// Lets a transport's thread waiting on the backlog go, then closes the transport
    /// (joining its thread); deliveries it queued on the loop find the controller closed.
    private func stopReceiving() {
        backlog.open()
        transport.close()
    }

    // MARK: Commands

    /// Sends a command and returns its decoded return parameters, or throws the status
    /// the controller answered with, a timeout, or the reason the controller stopped.
    @discardableResult
    public func send<C: HCICommand>(_ command: C) async throws(HCIError) -> C.ReturnParameters {
        try await send(command.packet).returnParameters(of: C.self)
    }

    /// Sends a raw command packet and returns how the controller answered it. Commands
    /// go out only while the controller grants command credits; the rest wait in order.
    public func send(_ packet: HCICommandPacket) async throws(HCIError) -> CommandResult {
        switch state {
        case .idle, .closed: throw .notRunning
        case .failed(let error): throw error
        case .initializing, .running: break
        }
        let result = await withCheckedContinuation { continuation in
            waitingCommands.append(PendingCommand(packet: packet, continuation: continuation))
            pumpCommands()
        }
        return try result.get()
    }

    private func pumpCommands() {
        while commandCredits > 0, !waitingCommands.isEmpty {
            let command = waitingCommands.removeFirst()
            commandCredits -= 1
            do {
                try transport.send(.command(command.packet))
            } catch {
                finish(command, .failure(.transport(error)))
                fail(.transport(error))
                return
            }
            logger.log(
                .debug,
                "< \(command.packet.opcode) \(logger.hexDump(command.packet.parameters, secrets: HCISecretFields.command(command.packet.opcode, parameters: command.packet.parameters)))"
            )
            let timeout = configuration.commandTimeout
            command.timeout = deadlines.schedule(after: timeout) { [weak self, weak command] in
                guard let self, let command else { return }
                self.commandTimedOut(command, after: timeout)
            }
            sentCommands.append(command)
        }
    }

    private func commandTimedOut(_ command: PendingCommand, after timeout: Duration) {
        guard let index = sentCommands.firstIndex(where: { $0 === command }) else { return }
        sentCommands.remove(at: index)
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        logger.log(.error, "\(command.packet.opcode) timed out after \(seconds) s")
        finish(command, .failure(.commandTimeout(command.packet.opcode, seconds: seconds)))
        // The controller lost the command or its answer; like Linux, assume one credit is
        // free again so the queue does not stall forever.
        commandCredits = max(commandCredits, 1)
        pumpCommands()
    }

    private func commandAnswered(opcode: HCIOpcode, credits: UInt8, result: CommandResult) {
        commandCredits = Int(credits)
        if opcode.rawValue != 0 {
            if let index = sentCommands.firstIndex(where: { $0.packet.opcode == opcode }) {
                finish(sentCommands.remove(at: index), .success(result))
            } else {
                logger.log(
                    .warning,
                    "answer for \(opcode) which is not outstanding (late after a timeout, or sent by someone else); ignored"
                )
            }
        }
        pumpCommands()
    }

    private func failAllCommands(_ error: HCIError) {
        let all = sentCommands + waitingCommands
        sentCommands.removeAll()
        waitingCommands.removeAll()
        for command in all { finish(command, .failure(error)) }
    }

    func fail(_ error: HCIError) {
        switch state {
        case .failed, .closed: return
        default: break
        }
        state = .failed(error)
        logger.log(.error, error.description)
        failAllCommands(error)
        stopReceiving()
        // With the controller gone no Disconnection Complete will come, and a layer waiting
        // on a link (an ATT response, a notification) would wait forever. Every link ends
        // here instead, as Unspecified Error, through the same handling as a real one: its
        // ACL credits come back and what was queued for it is dropped.
        for link in openLinks.keys.sorted() {
            handle(
                .disconnectionComplete(DisconnectionComplete(status: .success, handle: link, reason: .unspecifiedError))
            )
        }
        onFailure?(error)
    }

    // MARK: Receiving

    /// Handles `delivery` at once, on the stack's actor, as if the transport had just
    /// delivered it: for the send benchmark, which times the host's own work on completions
    /// without the hop from the reader thread.
    package func receiveNow(_ delivery: TransportDelivery) { receive(delivery) }

    private func receive(_ delivery: TransportDelivery) {
        switch delivery {
        case .failed(let error):
            fail(.transport(error))
        case .packets(let packets):
            for packet in packets {
                switch state {
                case .failed, .closed: return
                default: break
                }
                receive(packet)
            }
        }
    }

    private func receive(_ packet: HCIPacket) {
        switch packet {
        case .event(let eventPacket):
            let event: HCIEvent
            do {
                event = try HCIEvent(eventPacket)
            } catch {
                // A malformed event loses only itself.
                logger.log(
                    .warning,
                    "malformed \(HCINames.event(eventPacket.code)) event (\(hex(eventPacket.code, digits: 2))): \(error); "
                        + "parameters \(logger.hexDump(eventPacket.parameters, secrets: HCISecretFields.event(code: eventPacket.code, parameters: eventPacket.parameters)))"
                )
                return
            }
            // Octets past an event's format are ignored (the tolerance rule); say so when tracing.
            if logger.level >= .debug, let extra = eventPacket.extraOctets, extra > 0 {
                logger.log(
                    .debug,
                    "\(HCINames.event(eventPacket.code)) event (\(hex(eventPacket.code, digits: 2))) carries \(extra) octet(s) "
                        + "past its format, ignored: \(logger.hexDump(eventPacket.parameters, secrets: HCISecretFields.event(code: eventPacket.code, parameters: eventPacket.parameters)))"
                )
            }
            handle(event)
        case .acl(let acl):
            receiveACL(acl)
        case .command, .sco, .iso:
            logger.log(.debug, "ignored \(packet.type) packet from the controller")
        }
    }

    private func handle(_ event: HCIEvent) {
        switch event {
        case .commandComplete(let complete):
            logger.log(
                .debug,
                "> Command Complete \(complete.opcode) \(logger.hexDump(complete.returnParameters, secrets: HCISecretFields.returnParameters(complete.opcode, complete.returnParameters)))"
            )
            commandAnswered(
                opcode: complete.opcode, credits: complete.numHCICommandPackets,
                result: .complete(complete.returnParameters))
        case .commandStatus(let status):
            logger.log(.debug, "> Command Status \(status.opcode) \(status.status)")
            commandAnswered(opcode: status.opcode, credits: status.numHCICommandPackets, result: .status(status.status))
        case .numberOfCompletedPackets(let completed):
            guard aclFlow != nil else { return }
            for completion in completed.completions {
                let count = Int(completion.count)
                let taken = link(completion.handle)?.completePackets(count) ?? 0
                aclFlow?.free(taken)
                if taken < count {
                    logger.log(
                        .warning,
                        "controller completed \(count - taken) more packet(s) on handle \(hex(completion.handle, digits: 4)) than were outstanding"
                    )
                }
            }
            try? transmitReleased()
            wakeDrainWaiters()
        case .disconnectionComplete(let disconnection):
            // A failed Disconnect (non-zero status) leaves the link and its buffers as they were.
            if disconnection.status.isSuccess, let dropped = aclFlow?.drop(handle: disconnection.handle) {
                if !dropped.isEmpty {
                    logger.log(
                        .info,
                        "dropped \(dropped.count) queued ACL packet(s) of disconnected handle \(hex(disconnection.handle, digits: 4))"
                    )
                }
                if let link = link(disconnection.handle) {
                    aclFlow?.free(link.completePackets(link.packetsInController))
                }
                try? transmitReleased()
                wakeDrainWaiters()
            }
            // The link closes (every layer's state on it, the highest first) before anyone
            // hears of its end, so what they do next finds nothing of it left.
            if disconnection.status.isSuccess {
                if lastACLLink?.handle == disconnection.handle { lastACLLink = nil }
                openLinks.removeValue(forKey: disconnection.handle)?.close(disconnection.reason)
            }
            dispatch(event)
        case .hardwareError(let error):
            fail(.hardwareError(code: error.hardwareCode))
            dispatch(event)
        case .vendorSpecific(let parameters):
            logger.log(.debug, "vendor-specific event (0xff), \(parameters.count) byte(s), ignored")
            dispatch(event)
        case .other(let packet):
            logger.log(.debug, "event \(hex(packet.code, digits: 2)) \(HCINames.event(packet.code)) not handled by HCI")
            dispatch(event)
        case .dataBufferOverflow(let overflow):
            logger.log(
                .error, "controller reports Data Buffer Overflow (link type \(overflow.linkType)): data was lost")
            dispatch(event)
        case .leMeta(let meta):
            let connectionEvent: LEConnectionEvent?
            do { connectionEvent = try LEConnectionEvent.decode(meta) } catch {
                logger.log(.warning, "malformed \(meta.name): \(error)")
                connectionEvent = nil
            }
            if let connectionEvent {
                apply(connectionEvent)
                for token in leConnectionObservers.keys.sorted() {
                    leConnectionObservers[token]?(connectionEvent, meta)
                }
            }
            dispatch(event)
        case .encryptionChange, .encryptionKeyRefreshComplete:
            dispatch(event)
        }
    }
}
