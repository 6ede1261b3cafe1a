import BluetoothCore
import HCI

// The commands about the link and the L2CAP entity at its other end rather than one
// channel (Core Vol 3, Part A, 4.1, 4.8–4.11, 4.20, 4.21): rejecting a command, echo,
// information, and the LE connection parameter update a peripheral asks for.

/// L2CAP_COMMAND_REJECT_RSP (0x01, 4.1): a command was not understood, exceeded the
/// signaling MTU, or named a CID that does not exist.
public struct CommandReject: SignalingPDU {
    /// 0x01.
    public static var code: SignalingCode { .commandReject }
    /// Both signaling channels.
    public static var channels: SignalingChannels { [.bredr, .le] }
    /// Why the command was rejected.
    public var reason: CommandRejectReason
    /// What the reason adds (Table 4.4): nothing, ``SignalingMTUExceeded`` or
    /// ``InvalidCID`` (``reasonData(_:)`` reads them).
    public var data: ArraySlice<UInt8>

    /// A reject for `reason`, with its `data`.
    public init(reason: CommandRejectReason, data: ArraySlice<UInt8> = []) { (self.reason, self.data) = (reason, data) }

    /// Reason, Data (the rest of the command).
    public static let layout = MessageLayout(
        "Command_Reject", Self.init(reason:data:), Field("Reason", \.reason), .rest("Data", \.data))

    /// The data of a reject for ``CommandRejectReason/signalingMTUExceeded``.
    public struct SignalingMTUExceeded: LaidOut, Equatable {
        /// The largest C-frame the rejecting side accepts.
        public var actualMTU: UInt16

        /// The data announcing `actualMTU`.
        public init(actualMTU: UInt16) { self.actualMTU = actualMTU }

        /// Actual_MTUsig.
        public static let layout = MessageLayout(
            "Signaling_MTU_Exceeded", Self.init(actualMTU:), Field("Actual_MTUsig", \.actualMTU))
    }

    /// The data of a reject for ``CommandRejectReason/invalidCID``: the channel as the
    /// rejecting side sees it.
    public struct InvalidCID: LaidOut, Equatable {
        /// The rejecting side's end: the rejected command's Destination CID.
        public var localCID: UInt16
        /// The other side's end: the rejected command's Source CID.
        public var remoteCID: UInt16

        /// The data naming `localCID` and `remoteCID`.
        public init(localCID: UInt16, remoteCID: UInt16) { (self.localCID, self.remoteCID) = (localCID, remoteCID) }

        /// Local_Endpoint, Remote_Endpoint.
        public static let layout = MessageLayout(
            "Invalid_CID_In_Request", Self.init(localCID:remoteCID:),
            Field("Local_Endpoint", \.localCID), Field("Remote_Endpoint", \.remoteCID))
    }

    /// Reads ``data`` as the reason's data (``SignalingMTUExceeded`` or
    /// ``InvalidCID``); octets after it are ignored.
    public func reasonData<ReasonData: LaidOut>(_: ReasonData.Type) throws(DecodingError) -> ReasonData {
        var reader = ByteReader(data)
        return try ReasonData(from: &reader)
    }
}

/// The Reason of a Command Reject (Core Vol 3, Part A, 4.1, Table 4.3).
public struct CommandRejectReason: WireRawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The reason as on the wire.
    public let rawValue: UInt16
    /// Wraps a reason from the wire.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// 0x0000 Command not understood.
    public static let commandNotUnderstood = CommandRejectReason(rawValue: 0x0000)
    /// 0x0001 Signaling MTU exceeded.
    public static let signalingMTUExceeded = CommandRejectReason(rawValue: 0x0001)
    /// 0x0002 Invalid CID in request.
    public static let invalidCID = CommandRejectReason(rawValue: 0x0002)

    /// The data of a Command Reject giving this reason and no reason data: what the host
    /// answers a command it does not understand with.
    public var data: [UInt8] { CommandReject(reason: self).encoded() }

    /// The specification's wording in lower case, or nil for a value it does not define.
    public var name: String? {
        switch rawValue {
        case 0x0000: "command not understood"
        case 0x0001: "signaling MTU exceeded"
        case 0x0002: "invalid CID in request"
        default: nil
        }
    }

    /// `0x0002 invalid CID in request`.
    public var description: String { hex(rawValue, digits: 4) + (name.map { " \($0)" } ?? "") }
}

/// L2CAP_ECHO_REQ (0x08, 4.8): asks the other side's L2CAP to answer, with data of the
/// sender's choosing.
public struct EchoRequest: SignalingPDU {
    /// 0x08.
    public static var code: SignalingCode { .echoRequest }
    /// BR/EDR only.
    public static var channels: SignalingChannels { .bredr }
    /// Optional, implementation-specific data.
    public var data: ArraySlice<UInt8>

    /// A request carrying `data`.
    public init(data: ArraySlice<UInt8> = []) { self.data = data }

