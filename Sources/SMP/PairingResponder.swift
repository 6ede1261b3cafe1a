import BluetoothCore
import BluetoothCrypto
import HCI

extension PairingSession {
    /// Runs a pairing as the peripheral (responder) after the central's Pairing Request
    /// (Part H, 2.3): our Pairing Response, then LE Secure Connections (Just Works, Numeric
    /// Comparison, Passkey Entry) or LE legacy pairing (Just Works, Passkey Entry), the
    /// central's encryption with the LTK or STK (``Link/encrypt`` waits for it), and the key
    /// distribution, ours first (3.6.1). The result goes to ``onOutcome`` once the central's
    /// keys are in; a failure before then is thrown.
    func respond(to request: PairingFeatures) async throws(SMPError) {
        let bonding = policy.bonding && request.authentication.contains(.bonding)
        let secureConnections = policy.secureConnections && request.authentication.contains(.secureConnections)
        if policy.secureConnectionsOnly, !secureConnections {
            _ = fail(.authenticationRequirements, "Secure Connections required")
            throw .secureConnectionsRequired
        }
        var authentication: AuthenticationRequirements = []
        if bonding { authentication.insert(.bonding) }
        // With no delegate nobody can show, type or confirm anything: we announce
        // NoInputNoOutput, so the method is Just Works whatever the central's IO (Part H,
        // 2.3.5.1). Announcing the policy's KeyboardDisplay made a central with a display
        // and keyboard (bluetoothctl's agent, any phone) pick Numeric Comparison, which we
        // then had to fail (found by vmtest's BlueZ central against `bluejay serve`).
        let ioCapability = delegate == nil ? .noInputNoOutput : policy.ioCapability
        if policy.mitm, ioCapability != .noInputNoOutput { authentication.insert(.mitm) }
        if policy.secureConnections { authentication.insert(.secureConnections) }
        // What we send: an LTK (legacy only: under Secure Connections it comes from f5),
        // our identity, our CSRK. What we take: the central's identity and CSRK (its own
        // legacy LTK would serve only roles reversed).
        let ours: KeyDistribution =
            secureConnections ? [.identityKey, .signingKey] : [.encryptionKey, .identityKey, .signingKey]
        let response = PairingFeatures(
            ioCapability: ioCapability, authentication: authentication,
            initiatorKeys: bonding ? request.initiatorKeys.intersection([.identityKey, .signingKey]) : [],
            responderKeys: bonding ? request.responderKeys.intersection(ours) : [])
        try link.send(PairingResponse(features: response))
        let method = PairingMethod.select(initiator: request, responder: response, secureConnections: secureConnections)
        let keySize = Int(min(request.maximumKeySize, response.maximumKeySize))

        let key =
            if secureConnections {
                mask(try await respondSecureConnections(request, response, method), keySize)
            } else {
                mask(try await respondLegacy(request, response, method), keySize)
            }
        // The central starts encryption (EDIV and Rand zero for both the LTK and the STK);
        // the controller asks us for this key.
        try await link.encrypt(key, 0, [UInt8](repeating: 0, count: 8), method.isAuthenticated)

        // Key distribution: the responder's keys first, then the initiator's (3.6.1).
        let distributed = try distributeKeys(response.responderKeys, keySize: keySize)
        // The key the central encrypts with next time: the Secure Connections LTK, or the
        // legacy LTK we distributed, named by its EDIV and Rand.
        let bondKey = distributed ?? DistributedKey(longTermKey: key, ediv: 0, random: [UInt8](repeating: 0, count: 8))
        let peer = link.peer
        try awaitInitiatorKeys(response.initiatorKeys) { keys in
            let identity = keys.identityAddress ?? (peer.type, peer.address)
            let bond = Bond(
                address: identity.1, addressType: identity.0 == 0 ? .public : .random, longTermKey: bondKey.longTermKey,
                ediv: bondKey.ediv, random: bondKey.random, keySize: keySize, secureConnections: secureConnections,
                authenticated: method.isAuthenticated, identityResolvingKey: keys.identityResolvingKey,
                signatureKey: keys.signatureKey)
            return Outcome(
                method: method, secureConnections: secureConnections, keySize: keySize, bond: bond,
                keepsBond: secureConnections || distributed != nil)
        }
    }

