import HCI

/// An ATT opcode (Core Vol 3, Part F, 3.4.8): method bits plus the command flag (0x40)
/// and the authentication-signature flag (0x80), kept whole as on the wire.
public struct ATTOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let errorResponse = ATTOpcode(rawValue: 0x01)
    public static let exchangeMTURequest = ATTOpcode(rawValue: 0x02)
    public static let exchangeMTUResponse = ATTOpcode(rawValue: 0x03)
    public static let findInformationRequest = ATTOpcode(rawValue: 0x04)
    public static let findInformationResponse = ATTOpcode(rawValue: 0x05)
    public static let findByTypeValueRequest = ATTOpcode(rawValue: 0x06)
    public static let findByTypeValueResponse = ATTOpcode(rawValue: 0x07)
    public static let readByTypeRequest = ATTOpcode(rawValue: 0x08)
    public static let readByTypeResponse = ATTOpcode(rawValue: 0x09)
    public static let readRequest = ATTOpcode(rawValue: 0x0A)
    public static let readResponse = ATTOpcode(rawValue: 0x0B)
    public static let readBlobRequest = ATTOpcode(rawValue: 0x0C)
    public static let readBlobResponse = ATTOpcode(rawValue: 0x0D)
    public static let readMultipleRequest = ATTOpcode(rawValue: 0x0E)
    public static let readMultipleResponse = ATTOpcode(rawValue: 0x0F)
    public static let readByGroupTypeRequest = ATTOpcode(rawValue: 0x10)
    public static let readByGroupTypeResponse = ATTOpcode(rawValue: 0x11)
    public static let writeRequest = ATTOpcode(rawValue: 0x12)
    public static let writeResponse = ATTOpcode(rawValue: 0x13)
    public static let prepareWriteRequest = ATTOpcode(rawValue: 0x16)
    public static let prepareWriteResponse = ATTOpcode(rawValue: 0x17)
    public static let executeWriteRequest = ATTOpcode(rawValue: 0x18)
    public static let executeWriteResponse = ATTOpcode(rawValue: 0x19)
    public static let handleValueNotification = ATTOpcode(rawValue: 0x1B)
    public static let handleValueIndication = ATTOpcode(rawValue: 0x1D)
    public static let handleValueConfirmation = ATTOpcode(rawValue: 0x1E)
    public static let readMultipleVariableRequest = ATTOpcode(rawValue: 0x20)
    public static let readMultipleVariableResponse = ATTOpcode(rawValue: 0x21)
    public static let multipleHandleValueNotification = ATTOpcode(rawValue: 0x23)
    public static let writeCommand = ATTOpcode(rawValue: 0x52)
    public static let signedWriteCommand = ATTOpcode(rawValue: 0xD2)

    /// Whether the command flag is set (no response follows).
    public var isCommand: Bool { rawValue & 0x40 != 0 }

    /// The name in trace spelling (`Handle_Value_Notification`), or `Unknown`.
    public var name: String {
        switch rawValue {
        case 0x01: "Error_Rsp"
        case 0x02: "Exchange_MTU_Req"
        case 0x03: "Exchange_MTU_Rsp"
        case 0x04: "Find_Information_Req"
        case 0x05: "Find_Information_Rsp"
        case 0x06: "Find_By_Type_Value_Req"
        case 0x07: "Find_By_Type_Value_Rsp"
        case 0x08: "Read_By_Type_Req"
        case 0x09: "Read_By_Type_Rsp"
        case 0x0A: "Read_Req"
        case 0x0B: "Read_Rsp"
        case 0x0C: "Read_Blob_Req"
        case 0x0D: "Read_Blob_Rsp"
        case 0x0E: "Read_Multiple_Req"
        case 0x0F: "Read_Multiple_Rsp"
        case 0x10: "Read_By_Group_Type_Req"
        case 0x11: "Read_By_Group_Type_Rsp"
        case 0x12: "Write_Req"
        case 0x13: "Write_Rsp"
        case 0x16: "Prepare_Write_Req"
        case 0x17: "Prepare_Write_Rsp"
        case 0x18: "Execute_Write_Req"
        case 0x19: "Execute_Write_Rsp"
        case 0x1B: "Handle_Value_Notification"
        case 0x1D: "Handle_Value_Indication"
        case 0x1E: "Handle_Value_Confirmation"
        case 0x20: "Read_Multiple_Variable_Req"
        case 0x21: "Read_Multiple_Variable_Rsp"
        case 0x23: "Multiple_Handle_Value_Notification"
        case 0x52: "Write_Cmd"
        case 0xD2: "Signed_Write_Cmd"
        default: "Unknown"
        }
    }

    public var description: String { "\(hex(rawValue, digits: 2)) \(name)" }
}
