import BluetoothCore

// The key distribution commands and the Security Request (Core Vol 3, Part H, 3.6), in
// the order of its sections.

/// Encryption Information (0x06, 3.6.2): the LTK (LE legacy pairing).
public struct EncryptionInformation: SMPCommand {
    /// 0x06.
    public static var code: SMPCode { .encryptionInformation }
    /// The Long Term Key.
    public var longTermKey: SecretValue

    /// The information carrying `longTermKey`.
    public init(longTermKey: SecretValue) { self.longTermKey = longTermKey }

    /// Long_Term_Key.
    public static let layout = MessageLayout(
        "Encryption_Information", Self.init(longTermKey:), Field("Long_Term_Key", \.longTermKey))
    /// `.encryptionInformation(self)`.
    public var pdu: SMPPDU { .encryptionInformation(self) }
}

/// Central Identification (0x07, 3.6.3): the EDIV and Rand that name the LTK. Not secret:
/// they travel unencrypted in every LL_ENC_REQ that uses the key.
public struct CentralIdentification: SMPCommand {
    /// 0x07.
    public static var code: SMPCode { .centralIdentification }
    /// The Encrypted Diversifier.
    public var ediv: UInt16
    /// The random number.
    public var random: Octets8

    /// The identification (`ediv`, `random`).
    public init(ediv: UInt16, random: Octets8) { (self.ediv, self.random) = (ediv, random) }

    /// EDIV, Rand.
    public static let layout = MessageLayout(
        "Central_Identification", Self.init(ediv:random:), Field("EDIV", \.ediv), Field("Rand", \.random))
    /// `.centralIdentification(self)`.
    public var pdu: SMPPDU { .centralIdentification(self) }
}

/// Identity Information (0x08, 3.6.4): the IRK.
public struct IdentityInformation: SMPCommand {
    /// 0x08.
    public static var code: SMPCode { .identityInformation }
    /// The Identity Resolving Key.
    public var identityResolvingKey: SecretValue

    /// The information carrying `identityResolvingKey`.
    public init(identityResolvingKey: SecretValue) { self.identityResolvingKey = identityResolvingKey }

    /// Identity_Resolving_Key.
    public static let layout = MessageLayout(
        "Identity_Information", Self.init(identityResolvingKey:),
        Field("Identity_Resolving_Key", \.identityResolvingKey))
    /// `.identityInformation(self)`.
    public var pdu: SMPPDU { .identityInformation(self) }
}

/// Identity Address Information (0x09, 3.6.5): a public or static random identity address.
public struct IdentityAddressInformation: SMPCommand {
    /// 0x09.
    public static var code: SMPCode { .identityAddressInformation }
    /// AddrType: 0x00 public, 0x01 static random; other values are refused.
    public var addressType: UInt8
    /// The identity address.
    public var address: BluetoothAddress

    /// The information (`addressType`, `address`).
    public init(addressType: UInt8, address: BluetoothAddress) {
        (self.addressType, self.address) = (addressType, address)
    }

    /// AddrType, BD_ADDR.
    public static let layout = MessageLayout(
        "Identity_Address_Information", Self.init(addressType:address:),
        Field.octet("AddrType", in: 0...1, \.addressType), Field("BD_ADDR", \.address))
    /// `.identityAddressInformation(self)`.
    public var pdu: SMPPDU { .identityAddressInformation(self) }
}

/// Signing Information (0x0A, 3.6.6): the CSRK.
public struct SigningInformation: SMPCommand {
    /// 0x0A.
    public static var code: SMPCode { .signingInformation }
    /// The Connection Signature Resolving Key.
    public var signatureKey: SecretValue

    /// The information carrying `signatureKey`.
    public init(signatureKey: SecretValue) { self.signatureKey = signatureKey }

    /// Signature_Key.
    public static let layout = MessageLayout(
        "Signing_Information", Self.init(signatureKey:), Field("Signature_Key", \.signatureKey))
    /// `.signingInformation(self)`.
    public var pdu: SMPPDU { .signingInformation(self) }
}

/// Security Request (0x0B, 3.6.7): the peripheral asks the central to pair or encrypt.
public struct SecurityRequest: SMPCommand {
    /// 0x0B.
    public static var code: SMPCode { .securityRequest }
    /// The security the peripheral asks for.
    public var authentication: AuthenticationRequirements

    /// A request for `authentication`.
    public init(authentication: AuthenticationRequirements) { self.authentication = authentication }

    /// AuthReq.
    public static let layout = MessageLayout(
        "Security_Request", Self.init(authentication:), Field("AuthReq", \.authentication))
    /// `.securityRequest(self)`.
    public var pdu: SMPPDU { .securityRequest(self) }
}
