import BluetoothCore

/// ACL data to the controller: queued in ``ACLFlowControl`` and released only against free
/// controller buffers (Core Vol 4, Part E, 4.1.1), and the waits for a link's data to be
/// delivered.
extension HCIController {
    /// Waits until every ACL packet queued for `handle` has been sent and completed by the
    /// controller (Number Of Completed Packets), or the link ended, or `timeout` passed;
    /// returns whether it drained. What the last PDUs before a disconnect need (SMP's
    /// last distributed key, a final Write Command): a Disconnect may otherwise overtake them.
    @discardableResult
    public func waitUntilDelivered(handle: ConnectionHandle, timeout: Duration = .seconds(2)) async -> Bool {
        guard let flow = aclFlow, let link = link(handle), !isDrained(link, flow) else { return true }
        let drained = Expectation<Bool>()
        link.drainWaiters.append(drained)
        let timer = deadlines.schedule(after: timeout) { drained.fulfill(false) }
        let result = await drained.value()
        deadlines.cancel(timer)
        link.drainWaiters.removeAll { $0 === drained }
        return result
    }

    /// Wakes the drain waiters of the links that have nothing left to send.
    func wakeDrainWaiters() {
        for link in openLinks.values where !link.drainWaiters.isEmpty && (aclFlow.map { isDrained(link, $0) } ?? true) {
            for waiter in link.drainWaiters { waiter.fulfill(true) }
        }
    }

    /// Whether everything sent on `link` has left the host and been completed by the
    /// controller: nothing queued, nothing in the controller.
    private func isDrained(_ link: Link, _ flow: ACLFlowControl) -> Bool {
        link.packetsInController == 0 && !flow.hasQueued(link.handle)
    }

    /// Hands an ACL packet from the controller to ``onACLData`` with its open link; drops one
    /// on a handle no open link has.
    func receiveACL(_ acl: ACLDataPacket) {
        if let link = lastACLLink, link.handle == acl.handle {
            onACLData?(acl, link)
        } else if let link = link(acl.handle) {
            lastACLLink = link
            onACLData?(acl, link)
        } else {
            // Vendor debug data (Qualcomm uses 0x0EDC) or traffic of a link we never saw.
            logger.log(.debug, "ACL on handle \(hex(acl.handle, digits: 4)), which no open link has, ignored")
        }
    }

    /// Queues an ACL packet for the controller, on an open link. It goes out as soon as a
    /// controller buffer is free; never more are outstanding than the controller has buffers.
    public func sendACL(_ packet: ACLDataPacket) throws(HCIError) {
        guard case .running = state, let bufferLength = aclFlow?.bufferLength else {
            if case let .failed(error) = state { throw error }
            throw .notRunning
        }
        // Its credit is counted on its link until the controller completes it.
        guard openLinks.index(forKey: packet.handle) != nil else { throw .noSuchConnection(packet.handle) }
        guard packet.data.count <= bufferLength else {
            throw .aclPacketTooLong(length: packet.data.count, bufferLength: bufferLength)
        }
        // Mutated in place (optional chaining), not through a copy: a copy would make the
        // queue's storage shared and the append copy it, every packet.
        aclFlow?.append(packet)
        try transmitReleased()
    }

    /// Sends every queued packet a free controller buffer allows, in order.
    func transmitReleased() throws(HCIError) {
        // A failed controller's links are ended one by one: credits one frees must not send
        // another's packets to it.
        guard case .running = state else { return }
        // What the credits release goes out in one system call; the kept array allocates nothing.
        released.removeAll(keepingCapacity: true)
        var link: Link?  // consecutive packets are most often one link's
        while let packet = aclFlow?.nextSendable() {
            if link?.handle != packet.handle { link = self.link(packet.handle) }
            // Queued packets are dropped with their link, so each has one here.
            link?.packetsInController += 1
            released.append(packet)
        }
        guard !released.isEmpty else { return }
        defer { released.removeAll(keepingCapacity: true) }  // holds no frame past the write
        do {
            if released.count == 1 { try transport.send(.acl(released[0])) } else { try transport.send(acl: released) }
        } catch {
            fail(.transport(error))
            throw .transport(error)
        }
    }
}
