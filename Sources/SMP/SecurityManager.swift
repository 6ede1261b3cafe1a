import BluetoothCore
import BluetoothCrypto
import HCI
import L2CAP
import Storage

/// The Security Manager of a host, as central: owns the SMP channel (0x0006) of every
/// link, pairs (``pair(_:)``), encrypts with a stored bond (``encrypt(_:)``), and secures a
/// link on demand (``secure(_:)``: what an ATT security error or a peer's Security Request
/// asks for). As the peripheral it answers a central's Pairing Request (LE Secure
/// Connections and legacy, every method but OOB), asks for security (``requestSecurity(_:)``)
/// and gives the controller the key a central encrypts with, on the pairing's link and
/// on its reconnections.
/// Bonds live in a ``BondStore``; keys never reach a log line.
@BluetoothActor
public final class SecurityManager {
    /// Where bonds are kept.
    public let bonds: BondStore
    /// How pairing is done; change it between pairings.
    public var policy: PairingPolicy
    /// The pairing user interface (nil: only Just Works can complete).
    public var delegate: (any PairingDelegate)?
    /// Where pairing's randomness comes from: ``PairingEntropy/system`` except in replayed
    /// conformance tests.
    public var entropy = PairingEntropy.system
    /// Told after each pairing that completed: the link, the method and the bond.
    public var onPaired: ((ConnectionHandle, PairingMethod, Bond) -> Void)?
    /// As the peripheral: told when a central encrypted a link with the key of its stored
    /// bond (a bonded central came back), with that bond.
    public var onEncryptedWithBond: ((ConnectionHandle, Bond) -> Void)?
    /// Our address on a link as the peer connected to it, when it is not our public
    /// address: the resolvable private or static random address we advertised from (the
    /// advertiser knows it). Pairing hashes it as ours (c1, f5, f6); nil, or no answer for
    /// a link, means the public address.
    public var localAddress: ((ConnectionHandle) -> (type: AddressType, address: BluetoothAddress)?)?

    /// How a link stands.
    enum LinkState {
        /// Plain text.
        case unencrypted
        /// Encrypted; `authenticated` when the key came from a MITM-protected pairing.
        case encrypted(authenticated: Bool)
    }

    /// What the Security Manager keeps on one link (on the link itself: it ends with it).
    struct LinkRecord {
        var state = LinkState.unencrypted
        /// The pairing under way, which receives the SMP commands.
        var session: PairingSession?
        /// The SMP timer expired: Part H, 3.4 forbids more SMP on this link.
        var timedOut = false
        /// A pairing failed: commands the peer still had in flight for it are dropped
        /// quietly rather than answered with another Pairing Failed.
        var pairingFailed = false
        /// Waiting for Encryption Change (or Key Refresh) on this link.
        var encryption: CheckedContinuation<Result<Void, SMPError>, Never>?
        /// Callers of ``secure(_:)`` waiting on the one securing already running.
        var securing: [CheckedContinuation<Result<Void, SMPError>, Never>]?
        /// Encrypted with a stored bond's key (not by a pairing on this link).
        var storedKey = false
        /// As the peripheral: the key a pairing on this link made, for the controller's LE
        /// Long Term Key Request when the central starts encryption.
        var responderKey: SecretBytes?
        /// The SMP timer of the pairing under way.
        var watchdog: Watchdog?
    }

    let controller: HCIController
    private let channels: L2CAPChannels
    let logger: HCILogger
    /// Our IRK: made (and stored) the first time a pairing distributes it, not before, so
    /// a command that never pairs leaves the store untouched.
    private lazy var localIRK = bonds.localIdentityResolvingKey(using: entropy)
    /// Our CSRK, made and stored like the IRK.
    private lazy var localCSRK = bonds.localSignatureKey(using: entropy)

    /// A fresh resolvable private address made with our IRK (the one pairing distributes, so
    /// a bonded peer resolves it; made and stored now if no pairing made it yet).
    public func makeResolvablePrivateAddress() -> BluetoothAddress {
        ResolvablePrivateAddress.make(with: localIRK)
    }

    /// Our static random address: made once and kept in the store, so centrals that bonded
    /// with us at it (it is then our identity address) find us at it again after a restart.
    public private(set) lazy var staticRandomAddress = bonds.localStaticRandomAddress()
    let links: PerLink<LinkRecord>
    private var observer: Int?
    /// How long a pairing step may wait for the peer (Part H, 3.4: 30 s).
    public var timeout: Duration = .seconds(30)
    /// The pairings' timers, on the controller's clock.
    let deadlines: Deadlines

