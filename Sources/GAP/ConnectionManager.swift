import BluetoothCore

/// One LE connection as the host knows it.
public struct LEConnection: Sendable, Equatable {
    /// The connection handle.
    public let handle: ConnectionHandle
    /// 0x00 central, 0x01 peripheral (our role).
    public let role: UInt8
    /// The peer's address type as the controller reported it.
    public let peerAddressType: UInt8
    /// The peer's address.
    public let peerAddress: BluetoothAddress
    /// Interval, latency and supervision timeout now in use.
    public internal(set) var parameters: LEConnectionParameters
    /// Transmit PHY: 1 = 1M, 2 = 2M, 3 = Coded.
    public internal(set) var txPHY: UInt8 = 1
    /// Receive PHY: 1 = 1M, 2 = 2M, 3 = Coded.
    public internal(set) var rxPHY: UInt8 = 1
    /// Maximum link-layer payload octets sent (27 until data length is extended).
    public internal(set) var maxTxOctets: UInt16 = 27
    /// Maximum link-layer payload octets received.
    public internal(set) var maxRxOctets: UInt16 = 27
    /// The peer's LE features, once read.
    public internal(set) var remoteFeatures: LEFeatures?
}

/// Why a connection operation failed.
public enum ConnectionError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The peer was not found in the time allowed; the attempt was cancelled.
    case connectionTimeout
    /// The attempt was cancelled by the host.
    case cancelled
    /// Another connection attempt is in progress (the controller allows one at a time).
    case busy
    /// The controller reported the connection failed with this status.
    case failed(HCIStatus)
    /// No connection has this handle.
    case notConnected(ConnectionHandle)
    /// The link went down while waiting; the reason.
    case disconnected(HCIStatus)
    /// An expected event did not arrive in time.
    case eventTimeout(String)
    /// A command failed.
    case hci(HCIError)

    /// Readable, with codes by name.
    public var description: String {
        switch self {
        case .connectionTimeout: "connectionTimeout: the peripheral did not answer in time; the attempt was cancelled"
        case .cancelled: "the connection attempt was cancelled"
        case .busy: "another connection attempt is in progress"
        case let .failed(status): "connection failed: \(status)"
        case let .notConnected(handle): "no connection with handle \(hex(handle, digits: 4))"
        case let .disconnected(reason): "disconnected: \(reason)"
        case let .eventTimeout(what): "timed out waiting for \(what)"
        case let .hci(error): error.description
        }
    }
}

/// Creates, tracks and ends LE connections as a central: LE (Extended) Create Connection
/// with a timeout that cancels, Disconnect, and the set-up a link wants right after it
/// comes up (remote features, longest data length, 2M PHY) when both sides support it.
@BluetoothActor
public final class ConnectionManager {
    private typealias Outcome = Expectation<Result<ConnectionHandle, ConnectionError>>

    /// A connection attempt. `linkEnd` hears the reason if the link goes down before
    /// ``connect(to:type:timeout:parameters:setUp:)`` returns: it waits for the link's end from
    /// the moment the link comes up, so an end that follows at once is not missed.
    private enum Attempt {
        case idle
        case connecting(Outcome, linkEnd: Expectation<HCIStatus>)
        /// Cancel sent; the controller's LE Connection Complete (status 0x02) ends it.
        case cancelling(ConnectionError, Outcome, linkEnd: Expectation<HCIStatus>)

        var linkEnd: Expectation<HCIStatus>? {
            switch self {
            case .idle: nil
            case let .connecting(_, linkEnd), let .cancelling(_, _, linkEnd): linkEnd
            }
        }
    }

    private struct Waiter {
        let handle: ConnectionHandle
        let matches: (LEConnectionEvent) -> Bool
        let outcome: Expectation<Result<LEConnectionEvent, ConnectionError>>
    }

    private let controller: HCIController
    private let logger: HCILogger
    private var observer: Int?
    private var attempt: Attempt = .idle
    private var waiters: [Int: Waiter] = [:]
    /// The waits for a link's end this manager registered on links (``disconnect(_:reason:)``,
    /// an attempt's `linkEnd`): ``close()`` ends them, as no end can reach it after that.
    private var endWaits: [Expectation<HCIStatus>] = []
    private var nextWaiter = 0
    private var isClosed = false

    /// Live connections by handle (the controller's links; none once closed).
    public var connections: [ConnectionHandle: LEConnection] {
        guard !isClosed else { return [:] }
        var connections: [ConnectionHandle: LEConnection] = [:]
        for link in controller.links { connections[link.handle] = link.connection }
        return connections
    }

