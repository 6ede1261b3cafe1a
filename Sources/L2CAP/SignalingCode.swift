import HCI

/// The code of an LE signaling command (Core Vol 3, Part A, 4). Codes that are valid only
/// on the BR/EDR signaling channel have no name here.
public struct SignalingCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The code byte as on the wire.
    public let rawValue: UInt8
    /// Wraps a code byte from the wire.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// 0x01 L2CAP_COMMAND_REJECT_RSP.
    public static let commandReject = SignalingCode(rawValue: 0x01)
    /// 0x06 L2CAP_DISCONNECTION_REQ.
    public static let disconnectionRequest = SignalingCode(rawValue: 0x06)
    /// 0x07 L2CAP_DISCONNECTION_RSP.
    public static let disconnectionResponse = SignalingCode(rawValue: 0x07)
    /// 0x12 L2CAP_CONNECTION_PARAMETER_UPDATE_REQ (peripheral to central).
    public static let connectionParameterUpdateRequest = SignalingCode(rawValue: 0x12)
    /// 0x13 L2CAP_CONNECTION_PARAMETER_UPDATE_RSP.
    public static let connectionParameterUpdateResponse = SignalingCode(rawValue: 0x13)
    /// 0x14 L2CAP_LE_CREDIT_BASED_CONNECTION_REQ.
    public static let leCreditBasedConnectionRequest = SignalingCode(rawValue: 0x14)
    /// 0x15 L2CAP_LE_CREDIT_BASED_CONNECTION_RSP.
    public static let leCreditBasedConnectionResponse = SignalingCode(rawValue: 0x15)
    /// 0x16 L2CAP_FLOW_CONTROL_CREDIT_IND.
    public static let flowControlCreditIndication = SignalingCode(rawValue: 0x16)

    /// The name in trace spelling (`Connection_Parameter_Update_Req`), or `Unknown`.
    public var name: String {
        switch rawValue {
        case 0x01: "Command_Reject"
        case 0x06: "Disconnection_Req"
        case 0x07: "Disconnection_Rsp"
        case 0x12: "Connection_Parameter_Update_Req"
        case 0x13: "Connection_Parameter_Update_Rsp"
        case 0x14: "LE_Credit_Based_Connection_Req"
        case 0x15: "LE_Credit_Based_Connection_Rsp"
        case 0x16: "Flow_Control_Credit_Ind"
        case 0x17: "Credit_Based_Connection_Req"
        case 0x18: "Credit_Based_Connection_Rsp"
        case 0x19: "Credit_Based_Reconfigure_Req"
        case 0x1A: "Credit_Based_Reconfigure_Rsp"
        default: "Unknown"
        }
    }

    /// `0x12 Connection_Parameter_Update_Req`.
    public var description: String { "\(hex(rawValue, digits: 2)) \(name)" }
}