    /// Attaches to the SMP channel of every link of `channels`; bonds in `store`.
    public init(
        controller: HCIController, channels: L2CAPChannels, store: StoreDirectory,
        policy: PairingPolicy = PairingPolicy(), logger: HCILogger = .standardError
    ) {
        self.controller = controller
        deadlines = Deadlines(clock: controller.clock)
        self.channels = channels
        self.bonds = BondStore(store: store)
        self.policy = policy
        self.logger = logger.layer("smp")
        links = PerLink(controller: controller, layer: .security)
        links.onClose = { [weak self] _, link, _ in self?.end(link) }
        channels.setHandler(for: .smp) { [weak self] link, payload in self?.receive(link, payload) }
        observer = controller.addEventObserver { [weak self] event in self?.handle(event) }
    }

    /// Lets go of the channel and the controller's events.
    public func close() {
        if let observer { controller.removeEventObserver(observer) }
        observer = nil
        links.onClose = nil
        for handle in links.handles { links.removeValue(forKey: handle).map(end) }
        deadlines.cancelAll()
    }

    /// Links the Security Manager keeps state for (zero once every link has ended).
    public var trackedLinks: Int { links.count }
    /// Pairings under way.
    public var pairingsInProgress: Int { links.values.filter { $0.session != nil }.count }

    /// Whether `handle` is encrypted.
    public func isEncrypted(_ handle: ConnectionHandle) -> Bool {
        if case .encrypted = links[handle]?.state { return true }
        return false
    }

    /// Whether `handle` is encrypted with a key from a MITM-protected (authenticated)
    /// pairing: what an attribute needing authentication asks of a link.
    public func isAuthenticated(_ handle: ConnectionHandle) -> Bool {
        if case .encrypted(authenticated: true) = links[handle]?.state { return true }
        return false
    }

    /// Whether `handle` is encrypted with the key of a bond stored before this link (by
    /// ``encrypt(_:)``, so the peer recognised the bond), not by a pairing on the link: what
    /// a peer's memory of this client (subscriptions, Service Changed) hangs on.
    public func isEncryptedWithStoredBond(_ handle: ConnectionHandle) -> Bool {
        isEncrypted(handle) && links[handle]?.storedKey == true
    }

    /// The stored bond of the peer on `handle`, if any.
    public func bond(for handle: ConnectionHandle) -> Bond? {
        guard let connection = controller.link(handle)?.connection else { return nil }
        return bonds.bond(
            for: connection.peerAddress, type: AddressType(rawValue: connection.peerAddressType) ?? .random)
    }

    // MARK: Procedures

    /// Secures `handle` the way iOS does on demand: nothing if already encrypted; the stored
    /// bond's key if there is one (pairing again if the peer lost it, `0x06 pinOrKeyMissing`,
    /// and the policy allows); else pairing if the policy allows. Concurrent callers share
    /// one attempt.
    public func secure(_ handle: ConnectionHandle) async throws(SMPError) {
        guard controller.link(handle)?.connection != nil else { throw .disconnected }
        if isEncrypted(handle) { return }
        if links[handle, default: LinkRecord()].securing != nil {
            let result = await withCheckedContinuation { links[handle]?.securing?.append($0) }
            return try result.get()
        }
        links[handle, default: LinkRecord()].securing = []
        let result: Result<Void, SMPError>
        do throws(SMPError) {
            try await secureOnce(handle)
            result = .success(())
        } catch {
            result = .failure(error)
        }
        for waiter in links[handle]?.securing ?? [] { waiter.resume(returning: result) }
        links[handle]?.securing = nil
        try result.get()
    }

    /// Encrypts a bonded peer's link at once, as BlueZ does on connection (its protected
    /// attributes and remembered subscriptions then work from the first request); returns
    /// whether the peer is bonded. A failure is logged and the link goes on unencrypted
    /// (on demand, a peer that lost the bond is paired again).
    public func encryptIfBonded(_ handle: ConnectionHandle) async -> Bool {
        guard bond(for: handle) != nil else { return false }
        // Through ``secure(_:)``, so a peer's Security Request arriving at the same moment
        // shares this one encryption instead of racing it.
        do throws(SMPError) { try await secure(handle) } catch {
            logger.log(
                .warning,
                "handle \(hex(handle, digits: 4)): encrypting with the stored bond failed: \(error); going on unencrypted"
            )
        }
        return true
    }

    /// What an ATT bearer asks when a request was refused with a security error (`code`):
    /// secures the link and answers whether the request may be sent again. A refusal the
    /// policy makes (no bond, pairing not allowed) is not worth a warning; the request's own
    /// error is reported.
    public func securityRequired(_ handle: ConnectionHandle, for code: some CustomStringConvertible) async -> Bool {
        do throws(SMPError) {
            try await secure(handle)
            return true
        } catch {
            logger.log(
                error == .pairingNotAllowed ? .info : .warning,
                "handle \(hex(handle, digits: 4)): \(code): securing the link failed: \(error)")
            return false
        }
    }