    /// The live connection `handle`, if any (``connections`` builds a dictionary of them all).
    public func connection(_ handle: ConnectionHandle) -> LEConnection? { link(handle)?.connection }

    /// The open link `handle`, while this manager runs.
    private func link(_ handle: ConnectionHandle) -> Link? { isClosed ? nil : controller.link(handle) }
    /// Called when a connection's interval, latency or supervision timeout changes.
    public var onParametersChanged: ((LEConnection) -> Void)?
    /// Called when a connection ends, with its reason.
    public var onDisconnection: ((LEConnection, HCIStatus) -> Void)?
    /// How long to wait for the events that follow post-connect commands.
    public var eventTimeout: Duration = .seconds(5)
    /// Decides whether to accept new parameters the peer asks for (connection handle,
    /// request); by default every request inside the specification's limits. The one
    /// policy for both ways a peer can ask: the link layer's LE Remote Connection
    /// Parameter Request, answered here, and L2CAP's Connection Parameter Update Request.
    public var acceptParameters: (ConnectionHandle, LEConnectionRequest) -> Bool = { _, request in request.isValid }

    /// Watches `controller`'s events from now on.
    public init(controller: HCIController, logger: HCILogger = .standardError) {
        self.controller = controller
        self.logger = logger.layer("hci")
        observer = controller.addLEConnectionObserver { [weak self] event, _ in self?.handle(event) }
    }

    /// Stops watching events; pending waits end with ``ConnectionError/hci(_:)``, waits for
    /// a disconnection end at once, and no link is tracked any more.
    public func close() {
        if let observer { controller.removeEventObserver(observer) }
        observer = nil
        for (_, waiter) in waiters { waiter.outcome.fulfill(.failure(.hci(.notRunning))) }
        waiters = [:]
        if case let .connecting(outcome, _) = attempt { outcome.fulfill(.failure(.hci(.notRunning))) }
        if case let .cancelling(_, outcome, _) = attempt { outcome.fulfill(.failure(.hci(.notRunning))) }
        attempt = .idle
        // No Disconnection Complete can reach us any more: nobody may wait for one.
        for done in endWaits { done.fulfill(.connectionTerminatedByLocalHost) }
        endWaits = []
        for link in controller.links { link.detach(self) }
        isClosed = true
    }

    private func waitForTheEnd(of link: Link, _ waiter: Expectation<HCIStatus>) {
        endWaits.append(waiter)
        link.whenClosed(waiter)
    }

    /// Whether a connection attempt is in progress.
    public var isConnecting: Bool { if case .idle = attempt { false } else { true } }

    /// Connects to a peripheral. If it has not connected after `timeout`, the attempt is
    /// cancelled and ``ConnectionError/connectionTimeout`` thrown; with a nil `timeout` it
    /// waits until the peer answers or ``cancelConnect()`` is called. With `setUp`, the link's
    /// remote features are read and data length and PHY raised when both sides can.
    public func connect(
        to address: BluetoothAddress, type: AddressType, timeout: Duration? = .seconds(10),
        parameters: LEConnectionRequest = .init(), setUp: Bool = true
    ) async throws(ConnectionError) -> LEConnection {
        guard case .idle = attempt else { throw .busy }
        guard let info = controller.info else { throw .hci(.notRunning) }
        let peerType = type == .anonymous ? 0 : type.rawValue
        let extended =
            info.leFeatures.contains(.extendedAdvertising)
            && info.supportedCommands.supports(LEExtendedCreateConnection.opcode) == true
        let outcome = Outcome(), ended = Expectation<HCIStatus>()
        attempt = .connecting(outcome, linkEnd: ended)
        do {
            if extended {
                try await controller.send(
                    LEExtendedCreateConnection(peerAddressType: peerType, peerAddress: address, parameters: parameters))
            } else {
                try await controller.send(
                    LECreateConnection(peerAddressType: peerType, peerAddress: address, parameters: parameters))
            }
        } catch {
            attempt = .idle
            throw .hci(error)
        }
        // No timeout (nil): no timer; the attempt waits until a peer answers or it is cancelled.
        let timer = timeout.map { timeout in
            controller.deadlines.schedule(after: timeout) { [weak self] in self?.abandonAttempt(.connectionTimeout) }
        }
        let result = await outcome.value()
        if let timer { controller.deadlines.cancel(timer) }
        let handle = try result.get()
        // The link may go down while it is set up: the caller hears the real reason.
        if setUp { await self.setUp(handle) }
        stopWaiting(ended, forTheEndOf: handle)
        guard let connection = link(handle)?.connection else {
            throw .disconnected(ended.delivered ?? .unspecifiedError)
        }
        return connection
    }

