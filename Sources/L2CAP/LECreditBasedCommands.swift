import BluetoothCore
import HCI

// LE credit based connections (Core Vol 3, Part A, 4.22–4.24): one channel per request,
// on the LE signaling channel. The channel then carries K-frames (3.4.3).

/// L2CAP_LE_CREDIT_BASED_CONNECTION_REQ (0x14, 4.22).
public struct LECreditBasedConnectionRequest: SignalingPDU {
    /// 0x14.
    public static var code: SignalingCode { .leCreditBasedConnectionRequest }
    /// LE only.
    public static var channels: SignalingChannels { .le }
    /// The SPSM asked for.
    public var psm: PSM
    /// The CID the requester allocated: frames to the requester carry it.
    public var sourceCID: UInt16
    /// The largest SDU the requester accepts.
    public var mtu: UInt16
    /// The largest K-frame payload the requester accepts.
    public var mps: UInt16
    /// K-frames the responder may send before it needs more credits.
    public var initialCredits: UInt16

    /// A request from its fields.
    public init(psm: PSM, sourceCID: UInt16, mtu: UInt16, mps: UInt16, initialCredits: UInt16) {
        (self.psm, self.sourceCID, self.mtu, self.mps, self.initialCredits) = (psm, sourceCID, mtu, mps, initialCredits)
    }

    /// SPSM, Source_CID, MTU, MPS, Initial_Credits.
    public static let layout = MessageLayout(
        "LE_Credit_Based_Connection_Req", Self.init(psm:sourceCID:mtu:mps:initialCredits:),
        Field("SPSM", \.psm), Field("Source_CID", \.sourceCID), Field("MTU", \.mtu),
        Field("MPS", \.mps), Field("Initial_Credits", \.initialCredits))
}

/// L2CAP_LE_CREDIT_BASED_CONNECTION_RSP (0x15, 4.23).
public struct LECreditBasedConnectionResponse: SignalingPDU {
    /// 0x15.
    public static var code: SignalingCode { .leCreditBasedConnectionResponse }
    /// LE only.
    public static var channels: SignalingChannels { .le }
    /// The CID the responder allocated (frames to the responder carry it); 0x0000 when refused.
    public var destinationCID: UInt16
    /// The largest SDU the responder accepts.
    public var mtu: UInt16
    /// The largest K-frame payload the responder accepts.
    public var mps: UInt16
    /// K-frames the requester may send.
    public var initialCredits: UInt16
    /// The outcome.
    public var result: CreditBasedConnectionResult

    /// A response from its fields.
    public init(
        destinationCID: UInt16, mtu: UInt16, mps: UInt16, initialCredits: UInt16, result: CreditBasedConnectionResult
    ) {
        (self.destinationCID, self.mtu, self.mps, self.initialCredits, self.result) =
            (destinationCID, mtu, mps, initialCredits, result)
    }

    /// Destination_CID, MTU, MPS, Initial_Credits, Result (named from the LE table).
    public static let layout = MessageLayout(
        "LE_Credit_Based_Connection_Rsp", Self.init(destinationCID:mtu:mps:initialCredits:result:),
        Field("Destination_CID", \.destinationCID), Field("MTU", \.mtu), Field("MPS", \.mps),
        Field("Initial_Credits", \.initialCredits), .result("Result", enhanced: false, \.result))
}

/// L2CAP_FLOW_CONTROL_CREDIT_IND (0x16, 4.24): more K-frames the receiver of the indication
/// may send.
public struct FlowControlCreditIndication: SignalingPDU {
    /// 0x16.
    public static var code: SignalingCode { .flowControlCreditIndication }
    /// Both signaling channels (credit based channels exist on both).
    public static var channels: SignalingChannels { [.bredr, .le] }
    /// The channel, by the CID of the device sending the indication.
    public var cid: UInt16
    /// Credits added.
    public var credits: UInt16

    /// An indication from its fields.
    public init(cid: UInt16, credits: UInt16) { (self.cid, self.credits) = (cid, credits) }

    /// CID, Credits.
    public static let layout = MessageLayout(
        "Flow_Control_Credit_Ind", Self.init(cid:credits:), Field("CID", \.cid), Field("Credits", \.credits))
}

/// The Result of an LE Credit Based (0x15) or Credit Based (0x18) Connection Response
/// (Core Vol 3, Part A, 4.23 and 4.26). The two tables share their values; the enhanced
/// one says whether all or only some of the channels asked for were refused, and adds
/// 0x000C and the pending results.
public struct CreditBasedConnectionResult: Hashable, Sendable, CustomStringConvertible {
    /// The result as on the wire.
    public let rawValue: UInt16
    /// Whether it answers an enhanced (0x17) request, whose table it is named from.
    public let enhanced: Bool

    /// Wraps a result from the wire.
    public init(rawValue: UInt16, enhanced: Bool) { (self.rawValue, self.enhanced) = (rawValue, enhanced) }

    /// Every channel asked for was opened (0x0000).
    public var isSuccess: Bool { rawValue == 0 }

    /// The response only promises another one with the same identifier (0x000D–0x000F of
    /// the enhanced table).
    public var isPending: Bool { enhanced && (0x000D...0x000F).contains(rawValue) }

    /// The specification's wording in lower case, or nil for a value it does not define.
    public var name: String? {
        enhanced ? Self.enhancedNames[rawValue] : Self.names[rawValue]
    }

    private static let names: [UInt16: String] = [
        0x0000: "success", 0x0002: "refused, SPSM not supported", 0x0004: "refused, no resources available",
        0x0005: "refused, insufficient authentication", 0x0006: "refused, insufficient authorization",
        0x0007: "refused, encryption key size too short", 0x0008: "refused, insufficient encryption",
        0x0009: "refused, invalid Source CID", 0x000A: "refused, Source CID already allocated",
        0x000B: "refused, unacceptable parameters",
    ]

    private static let enhancedNames: [UInt16: String] = [
        0x0000: "all successful", 0x0002: "all refused, SPSM not supported",
        0x0004: "some refused, insufficient resources", 0x0005: "all refused, insufficient authentication",
        0x0006: "all refused, insufficient authorization", 0x0007: "all refused, encryption key size too short",
        0x0008: "all refused, insufficient encryption", 0x0009: "some refused, invalid Source CID",
        0x000A: "some refused, Source CID already allocated", 0x000B: "all refused, unacceptable parameters",
        0x000C: "all refused, invalid parameters", 0x000D: "all pending, no further information",
        0x000E: "all pending, authentication pending", 0x000F: "all pending, authorization pending",
    ]

    /// `0x0004 some refused, insufficient resources`.
    public var description: String { hex(rawValue, digits: 4) + (name.map { " \($0)" } ?? "") }
}

extension Field where Value == CreditBasedConnectionResult {
    /// A credit based connection response's Result, named from the LE (0x15) or the enhanced
    /// (0x18) table.
    static func result(_ name: String, enhanced: Bool, _ value: @escaping @Sendable (Message) -> Value) -> Field {
        Field(
            name,
            read: { reader throws(DecodingError) in
                CreditBasedConnectionResult(rawValue: try reader.readUInt16(), enhanced: enhanced)
            },
            write: { message, writer in writer.write(value(message).rawValue) })
    }
}
