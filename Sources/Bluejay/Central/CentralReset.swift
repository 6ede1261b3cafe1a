import BluetoothCore
import HCI

extension Central {
    /// How a central that opened its own transport opens it again.
    struct Reopening: Sendable {
        /// The transport string it was opened with.
        let transport: String
        /// The btsnoop capture, which goes on across resets.
        let capture: BTSnoopWriter?
        /// The store of bonds and the discovery cache.
        let store: StoreDirectory
        /// Where the stack logs.
        let logger: HCILogger
        /// Opens the transport instead of `transport` (tests, embedders).
        let opener: TransportOpener?

        /// Opens the transport and brings a stack up on it.
        @BluetoothActor
        func open() async throws(BluejayError) -> BluetoothHost {
            let opened = try await BluetoothHost.open(
                transport, capture: capture, using: opener, clock: ContinuousClock())
            return try await BluetoothHost(transport: opened, capture: capture, store: store, logger: logger)
        }
    }

    /// Brings the central back after its controller was lost (BlueCap's `reset()`, which
    /// makes a new `CBCentralManager`): closes the stack, opens the transport it was made
    /// with again and brings a new stack up on it. The state is
    /// ``ManagerState/resetting`` meanwhile, then ``ManagerState/poweredOn``.
    ///
    /// Everything of the old controller ends: the scan, every link, and every
    /// ``Peripheral`` (its operations and streams end with
    /// `BluejayError.bluetoothUnavailable`). Ask ``peripheral(_:)`` again for the new
    /// ones. Bonds and the discovery cache are in the store, so they carry over.
    ///
    /// Throws the bring-up's error when the controller does not come up (the state is then
    /// ``ManagerState/poweredOff``, and `reset()` may be tried again), and
    /// `BluejayError.bluetoothUnavailable` for a central that was handed its host (it
    /// cannot open that transport) or was closed. A reset while one runs waits for it.
    public func reset() async throws(BluejayError) {
        if let resetting { return try await resetting.value.get() }
        guard let reopening else { throw .bluetoothUnavailable }
        let run = Task { @BluetoothActor in await self.reopen(reopening) }
        resetting = run
        stateChanged()
        let outcome = await run.value
        resetting = nil
        stateChanged()
        try outcome.get()
    }

    /// Closes the old stack (keeping the capture) and brings a new one up.
    private func reopen(_ reopening: Reopening) async -> Result<Void, BluejayError> {
        let old = host
        letGoOfLinks(of: old)
        if !old.isClosed { old.close(keepingCapture: true) }
        forgetAll()
        do throws(BluejayError) {
            let fresh = try await reopening.open()
            // Closed while the transport was being opened: the new stack is not wanted.
            guard self.reopening != nil else {
                fresh.close(keepingCapture: true)
                return .failure(.bluetoothUnavailable)
            }
            attach(fresh)
            return .success(())
        } catch {
            return .failure(error)
        }
    }
}