    private func secureOnce(_ handle: ConnectionHandle) async throws(SMPError) {
        if bond(for: handle) != nil {
            do throws(SMPError) { return try await encrypt(handle) } catch {
                guard case .encryptionFailed(.pinOrKeyMissing) = error, policy.allowPairing,
                    controller.link(handle)?.connection != nil
                else { throw error }
                logger.log(
                    .warning,
                    "handle \(hex(handle, digits: 4)): the peer lost our bond (PIN or Key Missing); pairing again")
            }
        }
        guard policy.allowPairing else { throw .pairingNotAllowed }
        _ = try await pair(handle)
    }

    /// Encrypts `handle` with the stored bond's LTK (LE Enable Encryption), without pairing.
    public func encrypt(_ handle: ConnectionHandle) async throws(SMPError) {
        guard let bond = bond(for: handle), let ltk = bond.longTermKeySecret, let random = bond.randomBytes else {
            throw .notBonded
        }
        try await startEncryption(handle, ltk: ltk, ediv: bond.ediv, random: random)
        links[handle]?.state = .encrypted(authenticated: bond.authenticated)
        links[handle]?.storedKey = true
        logger.log(
            .info,
            "handle \(hex(handle, digits: 4)): encrypted with the stored \(bond.secureConnections ? "Secure Connections" : "legacy") key"
        )
    }

    /// The result of a pairing.
    public struct Pairing: Sendable {
        /// How the sides authenticated.
        public let method: PairingMethod
        /// Whether LE Secure Connections was used.
        public let secureConnections: Bool
        /// The keys (stored only when the policy bonds).
        public let bond: Bond
    }

    /// Pairs with the peer on `handle` as the policy says, encrypts the link and stores the
    /// bond (when bonding). Fails with the reason by name; the 30 s SMP timeout applies to
    /// each step.
    public func pair(_ handle: ConnectionHandle) async throws(SMPError) -> Pairing {
        guard let connection = controller.link(handle)?.connection, let info = controller.info else {
            throw .disconnected
        }
        if links[handle]?.timedOut == true { throw .timeout }
        if links[handle]?.session != nil { throw .protocolError("a pairing is already running on this link") }
        let (session, watchdog) = startSession(handle, connection, info, role: .initiator) {
            [weak self] ltk, ediv, random, authenticated throws(SMPError) in
            guard let self else { throw .disconnected }
            try await self.startEncryption(handle, ltk: ltk, ediv: ediv, random: random)
            self.encryptedByPairing(handle, authenticated: authenticated)
        }
        defer {
            watchdog.cancel()
            links[handle]?.watchdog = nil
            links[handle]?.session = nil
        }
        let outcome: PairingSession.Outcome
        do throws(SMPError) { outcome = try await session.run() } catch {
            links[handle]?.pairingFailed = true
            throw error
        }
        links[handle]?.state = .encrypted(authenticated: outcome.method.isAuthenticated)
        links[handle]?.storedKey = false
        // Our keys are the last thing pairing sends: they must reach the peer before anyone
        // acts on the result (and, say, disconnects), or the peer keeps no bond.
        await controller.waitUntilDelivered(handle: handle)
        if policy.bonding {
            do { try bonds.save(outcome.bond) } catch { throw .store("\(error)") }
        }
        logger.log(
            .info,
            "handle \(hex(handle, digits: 4)): paired (\(outcome.method), \(outcome.secureConnections ? "LE Secure Connections" : "LE legacy"), key size \(outcome.keySize))"
        )
        onPaired?(handle, outcome.method, outcome.bond)
        return Pairing(method: outcome.method, secureConnections: outcome.secureConnections, bond: outcome.bond)
    }

