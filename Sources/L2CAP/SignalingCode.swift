import BluetoothCore
import HCI

/// The code of a signaling command (Core Vol 3, Part A, 4, Table 4.2).
///
/// The two signaling channels share the code space but not the commands: ``name`` is the
/// LE signaling channel's (0x0005), where codes valid only on BR/EDR have no name, and
/// ``bredrName`` the BR/EDR signaling channel's (0x0001), where the LE-only codes have none.
public struct SignalingCode: WireRawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The code byte as on the wire.
    public let rawValue: UInt8
    /// Wraps a code byte from the wire.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// 0x01 L2CAP_COMMAND_REJECT_RSP.
    public static let commandReject = SignalingCode(rawValue: 0x01)
    /// 0x02 L2CAP_CONNECTION_REQ (BR/EDR).
    public static let connectionRequest = SignalingCode(rawValue: 0x02)
    /// 0x03 L2CAP_CONNECTION_RSP (BR/EDR).
    public static let connectionResponse = SignalingCode(rawValue: 0x03)
    /// 0x04 L2CAP_CONFIGURATION_REQ (BR/EDR).
    public static let configurationRequest = SignalingCode(rawValue: 0x04)
    /// 0x05 L2CAP_CONFIGURATION_RSP (BR/EDR).
    public static let configurationResponse = SignalingCode(rawValue: 0x05)
    /// 0x06 L2CAP_DISCONNECTION_REQ.
    public static let disconnectionRequest = SignalingCode(rawValue: 0x06)
    /// 0x07 L2CAP_DISCONNECTION_RSP.
    public static let disconnectionResponse = SignalingCode(rawValue: 0x07)
    /// 0x08 L2CAP_ECHO_REQ (BR/EDR).
    public static let echoRequest = SignalingCode(rawValue: 0x08)
    /// 0x09 L2CAP_ECHO_RSP (BR/EDR).
    public static let echoResponse = SignalingCode(rawValue: 0x09)
    /// 0x0A L2CAP_INFORMATION_REQ (BR/EDR).
    public static let informationRequest = SignalingCode(rawValue: 0x0A)
    /// 0x0B L2CAP_INFORMATION_RSP (BR/EDR).
    public static let informationResponse = SignalingCode(rawValue: 0x0B)
    /// 0x0C L2CAP_CREATE_CHANNEL_REQ (BR/EDR, for AMP controllers).
    public static let createChannelRequest = SignalingCode(rawValue: 0x0C)
    /// 0x0D L2CAP_CREATE_CHANNEL_RSP (BR/EDR, for AMP controllers).
    public static let createChannelResponse = SignalingCode(rawValue: 0x0D)
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
    /// 0x17 L2CAP_CREDIT_BASED_CONNECTION_REQ (LE and BR/EDR: up to five channels at once).
    public static let creditBasedConnectionRequest = SignalingCode(rawValue: 0x17)
    /// 0x18 L2CAP_CREDIT_BASED_CONNECTION_RSP.
    public static let creditBasedConnectionResponse = SignalingCode(rawValue: 0x18)
    /// 0x19 L2CAP_CREDIT_BASED_RECONFIGURE_REQ.
    public static let creditBasedReconfigureRequest = SignalingCode(rawValue: 0x19)
    /// 0x1A L2CAP_CREDIT_BASED_RECONFIGURE_RSP.
    public static let creditBasedReconfigureResponse = SignalingCode(rawValue: 0x1A)

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

    /// The name on the BR/EDR signaling channel in trace spelling (`Connection_Req`), or
    /// `Unknown` for a code Table 4.2 does not allow on ACL-U (the LE-only 0x12–0x15).
    /// Codes 0x0C–0x11 (Create Channel, Move Channel) served AMP controllers, which later
    /// versions of the specification withdrew; they keep their names so older captures read.
    public var bredrName: String {
        switch rawValue {
        case 0x01: "Command_Reject"
        case 0x02: "Connection_Req"
        case 0x03: "Connection_Rsp"
        case 0x04: "Configuration_Req"
        case 0x05: "Configuration_Rsp"
        case 0x06: "Disconnection_Req"
        case 0x07: "Disconnection_Rsp"
        case 0x08: "Echo_Req"
        case 0x09: "Echo_Rsp"
        case 0x0A: "Information_Req"
        case 0x0B: "Information_Rsp"
        case 0x0C: "Create_Channel_Req"
        case 0x0D: "Create_Channel_Rsp"
        case 0x0E: "Move_Channel_Req"
        case 0x0F: "Move_Channel_Rsp"
        case 0x10: "Move_Channel_Confirmation_Req"
        case 0x11: "Move_Channel_Confirmation_Rsp"
        case 0x16: "Flow_Control_Credit_Ind"
        case 0x17: "Credit_Based_Connection_Req"
        case 0x18: "Credit_Based_Connection_Rsp"
        case 0x19: "Credit_Based_Reconfigure_Req"
        case 0x1A: "Credit_Based_Reconfigure_Rsp"
        default: "Unknown"
        }
    }

    /// `0x02 Connection_Req`: the code as the BR/EDR signaling channel names it.
    public var bredrDescription: String { "\(hex(rawValue, digits: 2)) \(bredrName)" }
}

/// The signaling channels a command may travel on (Core Vol 3, Part A, Table 4.2): the
/// BR/EDR one, the LE one, or both.
public struct SignalingChannels: OptionSet, Sendable {
    /// One bit a channel.
    public let rawValue: UInt8
    /// The channels whose bits `rawValue` sets.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The BR/EDR signaling channel (CID 0x0001, on ACL-U).
    public static let bredr = SignalingChannels(rawValue: 1 << 0)
    /// The LE signaling channel (CID 0x0005, on LE-U).
    public static let le = SignalingChannels(rawValue: 1 << 1)
}
