import BluetoothCore
import BluetoothCrypto
import HCI

extension PairingSession {
    /// Runs a pairing as the peripheral (responder) after the central's Pairing Request
    /// (Part H, 2.3): our Pairing Response, then LE Secure Connections with Just Works
    /// (public keys, our confirm and nonce, the DHKey checks), encryption when the central
    /// starts it with the LTK (``Link/encrypt`` waits for that), and the key distribution,
    /// ours first (3.6.1). We announce no input and no output, whatever `policy` says, so the
    /// central lands on Just Works (and decides whether an unauthenticated key will do). LE
    /// legacy pairing is refused with Pairing Failed (Authentication Requirements): not built
    /// as responder yet.
    func respond(to request: PairingFeatures) async throws(SMPError) -> Outcome {
        var authentication: AuthenticationRequirements = []
        let bonding = policy.bonding && request.authentication.contains(.bonding)
        if bonding { authentication.insert(.bonding) }
        if policy.secureConnections { authentication.insert(.secureConnections) }
        // Under Secure Connections the LTK comes from f5: EncKey is not distributed.
        // Just Works is the only method built as responder, so we announce NoInputNoOutput,
        // which makes the method Just Works whatever the central's IO (Part H, 2.3.5.1): a
        // central with a display and keyboard (bluetoothctl's agent, any phone) would
        // otherwise pick Numeric Comparison, and we would refuse it after answering.
        let response = PairingFeatures(ioCapability: .noInputNoOutput, authentication: authentication,
                                       initiatorKeys: bonding ? request.initiatorKeys.intersection(.identityKey) : [],
                                       responderKeys: bonding ? request.responderKeys.intersection(.identityKey) : [])
        try link.send(PairingResponse(features: response))
        let secureConnections = request.authentication.contains(.secureConnections) && response.authentication.contains(.secureConnections)
        guard secureConnections else {
            throw fail(.authenticationRequirements, "LE legacy pairing as the peripheral is not supported")
        }
        let method = PairingMethod.select(initiator: request, responder: response, secureConnections: true)
        guard method == .justWorks else {
            throw fail(.authenticationRequirements, "\(method) as the peripheral is not supported (Just Works only)")
        }
        let keySize = Int(min(request.maximumKeySize, response.maximumKeySize))

        // Public keys: the initiator's first (Part H, 2.3.5.6.1).
        let privateKey = entropy.privateKey()
        let ours = privateKey.publicKey.rawRepresentation  // X || Y, most significant first
        let pkbX = Array(ours[0..<32])
        let (peerKey, pkaX) = try await receivePublicKey(ours: Array(ours))
        try link.send(PairingPublicKey(x: Octets(lsbFirst(fromMSBFirst: pkbX)), y: Octets(lsbFirst(fromMSBFirst: ours[32..<64]))))
        let dhKey = privateKey.dhKey(with: peerKey)

        // Authentication stage 1, Just Works: our commitment Cb = f4(PKbx, PKax, Nb, 0) first,
        // the initiator's nonce, then ours (2.3.5.6.2).
        let nb = random(16)
        try link.send(PairingConfirm(confirmValue: SecretValue(lsbFirst(fromMSBFirst: f4(u: pkbX, v: pkaX, x: nb, z: 0)))))
        let na = try await receiveRandom()
        try link.send(PairingRandom(randomValue: SecretValue(lsbFirst(fromMSBFirst: nb))))

        // Authentication stage 2: A is the initiator (the peer), B is us.
        let a = [link.peer.type] + link.peer.address.bytes.reversed()
        let b = [link.local.type] + link.local.address.bytes.reversed()
        let (macKey, ltk) = f5(w: dhKey, n1: na, n2: nb, a1: a, a2: b)
        let r = SecretBytes(count: 16)
        switch try await next() {
        case let .pairingDHKeyCheck(check):
            let ea = f6(w: macKey, n1: na, n2: nb, r: r, ioCap: request.ioCap, a1: a, a2: b)
            guard msbFirst(fromLSBFirst: check.dhKeyCheck.bytes) == ea else { throw fail(.dhKeyCheckFailed, "the central's DHKey check value does not match") }
        case let other: throw unexpected(other, "Pairing DHKey Check")
        }
        let eb = f6(w: macKey, n1: nb, n2: na, r: r, ioCap: response.ioCap, a1: b, a2: a)
        try link.send(PairingDHKeyCheck(dhKeyCheck: SecretValue(lsbFirst(fromMSBFirst: eb))))
        let key = mask(ltk.reversed(), keySize)  // to wire order
        // The central starts encryption; the controller asks us for this key.
        try await link.encrypt(key, 0, [UInt8](repeating: 0, count: 8))

        // Key distribution: the responder's keys first, then the initiator's (3.6.1).
        try distributeKeys(response.responderKeys.subtracting(.encryptionKey))
        var keys = ReceivedKeys()
        keys.longTermKey = key
        try await receiveKeys(response.initiatorKeys.subtracting(.encryptionKey), into: &keys)
        let identity = keys.identityAddress ?? (link.peer.type, link.peer.address)
        let bond = Bond(address: identity.1, addressType: identity.0 == 0 ? .public : .random, longTermKey: key, ediv: 0,
                        random: [UInt8](repeating: 0, count: 8), keySize: keySize, secureConnections: true,
                        authenticated: method.isAuthenticated, identityResolvingKey: keys.identityResolvingKey, signatureKey: keys.signatureKey)
        return Outcome(method: method, secureConnections: true, keySize: keySize, bond: bond)
    }
}
