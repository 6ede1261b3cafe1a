import BluetoothCore
import BluetoothCrypto
import HCI

/// One pairing as the central (initiator; the responder's side is `respond(to:)`, in
/// PairingResponder.swift), written top-down as Part H, 2.3 tells it:
/// features exchange, then LE Secure Connections (public keys, authentication stage 1,
/// DHKey check) or LE legacy pairing (confirm and random), then encryption and key
/// distribution. Values are wire order (least significant first) on the SMP channel and
/// most significant first in the crypto functions; each crossing is marked.
@BluetoothActor
final class PairingSession {
    /// What the session needs from the link.
    struct Link {
        /// Which side of the pairing we are: the central initiates, the peripheral responds.
        enum Role { case initiator, responder }

        let handle: ConnectionHandle
        let role: Role
        /// Our address as the peer sees it on this link (type, address): the initiator's
        /// when we are the central, the responder's when we are the peripheral; our
        /// resolvable private or static random address when we advertised from one. c1, f5
        /// and f6 hash this one.
        let local: (type: UInt8, address: BluetoothAddress)
        /// Our identity address (type, address), distributed with our IRK: the public
        /// address, or the static random address the link was made to.
        let identity: (type: UInt8, address: BluetoothAddress)
        /// The peer's address on this link.
        let peer: (type: UInt8, address: BluetoothAddress)
        let send: (any SMPCommand) throws(SMPError) -> Void
        /// Encrypts the link with the pairing's key (the central starts it, the peripheral
        /// awaits it); `authenticated` when the key came from a MITM-protected method.
        let encrypt:
            (_ ltk: SecretBytes, _ ediv: UInt16, _ random: [UInt8], _ authenticated: Bool) async throws(SMPError) ->
                Void

        /// The initiating device's address (IAT, IA in Part H, 2.2).
        var initiator: (type: UInt8, address: BluetoothAddress) { role == .initiator ? local : peer }
        /// The responding device's address (RAT, RA).
        var responder: (type: UInt8, address: BluetoothAddress) { role == .initiator ? peer : local }
    }

    /// What pairing produced.
    struct Outcome {
        let method: PairingMethod
        let secureConnections: Bool
        let keySize: Int
        let bond: Bond
        /// Whether `bond` is worth keeping: false after legacy pairing in which we, the
        /// responder, distributed no LTK (the STK encrypts this link only).
        var keepsBond = true
    }

    let link: Link
    let policy: PairingPolicy
    let delegate: (any PairingDelegate)?
    /// Our identity keys, distributed when the peer asks (IdKey).
    let localIRK: SecretBytes
    /// Our signature key, distributed when the peer asks (SignKey): made (from the
    /// entropy) only then, so a pairing that distributes none draws the same octets as
    /// before it existed (a replayed pairing's recorded values depend on them).
    let localCSRK: @BluetoothActor () -> SecretBytes
    /// Nonces, passkeys and the key pair come from here.
    let entropy: PairingEntropy
    private var inbox: [SMPPDU] = []
    private var waiter: CheckedContinuation<Result<SMPPDU, SMPError>, Never>?
    private var ended: SMPError?
    /// The responder's last phase (``awaitInitiatorKeys(_:then:)``): commands are keys to
    /// take, and the result is told to ``onOutcome`` once.
    private var completion: Completion = .exchanging
    /// Told the responder's result, once; the initiator's is what ``run()`` returns.
    var onOutcome: ((Result<Outcome, SMPError>) -> Void)?

    /// Where a session's result stands.
    private enum Completion {
        /// The exchange runs in the session's task, awaiting each command.
        case exchanging
        /// Our keys went; the initiator's are taken as they arrive, and `outcome` makes
        /// the result of the last one.
        case receivingKeys(KeyReception, outcome: (ReceivedKeys) -> Outcome)
        /// The result was told.
        case finished
    }

    init(
        link: Link, policy: PairingPolicy, delegate: (any PairingDelegate)?, localIRK: SecretBytes,
        localCSRK: @escaping @BluetoothActor () -> SecretBytes,
        entropy: PairingEntropy = .system
    ) {
        (self.entropy, self.localCSRK, self.link, self.policy, self.delegate, self.localIRK) =
            (entropy, localCSRK, link, policy, delegate, localIRK)
    }

    // MARK: Inbox

    /// A command from the peer.
    func receive(_ pdu: SMPPDU) {
        if case .receivingKeys = completion { return take(pdu) }
        if let waiter {
            self.waiter = nil
            waiter.resume(returning: .success(pdu))
        } else {
            inbox.append(pdu)
        }
    }

