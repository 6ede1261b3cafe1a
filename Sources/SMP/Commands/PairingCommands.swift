import BluetoothCore

// The pairing commands (Core Vol 3, Part H, 3.5), in the order of its sections.

/// Pairing Request (0x01, 3.5.1): the initiator's features.
public struct PairingRequest: SMPCommand {
    /// 0x01.
    public static var code: SMPCode { .pairingRequest }
    /// What the initiator can do and asks for.
    public var features: PairingFeatures

    /// A request with `features`.
    public init(features: PairingFeatures) { self.features = features }

    /// The six fields of the pairing features.
    public static let layout: some SMPParameters<Self> = PairingFeatures.layout(
        "Pairing_Request", Self.init(features:), \.features)
    /// `.pairingRequest(self)`.
    public var pdu: SMPPDU { .pairingRequest(self) }
}

/// Pairing Response (0x02, 3.5.2): the responder's features.
public struct PairingResponse: SMPCommand {
    /// 0x02.
    public static var code: SMPCode { .pairingResponse }
    /// What the responder can do and agrees to.
    public var features: PairingFeatures

    /// A response with `features`.
    public init(features: PairingFeatures) { self.features = features }

    /// The six fields of the pairing features.
    public static let layout: some SMPParameters<Self> = PairingFeatures.layout(
        "Pairing_Response", Self.init(features:), \.features)
    /// `.pairingResponse(self)`.
    public var pdu: SMPPDU { .pairingResponse(self) }
}

/// Pairing Confirm (0x03, 3.5.3): a commitment to the nonce sent next.
public struct PairingConfirm: SMPCommand {
    /// 0x03.
    public static var code: SMPCode { .pairingConfirm }
    /// Mconfirm or Sconfirm (legacy pairing, c1), Ca or Cb (Secure Connections, f4).
    public var confirmValue: SecretValue

    /// A confirm with `confirmValue`.
    public init(confirmValue: SecretValue) { self.confirmValue = confirmValue }

    /// Confirm_Value.
    public static let layout = MessageLayout(
        "Pairing_Confirm", Self.init(confirmValue:), Field("Confirm_Value", \.confirmValue))
    /// `.pairingConfirm(self)`.
    public var pdu: SMPPDU { .pairingConfirm(self) }
}

/// Pairing Random (0x04, 3.5.4): the nonce behind the confirm value.
public struct PairingRandom: SMPCommand {
    /// 0x04.
    public static var code: SMPCode { .pairingRandom }
    /// Mrand or Srand (legacy pairing), Na or Nb (Secure Connections).
    public var randomValue: SecretValue

    /// A random with `randomValue`.
    public init(randomValue: SecretValue) { self.randomValue = randomValue }

    /// Random_Value.
    public static let layout = MessageLayout(
        "Pairing_Random", Self.init(randomValue:), Field("Random_Value", \.randomValue))
    /// `.pairingRandom(self)`.
    public var pdu: SMPPDU { .pairingRandom(self) }
}

/// Pairing Failed (0x05, 3.5.5): pairing ends, for a reason.
public struct PairingFailed: SMPCommand {
    /// 0x05.
    public static var code: SMPCode { .pairingFailed }
    /// Why pairing failed.
    public var reason: PairingFailedReason

    /// A failure for `reason`.
    public init(reason: PairingFailedReason) { self.reason = reason }

    /// Reason.
    public static let layout = MessageLayout("Pairing_Failed", Self.init(reason:), Field("Reason", \.reason))
    /// `.pairingFailed(self)`.
    public var pdu: SMPPDU { .pairingFailed(self) }
}

/// Pairing Public Key (0x0C, 3.5.6): a P-256 public key (LE Secure Connections). Public by
/// design, so not secret.
public struct PairingPublicKey: SMPCommand {
    /// 0x0C.
    public static var code: SMPCode { .pairingPublicKey }
    /// The X coordinate, least significant octet first.
    public var x: Octets32
    /// The Y coordinate, least significant octet first.
    public var y: Octets32

    /// The key (`x`, `y`).
    public init(x: Octets32, y: Octets32) { (self.x, self.y) = (x, y) }

    /// Public_Key_X, Public_Key_Y.
    public static let layout = MessageLayout(
        "Pairing_Public_Key", Self.init(x:y:), Field("Public_Key_X", \.x), Field("Public_Key_Y", \.y))
    /// `.pairingPublicKey(self)`.
    public var pdu: SMPPDU { .pairingPublicKey(self) }
}

/// Pairing DHKey Check (0x0D, 3.5.7): proof of the shared key (LE Secure Connections, f6).
public struct PairingDHKeyCheck: SMPCommand {
    /// 0x0D.
    public static var code: SMPCode { .pairingDHKeyCheck }
    /// Ea or Eb.
    public var dhKeyCheck: SecretValue

    /// A check with `dhKeyCheck`.
    public init(dhKeyCheck: SecretValue) { self.dhKeyCheck = dhKeyCheck }

    /// DHKey_Check.
    public static let layout = MessageLayout(
        "Pairing_DHKey_Check", Self.init(dhKeyCheck:), Field("DHKey_Check", \.dhKeyCheck))
    /// `.pairingDHKeyCheck(self)`.
    public var pdu: SMPPDU { .pairingDHKeyCheck(self) }
}

/// Pairing Keypress Notification (0x0E, 3.5.8): the user typed or erased a passkey digit.
public struct PairingKeypressNotification: SMPCommand {
    /// 0x0E.
    public static var code: SMPCode { .pairingKeypressNotification }
    /// Notification_Type: 0 entry started, 1 digit entered, 2 digit erased, 3 cleared,
    /// 4 entry completed (kept as sent, whatever its value).
    public var notificationType: UInt8

    /// A notification of `notificationType`.
    public init(notificationType: UInt8) { self.notificationType = notificationType }

    /// Notification_Type.
    public static let layout = MessageLayout(
        "Pairing_Keypress_Notification", Self.init(notificationType:),
        Field("Notification_Type", \.notificationType))
    /// `.pairingKeypressNotification(self)`.
    public var pdu: SMPPDU { .pairingKeypressNotification(self) }
}
