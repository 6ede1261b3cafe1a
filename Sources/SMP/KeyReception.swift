import BluetoothCore
import BluetoothCrypto

/// The keys the peer distributes, in wire order.
struct ReceivedKeys {
    var longTermKey: SecretBytes?
    var ediv: UInt16 = 0
    var random = [UInt8](repeating: 0, count: 8)
    var identityResolvingKey: SecretBytes?
    var identityAddress: (UInt8, BluetoothAddress)?
    var signatureKey: SecretBytes?
}

/// Phase 3 from the receiving side (Part H, 3.6.1): the peer's key distribution commands,
/// taken one at a time in the order the specification fixes. A value, fed by whoever has
/// the commands: the initiator's session awaits each one; the responder's takes them in
/// the turn they arrive, so that the pairing's result is known before anything that came
/// after them on the link is handled.
struct KeyReception {
    private enum Step {
        case encryptionInformation, centralIdentification, identityInformation, identityAddressInformation,
            signingInformation

        var name: String {
            switch self {
            case .encryptionInformation: "Encryption Information"
            case .centralIdentification: "Central Identification"
            case .identityInformation: "Identity Information"
            case .identityAddressInformation: "Identity Address Information"
            case .signingInformation: "Signing Information"
            }
        }
    }

    private var steps: ArraySlice<Step>
    /// What has been taken so far.
    private(set) var keys = ReceivedKeys()

    /// Expects the commands that distribute `expected`.
    init(_ expected: KeyDistribution) {
        var steps: [Step] = []
        if expected.contains(.encryptionKey) { steps += [.encryptionInformation, .centralIdentification] }
        if expected.contains(.identityKey) { steps += [.identityInformation, .identityAddressInformation] }
        if expected.contains(.signingKey) { steps.append(.signingInformation) }
        self.steps = steps[...]
    }

    /// Whether every expected key has arrived.
    var isComplete: Bool { steps.isEmpty }

    /// Takes the next command. Returns nil when it was the one expected, else the name of
    /// the one that was (the pairing then fails).
    mutating func take(_ pdu: SMPPDU) -> String? {
        guard let step = steps.first else { return "nothing" }
        switch (step, pdu) {
        case let (.encryptionInformation, .encryptionInformation(information)):
            keys.longTermKey = SecretBytes(information.longTermKey.bytes)
        case let (.centralIdentification, .centralIdentification(identification)):
            (keys.ediv, keys.random) = (identification.ediv, identification.random.bytes)
        case let (.identityInformation, .identityInformation(information)):
            keys.identityResolvingKey = SecretBytes(information.identityResolvingKey.bytes)
        case let (.identityAddressInformation, .identityAddressInformation(information)):
            keys.identityAddress = (information.addressType, information.address)
        case let (.signingInformation, .signingInformation(information)):
            keys.signatureKey = SecretBytes(information.signatureKey.bytes)
        default:
            return step.name
        }
        steps.removeFirst()
        return nil
    }
}
