/// How the two sides authenticate (Core Vol 3, Part H, 2.3.5.1, Tables 2.6–2.8).
public enum PairingMethod: Sendable, Equatable, CustomStringConvertible {
    /// No authentication: no MITM protection.
    case justWorks
    /// Both show a six-digit value and the user confirms they match (Secure Connections).
    case numericComparison
    /// One side shows a passkey that the user types on the other.
    case passkeyEntry(initiatorDisplays: Bool)
    /// The user types the same passkey on both sides.
    case passkeyEntryBothInput

    /// Whether the method gives MITM protection.
    public var isAuthenticated: Bool { self != .justWorks }

    /// `Just Works`, `Numeric Comparison`, `Passkey Entry`.
    public var description: String {
        switch self {
        case .justWorks: "Just Works"
        case .numericComparison: "Numeric Comparison"
        case .passkeyEntry, .passkeyEntryBothInput: "Passkey Entry"
        }
    }

    /// The method for an initiator and a responder with these features (OOB not used).
    public static func select(initiator: PairingFeatures, responder: PairingFeatures, secureConnections: Bool)
        -> PairingMethod
    {
        guard initiator.authentication.contains(.mitm) || responder.authentication.contains(.mitm) else {
            return .justWorks
        }
        return fromIOCapabilities(
            initiator: initiator.ioCapability, responder: responder.ioCapability, secureConnections: secureConnections)
    }

    /// Table 2.8: the mapping of IO capabilities to a method.
    static func fromIOCapabilities(initiator: IOCapability, responder: IOCapability, secureConnections: Bool)
        -> PairingMethod
    {
        if initiator == .noInputNoOutput || responder == .noInputNoOutput { return .justWorks }
        switch (responder, initiator) {
        case (.displayOnly, .displayOnly), (.displayOnly, .displayYesNo), (.displayYesNo, .displayOnly):
            return .justWorks
        case (.displayOnly, .keyboardOnly), (.displayOnly, .keyboardDisplay), (.displayYesNo, .keyboardOnly):
            return .passkeyEntry(initiatorDisplays: false)
        case (.keyboardOnly, .displayOnly), (.keyboardOnly, .displayYesNo), (.keyboardOnly, .keyboardDisplay):
            return .passkeyEntry(initiatorDisplays: true)
        case (.keyboardOnly, .keyboardOnly):
            return .passkeyEntryBothInput
        case (.displayYesNo, .displayYesNo):
            return secureConnections ? .numericComparison : .justWorks
        case (.displayYesNo, .keyboardDisplay):
            return secureConnections ? .numericComparison : .passkeyEntry(initiatorDisplays: false)
        case (.keyboardDisplay, .displayOnly):
            return .passkeyEntry(initiatorDisplays: true)
        case (.keyboardDisplay, .displayYesNo), (.keyboardDisplay, .keyboardDisplay):
            return secureConnections ? .numericComparison : .passkeyEntry(initiatorDisplays: true)
        case (.keyboardDisplay, .keyboardOnly):
            return .passkeyEntry(initiatorDisplays: false)
        default:
            return .justWorks
        }
    }
}
