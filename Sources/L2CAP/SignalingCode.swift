import BluetoothCore
import HCI

/// The code of a signaling command (Core Vol 3, Part A, 4, Table 4.2).
///
/// The two signaling channels share the code space but not the commands: ``name`` is the
/// LE signaling channel's (0x0005), where codes valid only on BR/EDR have no name, and
/// ``bredrName`` the BR/EDR signaling channel's (0x0001), where the LE-only codes have none.
/// Both come from the commands' declarations (``SignalingPDU``), which say their channels.
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

    /// The command this code introduces (Core Vol 3, Part A, 4.1–4.28), whichever
    /// signaling channel carries it, or nil for a code no declaration has: how a reader
    /// meeting any code (the trace printer, the fuzz targets) finds the decoder.
    public var pduType: (any SignalingPDU.Type)? { Self.pduTypes[rawValue] }

    /// The name on the LE signaling channel (0x0005) in trace spelling
    /// (`Connection_Parameter_Update_Req`), from its declaration, or `Unknown` for a code
    /// that channel does not carry.
    public var name: String { pduType(on: .le)?.name ?? "Unknown" }

    /// `0x12 Connection_Parameter_Update_Req`.
    public var description: String { "\(hex(rawValue, digits: 2)) \(name)" }

    /// The name on the BR/EDR signaling channel (0x0001) in trace spelling
    /// (`Connection_Req`), from its declaration, or `Unknown` for a code Table 4.2 does not
    /// allow on ACL-U (the LE-only 0x12–0x15).
    public var bredrName: String { pduType(on: .bredr)?.name ?? Self.moveChannelNames[rawValue] ?? "Unknown" }

    /// `0x02 Connection_Req`: the code as the BR/EDR signaling channel names it.
    public var bredrDescription: String { "\(hex(rawValue, digits: 2)) \(bredrName)" }

    /// The declaration of this code's command when `channel` carries it.
    private func pduType(on channel: SignalingChannels) -> (any SignalingPDU.Type)? {
        pduType.flatMap { $0.channels.contains(channel) ? $0 : nil }
    }

    /// Every declared command, by code.
    private static let pduTypes: [UInt8: any SignalingPDU.Type] = {
        let types: [any SignalingPDU.Type] = [
            CommandReject.self, ConnectionRequest.self, ConnectionResponse.self, ConfigurationRequest.self,
            ConfigurationResponse.self, DisconnectionRequest.self, DisconnectionResponse.self, EchoRequest.self,
            EchoResponse.self, InformationRequest.self, InformationResponse.self, CreateChannelRequest.self,
            CreateChannelResponse.self, ConnectionParameterUpdateRequest.self, ConnectionParameterUpdateResponse.self,
            LECreditBasedConnectionRequest.self, LECreditBasedConnectionResponse.self, FlowControlCreditIndication.self,
            CreditBasedConnectionRequest.self, CreditBasedConnectionResponse.self, CreditBasedReconfigureRequest.self,
            CreditBasedReconfigureResponse.self,
        ]
        return Dictionary(uniqueKeysWithValues: types.map { ($0.code.rawValue, $0) })
    }()

    /// Codes 0x0E–0x11 moved channels between AMP controllers, which later versions of the
    /// specification withdrew with AMP itself. Nothing here decodes them (Create Channel,
    /// 0x0C–0x0D, is still read as a Connection Request's sibling); their names stay so older
    /// captures read.
    private static let moveChannelNames: [UInt8: String] = [
        0x0E: "Move_Channel_Req", 0x0F: "Move_Channel_Rsp", 0x10: "Move_Channel_Confirmation_Req",
        0x11: "Move_Channel_Confirmation_Rsp",
    ]
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
