import BluetoothCore
import HCI

// Configuring a BR/EDR connection-oriented channel (Core Vol 3, Part A, 4.4, 4.5 and the
// options of 5). Each direction is configured by the request its receiver sends: the
// options of a Configuration Request describe what the requester accepts to receive, and
// the Retransmission and Flow Control option sets the mode of the frames sent to it.

/// L2CAP_CONFIGURATION_REQ (0x04, 4.4).
public struct ConfigurationRequest: SignalingPDU {
    /// 0x04.
    public static var code: SignalingCode { .configurationRequest }
    /// BR/EDR only.
    public static var channels: SignalingChannels { .bredr }
    /// The channel, by the CID of the device receiving the request.
    public var destinationCID: UInt16
    /// Bit 0 is the continuation flag: more options follow in another request.
    public var flags: UInt16
    /// The options, in order.
    public var options: [ConfigurationOption]

    /// A request from its fields.
    public init(destinationCID: UInt16, flags: UInt16 = 0, options: [ConfigurationOption]) {
        (self.destinationCID, self.flags, self.options) = (destinationCID, flags, options)
    }

    /// Destination_CID, Flags, Configuration_Options (to the end of the command).
    public static let layout = MessageLayout(
        "Configuration_Req", Self.init(destinationCID:flags:options:),
        Field("Destination_CID", \.destinationCID), Field("Flags", \.flags),
        .repeated("Configuration_Options", minimumSize: 1, \.options))
}

/// L2CAP_CONFIGURATION_RSP (0x05, 4.5).
public struct ConfigurationResponse: SignalingPDU {
    /// 0x05.
    public static var code: SignalingCode { .configurationResponse }
    /// BR/EDR only.
    public static var channels: SignalingChannels { .bredr }
    /// The channel, by the CID of the device receiving the response (the requester).
    public var sourceCID: UInt16
    /// Bit 0 is the continuation flag.
    public var flags: UInt16
    /// The outcome.
    public var result: ConfigurationResult
    /// The options answered (the values refused, or accepted as adjusted).
    public var options: [ConfigurationOption]

    /// A response from its fields.
    public init(sourceCID: UInt16, flags: UInt16 = 0, result: ConfigurationResult, options: [ConfigurationOption] = [])
    {
        self.sourceCID = sourceCID
        self.flags = flags
        self.result = result
        self.options = options
    }

    /// Source_CID, Flags, Result, Config (options, to the end of the command).
    public static let layout = MessageLayout(
        "Configuration_Rsp", Self.init(sourceCID:flags:result:options:),
        Field("Source_CID", \.sourceCID), Field("Flags", \.flags), Field("Result", \.result),
        .repeated("Config", minimumSize: 1, \.options))
}

/// The Result of a Configuration Response (Core Vol 3, Part A, 4.5).
public struct ConfigurationResult: WireRawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The result as on the wire.
    public let rawValue: UInt16
    /// Wraps a result from the wire.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// 0x0000 Success.
    public static let success = ConfigurationResult(rawValue: 0x0000)

    /// The specification's wording in lower case, or nil for a value it does not define.
    public var name: String? {
        switch rawValue {
        case 0x0000: "success"
        case 0x0001: "failure, unacceptable parameters"
        case 0x0002: "failure, rejected"
        case 0x0003: "failure, unknown options"
        case 0x0004: "pending"
        case 0x0005: "failure, flow spec rejected"
        default: nil
        }
    }

    /// `0x0001 failure, unacceptable parameters`.
    public var description: String { hex(rawValue, digits: 4) + (name.map { " \($0)" } ?? "") }
}

/// One configuration option (Core Vol 3, Part A, 5): type, length, value. An option whose
/// value has not its type's length is kept as `other` rather than guessed at.
public enum ConfigurationOption: LaidOut, Equatable, CustomStringConvertible {
    /// 0x01 MTU: the largest SDU the sender of the option accepts.
    case mtu(UInt16)
    /// 0x02 Flush Timeout, in milliseconds (0xFFFF: infinite).
    case flushTimeout(UInt16)
    /// 0x04 Retransmission and Flow Control: the mode of the frames sent to the sender of
    /// the option.
    case retransmissionAndFlowControl(RetransmissionAndFlowControl)
    /// 0x05 Frame Check Sequence: 0x00 no FCS, 0x01 16-bit FCS.
    case frameCheckSequence(UInt8)
    /// 0x07 Extended Window Size: selects the extended (32-bit) control field.
    case extendedWindowSize(UInt16)
    /// Any other option (QoS 0x03, Extended Flow Specification 0x06, unknown types), raw.
    /// The type keeps its hint bit (0x80).
    case other(type: UInt8, value: [UInt8])

    /// Type, then Length and the Option_Data it counts. A value shorter than its Length is
    /// an error; what the value means is ``init(type:value:)``'s business.
    public static let layout = MessageLayout(
        "Configuration_Option", Self.init(type:value:), Field("Type", \.type),
        .lengthPrefixed("Length", "Option_Data", lengthOctets: 1, errorField: "configuration option length", \.value))