    /// Data (the whole command's data).
    public static let layout = MessageLayout("Echo_Req", Self.init(data:), .rest("Data", \.data))
}

/// L2CAP_ECHO_RSP (0x09, 4.9): the answer to an Echo Request, with the request's data,
/// other data or none.
public struct EchoResponse: SignalingPDU {
    /// 0x09.
    public static var code: SignalingCode { .echoResponse }
    /// BR/EDR only.
    public static var channels: SignalingChannels { .bredr }
    /// Optional, implementation-specific data.
    public var data: ArraySlice<UInt8>

    /// A response carrying `data`.
    public init(data: ArraySlice<UInt8> = []) { self.data = data }

    /// Data (the whole command's data).
    public static let layout = MessageLayout("Echo_Rsp", Self.init(data:), .rest("Data", \.data))
}

/// L2CAP_INFORMATION_REQ (0x0A, 4.10): asks for one piece of information about the other
/// side's L2CAP.
public struct InformationRequest: SignalingPDU {
    /// 0x0A.
    public static var code: SignalingCode { .informationRequest }
    /// BR/EDR only.
    public static var channels: SignalingChannels { .bredr }
    /// What is asked for: 0x0001 connectionless MTU, 0x0002 extended features mask, 0x0003
    /// fixed channels supported.
    public var infoType: UInt16

    /// A request for `infoType`.
    public init(infoType: UInt16) { self.infoType = infoType }

    /// InfoType.
    public static let layout = MessageLayout("Information_Req", Self.init(infoType:), Field("InfoType", \.infoType))
}

/// L2CAP_INFORMATION_RSP (0x0B, 4.11): the information asked for, or that it is not
/// supported.
public struct InformationResponse: SignalingPDU {
    /// 0x0B.
    public static var code: SignalingCode { .informationResponse }
    /// BR/EDR only.
    public static var channels: SignalingChannels { .bredr }
    /// The request's InfoType, echoed.
    public var infoType: UInt16
    /// 0x0000 success, 0x0001 not supported.
    public var result: UInt16
    /// The information, as InfoType says (an MTU, a features mask, a channels mask).
    public var data: ArraySlice<UInt8>

    /// A response about `infoType`.
    public init(infoType: UInt16, result: UInt16, data: ArraySlice<UInt8> = []) {
        (self.infoType, self.result, self.data) = (infoType, result, data)
    }

    /// InfoType, Result, Data (the rest of the command).
    public static let layout = MessageLayout(
        "Information_Rsp", Self.init(infoType:result:data:),
        Field("InfoType", \.infoType), Field("Result", \.result), .rest("Data", \.data))
}

/// L2CAP_CONNECTION_PARAMETER_UPDATE_REQ (0x12, 4.20): the peripheral asks the central for
/// new connection parameters.
public struct ConnectionParameterUpdateRequest: SignalingPDU {
    /// 0x12.
    public static var code: SignalingCode { .connectionParameterUpdateRequest }
    /// LE only.
    public static var channels: SignalingChannels { .le }
    /// The parameters asked for (interval in 1.25 ms units, timeout in 10 ms units).
    public var parameters: LEConnectionRequest

    /// A request for `parameters`.
    public init(parameters: LEConnectionRequest) { self.parameters = parameters }

    /// Interval_Min, Interval_Max, Latency, Timeout: the fields of ``parameters``.
    public static let layout = MessageLayout(
        "Connection_Parameter_Update_Req",
        {
            Self(parameters: LEConnectionRequest(intervalMin: $0, intervalMax: $1, latency: $2, supervisionTimeout: $3))
        },
        Field("Interval_Min", \.parameters.intervalMin), Field("Interval_Max", \.parameters.intervalMax),
        Field("Latency", \.parameters.latency), Field("Timeout", \.parameters.supervisionTimeout))
}

/// L2CAP_CONNECTION_PARAMETER_UPDATE_RSP (0x13, 4.21): the central accepts (0x0000) or
/// rejects (0x0001) the request; another Result is an error.
public struct ConnectionParameterUpdateResponse: SignalingPDU {
    /// 0x13.
    public static var code: SignalingCode { .connectionParameterUpdateResponse }
    /// LE only.
    public static var channels: SignalingChannels { .le }
    /// Whether the central accepted the request.
    public var accepted: Bool

    /// A response.
    public init(accepted: Bool) { self.accepted = accepted }

    /// Result: 0x0000 accepted, 0x0001 rejected.
    public static let layout = MessageLayout(
        "Connection_Parameter_Update_Rsp", Self.init(accepted:),
        Field(
            "Result",
            read: { reader throws(DecodingError) in
                let result = try reader.readUInt16()
                guard result <= 1 else { throw .invalidValue(field: "Result", value: UInt64(result)) }
                return result == 0
            }, write: { response, writer in writer.write(UInt16(response.accepted ? 0 : 1)) }))
}