    /// Ends the session: a timeout, the link went, or a malformed command.
    func end(_ error: SMPError) {
        if ended == nil { ended = error }
        if case .receivingKeys = completion { return finish(.failure(error)) }
        if let waiter {
            self.waiter = nil
            waiter.resume(returning: .failure(error))
        }
    }

    /// The next command; Pairing Failed from the peer ends pairing with its reason.
    func next() async throws(SMPError) -> SMPPDU {
        let pdu: SMPPDU
        if !inbox.isEmpty {
            pdu = inbox.removeFirst()
        } else {
            if let ended { throw ended }
            pdu = try await withCheckedContinuation { waiter = $0 }.get()
        }
        if case let .pairingFailed(failed) = pdu { throw .pairingFailedByPeer(failed.reason) }
        return pdu
    }

    /// The responder's last phase: the central's keys (Part H, 3.6.1) are taken in
    /// ``receive(_:)``, in the turn each command arrives, and the last one tells
    /// ``onOutcome``. Awaiting them here instead would tell the result a turn later, after
    /// whatever the same read brought behind the last key: a Disconnection Complete would
    /// then end the link (the GATT server forgetting the central's CCCDs) before the bond
    /// that keeps them was known.
    func awaitInitiatorKeys(_ expected: KeyDistribution, then outcome: @escaping (ReceivedKeys) -> Outcome)
        throws(SMPError)
    {
        if let ended { throw ended }
        completion = .receivingKeys(KeyReception(expected), outcome: outcome)
        let early = inbox  // keys that came while our own were going out
        inbox = []
        for pdu in early { take(pdu) }
        if case let .receivingKeys(reception, outcome) = completion, reception.isComplete {
            finish(.success(outcome(reception.keys)))
        }
    }

    /// One of the central's key distribution commands.
    private func take(_ pdu: SMPPDU) {
        guard case .receivingKeys(var reception, let outcome) = completion else { return }
        if case let .pairingFailed(failed) = pdu { return finish(.failure(.pairingFailedByPeer(failed.reason))) }
        if let wanted = reception.take(pdu) { return finish(.failure(unexpected(pdu, wanted))) }
        completion = .receivingKeys(reception, outcome: outcome)
        if reception.isComplete { finish(.success(outcome(reception.keys))) }
    }

    /// Tells ``onOutcome`` the result, the first time only.
    func finish(_ result: Result<Outcome, SMPError>) {
        if case .finished = completion { return }
        completion = .finished
        onOutcome?(result)
    }

    /// Ends pairing on our side: Pairing Failed with `reason` goes to the peer.
    func fail(_ reason: PairingFailedReason, _ why: String) -> SMPError {
        try? link.send(PairingFailed(reason: reason))
        return .pairingFailed(reason, why)
    }

    func unexpected(_ pdu: SMPPDU, _ expected: String) -> SMPError {
        try? link.send(PairingFailed(reason: .unspecifiedReason))
        return .protocolError("expected \(expected), got \(pdu.code)")
    }

    // MARK: Phase 1: features

