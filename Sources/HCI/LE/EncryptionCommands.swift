import BluetoothCore

/// HCI_LE_Enable_Encryption (0x2019): the central starts (or refreshes) encryption of a
/// link with a key the Security Manager chose. Command Status answers; Encryption Change
/// (first time) or Encryption Key Refresh Complete (already encrypted) ends it.
public struct LEEnableEncryption: HCICommand {
    /// OGF 0x08, OCF 0x019.
    public static let opcode = HCIOpcode(rawValue: 0x2019)
    /// Answered by Command Status.
    public static var completion: HCICommandCompletion { .commandStatus }
    /// The connection.
    public var handle: ConnectionHandle
    /// Random_Number: 8 octets in wire order (zero for an STK or a Secure Connections LTK).
    public var random: [UInt8]
    /// Encrypted_Diversifier (zero for an STK or a Secure Connections LTK).
    public var ediv: UInt16
    /// Long_Term_Key: 16 octets in wire order (least significant first).
    public var longTermKey: [UInt8]

    /// Encrypt `handle` with `longTermKey`, identified to the peer by `ediv` and `random`.
    public init(
        handle: ConnectionHandle, random: [UInt8] = [UInt8](repeating: 0, count: 8), ediv: UInt16 = 0,
        longTermKey: [UInt8]
    ) {
        precondition(
            random.count == 8 && longTermKey.count == 16,
            "LE Enable Encryption takes an 8-octet Rand and a 16-octet LTK")
        self.handle = handle
        self.random = random
        self.ediv = ediv
        self.longTermKey = longTermKey
    }

    /// Connection_Handle, Random_Number, Encrypted_Diversifier, Long_Term_Key.
    public static let layout = MessageLayout(
        "LE_Enable_Encryption", Self.init(handle:random:ediv:longTermKey:),
        Field("Connection_Handle", \.handle), .octets("Random_Number", count: 8, \.random),
        Field("Encrypted_Diversifier", \.ediv), .octets("Long_Term_Key", count: 16, \.longTermKey))
}

/// Encryption Key Refresh Complete (0x30): an encrypted link now uses the new key.
public struct EncryptionKeyRefreshComplete: HCIEventParameters {
    /// 0x30 HCI_Encryption_Key_Refresh_Complete.
    public static let code: UInt8 = 0x30
    /// Status: 0x00 if the key was refreshed.
    public var status: HCIStatus
    /// Connection_Handle of the link.
    public var handle: ConnectionHandle
    /// Creates the event from its fields.
    public init(status: HCIStatus, handle: ConnectionHandle) { (self.status, self.handle) = (status, handle) }
    /// Status, Connection_Handle.
    public static let layout = MessageLayout(
        "Encryption_Key_Refresh_Complete", Self.init(status:handle:),
        Field("Status", \.status), Field("Connection_Handle", \.handle))
}

/// LE Long Term Key Request (0x05, 7.7.65.5): as the peripheral, the controller asks for the
/// key the central named (by EDIV and Rand) to encrypt with.
public struct LELongTermKeyRequest: LESubeventParameters {
    /// 0x05.
    public static let subeventCode: UInt8 = 0x05
    /// The connection.
    public var handle: ConnectionHandle
    /// Random_Number: 8 octets in wire order (zero for a Secure Connections LTK).
    public var random: [UInt8]
    /// Encrypted_Diversifier (zero for a Secure Connections LTK).
    public var ediv: UInt16

    /// The subevent from its fields.
    public init(handle: ConnectionHandle, random: [UInt8], ediv: UInt16) {
        (self.handle, self.random, self.ediv) = (handle, random, ediv)
    }

    /// Connection_Handle, Random_Number, Encrypted_Diversifier.
    public static let layout = MessageLayout(
        "LE_Long_Term_Key_Request", Self.init(handle:random:ediv:),
        Field("Connection_Handle", \.handle), .octets("Random_Number", count: 8, \.random),
        Field("Encrypted_Diversifier", \.ediv))
}

/// HCI_LE_Long_Term_Key_Request_Reply (0x201A, 7.8.25): the key for the link the
/// controller asked about; Encryption Change follows.
public struct LELongTermKeyRequestReply: HCICommand {
    /// OGF 0x08, OCF 0x01A.
    public static let opcode = HCIOpcode(rawValue: 0x201A)
    /// The connection handle.
    public typealias ReturnParameters = ConnectionHandleReturn
    /// The connection.
    public var handle: ConnectionHandle
    /// Long_Term_Key: 16 octets in wire order.
    public var longTermKey: [UInt8]

    /// Answers with `longTermKey`.
    public init(handle: ConnectionHandle, longTermKey: [UInt8]) {
        precondition(longTermKey.count == 16, "an LTK has 16 octets")
        self.handle = handle
        self.longTermKey = longTermKey
    }

    /// Connection_Handle, Long_Term_Key.
    public static let layout = MessageLayout(
        "LE_Long_Term_Key_Request_Reply", Self.init(handle:longTermKey:),
        Field("Connection_Handle", \.handle), .octets("Long_Term_Key", count: 16, \.longTermKey))
}

/// HCI_LE_Long_Term_Key_Request_Negative_Reply (0x201B, 7.8.26): no key for that link.
public struct LELongTermKeyRequestNegativeReply: HCICommand {
    /// OGF 0x08, OCF 0x01B.
    public static let opcode = HCIOpcode(rawValue: 0x201B)
    /// The connection handle.
    public typealias ReturnParameters = ConnectionHandleReturn
    /// The connection.
    public var handle: ConnectionHandle

    /// Refuses the request on `handle`.
    public init(handle: ConnectionHandle) { self.handle = handle }

    /// Connection_Handle.
    public static let layout = MessageLayout(
        "LE_Long_Term_Key_Request_Negative_Reply", Self.init(handle:), Field("Connection_Handle", \.handle))
}