    /// LE Secure Connections as the responder (Part H, 2.3.5.6): public keys (the
    /// initiator's first), authentication stage 1 by `method`, then the DHKey checks (the
    /// initiator's Ea first). Returns the LTK in wire order. The private key, DHKey, MacKey,
    /// LTK and passkey (as r) are held in `SecretBytes`.
    private func respondSecureConnections(
        _ request: PairingFeatures, _ response: PairingFeatures,
        _ method: PairingMethod
    ) async throws(SMPError) -> SecretBytes {
        let privateKey = entropy.privateKey()
        let ours = privateKey.publicKey.rawRepresentation  // X || Y, most significant first
        let pkbX = Array(ours[0..<32])
        let (peerKey, pkaX) = try await receivePublicKey(ours: Array(ours))
        try link.send(
            PairingPublicKey(x: Octets(lsbFirst(fromMSBFirst: pkbX)), y: Octets(lsbFirst(fromMSBFirst: ours[32..<64]))))
        let dhKey = privateKey.dhKey(with: peerKey)

        var na: [UInt8] = [], nb: [UInt8] = []
        // ra = rb: the passkey for Passkey Entry, zero otherwise.
        var r = SecretBytes(count: 16)
        switch method {
        case .justWorks, .numericComparison:
            // Our commitment Cb = f4(PKbx, PKax, Nb, 0) first, the initiator's nonce, then
            // ours (2.3.5.6.2).
            nb = random(16)
            try link.send(
                PairingConfirm(confirmValue: SecretValue(lsbFirst(fromMSBFirst: f4(u: pkbX, v: pkaX, x: nb, z: 0)))))
            na = try await receiveRandom()
            try link.send(PairingRandom(randomValue: SecretValue(lsbFirst(fromMSBFirst: nb))))
            // The user confirms before our DHKey check goes (2.3.5.6.2, step 6b).
            if method == .numericComparison { try await confirmNumericValue(pkaX: pkaX, pkbX: pkbX, na: na, nb: nb) }
        case .passkeyEntry, .passkeyEntryBothInput:
            r = try await obtainPasskey(method)
            // Twenty rounds, one bit of the passkey each (2.3.5.6.3): the initiator's
            // commitment, ours, its nonce (checked against its commitment), ours.
            for bit in 0..<20 {
                let z: UInt8 = r.withUnsafeBytes { 0x80 | (($0[15 - bit / 8] >> UInt8(bit % 8)) & 1) }
                let ca = try await receiveConfirm()
                nb = random(16)
                try link.send(
                    PairingConfirm(confirmValue: SecretValue(lsbFirst(fromMSBFirst: f4(u: pkbX, v: pkaX, x: nb, z: z))))
                )
                na = try await receiveRandom()
                guard f4(u: pkaX, v: pkbX, x: na, z: z) == ca else {
                    throw fail(
                        .confirmValueFailed,
                        "round \(bit + 1) of 20: the central's confirm value does not match (wrong passkey?)")
                }
                try link.send(PairingRandom(randomValue: SecretValue(lsbFirst(fromMSBFirst: nb))))
            }
        }

        // Authentication stage 2: the central's check first, then ours.
        let (ea, eb, ltk) = stage2(dhKey: dhKey, na: na, nb: nb, r: r, request, response)
        switch try await next() {
        case let .pairingDHKeyCheck(check):
            guard msbFirst(fromLSBFirst: check.dhKeyCheck.bytes) == ea else {
                throw fail(.dhKeyCheckFailed, "the central's DHKey check value does not match")
            }
        case let other: throw unexpected(other, "Pairing DHKey Check")
        }
        try link.send(PairingDHKeyCheck(dhKeyCheck: SecretValue(lsbFirst(fromMSBFirst: eb))))
        return ltk.reversed()  // to wire order
    }

    /// LE legacy pairing as the responder (Part H, 2.3.5.5): the central's Mconfirm, our
    /// Sconfirm, its Mrand (checked against Mconfirm), our Srand. Returns the STK
    /// s1(TK, Srand, Mrand) in wire order; the TK and the STK are held in `SecretBytes`.
    private func respondLegacy(_ request: PairingFeatures, _ response: PairingFeatures, _ method: PairingMethod)
        async throws(SMPError) -> SecretBytes
    {
        let tk = try await legacyTemporaryKey(method)
        let mconfirm = try await receiveConfirm()
        let srand = random(16)
        try link.send(
            PairingConfirm(
                confirmValue: SecretValue(lsbFirst(fromMSBFirst: legacyConfirm(tk, srand, request, response)))))
        let mrand = try await receiveRandom()
        guard legacyConfirm(tk, mrand, request, response) == mconfirm else {
            throw fail(.confirmValueFailed, "the central's confirm value does not match (wrong passkey?)")
        }
        try link.send(PairingRandom(randomValue: SecretValue(lsbFirst(fromMSBFirst: srand))))
        return s1(k: tk, r1: srand, r2: mrand).reversed()  // to wire order
    }
}