    /// The option of `type` with `value`.
    public init(type: UInt8, value: [UInt8]) {
        // The hint bit (0x80) says whether an unknown option may be skipped; it does not
        // change what a known one means.
        let known: ConfigurationOption? =
            switch type & 0x7F {
            case 0x01: Self.exactly(value).map { .mtu($0) }
            case 0x02: Self.exactly(value).map { .flushTimeout($0) }
            case 0x04: Self.exactly(value).map { .retransmissionAndFlowControl($0) }
            case 0x05: Self.exactly(value).map { .frameCheckSequence($0) }
            case 0x07: Self.exactly(value).map { .extendedWindowSize($0) }
            default: nil
            }
        self = known ?? .other(type: type, value: value)
    }

    /// `value` read as a `Value`, when it is exactly one: an option of the wrong length
    /// is not its type's.
    private static func exactly<Value: WireCodable>(_ value: [UInt8]) -> Value? {
        var reader = ByteReader(value)
        guard let decoded = try? Value(from: &reader), reader.isAtEnd else { return nil }
        return decoded
    }

    /// The option's Type as sent: the known ones without the hint bit, `other` as read.
    public var type: UInt8 {
        switch self {
        case .mtu: 0x01
        case .flushTimeout: 0x02
        case .retransmissionAndFlowControl: 0x04
        case .frameCheckSequence: 0x05
        case .extendedWindowSize: 0x07
        case let .other(type, _): type
        }
    }

    /// The option's value, its Option_Data.
    public var value: [UInt8] {
        switch self {
        case let .mtu(value), let .flushTimeout(value), let .extendedWindowSize(value): value.wireBytes()
        case let .retransmissionAndFlowControl(option): option.wireBytes()
        case let .frameCheckSequence(value): [value]
        case let .other(_, value): value
        }
    }

    /// `MTU 672`, `FCS none`, `option 0x03 [..]`.
    public var description: String {
        switch self {
        case let .mtu(value): "MTU \(value)"
        case let .flushTimeout(value): "flush timeout \(value == 0xFFFF ? "infinite" : "\(value) ms")"
        case let .retransmissionAndFlowControl(option): option.description
        case let .frameCheckSequence(value):
            "FCS \(value == 0 ? "none" : value == 1 ? "16-bit" : hex(value, digits: 2))"
        case let .extendedWindowSize(value): "extended window size \(value)"
        case let .other(type, value): "option \(hex(type, digits: 2)) [\(value.hexDump)]"
        }
    }
}

/// The Retransmission and Flow Control option's nine octets (Core Vol 3, Part A, 5.4).
public struct RetransmissionAndFlowControl: LaidOut, Equatable, CustomStringConvertible {
    /// The channel mode of the frames sent to the option's sender.
    public var mode: ChannelMode
    /// TxWindow size.
    public var transmitWindow: UInt8
    /// MaxTransmit.
    public var maxTransmit: UInt8
    /// Retransmission time-out, milliseconds.
    public var retransmissionTimeout: UInt16
    /// Monitor time-out, milliseconds.
    public var monitorTimeout: UInt16
    /// Maximum PDU payload size.
    public var mps: UInt16

    /// The option from its fields.
    public init(
        mode: ChannelMode, transmitWindow: UInt8, maxTransmit: UInt8, retransmissionTimeout: UInt16,
        monitorTimeout: UInt16, mps: UInt16
    ) {
        (self.mode, self.transmitWindow, self.maxTransmit, self.retransmissionTimeout, self.monitorTimeout, self.mps) =
            (mode, transmitWindow, maxTransmit, retransmissionTimeout, monitorTimeout, mps)
    }

    /// Mode, TxWindow_Size, MaxTransmit, Retransmission_Time_Out, Monitor_Time_Out, Maximum_PDU_Size.
    public static let layout = MessageLayout(
        "Retransmission_And_Flow_Control",
        Self.init(mode:transmitWindow:maxTransmit:retransmissionTimeout:monitorTimeout:mps:),
        Field("Mode", \.mode), Field("TxWindow_Size", \.transmitWindow), Field("MaxTransmit", \.maxTransmit),
        Field("Retransmission_Time_Out", \.retransmissionTimeout), Field("Monitor_Time_Out", \.monitorTimeout),
        Field("Maximum_PDU_Size", \.mps))

    /// `mode 0x03 enhanced retransmission, tx window 10, …`.
    public var description: String {
        "mode \(mode), tx window \(transmitWindow), max transmit \(maxTransmit), retransmission time-out "
            + "\(retransmissionTimeout) ms, monitor time-out \(monitorTimeout) ms, MPS \(mps)"
    }
}

/// The mode of a BR/EDR channel (Core Vol 3, Part A, 5.4): which frames it carries.
public struct ChannelMode: WireRawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The mode as on the wire.
    public let rawValue: UInt8
    /// Wraps a mode from the wire.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// 0x00 Basic: B-frames, the whole SDU in each.
    public static let basic = ChannelMode(rawValue: 0x00)
    /// 0x03 Enhanced Retransmission: I-frames and S-frames.
    public static let enhancedRetransmission = ChannelMode(rawValue: 0x03)
    /// 0x04 Streaming: I-frames.
    public static let streaming = ChannelMode(rawValue: 0x04)

    /// The specification's name in lower case, or nil for a value it does not define.
    public var name: String? {
        switch rawValue {
        case 0x00: "basic"
        case 0x01: "retransmission"
        case 0x02: "flow control"
        case 0x03: "enhanced retransmission"
        case 0x04: "streaming"
        default: nil
        }
    }

    /// `0x03 enhanced retransmission`.
    public var description: String { hex(rawValue, digits: 2) + (name.map { " \($0)" } ?? "") }
}
