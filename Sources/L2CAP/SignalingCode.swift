import HCI

/// The code of an LE signaling command (Core Vol 3, Part A, 4). Codes that are valid only
/// on the BR/EDR signaling channel have no name here.
public struct SignalingCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let commandReject = SignalingCode(rawValue: 0x01)
    public static let disconnectionRequest = SignalingCode(rawValue: 0x06)
    public static let disconnectionResponse = SignalingCode(rawValue: 0x07)
    public static let connectionParameterUpdateRequest = SignalingCode(rawValue: 0x12)
    public static let connectionParameterUpdateResponse = SignalingCode(rawValue: 0x13)
    public static let leCreditBasedConnectionRequest = SignalingCode(rawValue: 0x14)
    public static let leCreditBasedConnectionResponse = SignalingCode(rawValue: 0x15)
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

    public var description: String { "\(hex(rawValue, digits: 2)) \(name)" }
}
