import BluetoothCore
import HCI

// Configuring a BR/EDR connection-oriented channel (Core Vol 3, Part A, 4.4, 4.5 and the
// options of 5). Each direction is configured by the request its receiver sends: the
// options of a Configuration Request describe what the requester accepts to receive, and
// the Retransmission and Flow Control option sets the mode of the frames sent to it.

/// L2CAP_CONFIGURATION_REQ (0x04).
public struct ConfigurationRequest: Sendable, Equatable {
    /// The channel, by the CID of the device receiving the request.
    public var destinationCID: UInt16
    /// Bit 0 is the continuation flag: more options follow in another request.
    public var flags: UInt16
    /// The options, in order.
    public var options: [ConfigurationOption]

    /// A request from its fields.
    public init(destinationCID: UInt16, flags: UInt16 = 0, options: [ConfigurationOption]) {
        self.destinationCID = destinationCID
        self.flags = flags
        self.options = options
    }

    /// Decodes the command's data.
    public init(data: [UInt8]) throws(DecodingError) {
        var reader = ByteReader(data)
        destinationCID = try reader.readUInt16()
        flags = try reader.readUInt16()
        options = try ConfigurationOption.decodeAll(&reader)
    }

    /// The command's data.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 4 + options.count * 4)
        writer.write(destinationCID)
        writer.write(flags)
        for option in options { option.encode(to: &writer) }
        return writer.bytes
    }
}

/// L2CAP_CONFIGURATION_RSP (0x05).
public struct ConfigurationResponse: Sendable, Equatable {
    /// The channel, by the CID of the device receiving the response (the requester).
    public var sourceCID: UInt16
    /// Bit 0 is the continuation flag.
    public var flags: UInt16
    /// The outcome.
    public var result: ConfigurationResult
    /// The options answered (the values refused, or accepted as adjusted).
    public var options: [ConfigurationOption]

    /// A response from its fields.
    public init(sourceCID: UInt16, flags: UInt16 = 0, result: ConfigurationResult, options: [ConfigurationOption] = []) {
        self.sourceCID = sourceCID
        self.flags = flags
        self.result = result
        self.options = options
    }

    /// Decodes the command's data.
    public init(data: [UInt8]) throws(DecodingError) {
        var reader = ByteReader(data)
        sourceCID = try reader.readUInt16()
        flags = try reader.readUInt16()
        result = ConfigurationResult(rawValue: try reader.readUInt16())
        options = try ConfigurationOption.decodeAll(&reader)
    }

    /// The command's data.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 6 + options.count * 4)
        writer.write(sourceCID)
        writer.write(flags)
        writer.write(result.rawValue)
        for option in options { option.encode(to: &writer) }
        return writer.bytes
    }
}

/// The Result of a Configuration Response (Core Vol 3, Part A, 4.5).
public struct ConfigurationResult: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
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
/// value has not its type's length is kept as ``other`` rather than guessed at.
public enum ConfigurationOption: Sendable, Equatable, CustomStringConvertible {
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

    /// Decodes options until the reader is empty.
    static func decodeAll(_ reader: inout ByteReader) throws(DecodingError) -> [ConfigurationOption] {
        var options: [ConfigurationOption] = []
        while !reader.isAtEnd {
            let type = try reader.readUInt8()
            let length = Int(try reader.readUInt8())
            guard reader.count >= length else {
                throw .lengthMismatch(field: "configuration option length", declared: length, actual: reader.count)
            }
            options.append(ConfigurationOption(type: type, value: Array(try reader.readBytes(length))))
        }
        return options
    }

    /// The option of `type` with `value`.
    public init(type: UInt8, value: [UInt8]) {
        // The hint bit (0x80) says whether an unknown option may be skipped; it does not
        // change what a known one means.
        switch (type & 0x7F, value.count) {
        case (0x01, 2): self = .mtu(Self.word(value))
        case (0x02, 2): self = .flushTimeout(Self.word(value))
        case (0x04, 9): self = .retransmissionAndFlowControl(RetransmissionAndFlowControl(value))
        case (0x05, 1): self = .frameCheckSequence(value[0])
        case (0x07, 2): self = .extendedWindowSize(Self.word(value))
        default: self = .other(type: type, value: value)
        }
    }

    /// A two-octet little-endian value.
    private static func word(_ value: [UInt8]) -> UInt16 { UInt16(value[0]) | UInt16(value[1]) << 8 }

    func encode(to writer: inout ByteWriter) {
        switch self {
        case let .mtu(value): writer.write(bytes: [0x01, 2]); writer.write(value)
        case let .flushTimeout(value): writer.write(bytes: [0x02, 2]); writer.write(value)
        case let .retransmissionAndFlowControl(option): writer.write(bytes: [0x04, 9] + option.encoded())
        case let .frameCheckSequence(value): writer.write(bytes: [0x05, 1, value])
        case let .extendedWindowSize(value): writer.write(bytes: [0x07, 2]); writer.write(value)
        case let .other(type, value): writer.write(bytes: [type, UInt8(truncatingIfNeeded: value.count)] + value)
        }
    }

    /// `MTU 672`, `FCS none`, `option 0x03 [..]`.
    public var description: String {
        switch self {
        case let .mtu(value): "MTU \(value)"
        case let .flushTimeout(value): "flush timeout \(value == 0xFFFF ? "infinite" : "\(value) ms")"
        case let .retransmissionAndFlowControl(option): option.description
        case let .frameCheckSequence(value): "FCS \(value == 0 ? "none" : value == 1 ? "16-bit" : hex(value, digits: 2))"
        case let .extendedWindowSize(value): "extended window size \(value)"
        case let .other(type, value): "option \(hex(type, digits: 2)) [\(value.hexDump)]"
        }
    }
}

/// The Retransmission and Flow Control option's nine octets.
public struct RetransmissionAndFlowControl: Sendable, Equatable, CustomStringConvertible {
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
    public init(mode: ChannelMode, transmitWindow: UInt8, maxTransmit: UInt8, retransmissionTimeout: UInt16,
                monitorTimeout: UInt16, mps: UInt16) {
        self.mode = mode
        self.transmitWindow = transmitWindow
        self.maxTransmit = maxTransmit
        self.retransmissionTimeout = retransmissionTimeout
        self.monitorTimeout = monitorTimeout
        self.mps = mps
    }

    /// Reads the nine octets of the option's value.
    init(_ value: [UInt8]) {
        mode = ChannelMode(rawValue: value[0])
        transmitWindow = value[1]
        maxTransmit = value[2]
        retransmissionTimeout = UInt16(value[3]) | UInt16(value[4]) << 8
        monitorTimeout = UInt16(value[5]) | UInt16(value[6]) << 8
        mps = UInt16(value[7]) | UInt16(value[8]) << 8
    }

    /// The option's value.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 9)
        writer.write(mode.rawValue)
        writer.write(transmitWindow)
        writer.write(maxTransmit)
        writer.write(retransmissionTimeout)
        writer.write(monitorTimeout)
        writer.write(mps)
        return writer.bytes
    }

    /// `mode 0x03 enhanced retransmission, tx window 10, …`.
    public var description: String {
        "mode \(mode), tx window \(transmitWindow), max transmit \(maxTransmit), retransmission time-out "
            + "\(retransmissionTimeout) ms, monitor time-out \(monitorTimeout) ms, MPS \(mps)"
    }
}

/// The mode of a BR/EDR channel (Core Vol 3, Part A, 5.4): which frames it carries.
public struct ChannelMode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
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