    /// Runs the whole pairing and returns the keys; any failure has been told to the peer.
    func run() async throws(SMPError) -> Outcome {
        var authentication: AuthenticationRequirements = []
        if policy.bonding { authentication.insert(.bonding) }
        // Without input or output we cannot protect against a MITM; asking anyway makes
        // peers such as BlueZ refuse (Authentication Requirements) instead of Just Works.
        if policy.mitm, policy.ioCapability != .noInputNoOutput { authentication.insert(.mitm) }
        if policy.secureConnections { authentication.insert(.secureConnections) }
        let request = PairingFeatures(
            ioCapability: policy.ioCapability, authentication: authentication,
            initiatorKeys: policy.bonding ? [.identityKey] : [],
            responderKeys: policy.bonding ? [.encryptionKey, .identityKey, .signingKey] : [])
        try link.send(PairingRequest(features: request))
        let response: PairingFeatures
        switch try await next() {
        case let .pairingResponse(command): response = command.features
        case let other: throw unexpected(other, "Pairing Response")
        }
        let secureConnections =
            request.authentication.contains(.secureConnections) && response.authentication.contains(.secureConnections)
        if policy.secureConnectionsOnly, !secureConnections {
            _ = fail(.authenticationRequirements, "Secure Connections required")
            throw .secureConnectionsRequired
        }
        let keySize = Int(min(request.maximumKeySize, response.maximumKeySize))
        let method = PairingMethod.select(initiator: request, responder: response, secureConnections: secureConnections)
        // The responder's answer is what gets distributed (a subset of what we asked for).
        let distribution = (
            initiator: response.initiatorKeys.intersection(request.initiatorKeys),
            responder: response.responderKeys.intersection(request.responderKeys)
        )
        var ltkFromF5: SecretBytes?
        if secureConnections {
            let ltk = try await secureConnectionsPairing(request, response, method)
            // The LTK comes from f5: the peer distributes no EncKey under Secure Connections.
            try await link.encrypt(mask(ltk, keySize), 0, [UInt8](repeating: 0, count: 8), method.isAuthenticated)
            ltkFromF5 = mask(ltk, keySize)
        } else {
            let stk = try await legacyPairing(request, response, method)
            try await link.encrypt(mask(stk, keySize), 0, [UInt8](repeating: 0, count: 8), method.isAuthenticated)
        }
        var keys = try await receiveKeys(distribution.responder.subtracting(secureConnections ? .encryptionKey : []))
        if let ltkFromF5 { keys.longTermKey = ltkFromF5 }
        try distributeKeys(distribution.initiator.subtracting(secureConnections ? .encryptionKey : []))
        guard let ltk = keys.longTermKey else {
            throw fail(.unspecifiedReason, "the peer distributed no LTK, so there is nothing to bond with")
        }
        let identity = keys.identityAddress ?? (link.peer.type, link.peer.address)
        let bond = Bond(
            address: identity.1, addressType: identity.0 == 0 ? .public : .random, longTermKey: ltk, ediv: keys.ediv,
            random: keys.random,
            keySize: keySize, secureConnections: secureConnections, authenticated: method.isAuthenticated,
            identityResolvingKey: keys.identityResolvingKey, signatureKey: keys.signatureKey)
        return Outcome(method: method, secureConnections: secureConnections, keySize: keySize, bond: bond)
    }

    /// A key cut to the negotiated size (Part H, 2.3.4): the most significant octets are
    /// zeroed; in wire order those are the last ones.
    func mask(_ key: SecretBytes, _ size: Int) -> SecretBytes {
        SecretBytes(count: key.count) { masked in
            key.withUnsafeBytes { octets in
                for index in 0..<min(size, octets.count) { masked[index] = octets[index] }
            }
        }
    }

    // MARK: Phase 2: LE Secure Connections

    /// Public keys, authentication stage 1 and 2; returns the LTK in wire order.
    ///
    /// The private key, the DHKey, the MacKey, the LTK and the passkey (as r) are held in
    /// `SecretBytes`, zeroed when this returns or throws.
    private func secureConnectionsPairing(
        _ request: PairingFeatures, _ response: PairingFeatures, _ method: PairingMethod
    ) async throws(SMPError) -> SecretBytes {
        let privateKey = entropy.privateKey()
        let ours = privateKey.publicKey.rawRepresentation  // X || Y, most significant first
        let pkaX = Array(ours[0..<32])
        try link.send(
            PairingPublicKey(x: Octets(lsbFirst(fromMSBFirst: pkaX)), y: Octets(lsbFirst(fromMSBFirst: ours[32..<64]))))
        let (peerKey, pkbX) = try await receivePublicKey(ours: ours)
        let dhKey = privateKey.dhKey(with: peerKey)

        // Authentication stage 1: nonces, and with them the values r for stage 2.
        var na = random(16), nb: [UInt8]
        // ra = rb: the passkey for Passkey Entry, zero otherwise.
        var r = SecretBytes(count: 16)
        switch method {
        case .justWorks, .numericComparison:
            let cb = try await receiveConfirm()
            try link.send(PairingRandom(randomValue: SecretValue(lsbFirst(fromMSBFirst: na))))
            nb = try await receiveRandom()
            guard f4(u: pkbX, v: pkaX, x: nb, z: 0) == cb else {
                throw fail(.confirmValueFailed, "the peer's confirm value does not match its nonce")
            }
            if method == .numericComparison { try await confirmNumericValue(pkaX: pkaX, pkbX: pkbX, na: na, nb: nb) }
        case .passkeyEntry, .passkeyEntryBothInput:
            r = try await obtainPasskey(method)
            nb = []
            // Twenty rounds, one bit of the passkey each (Part H, 2.3.5.6.3); the passkey is
            // the last octets of r, most significant first.
            for bit in 0..<20 {
                let z: UInt8 = r.withUnsafeBytes { 0x80 | (($0[15 - bit / 8] >> UInt8(bit % 8)) & 1) }
                na = random(16)
                try link.send(
                    PairingConfirm(confirmValue: SecretValue(lsbFirst(fromMSBFirst: f4(u: pkaX, v: pkbX, x: na, z: z))))
                )
                let cb = try await receiveConfirm()
                try link.send(PairingRandom(randomValue: SecretValue(lsbFirst(fromMSBFirst: na))))
                nb = try await receiveRandom()
                guard f4(u: pkbX, v: pkaX, x: nb, z: z) == cb else {
                    throw fail(
                        .confirmValueFailed,
                        "round \(bit + 1) of 20: the peer's confirm value does not match (wrong passkey?)")
                }
            }
        }

        // Authentication stage 2: our check first, then the peer's.
        let (ea, eb, ltk) = stage2(dhKey: dhKey, na: na, nb: nb, r: r, request, response)
        try link.send(PairingDHKeyCheck(dhKeyCheck: SecretValue(lsbFirst(fromMSBFirst: ea))))
        switch try await next() {
        case let .pairingDHKeyCheck(check):
            guard msbFirst(fromLSBFirst: check.dhKeyCheck.bytes) == eb else {
                throw fail(.dhKeyCheckFailed, "the peer's DHKey check value does not match")
            }
        case let other: throw unexpected(other, "Pairing DHKey Check")
        }
        return ltk.reversed()  // to wire order
    }

