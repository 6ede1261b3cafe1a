import BluetoothCore
import HCI

/// An ATT opcode (Core Vol 3, Part F, 3.4.8): method bits plus the command flag (0x40)
/// and the authentication-signature flag (0x80), kept whole as on the wire.
public struct ATTOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The opcode byte as on the wire, flag bits included.
    public let rawValue: UInt8
    /// Wraps an opcode byte from the wire.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// 0x01 ATT_ERROR_RSP: a request failed; carries its opcode, the handle and an error code.
    public static let errorResponse = ATTOpcode(rawValue: 0x01)
    /// 0x02 ATT_EXCHANGE_MTU_REQ: the client's receive MTU.
    public static let exchangeMTURequest = ATTOpcode(rawValue: 0x02)
    /// 0x03 ATT_EXCHANGE_MTU_RSP: the server's receive MTU.
    public static let exchangeMTUResponse = ATTOpcode(rawValue: 0x03)
    /// 0x04 ATT_FIND_INFORMATION_REQ: handles and types of the attributes in a handle range.
    public static let findInformationRequest = ATTOpcode(rawValue: 0x04)
    /// 0x05 ATT_FIND_INFORMATION_RSP.
    public static let findInformationResponse = ATTOpcode(rawValue: 0x05)
    /// 0x06 ATT_FIND_BY_TYPE_VALUE_REQ: handles of attributes with a given 16-bit type and value.
    public static let findByTypeValueRequest = ATTOpcode(rawValue: 0x06)
    /// 0x07 ATT_FIND_BY_TYPE_VALUE_RSP.
    public static let findByTypeValueResponse = ATTOpcode(rawValue: 0x07)
    /// 0x08 ATT_READ_BY_TYPE_REQ: values of the attributes of one type in a handle range.
    public static let readByTypeRequest = ATTOpcode(rawValue: 0x08)
    /// 0x09 ATT_READ_BY_TYPE_RSP.
    public static let readByTypeResponse = ATTOpcode(rawValue: 0x09)
    /// 0x0A ATT_READ_REQ: the value of one attribute.
    public static let readRequest = ATTOpcode(rawValue: 0x0A)
    /// 0x0B ATT_READ_RSP.
    public static let readResponse = ATTOpcode(rawValue: 0x0B)
    /// 0x0C ATT_READ_BLOB_REQ: part of a long value, from an offset.
    public static let readBlobRequest = ATTOpcode(rawValue: 0x0C)
    /// 0x0D ATT_READ_BLOB_RSP.
    public static let readBlobResponse = ATTOpcode(rawValue: 0x0D)
    /// 0x0E ATT_READ_MULTIPLE_REQ: the values of several fixed-length attributes.
    public static let readMultipleRequest = ATTOpcode(rawValue: 0x0E)
    /// 0x0F ATT_READ_MULTIPLE_RSP.
    public static let readMultipleResponse = ATTOpcode(rawValue: 0x0F)
    /// 0x10 ATT_READ_BY_GROUP_TYPE_REQ: grouping attributes (services) in a handle range.
    public static let readByGroupTypeRequest = ATTOpcode(rawValue: 0x10)
    /// 0x11 ATT_READ_BY_GROUP_TYPE_RSP.
    public static let readByGroupTypeResponse = ATTOpcode(rawValue: 0x11)
    /// 0x12 ATT_WRITE_REQ: a write the server acknowledges.
    public static let writeRequest = ATTOpcode(rawValue: 0x12)
    /// 0x13 ATT_WRITE_RSP.
    public static let writeResponse = ATTOpcode(rawValue: 0x13)
    /// 0x16 ATT_PREPARE_WRITE_REQ: queues part of a long or reliable write.
    public static let prepareWriteRequest = ATTOpcode(rawValue: 0x16)
    /// 0x17 ATT_PREPARE_WRITE_RSP: echoes the queued part.
    public static let prepareWriteResponse = ATTOpcode(rawValue: 0x17)
    /// 0x18 ATT_EXECUTE_WRITE_REQ: writes (0x01) or cancels (0x00) the queued parts.
    public static let executeWriteRequest = ATTOpcode(rawValue: 0x18)
    /// 0x19 ATT_EXECUTE_WRITE_RSP.
    public static let executeWriteResponse = ATTOpcode(rawValue: 0x19)
    /// 0x1B ATT_HANDLE_VALUE_NTF: a server-initiated value, not acknowledged.
    public static let handleValueNotification = ATTOpcode(rawValue: 0x1B)
    /// 0x1D ATT_HANDLE_VALUE_IND: a server-initiated value the client must confirm.
    public static let handleValueIndication = ATTOpcode(rawValue: 0x1D)
    /// 0x1E ATT_HANDLE_VALUE_CFM: confirms an indication.
    public static let handleValueConfirmation = ATTOpcode(rawValue: 0x1E)
    /// 0x20 ATT_READ_MULTIPLE_VARIABLE_REQ: several values, each length-prefixed in the response.
    public static let readMultipleVariableRequest = ATTOpcode(rawValue: 0x20)
    /// 0x21 ATT_READ_MULTIPLE_VARIABLE_RSP.
    public static let readMultipleVariableResponse = ATTOpcode(rawValue: 0x21)
    /// 0x23 ATT_MULTIPLE_HANDLE_VALUE_NTF: several notifications in one PDU.
    public static let multipleHandleValueNotification = ATTOpcode(rawValue: 0x23)
    /// 0x52 ATT_WRITE_CMD: a write with no response.
    public static let writeCommand = ATTOpcode(rawValue: 0x52)
    /// 0xD2 ATT_SIGNED_WRITE_CMD: a write command with a 12-octet authentication signature.
    public static let signedWriteCommand = ATTOpcode(rawValue: 0xD2)

    /// Whether the command flag is set (no response follows).
    public var isCommand: Bool { rawValue & 0x40 != 0 }
}
