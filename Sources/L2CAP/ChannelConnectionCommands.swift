import BluetoothCore
import HCI

// Opening and closing a BR/EDR connection-oriented channel (Core Vol 3, Part A, 4.2, 4.3,
// 4.6, 4.7, 4.14, 4.15). Each side names the channel by the CID it allocated itself and
// receives on: a request carries the requester's (Source CID), the response adds the
// responder's (Destination CID).
//
// Decoded under the tolerance rule (``SignalingPDU/decodeCountingExtraOctets(_:)``), octets a
// later version may append are accepted and counted; encoders write exactly the fields.

/// L2CAP_CONNECTION_REQ (0x02, 4.2): open a channel to `psm`.
public struct ConnectionRequest: SignalingPDU {
    /// 0x02.
    public static var code: SignalingCode { .connectionRequest }
    /// BR/EDR only.
    public static var channels: SignalingChannels { .bredr }
    /// The protocol or service asked for.
    public var psm: PSM
    /// The CID the requester allocated: frames to the requester carry it.
    public var sourceCID: UInt16

    /// A request for a channel to `psm`, the requester receiving on `sourceCID`.
    public init(psm: PSM, sourceCID: UInt16) { (self.psm, self.sourceCID) = (psm, sourceCID) }

    /// PSM, Source_CID.
    public static let layout = MessageLayout(
        "Connection_Req", Self.init(psm:sourceCID:),
        Field("PSM", \.psm), Field("Source_CID", \.sourceCID))
}

/// L2CAP_CONNECTION_RSP (0x03, 4.3): the answer to a request. Only
/// ``ConnectionResult/success`` opens the channel; ``ConnectionResult/pending`` promises
/// another response with the same identifier.
public struct ConnectionResponse: SignalingPDU {
    /// 0x03.
    public static var code: SignalingCode { .connectionResponse }
    /// BR/EDR only.
    public static var channels: SignalingChannels { .bredr }
    /// The CID the responder allocated (frames to the responder carry it); 0x0000 when refused.
    public var destinationCID: UInt16
    /// The requester's CID, echoed.
    public var sourceCID: UInt16
    /// The outcome.
    public var result: ConnectionResult
    /// Why a response is pending (meaningful only with ``ConnectionResult/pending``).
    public var status: ConnectionStatus

    /// A response to the request from `sourceCID`, with `result`.
    public init(
        destinationCID: UInt16, sourceCID: UInt16, result: ConnectionResult,
        status: ConnectionStatus = .noFurtherInformation
    ) {
        (self.destinationCID, self.sourceCID, self.result, self.status) = (destinationCID, sourceCID, result, status)
    }

    /// Destination_CID, Source_CID, Result, Status.
    public static let layout = MessageLayout(
        "Connection_Rsp", Self.init(destinationCID:sourceCID:result:status:),
        Field("Destination_CID", \.destinationCID), Field("Source_CID", \.sourceCID),
        Field("Result", \.result), Field("Status", \.status))
}

/// L2CAP_CREATE_CHANNEL_REQ (0x0C, 4.14): a Connection Request naming the AMP controller
/// the channel is to use (AMP, since withdrawn from the specification; read for old
/// captures).
public struct CreateChannelRequest: SignalingPDU {
    /// 0x0C.
    public static var code: SignalingCode { .createChannelRequest }
    /// BR/EDR only.
    public static var channels: SignalingChannels { .bredr }
    /// The request's PSM and Source CID, as a Connection Request has them.
    public var request: ConnectionRequest
    /// The controller to use (0x00 for BR/EDR).
    public var controllerID: UInt8

    /// A request for `request`'s channel on controller `controllerID`.
    public init(_ request: ConnectionRequest, controllerID: UInt8) {
        (self.request, self.controllerID) = (request, controllerID)
    }

    /// PSM, Source_CID (a Connection Request's), Controller_ID.
    public static let layout = MessageLayout(
        "Create_Channel_Req", { Self(ConnectionRequest(psm: $0, sourceCID: $1), controllerID: $2) },
        Field("PSM", \.request.psm), Field("Source_CID", \.request.sourceCID),
        Field("Controller_ID", \.controllerID))
}

/// L2CAP_CREATE_CHANNEL_RSP (0x0D, 4.15): the answer to a Create Channel Request, in a
/// Connection Response's fields.
public struct CreateChannelResponse: SignalingPDU {
    /// 0x0D.
    public static var code: SignalingCode { .createChannelResponse }
    /// BR/EDR only.
    public static var channels: SignalingChannels { .bredr }
    /// The fields, as a Connection Response has them.
    public var response: ConnectionResponse

    /// A response with `response`'s fields.
    public init(_ response: ConnectionResponse) { self.response = response }

