import BluetoothCore
import HCI

/// A device's input and output capabilities (Core Vol 3, Part H, 2.3.2, Table 3.4).
public enum IOCapability: UInt8, SMPField, CaseIterable, CustomStringConvertible {
    /// Can show a 6-digit number, cannot answer.
    case displayOnly = 0x00
    /// Can show a number and answer yes or no.
    case displayYesNo = 0x01
    /// Can enter digits, cannot show any.
    case keyboardOnly = 0x02
    /// Neither: pairing is Just Works.
    case noInputNoOutput = 0x03
    /// Both a keyboard and a display.
    case keyboardDisplay = 0x04

    /// The spelling the CLI uses: `display`, `display-yesno`, `keyboard`, `none`, `keyboard-display`.
    public var description: String {
        switch self {
        case .displayOnly: "display"
        case .displayYesNo: "display-yesno"
        case .keyboardOnly: "keyboard"
        case .noInputNoOutput: "none"
        case .keyboardDisplay: "keyboard-display"
        }
    }

    /// Parses the CLI spelling.
    public init?(_ text: String) {
        guard let found = Self.allCases.first(where: { $0.description == text }) else { return nil }
        self = found
    }

    /// One octet.
    public static var length: Int { 1 }
}

/// The AuthReq field (Core Vol 3, Part H, 3.5.1, Figure 3.3).
public struct AuthenticationRequirements: OptionSet, OneOctetField, Hashable {
    /// The byte as on the wire.
    public let rawValue: UInt8
    /// Wraps a byte from the wire.
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// Bonding_Flags 01: keys are to be stored.
    public static let bonding = Self(rawValue: 0x01)
    /// MITM protection is asked for.
    public static let mitm = Self(rawValue: 0x04)
    /// LE Secure Connections is supported and asked for.
    public static let secureConnections = Self(rawValue: 0x08)
    /// Keypress notifications are supported.
    public static let keypress = Self(rawValue: 0x10)
    /// Cross-transport key derivation (CT2) is supported.
    public static let ct2 = Self(rawValue: 0x20)
}

/// Which keys a side distributes after pairing (Core Vol 3, Part H, 3.6.1).
public struct KeyDistribution: OptionSet, OneOctetField, Hashable {
    /// The byte as on the wire.
    public let rawValue: UInt8
    /// Wraps a byte from the wire.
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// EncKey: LTK, EDIV and Rand (legacy pairing only).
    public static let encryptionKey = Self(rawValue: 0x01)
    /// IdKey: IRK and identity address.
    public static let identityKey = Self(rawValue: 0x02)
    /// SignKey: CSRK.
    public static let signingKey = Self(rawValue: 0x04)
    /// LinkKey: derive a BR/EDR link key.
    public static let linkKey = Self(rawValue: 0x08)
}

/// What a Pairing Request or Pairing Response says (Core Vol 3, Part H, 3.5.1 and 3.5.2).
public struct PairingFeatures: Sendable, Hashable {
    /// IO_Capability.
    public var ioCapability: IOCapability
    /// OOB_Data_Flag as sent: 0x00 not present, 0x01 present. Values 0x02–0xFF are reserved
    /// for future use; one is read as "not present" but kept, because the confirm (c1) and
    /// check (f6) values cover the octet the peer sent, not our reading of it.
    public var oobDataFlag: UInt8
    /// Whether OOB authentication data from the peer is present (OOB_Data_Flag 0x01).
    public var oobDataPresent: Bool {
        get { oobDataFlag == 0x01 }
        set { oobDataFlag = newValue ? 0x01 : 0x00 }
    }
    /// AuthReq.
    public var authentication: AuthenticationRequirements
    /// Maximum_Encryption_Key_Size: 7 to 16 octets.
    public var maximumKeySize: UInt8
    /// Initiator_Key_Distribution.
    public var initiatorKeys: KeyDistribution
    /// Responder_Key_Distribution.
    public var responderKeys: KeyDistribution

    /// Features as given.
    public init(
        ioCapability: IOCapability, oobDataPresent: Bool = false, authentication: AuthenticationRequirements,
        maximumKeySize: UInt8 = 16, initiatorKeys: KeyDistribution, responderKeys: KeyDistribution
    ) {
        self.ioCapability = ioCapability
        oobDataFlag = oobDataPresent ? 0x01 : 0x00
        self.authentication = authentication
        self.maximumKeySize = maximumKeySize
        self.initiatorKeys = initiatorKeys
        self.responderKeys = responderKeys
    }

    /// Features as received: the OOB_Data_Flag octet as sent, reserved values included.
    init(
        ioCapability: IOCapability, oobDataFlag: UInt8, authentication: AuthenticationRequirements,
        maximumKeySize: UInt8, initiatorKeys: KeyDistribution, responderKeys: KeyDistribution
    ) {
        self.init(
            ioCapability: ioCapability, authentication: authentication, maximumKeySize: maximumKeySize,
            initiatorKeys: initiatorKeys, responderKeys: responderKeys)
        self.oobDataFlag = oobDataFlag
    }

    /// The layout of command `name`, whose parameters are pairing features: Pairing Request
    /// and Pairing Response list the same six fields (3.5.1 and 3.5.2), so they are declared
    /// here once. An IO capability Part H does not define, or a key size outside 7...16, is
    /// refused by the field's name.
    static func layout<Command>(
        _ name: String, _ make: @escaping @Sendable (PairingFeatures) -> Command,
        _ features: @escaping @Sendable (Command) -> PairingFeatures
    ) -> some SMPParameters<Command> {
        MessageLayout(
            name,
            {
                make(
                    PairingFeatures(
                        ioCapability: $0, oobDataFlag: $1, authentication: $2,
                        maximumKeySize: $3, initiatorKeys: $4, responderKeys: $5))
            },
            Field.code("IO_Capability", { features($0).ioCapability }),
            Field("OOB_Data_Flag", { features($0).oobDataFlag }),
            Field("AuthReq", { features($0).authentication }),
            Field.octet("Maximum_Encryption_Key_Size", in: 7...16, { features($0).maximumKeySize }),
            Field("Initiator_Key_Distribution", { features($0).initiatorKeys }),
            Field("Responder_Key_Distribution", { features($0).responderKeys }))
    }

    /// IOcap for f6: AuthReq, OOB flag, IO capability (most significant first).
    var ioCap: [UInt8] { [authentication.rawValue, oobDataFlag, ioCapability.rawValue] }
}