    /// Cancels a connection attempt in progress; it ends with ``ConnectionError/cancelled``.
    public func cancelConnect() { abandonAttempt(.cancelled) }

    private func abandonAttempt(_ reason: ConnectionError) {
        guard case let .connecting(outcome, linkEnd) = attempt else { return }
        attempt = .cancelling(reason, outcome, linkEnd: linkEnd)
        Task { @BluetoothActor [controller, logger] in
            // Disallowed if the connection completed meanwhile: then that completion wins.
            do { try await controller.send(LECreateConnectionCancel()) } catch {
                logger.log(.info, "LE Create Connection Cancel: \(error)")
            }
        }
    }

    /// Disconnects and waits for Disconnection Complete; returns its reason.
    @discardableResult
    public func disconnect(_ handle: ConnectionHandle, reason: HCIStatus = .remoteUserTerminatedConnection)
        async throws(ConnectionError) -> HCIStatus
    {
        guard let link = link(handle) else { throw .notConnected(handle) }
        let done = Expectation<HCIStatus>()
        waitForTheEnd(of: link, done)
        do { try await controller.send(Disconnect(handle: handle, reason: reason)) } catch {
            stopWaiting(done, forTheEndOf: handle)
            throw .hci(error)
        }
        let reason = await done.value()
        endWaits.removeAll { $0 === done }
        return reason
    }

    private func stopWaiting(_ waiter: Expectation<HCIStatus>, forTheEndOf handle: ConnectionHandle) {
        endWaits.removeAll { $0 === waiter }
        controller.link(handle)?.stopWaiting(waiter)
    }

    /// Asks the controller for new parameters and returns those in effect afterwards.
    @discardableResult
    public func updateParameters(_ handle: ConnectionHandle, _ parameters: LEConnectionRequest)
        async throws(ConnectionError) -> LEConnectionParameters
    {
        guard link(handle) != nil else { throw .notConnected(handle) }
        guard parameters.isValid else {
            throw .hci(.commandFailed(LEConnectionUpdate.opcode, .invalidHCICommandParameters))
        }
        let event = try await request(
            LEConnectionUpdate(handle: handle, parameters: parameters), handle: handle,
            "LE Connection Update Complete"
        ) { if case .connectionUpdateComplete = $0 { true } else { false } }
        guard case let .connectionUpdateComplete(status, _, applied) = event, status.isSuccess else {
            if case let .connectionUpdateComplete(status, _, _) = event { throw .failed(status) }
            throw .eventTimeout("LE Connection Update Complete")
        }
        return applied
    }

    /// Reads the link's RSSI in dBm.
    public func readRSSI(_ handle: ConnectionHandle) async throws(ConnectionError) -> Int8 {
        guard link(handle) != nil else { throw .notConnected(handle) }
        do { return try await controller.send(ReadRSSI(handle: handle)).rssi } catch { throw .hci(error) }
    }

    /// Remote features, then the longest data length, then 2M PHY — each only when both
    /// sides support it. A step that fails is logged; the link stays up. Run after every
    /// connection we initiate; a peripheral runs it on a link a central made (any side may
    /// start these procedures).
    public func setUp(_ handle: ConnectionHandle) async {
        guard let info = controller.info else { return }
        do {
            _ = try await request(
                LEReadRemoteFeatures(handle: handle), handle: handle, "LE Read Remote Features Complete"
            ) {
                if case .remoteFeaturesComplete = $0 { true } else { false }
            }
        } catch {
            logger.log(.info, "reading remote features of \(hex(handle, digits: 4)): \(error)")
        }
        let remote = link(handle)?.connection.remoteFeatures ?? []
        if info.leFeatures.contains(.dataPacketLengthExtension), remote.contains(.dataPacketLengthExtension),
            let maximum = info.maximumDataLength
        {
            do {
                _ = try await controller.send(
                    LESetDataLength(
                        handle: handle, txOctets: maximum.supportedMaxTxOctets, txTime: maximum.supportedMaxTxTime))
            } catch {
                logger.log(.info, "LE Set Data Length on \(hex(handle, digits: 4)): \(error)")
            }
        }
        if info.leFeatures.contains(.twoMegabitPHY), remote.contains(.twoMegabitPHY),
            info.supportedCommands.supports(LESetPHY.self)
        {
            do {
                _ = try await request(
                    LESetPHY(handle: handle, txPHYs: 0x02, rxPHYs: 0x02), handle: handle, "LE PHY Update Complete"
                ) {
                    if case .phyUpdateComplete = $0 { true } else { false }
                }
            } catch {
                logger.log(.info, "LE Set PHY on \(hex(handle, digits: 4)): \(error)")
            }
        }
    }