    /// The peer's Pairing Public Key, checked, and its X coordinate (most significant
    /// first). `ours` is our own key, X || Y.
    func receivePublicKey(ours: [UInt8]) async throws(SMPError) -> (P256PublicKey, [UInt8]) {
        switch try await next() {
        case let .pairingPublicKey(theirs):
            let raw = msbFirst(fromLSBFirst: theirs.x.bytes) + msbFirst(fromLSBFirst: theirs.y.bytes)
            // Our own key reflected: f4, and with it every commitment of Passkey Entry, uses
            // the X coordinate alone, so (X, p−Y) passes for ours as well as (X, Y) does.
            // Compared on X, as the Core errata for CVE-2020-26558 require, in every method.
            guard raw[0..<32] != ours[0..<32] else {
                throw invalidKey("its X coordinate is our own public key's: our key reflected back (CVE-2020-26558)")
            }
            // A point that is not on P-256 is refused (the CVE-2018-5383 check).
            guard let key = P256PublicKey(rawRepresentation: raw) else {
                throw invalidKey("the point is not on the P-256 curve, or a coordinate is not below p")
            }
            return (key, Array(raw[0..<32]))
        case let other: throw unexpected(other, "Pairing Public Key")
        }
    }

    func invalidKey(_ why: String) -> SMPError {
        try? link.send(PairingFailed(reason: .invalidParameters))
        return .invalidPublicKey(why)
    }

    /// A confirm value, most significant first.
    func receiveConfirm() async throws(SMPError) -> [UInt8] {
        switch try await next() {
        case let .pairingConfirm(confirm): return msbFirst(fromLSBFirst: confirm.confirmValue.bytes)
        case let other: throw unexpected(other, "Pairing Confirm")
        }
    }

    /// A nonce, most significant first.
    func receiveRandom() async throws(SMPError) -> [UInt8] {
        switch try await next() {
        case let .pairingRandom(nonce): return msbFirst(fromLSBFirst: nonce.randomValue.bytes)
        case let other: throw unexpected(other, "Pairing Random")
        }
    }

    /// Numeric Comparison's check by the user (Part H, 2.3.5.6.2): both sides show the six
    /// digits of g2(PKax, PKbx, Na, Nb), and pairing goes on only when the user says they match.
    func confirmNumericValue(pkaX: [UInt8], pkbX: [UInt8], na: [UInt8], nb: [UInt8]) async throws(SMPError) {
        let value = g2(u: pkaX, v: pkbX, x: na, y: nb) % 1_000_000
        guard await delegate?.confirm(numericValue: value) == true else {
            throw fail(.numericComparisonFailed, "the values were not confirmed")
        }
    }

