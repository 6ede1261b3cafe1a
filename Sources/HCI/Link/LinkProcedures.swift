import BluetoothCore

/// A procedure on a link waiting for the LE event that ends it (LE Connection Update
/// Complete, LE PHY Update Complete, …): kept on the ``Link``, so the link's end fails it.
struct LinkEventWait {
    let matches: (LEConnectionEvent) -> Bool
    let outcome: Expectation<Result<LEConnectionEvent, ConnectionError>>
}

/// The procedures the host runs on one link (Core Vol 4, Part E, 7.1.6, 7.5.4, 7.8.18,
/// 7.8.21, 7.8.49), and the LE connection events that keep the link's facts current.
/// The controller makes a link on LE (Enhanced) Connection Complete and applies each later
/// event to it, once, before any observer hears of the event.
extension HCIController {
    /// Makes the link an LE (Enhanced) Connection Complete announces, or applies a later
    /// event to its link, and ends the link's procedures the event answers.
    func apply(_ event: LEConnectionEvent) {
        switch event {
        case let .connectionComplete(status, handle, role, peerType, peer, parameters):
            guard status.isSuccess else { return }
            // A handle the controller reuses without having ended it: the old link is gone.
            openLinks.removeValue(forKey: handle)?.close(.unspecifiedError)
            openLinks[handle] = Link(
                LEConnection(
                    handle: handle, role: role, peerAddressType: peerType, peerAddress: peer, parameters: parameters))
            return
        case let .connectionUpdateComplete(status, handle, parameters):
            if status.isSuccess { link(handle)?.connection.parameters = parameters }
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
        case .remoteConnectionParameterRequest:
            break  // a question for the host's policy (GAP), not a fact about the link
        }
        guard let link = link(event.handle), !link.eventWaits.isEmpty else { return }
        var answered: [LinkEventWait] = []
        link.eventWaits.removeAll { wait in
            guard wait.matches(event) else { return false }
            answered.append(wait)
            return true
        }
        for wait in answered { wait.outcome.fulfill(.success(event)) }
    }

    /// Sends `command`, answered by Command Status, and waits for the LE event on `link`
    /// that `matches`, for at most `timeout`. The wait is registered first, so an event in
    /// the same read as the Command Status is not missed; the link's end fails it with
    /// ``ConnectionError/disconnected(_:)``.
    public func request<C: HCICommand>(
        _ command: C, on link: Link, awaiting what: String, timeout: Duration = .seconds(5),
        until matches: @escaping (LEConnectionEvent) -> Bool
    ) async throws(ConnectionError) -> LEConnectionEvent {
        guard link.isOpen else { throw .notConnected(link.handle) }
        let outcome = Expectation<Result<LEConnectionEvent, ConnectionError>>()
        link.eventWaits.append(LinkEventWait(matches: matches, outcome: outcome))
        do { try await send(command) } catch {
            link.eventWaits.removeAll { $0.outcome === outcome }
            throw .hci(error)
        }
        let timer = deadlines.schedule(after: timeout) { [link] in
            guard let index = link.eventWaits.firstIndex(where: { $0.outcome === outcome }) else { return }
            link.eventWaits.remove(at: index).outcome.fulfill(.failure(.eventTimeout(what)))
        }
        let result = await outcome.value()
        deadlines.cancel(timer)
        return try result.get()
    }

    /// Disconnects `link` (Core Vol 4, Part E, 7.1.6) and waits for its Disconnection
    /// Complete; returns the reason it reports.
    @discardableResult
    public func disconnect(_ link: Link, reason: HCIStatus = .remoteUserTerminatedConnection)
        async throws(ConnectionError) -> HCIStatus
    {
        guard link.isOpen else { throw .notConnected(link.handle) }
        let done = Expectation<HCIStatus>()
        link.whenClosed(done)
        do { try await send(Disconnect(handle: link.handle, reason: reason)) } catch {
            link.stopWaiting(done)
            throw .hci(error)
        }
        return await done.value()
    }

    /// Asks for new parameters on `link` (LE Connection Update) and returns those in effect
    /// afterwards.
    @discardableResult
    public func updateParameters(_ link: Link, _ parameters: LEConnectionRequest, timeout: Duration = .seconds(5))
        async throws(ConnectionError) -> LEConnectionParameters
    {
        guard link.isOpen else { throw .notConnected(link.handle) }
        guard parameters.isValid else {
            throw .hci(.commandFailed(LEConnectionUpdate.opcode, .invalidHCICommandParameters))
        }
        let event = try await request(
            LEConnectionUpdate(handle: link.handle, parameters: parameters), on: link,
            awaiting: "LE Connection Update Complete", timeout: timeout
        ) { if case .connectionUpdateComplete = $0 { true } else { false } }
        guard case let .connectionUpdateComplete(status, _, applied) = event else {
            throw .eventTimeout("LE Connection Update Complete")
        }
        guard status.isSuccess else { throw .failed(status) }
        return applied
    }

    /// Reads `link`'s RSSI in dBm.
    public func readRSSI(_ link: Link) async throws(ConnectionError) -> Int8 {
        guard link.isOpen else { throw .notConnected(link.handle) }
        do { return try await send(ReadRSSI(handle: link.handle)).rssi } catch { throw .hci(error) }
    }
}