    /// Sends a command answered by Command Status and waits for the event that ends it on
    /// connection `handle`; the wait is registered first, so an event that comes in the
    /// same read as the Command Status is not missed.
    private func request<C: HCICommand>(
        _ command: C, handle: ConnectionHandle, _ what: String,
        _ matches: @escaping (LEConnectionEvent) -> Bool
    ) async throws(ConnectionError) -> LEConnectionEvent {
        nextWaiter += 1
        let id = nextWaiter
        let outcome = Expectation<Result<LEConnectionEvent, ConnectionError>>()
        waiters[id] = Waiter(handle: handle, matches: matches, outcome: outcome)
        do { try await controller.send(command) } catch {
            waiters[id] = nil
            throw .hci(error)
        }
        let timer = controller.deadlines.schedule(after: eventTimeout) { [weak self] in
            self?.waiters.removeValue(forKey: id)?.outcome.fulfill(.failure(.eventTimeout(what)))
        }
        let result = await outcome.value()
        controller.deadlines.cancel(timer)
        return try result.get()
    }

    /// Answers an LE Remote Connection Parameter Request: the controller holds the link
    /// layer procedure open until the host replies. LE Connection Update Complete follows
    /// an accepted request (and updates the connection like any other).
    private func answerParameterRequest(_ handle: ConnectionHandle, _ request: LEConnectionRequest) {
        let accept = link(handle) != nil && acceptParameters(handle, request)
        Task { @BluetoothActor [controller, logger] in
            do {
                if accept {
                    _ = try await controller.send(
                        LERemoteConnectionParameterRequestReply(handle: handle, parameters: request))
                } else {
                    _ = try await controller.send(LERemoteConnectionParameterRequestNegativeReply(handle: handle))
                }
            } catch {
                logger.log(.warning, "answering the parameter request on \(hex(handle, digits: 4)): \(error)")
            }
        }
    }

    /// What the manager keeps on each link: its end fails the waits for the link's events
    /// and tells ``onDisconnection``.
    private final class Watch: LinkAttachment {
        weak var manager: ConnectionManager?

        init(_ manager: ConnectionManager) { self.manager = manager }

        func linkClosed(_ link: Link, _ reason: HCIStatus) { manager?.linkEnded(link, reason) }
    }

    private func linkEnded(_ link: Link, _ reason: HCIStatus) {
        for (id, waiter) in waiters where waiter.handle == link.handle {
            waiters[id] = nil
            waiter.outcome.fulfill(.failure(.disconnected(reason)))
        }
        onDisconnection?(link.connection, reason)
    }

    private func handle(_ event: LEConnectionEvent) {
        switch event {
        case let .connectionComplete(status, handle, _, _, _, _):
            // The controller made the link (its facts are the event's); the manager watches it.
            if status.isSuccess, let link = link(handle) {
                _ = link.attachment(for: self, layer: .host) { Watch(self) }
                if let linkEnd = attempt.linkEnd { waitForTheEnd(of: link, linkEnd) }
            }
            switch attempt {
            case .idle:
                break  // a connection we did not initiate (peripheral role) is tracked all the same
            case let .connecting(outcome, _):
                attempt = .idle
                outcome.fulfill(status.isSuccess ? .success(handle) : .failure(.failed(status)))
            case let .cancelling(reason, outcome, _):
                attempt = .idle
                // The link may have come up just before the cancel: then it is ours.
                outcome.fulfill(status.isSuccess ? .success(handle) : .failure(reason))
            }
        case let .connectionUpdateComplete(status, handle, parameters):
            if status.isSuccess, let link = link(handle), link.connection.parameters != parameters {
                link.connection.parameters = parameters
                onParametersChanged?(link.connection)
            }
        case let .remoteFeaturesComplete(status, handle, features):
            if status.isSuccess { link(handle)?.connection.remoteFeatures = features }
        case let .dataLengthChange(handle, maxTxOctets, _, maxRxOctets, _):
            link(handle)?.connection.maxTxOctets = maxTxOctets
            link(handle)?.connection.maxRxOctets = maxRxOctets
        case let .phyUpdateComplete(status, handle, txPHY, rxPHY):
            if status.isSuccess {
                link(handle)?.connection.txPHY = txPHY
                link(handle)?.connection.rxPHY = rxPHY
            }
        case let .remoteConnectionParameterRequest(handle, request):
            answerParameterRequest(handle, request)
        }
        for (id, waiter) in waiters where waiter.handle == event.handle && waiter.matches(event) {
            waiters[id] = nil
            waiter.outcome.fulfill(.success(event))
        }
    }
}
