import BluetoothCore
import HCI

// Enhanced credit based connections (Core Vol 3, Part A, 4.25–4.28): up to five channels
// per request, on the LE or the BR/EDR signaling channel. The channels carry K-frames
// (3.4.3), as LE credit based ones do.

/// L2CAP_CREDIT_BASED_CONNECTION_REQ (0x17, 4.25).
public struct CreditBasedConnectionRequest: SignalingPDU {
    /// 0x17.
    public static var code: SignalingCode { .creditBasedConnectionRequest }
    /// Both signaling channels.
    public static var channels: SignalingChannels { [.bredr, .le] }
    /// The most channels one request may open.
    public static let maximumChannels = 5

    /// The SPSM asked for.
    public var psm: PSM
    /// The largest SDU the requester accepts.
    public var mtu: UInt16
    /// The largest K-frame payload the requester accepts.
    public var mps: UInt16
    /// K-frames the responder may send on each channel.
    public var initialCredits: UInt16
    /// The CIDs the requester allocated, one per channel asked for.
    public var sourceCIDs: [UInt16]

    /// A request from its fields.
    public init(psm: PSM, mtu: UInt16, mps: UInt16, initialCredits: UInt16, sourceCIDs: [UInt16]) {
        (self.psm, self.mtu, self.mps, self.initialCredits, self.sourceCIDs) =
            (psm, mtu, mps, initialCredits, sourceCIDs)
    }

    /// SPSM, MTU, MPS, Initial_Credits, then the Source_CIDs to the end of the command. More
    /// than ``maximumChannels`` CIDs are read all the same (a trace shows what was sent); an
    /// odd octet at the end is an extra octet.
    public static let layout = MessageLayout(
        "Credit_Based_Connection_Req", Self.init(psm:mtu:mps:initialCredits:sourceCIDs:),
        Field("SPSM", \.psm), Field("MTU", \.mtu), Field("MPS", \.mps),
        Field("Initial_Credits", \.initialCredits), .repeated("Source_CID", minimumSize: 2, \.sourceCIDs))
}

/// L2CAP_CREDIT_BASED_CONNECTION_RSP (0x18, 4.26).
public struct CreditBasedConnectionResponse: SignalingPDU {
    /// 0x18.
    public static var code: SignalingCode { .creditBasedConnectionResponse }
    /// Both signaling channels.
    public static var channels: SignalingChannels { [.bredr, .le] }
    /// The largest SDU the responder accepts.
    public var mtu: UInt16
    /// The largest K-frame payload the responder accepts.
    public var mps: UInt16
    /// K-frames the requester may send on each channel.
    public var initialCredits: UInt16
    /// The outcome.
    public var result: CreditBasedConnectionResult
    /// The CIDs the responder allocated, in the order of the request's; 0x0000 for a
    /// channel it refused.
    public var destinationCIDs: [UInt16]

    /// A response from its fields.
    public init(
        mtu: UInt16, mps: UInt16, initialCredits: UInt16, result: CreditBasedConnectionResult, destinationCIDs: [UInt16]
    ) {
        (self.mtu, self.mps, self.initialCredits, self.result, self.destinationCIDs) =
            (mtu, mps, initialCredits, result, destinationCIDs)
    }

    /// MTU, MPS, Initial_Credits, Result (named from the enhanced table), then the
    /// Destination_CIDs to the end of the command.
    public static let layout = MessageLayout(
        "Credit_Based_Connection_Rsp", Self.init(mtu:mps:initialCredits:result:destinationCIDs:),
        Field("MTU", \.mtu), Field("MPS", \.mps), Field("Initial_Credits", \.initialCredits),
        .result("Result", enhanced: true, \.result), .repeated("Destination_CID", minimumSize: 2, \.destinationCIDs))
}

/// L2CAP_CREDIT_BASED_RECONFIGURE_REQ (0x19, 4.27): new MTU and MPS for channels the
/// requester receives on.
public struct CreditBasedReconfigureRequest: SignalingPDU {
    /// 0x19.
    public static var code: SignalingCode { .creditBasedReconfigureRequest }
    /// Both signaling channels.
    public static var channels: SignalingChannels { [.bredr, .le] }
    /// The new largest SDU.
    public var mtu: UInt16
    /// The new largest K-frame payload.
    public var mps: UInt16
    /// The channels, by the requester's CIDs.
    public var destinationCIDs: [UInt16]

    /// A request from its fields.
    public init(mtu: UInt16, mps: UInt16, destinationCIDs: [UInt16]) {
        (self.mtu, self.mps, self.destinationCIDs) = (mtu, mps, destinationCIDs)
    }

    /// MTU, MPS, then the Destination_CIDs to the end of the command.
    public static let layout = MessageLayout(
        "Credit_Based_Reconfigure_Req", Self.init(mtu:mps:destinationCIDs:),
        Field("MTU", \.mtu), Field("MPS", \.mps), .repeated("Destination_CID", minimumSize: 2, \.destinationCIDs))
}

/// L2CAP_CREDIT_BASED_RECONFIGURE_RSP (0x1A, 4.28): whether the reconfiguration took.
public struct CreditBasedReconfigureResponse: SignalingPDU {
    /// 0x1A.
    public static var code: SignalingCode { .creditBasedReconfigureResponse }
    /// Both signaling channels.
    public static var channels: SignalingChannels { [.bredr, .le] }
    /// The outcome.
    public var result: CreditBasedReconfigureResult

    /// A response with `result`.
    public init(result: CreditBasedReconfigureResult) { self.result = result }

    /// Result.
    public static let layout = MessageLayout(
        "Credit_Based_Reconfigure_Rsp", Self.init(result:), Field("Result", \.result))
}

/// The Result of L2CAP_CREDIT_BASED_RECONFIGURE_RSP (0x1A), its only field.
public struct CreditBasedReconfigureResult: WireRawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The result as on the wire.
    public let rawValue: UInt16
    /// Wraps a result from the wire.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// The specification's wording in lower case, or nil for a value it does not define.
    public var name: String? {
        switch rawValue {
        case 0x0000: "success"
        case 0x0001: "failure, reduction in size of MTU not allowed"
        case 0x0002: "failure, reduction in size of MPS not allowed for more than one channel"
        case 0x0003: "failure, one or more Destination CIDs invalid"
        case 0x0004: "failure, unacceptable parameters"
        default: nil
        }
    }

    /// `0x0001 failure, reduction in size of MTU not allowed`.
    public var description: String { hex(rawValue, digits: 4) + (name.map { " \($0)" } ?? "") }
}
