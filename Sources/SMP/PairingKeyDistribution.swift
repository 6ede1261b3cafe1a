import BluetoothCore
import BluetoothCrypto
import HCI

/// Phase 3 of a pairing (Core Vol 3, Part H, 3.6.1): the keys each side distributes, in
/// the order the specification fixes.
extension PairingSession {
    /// Receives the responder's keys, in the order Part H, 3.6.1 fixes.
    func receiveKeys(_ expected: KeyDistribution) async throws(SMPError) -> ReceivedKeys {
        var reception = KeyReception(expected)
        while !reception.isComplete {
            let pdu = try await next()
            if let wanted = reception.take(pdu) { throw unexpected(pdu, wanted) }
        }
        return reception.keys
    }

    /// The LTK we distributed in LE legacy pairing (as the responder), with the EDIV and
    /// Rand the central names it by when it encrypts with it again.
    struct DistributedKey {
        let longTermKey: SecretBytes
        let ediv: UInt16
        let random: [UInt8]
    }

    /// Sends our keys in the order of Part H, 3.6.1: a new LTK with its EDIV and Rand
    /// (EncKey, legacy pairing only, cut to `keySize`), the identity (IRK and our identity
    /// address, so the peer finds the bond when we come back, from any address our IRK
    /// resolves), our CSRK. Returns the LTK when one went.
    @discardableResult
    func distributeKeys(_ keys: KeyDistribution, keySize: Int = 16) throws(SMPError) -> DistributedKey? {
        var distributed: DistributedKey?
        if keys.contains(.encryptionKey) {
            var octets = random(16)
            let ltk = mask(SecretBytes(octets), keySize)
            SecretBytes.wipe(&octets)
            let identification = random(10)
            let key = DistributedKey(
                longTermKey: ltk, ediv: UInt16(identification[0]) | UInt16(identification[1]) << 8,
                random: Array(identification[2...]))
            try link.send(EncryptionInformation(longTermKey: ltk.withTemporaryCopy { SecretValue($0) }))
            try link.send(CentralIdentification(ediv: key.ediv, random: Octets(key.random)))
            distributed = key
        }
        if keys.contains(.identityKey) {
            try link.send(IdentityInformation(identityResolvingKey: localIRK.withTemporaryCopy { SecretValue($0) }))
            try link.send(IdentityAddressInformation(addressType: link.identity.type, address: link.identity.address))
        }
        if keys.contains(.signingKey) {
            try link.send(SigningInformation(signatureKey: localCSRK().withTemporaryCopy { SecretValue($0) }))
        }
        return distributed
    }
}
