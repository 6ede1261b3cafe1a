import BluetoothCore
import HCI

/// Why pairing or encryption failed, with the protocol's codes and readable names.
public enum SMPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The peer sent Pairing Failed with this reason.
    case pairingFailedByPeer(PairingFailedReason)
    /// We ended pairing with Pairing Failed and this reason (a check failed, or the policy or
    /// the user refused).
    case pairingFailed(PairingFailedReason, String)
    /// The peer's P-256 public key is not a point on the curve, or is our own key: an
    /// invalid-curve attack (CVE-2018-5383) or a reflection. Pairing Failed (Invalid
    /// Parameters) was sent.
    case invalidPublicKey(String)
    /// The 30-second SMP timeout expired (Part H, 3.4): no more SMP on this link.
    case timeout
    /// Secure Connections is required by the policy and the peer offers only legacy pairing.
    case secureConnectionsRequired
    /// Pairing is not allowed by the policy (e.g. `--no-pair`).
    case pairingNotAllowed
    /// The controller refused or failed the encryption (e.g. `0x06 pinOrKeyMissing`).
    case encryptionFailed(HCIStatus)
    /// An HCI command failed.
    case hci(HCIError)
    /// The link ended during pairing or encryption.
    case disconnected
    /// No bond is stored for this peer.
    case notBonded
    /// A command arrived that is malformed or out of turn.
    case protocolError(String)
    /// The bond could not be stored.
    case store(String)

    /// One line for a person.
    public var description: String {
        switch self {
        case let .pairingFailedByPeer(reason): "the peer refused pairing: \(reason)"
        case let .pairingFailed(reason, why): "pairing failed (\(reason)): \(why)"
        case let .invalidPublicKey(why): "the peer's public key is invalid (\(why)); pairing refused"
        case .timeout: "SMP timeout: the peer did not answer within 30 s"
        case .secureConnectionsRequired:
            "the peer offers only LE legacy pairing and Secure Connections is required (--sc-only)"
        case .pairingNotAllowed: "pairing is needed but not allowed (--no-pair)"
        case let .encryptionFailed(status): "encryption failed: \(status)"
        case let .hci(error): "\(error)"
        case .disconnected: "the link ended during pairing"
        case .notBonded: "not bonded with this peer"
        case let .protocolError(why): "SMP protocol error: \(why)"
        case let .store(why): "storing the bond: \(why)"
        }
    }
}

/// The pairing user interface: the app (or the CLI, on the terminal) answers.
public protocol PairingDelegate: AnyObject, Sendable {
    /// Numeric Comparison: does the peer show `value` (six digits)? Answer true to pair.
    func confirm(numericValue value: UInt32) async -> Bool
    /// Passkey Entry, we display: show `passkey` for the user to type on the peer.
    func display(passkey: UInt32) async
    /// Passkey Entry, we input: the six-digit passkey the peer shows (nil cancels).
    func enterPasskey() async -> UInt32?
}

/// How this central pairs: what it can do and what it insists on.
public struct PairingPolicy: Sendable, Equatable {
    /// Our IO capability.
    public var ioCapability: IOCapability
    /// Whether keys are stored (bonding).
    public var bonding: Bool
    /// Whether MITM protection is asked for.
    public var mitm: Bool
    /// Whether Secure Connections is offered.
    public var secureConnections: Bool
    /// Whether legacy pairing is refused.
    public var secureConnectionsOnly: Bool
    /// Whether pairing may start on demand (an ATT security error, a Security Request).
    public var allowPairing: Bool

    /// A policy as given. The default is what iOS does: bond, Secure Connections with MITM
    /// when the IO allows, legacy accepted, pair on demand.
    public init(
        ioCapability: IOCapability = .keyboardDisplay, bonding: Bool = true, mitm: Bool = true,
        secureConnections: Bool = true,
        secureConnectionsOnly: Bool = false, allowPairing: Bool = true
    ) {
        self.ioCapability = ioCapability
        self.bonding = bonding
        self.mitm = mitm
        self.secureConnections = secureConnections
        self.secureConnectionsOnly = secureConnectionsOnly
        self.allowPairing = allowPairing
    }
}
