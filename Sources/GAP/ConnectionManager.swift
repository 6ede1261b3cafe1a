import BluetoothCore
import HCI

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

    private let controller: HCIController
    private let logger: HCILogger
    private var observer: Int?
    private var attempt: Attempt = .idle
    /// The connection attempt's timer.
    private let deadlines: Deadlines
    /// The waits for a link's end this manager registered on links (an attempt's
    /// `linkEnd`): ``close()`` ends them, as no end can reach it after that.
    private var endWaits: [Expectation<HCIStatus>] = []
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
    /// Called when LE Connection Update Complete reports a link's interval, latency and
    /// supervision timeout (the link's `LEConnection` holds them by then).
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
        self.logger = logger.layer("gap")
        deadlines = Deadlines(clock: controller.clock)
        observer = controller.addLEConnectionObserver { [weak self] event, _ in self?.handle(event) }
    }

    /// Stops watching events; a connection attempt ends with `ConnectionError.hci(_:)`,
    /// and no link is tracked any more.
    public func close() {
        if let observer { controller.removeEventObserver(observer) }
        observer = nil
        deadlines.cancelAll()
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
    /// cancelled and `ConnectionError.connectionTimeout` thrown; with a nil `timeout` it
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
            deadlines.schedule(after: timeout) { [weak self] in self?.abandonAttempt(.connectionTimeout) }
        }
        let result = await outcome.value()
        if let timer { deadlines.cancel(timer) }
        let handle = try result.get()
        // The link may go down while it is set up: the caller hears the real reason.
        if setUp { await self.setUp(handle) }
        stopWaiting(ended, forTheEndOf: handle)
        guard let connection = link(handle)?.connection else {
            throw .disconnected(ended.delivered ?? .unspecifiedError)
        }
        return connection
    }

    /// Cancels a connection attempt in progress; it ends with `ConnectionError.cancelled`.
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
        return try await controller.disconnect(link, reason: reason)
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
        guard let link = link(handle) else { throw .notConnected(handle) }
        return try await controller.updateParameters(link, parameters, timeout: eventTimeout)
    }

    /// Reads the link's RSSI in dBm.
    public func readRSSI(_ handle: ConnectionHandle) async throws(ConnectionError) -> Int8 {
        guard let link = link(handle) else { throw .notConnected(handle) }
        return try await controller.readRSSI(link)
    }

    /// Remote features, then the longest data length, then 2M PHY — each only when both
    /// sides support it. A step that fails is logged; the link stays up. Run after every
    /// connection we initiate; a peripheral runs it on a link a central made (any side may
    /// start these procedures).
    public func setUp(_ handle: ConnectionHandle) async {
        guard let info = controller.info, let link = link(handle) else { return }
        do {
            _ = try await controller.request(
                LEReadRemoteFeatures(handle: handle), on: link, awaiting: "LE Read Remote Features Complete",
                timeout: eventTimeout
            ) {
                if case .remoteFeaturesComplete = $0 { true } else { false }
            }
        } catch {
            logger.log(.info, "reading remote features of \(hex(handle, digits: 4)): \(error)")
        }
        let remote = link.connection.remoteFeatures ?? []
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
                _ = try await controller.request(
                    LESetPHY(handle: handle, txPHYs: 0x02, rxPHYs: 0x02), on: link, awaiting: "LE PHY Update Complete",
                    timeout: eventTimeout
                ) {
                    if case .phyUpdateComplete = $0 { true } else { false }
                }
            } catch {
                logger.log(.info, "LE Set PHY on \(hex(handle, digits: 4)): \(error)")
            }
        }
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

    /// What the manager keeps on each link: its end tells ``onDisconnection``.
    private final class Watch: LinkAttachment {
        weak var manager: ConnectionManager?

        init(_ manager: ConnectionManager) { self.manager = manager }

        func linkClosed(_ link: Link, _ reason: HCIStatus) { manager?.linkEnded(link, reason) }
    }

    private func linkEnded(_ link: Link, _ reason: HCIStatus) { onDisconnection?(link.connection, reason) }

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
        case let .connectionUpdateComplete(status, handle, _):
            // The controller applied it to the link before telling anyone.
            if status.isSuccess, let link = link(handle) { onParametersChanged?(link.connection) }
        case .remoteFeaturesComplete, .dataLengthChange, .phyUpdateComplete:
            break  // facts the controller keeps on the link
        case let .remoteConnectionParameterRequest(handle, request):
            answerParameterRequest(handle, request)
        }
    }
}
