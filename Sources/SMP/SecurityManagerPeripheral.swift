import BluetoothCore
import BluetoothCrypto
import HCI

/// The Security Manager as the peripheral: answering the central's Pairing Request, asking
/// it for security, and giving the controller the key the central encrypts with.
extension SecurityManager {
    /// Answers the central's Pairing Request on `handle` (``PairingSession/respond(to:)``),
    /// stores the bond when both bond, and tells ``onPaired``.
    func respond(_ handle: ConnectionHandle, to request: PairingFeatures) {
        guard let connection = controller.link(handle)?.connection, let info = controller.info else { return }
        guard policy.allowPairing else {
            try? send(PairingFailed(reason: .pairingNotSupported), handle)
            return
        }
        let (session, watchdog) = startSession(handle, connection, info, role: .responder) {
            [weak self] ltk, _, _, authenticated throws(SMPError) in
            guard let self else { throw .disconnected }
            try await self.awaitCentralsEncryption(handle, key: ltk)
            self.encryptedByPairing(handle, authenticated: authenticated)
        }
        // The result comes in the turn the central's last key arrives (``PairingSession``'s
        // `awaitInitiatorKeys`), before anything behind it on the link, such as its end.
        session.onOutcome = { [weak self] result in
            guard let self else { return }
            sessionEnded(handle, watchdog)
            let outcome: PairingSession.Outcome
            switch result {
            case let .success(success): outcome = success
            case let .failure(error):
                links[handle]?.pairingFailed = true
                return logger.log(
                    .warning, "handle \(hex(handle, digits: 4)): pairing as the peripheral failed: \(error)")
            }
            links[handle]?.state = .encrypted(authenticated: outcome.method.isAuthenticated)
            if request.authentication.contains(.bonding), policy.bonding, outcome.keepsBond {
                do { try bonds.save(outcome.bond) } catch { logger.log(.error, "storing the bond: \(error)") }
            }
            logger.log(
                .info,
                "handle \(hex(handle, digits: 4)): paired as the peripheral (\(outcome.method), "
                    + "\(outcome.secureConnections ? "LE Secure Connections" : "LE legacy"), key size \(outcome.keySize))"
            )
            onPaired?(handle, outcome.method, outcome.bond)
        }
        Task { @BluetoothActor in
            do throws(SMPError) { try await session.respond(to: request) } catch { session.finish(.failure(error)) }
        }
    }

    /// The link is encrypted with the key a pairing just made: it is as secure as that key
    /// from now on, not only once key distribution ends. The peer's requests can come right
    /// after its last key (before our session has seen the end of the exchange), and an
    /// attribute needing authentication must then be served.
    func encryptedByPairing(_ handle: ConnectionHandle, authenticated: Bool) {
        links[handle]?.state = .encrypted(authenticated: authenticated)
    }

    private func sessionEnded(_ handle: ConnectionHandle, _ watchdog: Watchdog) {
        watchdog.cancel()
        links[handle]?.watchdog = nil
        links[handle]?.session = nil
    }

    /// As the peripheral: asks the central on `handle` to secure the link (Security
    /// Request, Part H, 3.6.7), with the bonding and Secure Connections the policy wants.
    /// The central pairs (its Pairing Request comes here) or encrypts with its bond.
    public func requestSecurity(_ handle: ConnectionHandle) throws(SMPError) {
        guard controller.link(handle)?.connection != nil else { throw .disconnected }
        var authentication: AuthenticationRequirements = []
        if policy.bonding { authentication.insert(.bonding) }
        if policy.mitm, policy.ioCapability != .noInputNoOutput { authentication.insert(.mitm) }
        if policy.secureConnections { authentication.insert(.secureConnections) }
        try send(SecurityRequest(authentication: authentication), handle)
    }

    /// Keeps `key` for the controller's LE Long Term Key Request and waits for the
    /// central's encryption to complete.
    private func awaitCentralsEncryption(_ handle: ConnectionHandle, key: SecretBytes) async throws(SMPError) {
        guard links[handle, default: LinkRecord()].encryption == nil else {
            throw .protocolError("encryption already starting")
        }
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<Void, SMPError>, Never>) in
            links[handle, default: LinkRecord()].responderKey = key
            links[handle, default: LinkRecord()].encryption = continuation
        }
        // The pairing's key served this encryption only (an STK must not outlive it; a
        // later request names the stored bond's key).
        links[handle]?.responderKey = nil
        try result.get()
    }

    /// The controller asks for the key the central encrypts with (Part H, 2.4.4.2): the one a
    /// pairing on this link made, else the stored bond's when the EDIV and Rand name it
    /// (zero for a Secure Connections LTK, the ones we distributed for a legacy LTK), else
    /// none: the Negative Reply.
    func answerKeyRequest(_ request: LELongTermKeyRequest) {
        let handle = request.handle
        var key = links[handle]?.responderKey
        if key == nil, let bond = bond(for: handle), let stored = bond.longTermKeySecret,
            bond.secureConnections
                ? request.ediv == 0 && request.random.allSatisfy({ $0 == 0 })
                : request.ediv == bond.ediv && request.random == bond.randomBytes
        {
            key = stored
            links[handle, default: LinkRecord()].storedKey = true
            links[handle]?.state = .encrypted(authenticated: bond.authenticated)
        }
        Task { @BluetoothActor [controller, logger] in
            do throws(HCIError) {
                if let key {
                    // The key leaves SecretBytes here, as for LE Enable Encryption.
                    _ = try await controller.send(LELongTermKeyRequestReply(handle: handle, longTermKey: key.bytes))
                } else {
                    logger.log(.info, "handle \(hex(handle, digits: 4)): the central asks for a key we do not have")
                    _ = try await controller.send(LELongTermKeyRequestNegativeReply(handle: handle))
                }
            } catch {
                logger.log(.warning, "handle \(hex(handle, digits: 4)): answering the LTK request: \(error)")
            }
        }
    }
}