    /// A pairing session on `handle` that encrypts with `encrypt`, made the link's, with the
    /// SMP timer running: one timer for the whole exchange, restarted by each command we
    /// receive.
    func startSession(
        _ handle: ConnectionHandle, _ connection: LEConnection, _ info: ControllerInfo, role: PairingSession.Link.Role,
        encrypt:
            @escaping (_ ltk: SecretBytes, _ ediv: UInt16, _ random: [UInt8], _ authenticated: Bool)
            async throws(SMPError) -> Void
    )
        -> (PairingSession, Watchdog)
    {
        // The address the peer connected to is what pairing hashes; the identity we
        // distribute is the public address, or the static random address if that is what
        // the peer knows us by (a private address is no identity). A controller without a
        // public address reads it as 00:00:00:00:00:00 (Vol 4 Part E 7.4.6): then our
        // static random address is the identity (Vol 3 Part C 10.8).
        let local: (type: UInt8, address: BluetoothAddress) =
            localAddress?(handle).map { ($0.type == .public ? 0 : 1, $0.address) } ?? (0, info.address)
        let identity: (type: UInt8, address: BluetoothAddress) =
            if local.type == 1 && local.address.randomKind == .static {
                local
            } else if let publicAddress = info.publicAddress { (0, publicAddress) } else { (1, staticRandomAddress) }
        // Both closures hold this manager weakly: a session can outlive it (a delegate still
        // answering), and then sends nothing, so the stand-in CSRK never leaves.
        let session = PairingSession(
            link: PairingSession.Link(
                handle: handle, role: role, local: local, identity: identity,
                peer: (connection.peerAddressType & 1, connection.peerAddress),
                send: { [weak self] command throws(SMPError) in try self?.send(command, handle) }, encrypt: encrypt),
            policy: policy, delegate: delegate, localIRK: localIRK,
            localCSRK: { [weak self] in self?.localCSRK ?? SecretBytes(count: 16) }, entropy: entropy)
        links[handle, default: LinkRecord()].session = session
        links[handle]?.pairingFailed = false
        let watchdog = Watchdog(deadlines: deadlines, timeout: timeout) { [weak self, weak session] in
            self?.links[handle]?.timedOut = true
            session?.end(.timeout)
        }
        links[handle]?.watchdog = watchdog
        return (session, watchdog)
    }

    // MARK: Input

    private func handle(_ event: HCIEvent) {
        switch event {
        case let .encryptionChange(change):
            encryptionEnded(change.handle, change.status, enabled: change.encryptionEnabled != 0)
        case let .encryptionKeyRefreshComplete(refresh):
            encryptionEnded(refresh.handle, refresh.status, enabled: true)
        case let .leMeta(meta) where meta.subeventCode == LELongTermKeyRequest.subeventCode:
            do {
                answerKeyRequest(try LELongTermKeyRequest.decodeCountingExtraOctets(meta.parameters).parameters)
            } catch {
                logger.log(.warning, "malformed LE Long Term Key Request: \(error)")
            }
        default:
            break
        }
    }

    /// A link ended (or the Security Manager closed): what waited on it fails.
    private func end(_ link: LinkRecord) {
        link.watchdog?.cancel()
        link.session?.end(.disconnected)
        link.encryption?.resume(returning: .failure(.disconnected))
        for waiter in link.securing ?? [] { waiter.resume(returning: .failure(.disconnected)) }
    }

    /// A PDU on `link`'s SMP channel, handed over with its link.
    private func receive(_ link: Link, _ payload: ArraySlice<UInt8>) {
        let handle = link.handle
        if links[link]?.timedOut == true {
            return logger.log(
                .warning, "handle \(hex(handle, digits: 4)): SMP after the SMP timeout ignored (Part H, 3.4)")
        }
        let pdu: SMPPDU
        do { pdu = try SMPPDU(decoding: payload) } catch {
            logger.log(.error, "handle \(hex(handle, digits: 4)): \(error)")
            let reason: PairingFailedReason =
                if case .unknownCode = error { .commandNotSupported } else { .invalidParameters }
            try? send(PairingFailed(reason: reason), handle)
            links[link]?.session?.end(.protocolError("\(error)"))
            return
        }
        if let session = links[link]?.session {
            links[link]?.watchdog?.restart()
            return session.receive(pdu)
        }
        switch pdu {
        case let .securityRequest(request):
            logger.log(
                .info,
                "handle \(hex(handle, digits: 4)): the peer asks for security (AuthReq \(hex(request.authentication.rawValue, digits: 2)))"
            )
            guard policy.allowPairing || bond(for: handle) != nil else {
                try? send(PairingFailed(reason: .pairingNotSupported), handle)
                return
            }
            Task { @BluetoothActor [weak self] in
                do throws(SMPError) { try await self?.secure(handle) } catch {
                    self?.logger.log(
                        .warning, "handle \(hex(handle, digits: 4)): answering the Security Request: \(error)")
                }
            }
        case let .pairingRequest(command):
            respond(handle, to: command.features)
        case .pairingFailed:
            break  // Nothing to fail.
        case _ where links[link]?.pairingFailed == true:
            logger.log(.debug, "handle \(hex(handle, digits: 4)): \(pdu.code) after the pairing failed; dropped")
        default:
            logger.log(.warning, "handle \(hex(handle, digits: 4)): \(pdu.code) outside a pairing; refused")
            try? send(PairingFailed(reason: .commandNotSupported), handle)
        }
    }

    func send(_ command: any SMPCommand, _ handle: ConnectionHandle) throws(SMPError) {
        do { try channels.send(command.encoded(), on: .smp, handle: handle) } catch { throw .hci(error) }
    }
}
