import BluetoothCore
import L2CAP

/// The bearer's server side: responses a server sends late, notifications, and
/// indications, one outstanding at a time until the client confirms it.
extension ATTBearer {
    /// Sends the response to a request the server answers later (its handler is async):
    /// the server returned nil from ``ATTServer/respond(to:on:)`` and owes this one.
    public func sendResponse(_ pdu: [UInt8]) {
        guard case .open = state else { return }
        reply(OutgoingFrame(payload: pdu))
    }

    /// Sends a notification of the attribute at `handle`, its value cut to ATT_MTU - 3
    /// (Part F, 3.4.7.1). It goes out at once, queued behind the link's ACL credits.
    public func notify(handle: AttributeHandle, value: ArraySlice<UInt8>) throws(ATTError) {
        try send(command: HandleValueNotification(handle: handle, value: value.prefix(mtu - 3)))
    }

    /// Sends an indication of the attribute at `handle` (value cut to ATT_MTU - 3) and
    /// returns once the client confirms it. Indications go one at a time: a later one waits
    /// for the earlier one's confirmation. No confirmation in 30 s closes the bearer with
    /// ``ATTError/timeout``, as for a request (Part F, 3.3.3).
    public func indicate(handle: AttributeHandle, value: ArraySlice<UInt8>) async throws(ATTError) {
        if case let .closed(reason) = state { throw .closed(reason) }
        let confirmed = Expectation<Result<Void, ATTError>>()
        nextID += 1
        indications.append(
            Indication(
                id: nextID,
                frame: HandleValueIndication(handle: handle, value: value.prefix(mtu - 3)).frame(capacity: mtu),
                confirmed: confirmed))
        sendNextIndication()
        try await confirmed.value().get()
    }

    /// Indications waiting, the outstanding one included.
    public var indicationsPending: Int { indications.count }

    private func sendNextIndication() {
        while case .open = state, let first = indications.first, first.frame != nil {
            guard let frame = indications[0].frame.take() else { return }
            do { try transmit(consume frame) } catch {
                indications.removeFirst().confirmed.fulfill(.failure(.transport(error)))
                continue
            }
            let id = first.id
            indicationTimer = deadlines.schedule(after: ATTBearer.transactionTimeout) {
                guard self.indications.first?.id == id else { return }
                self.logger.log(
                    .error, "handle \(hex(self.connection, digits: 4)): no confirmation of an indication in 30 s")
                self.fail(.timeout)
            }
            return
        }
    }

    func confirmIndication(_ pdu: ArraySlice<UInt8>) {
        guard let first = indications.first, first.frame == nil else {
            discard("a confirmation, but no indication of ours is outstanding")
            return
        }
        do { _ = try received(HandleValueConfirmation.self, pdu) } catch {
            discard("a malformed confirmation (\(error))")
            return
        }
        if let indicationTimer { deadlines.cancel(indicationTimer) }
        indicationTimer = nil
        indications.removeFirst().confirmed.fulfill(.success(()))
        sendNextIndication()
    }
}