    /// The passkey: shown by us (random) when our side displays, or typed in from what
    /// the peer shows. As Secure
    /// Connections' ra and legacy pairing's TK both take it: 16 octets, most significant
    /// first, the passkey in the last four.
    func obtainPasskey(_ method: PairingMethod) async throws(SMPError) -> SecretBytes {
        let passkey: UInt32
        if case let .passkeyEntry(initiatorDisplays) = method, initiatorDisplays == (link.role == .initiator) {
            passkey = entropy.passkey()
            await delegate?.display(passkey: passkey)
        } else {
            guard let delegate, let entered = await delegate.enterPasskey(), entered <= 999_999 else {
                throw fail(.passkeyEntryFailed, "no passkey was entered")
            }
            passkey = entered
        }
        return SecretBytes(count: 16) { octets in
            octets.storeBytes(of: passkey.bigEndian, toByteOffset: 12, as: UInt32.self)
        }
    }

    // MARK: Phase 2: LE legacy pairing

    /// Confirm and random exchange; returns the STK in wire order. The TK (the passkey)
    /// and the STK are held in `SecretBytes`.
    private func legacyPairing(_ request: PairingFeatures, _ response: PairingFeatures, _ method: PairingMethod)
        async throws(SMPError) -> SecretBytes
    {
        let tk = try await legacyTemporaryKey(method)
        let mrand = random(16)
        try link.send(
            PairingConfirm(
                confirmValue: SecretValue(lsbFirst(fromMSBFirst: legacyConfirm(tk, mrand, request, response)))))
        let sconfirm = try await receiveConfirm()
        try link.send(PairingRandom(randomValue: SecretValue(lsbFirst(fromMSBFirst: mrand))))
        let srand = try await receiveRandom()
        guard legacyConfirm(tk, srand, request, response) == sconfirm else {
            throw fail(.confirmValueFailed, "the peer's confirm value does not match (wrong passkey?)")
        }
        return s1(k: tk, r1: srand, r2: mrand).reversed()  // to wire order
    }

    /// The TK of LE legacy pairing: zero for Just Works, the passkey for Passkey Entry
    /// (Part H, 2.3.5.2–3); Numeric Comparison does not exist without Secure Connections.
    func legacyTemporaryKey(_ method: PairingMethod) async throws(SMPError) -> SecretBytes {
        switch method {
        case .justWorks: SecretBytes(count: 16)
        case .numericComparison: throw fail(.authenticationRequirements, "numeric comparison needs Secure Connections")
        case .passkeyEntry, .passkeyEntryBothInput: try await obtainPasskey(method)
        }
    }

    /// c1 over this link's pairing: `r` is Mrand or Srand, most significant first, as the
    /// result (Part H, 2.2.3). The addresses are the initiator's and the responder's.
    func legacyConfirm(_ tk: SecretBytes, _ r: [UInt8], _ request: PairingFeatures, _ response: PairingFeatures)
        -> [UInt8]
    {
        let preq = msbFirst(fromLSBFirst: PairingRequest(features: request).encoded())
        let pres = msbFirst(fromLSBFirst: PairingResponse(features: response).encoded())
        return c1(
            k: tk, r: r, preq: preq, pres: pres, iat: link.initiator.type,
            ia: Array(link.initiator.address.bytes.reversed()),
            rat: link.responder.type, ra: Array(link.responder.address.bytes.reversed()))
    }

    /// Authentication stage 2's values (Part H, 2.3.5.6.5), the same on both sides: the LTK
    /// (with the MacKey) from f5, and from f6 the initiator's DHKey check Ea and the
    /// responder's Eb. Nonces most significant first; the LTK too.
    func stage2(
        dhKey: SecretBytes, na: [UInt8], nb: [UInt8], r: SecretBytes, _ request: PairingFeatures,
        _ response: PairingFeatures
    ) -> (ea: [UInt8], eb: [UInt8], ltk: SecretBytes) {
        let (a, b) = stage2Addresses
        let (macKey, ltk) = f5(w: dhKey, n1: na, n2: nb, a1: a, a2: b)
        let ea = f6(w: macKey, n1: na, n2: nb, r: r, ioCap: request.ioCap, a1: a, a2: b)
        let eb = f6(w: macKey, n1: nb, n2: na, r: r, ioCap: response.ioCap, a1: b, a2: a)
        return (ea, eb, ltk)
    }

    /// A and B of f5 and f6 (Part H, 2.2.7): the initiator's and the responder's address
    /// type octet and address, most significant first.
    private var stage2Addresses: (a: [UInt8], b: [UInt8]) {
        (
            [link.initiator.type] + link.initiator.address.bytes.reversed(),
            [link.responder.type] + link.responder.address.bytes.reversed()
        )
    }

    /// `count` random octets.
    func random(_ count: Int) -> [UInt8] { entropy.bytes(count) }
}