    /// Destination_CID, Source_CID, Result, Status: a Connection Response's.
    public static let layout = MessageLayout(
        "Create_Channel_Rsp", { Self(ConnectionResponse(destinationCID: $0, sourceCID: $1, result: $2, status: $3)) },
        Field("Destination_CID", \.response.destinationCID), Field("Source_CID", \.response.sourceCID),
        Field("Result", \.response.result), Field("Status", \.response.status))
}

/// The Result of a Connection (or Create Channel) Response (Core Vol 3, Part A, 4.3).
public struct ConnectionResult: WireRawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The result as on the wire.
    public let rawValue: UInt16
    /// Wraps a result from the wire.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// 0x0000 Connection successful.
    public static let success = ConnectionResult(rawValue: 0x0000)
    /// 0x0001 Connection pending: another response follows.
    public static let pending = ConnectionResult(rawValue: 0x0001)
    /// 0x0002 Connection refused – PSM not supported.
    public static let psmNotSupported = ConnectionResult(rawValue: 0x0002)

    /// The specification's wording in lower case, or nil for a value it does not define.
    public var name: String? {
        switch rawValue {
        case 0x0000: "success"
        case 0x0001: "pending"
        case 0x0002: "refused, PSM not supported"
        case 0x0003: "refused, security block"
        case 0x0004: "refused, no resources available"
        case 0x0006: "refused, invalid Source CID"
        case 0x0007: "refused, Source CID already allocated"
        default: nil
        }
    }

    /// `0x0002 refused, PSM not supported`.
    public var description: String { hex(rawValue, digits: 4) + (name.map { " \($0)" } ?? "") }
}

/// The Status of a pending Connection Response (Core Vol 3, Part A, 4.3).
public struct ConnectionStatus: WireRawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The status as on the wire.
    public let rawValue: UInt16
    /// Wraps a status from the wire.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// 0x0000 No further information available.
    public static let noFurtherInformation = ConnectionStatus(rawValue: 0x0000)

    /// The specification's wording in lower case, or nil for a value it does not define.
    public var name: String? {
        switch rawValue {
        case 0x0000: "no further information"
        case 0x0001: "authentication pending"
        case 0x0002: "authorization pending"
        default: nil
        }
    }

    /// `0x0001 authentication pending`.
    public var description: String { hex(rawValue, digits: 4) + (name.map { " \($0)" } ?? "") }
}

/// L2CAP_DISCONNECTION_REQ and L2CAP_DISCONNECTION_RSP (4.6, 4.7): both name the channel by
/// its two CIDs, the response echoing the request's.
public protocol DisconnectionPDU: SignalingPDU {
    /// The CID of the device receiving the request.
    var destinationCID: UInt16 { get }
    /// The CID of the device sending the request.
    var sourceCID: UInt16 { get }
    /// The PDU naming the channel between `destinationCID` and `sourceCID`.
    init(destinationCID: UInt16, sourceCID: UInt16)
}

extension DisconnectionPDU {
    /// Both signaling channels.
    public static var channels: SignalingChannels { [.bredr, .le] }

    /// Destination_CID, Source_CID: the layout of the PDU called `name`.
    static func channelEnds(_ name: String) -> MessageLayout<Self, UInt16, UInt16> {
        MessageLayout(
            name, Self.init(destinationCID:sourceCID:), Field("Destination_CID", \.destinationCID),
            Field("Source_CID", \.sourceCID))
    }
}

/// L2CAP_DISCONNECTION_REQ (0x06, 4.6), on either signaling channel: close a channel, named
/// as the requester sees it.
public struct DisconnectionRequest: DisconnectionPDU {
    /// 0x06.
    public static var code: SignalingCode { .disconnectionRequest }
    /// The CID of the device receiving the request (the one the requester sends to).
    public var destinationCID: UInt16
    /// The CID of the device sending the request (the one it receives on).
    public var sourceCID: UInt16

    /// A request to close the channel between `destinationCID` and `sourceCID`.
    public init(destinationCID: UInt16, sourceCID: UInt16) {
        (self.destinationCID, self.sourceCID) = (destinationCID, sourceCID)
    }

    /// Destination_CID, Source_CID.
    public static let layout = channelEnds("Disconnection_Req")
}

/// L2CAP_DISCONNECTION_RSP (0x07, 4.7): the channel is closed; its CIDs echo the request's.
public struct DisconnectionResponse: DisconnectionPDU {
    /// 0x07.
    public static var code: SignalingCode { .disconnectionResponse }
    /// The CID of the device sending the response (the request's Destination CID).
    public var destinationCID: UInt16
    /// The CID of the device receiving the response (the request's Source CID).
    public var sourceCID: UInt16

    /// A response closing the channel between `destinationCID` and `sourceCID`.
    public init(destinationCID: UInt16, sourceCID: UInt16) {
        (self.destinationCID, self.sourceCID) = (destinationCID, sourceCID)
    }

    /// Destination_CID, Source_CID.
    public static let layout = channelEnds("Disconnection_Rsp")
}

// A field of the connection requests here and of the credit based ones, as its raw value.
extension PSM: WireRawRepresentable {}
