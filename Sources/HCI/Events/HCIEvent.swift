/// An HCI event decoded into what the host acts on. Events the host does not act on stay
/// as ``other`` with their raw parameters, so nothing is lost and nothing is fatal.
public enum HCIEvent: Sendable, Equatable {
    case disconnectionComplete(DisconnectionComplete)
    case encryptionChange(EncryptionChange)
    case commandComplete(CommandComplete)
    case commandStatus(CommandStatus)
    case hardwareError(HardwareError)
    case numberOfCompletedPackets(NumberOfCompletedPackets)
    case dataBufferOverflow(DataBufferOverflow)
    /// LE Meta (0x3E): a subevent code and its parameters, decoded by the LE layers.
    case leMeta(LEMetaEvent)
    /// Vendor Specific (0xFF): the parameters as sent.
    case vendorSpecific(ArraySlice<UInt8>)
    /// Any other event, kept raw.
    case other(HCIEventPacket)

    /// Decodes an event packet. A known event whose parameters are malformed throws.
    public init(_ packet: HCIEventPacket) throws(DecodingError) {
        let parameters = packet.parameters
        switch packet.code {
        case DisconnectionComplete.code: self = .disconnectionComplete(try .init(decoding: parameters))
        case EncryptionChange.codeV1, EncryptionChange.codeV2:
            self = .encryptionChange(try .init(code: packet.code, parameters: parameters))
        case CommandComplete.code: self = .commandComplete(try .init(decoding: parameters))
        case CommandStatus.code: self = .commandStatus(try .init(decoding: parameters))
        case HardwareError.code: self = .hardwareError(try .init(decoding: parameters))
        case NumberOfCompletedPackets.code: self = .numberOfCompletedPackets(try .init(decoding: parameters))
        case DataBufferOverflow.code: self = .dataBufferOverflow(try .init(decoding: parameters))
        case LEMetaEvent.code: self = .leMeta(try .init(decoding: parameters))
        case 0xFF: self = .vendorSpecific(parameters)
        default: self = .other(packet)
        }
    }

    /// The event as a packet.
    public var packet: HCIEventPacket {
        switch self {
        case .disconnectionComplete(let event): HCIEventPacket(code: DisconnectionComplete.code, parameters: event.encoded()[...])
        case .encryptionChange(let event): HCIEventPacket(code: event.code, parameters: event.encoded()[...])
        case .commandComplete(let event): HCIEventPacket(code: CommandComplete.code, parameters: event.encoded()[...])
        case .commandStatus(let event): HCIEventPacket(code: CommandStatus.code, parameters: event.encoded()[...])
        case .hardwareError(let event): HCIEventPacket(code: HardwareError.code, parameters: event.encoded()[...])
        case .numberOfCompletedPackets(let event): HCIEventPacket(code: NumberOfCompletedPackets.code, parameters: event.encoded()[...])
        case .dataBufferOverflow(let event): HCIEventPacket(code: DataBufferOverflow.code, parameters: event.encoded()[...])
        case .leMeta(let event): HCIEventPacket(code: LEMetaEvent.code, parameters: event.encoded()[...])
        case .vendorSpecific(let parameters): HCIEventPacket(code: 0xFF, parameters: parameters)
        case .other(let packet): packet
        }
    }
}

/// Command Complete (0x0E): a command finished; carries its return parameters.
public struct CommandComplete: HCIParameters {
    public static let code: UInt8 = 0x0E
    /// How many commands the host may now send (command flow control).
    public var numHCICommandPackets: UInt8
    /// The command that completed; 0x0000 only returns command credits.
    public var opcode: HCIOpcode
    /// The return parameters, starting with the status for almost every command.
    public var returnParameters: ArraySlice<UInt8>

    public init(numHCICommandPackets: UInt8, opcode: HCIOpcode, returnParameters: ArraySlice<UInt8>) {
        self.numHCICommandPackets = numHCICommandPackets
        self.opcode = opcode
        self.returnParameters = returnParameters
    }
    public init(from reader: inout ByteReader) throws(DecodingError) {
        numHCICommandPackets = try reader.readUInt8()
        opcode = HCIOpcode(rawValue: try reader.readUInt16())
        returnParameters = reader.readRest()
    }
    public func encode(to writer: inout ByteWriter) {
        writer.write(numHCICommandPackets)
        writer.write(opcode.rawValue)
        writer.write(bytes: returnParameters)
    }
}

/// Command Status (0x0F): a command was accepted (or refused); its outcome comes later.
public struct CommandStatus: HCIParameters {
    public static let code: UInt8 = 0x0F
    public var status: HCIStatus
    public var numHCICommandPackets: UInt8
    public var opcode: HCIOpcode

    public init(status: HCIStatus, numHCICommandPackets: UInt8, opcode: HCIOpcode) {
        self.status = status
        self.numHCICommandPackets = numHCICommandPackets
        self.opcode = opcode
    }
    public init(from reader: inout ByteReader) throws(DecodingError) {
        status = HCIStatus(rawValue: try reader.readUInt8())
        numHCICommandPackets = try reader.readUInt8()
        opcode = HCIOpcode(rawValue: try reader.readUInt16())
    }
    public func encode(to writer: inout ByteWriter) {
        writer.write(status.rawValue)
        writer.write(numHCICommandPackets)
        writer.write(opcode.rawValue)
    }
}

/// Disconnection Complete (0x05).
public struct DisconnectionComplete: HCIParameters {
    public static let code: UInt8 = 0x05
    public var status: HCIStatus
    public var handle: UInt16
    /// Why the link ended (an HCI error code: 0x08, 0x13, 0x16, 0x3E, …).
    public var reason: HCIStatus

    public init(status: HCIStatus, handle: UInt16, reason: HCIStatus) {
        self.status = status
        self.handle = handle
        self.reason = reason
    }
    public init(from reader: inout ByteReader) throws(DecodingError) {
        status = HCIStatus(rawValue: try reader.readUInt8())
        handle = try reader.readUInt16() & 0x0FFF
        reason = HCIStatus(rawValue: try reader.readUInt8())
    }
    public func encode(to writer: inout ByteWriter) {
        writer.write(status.rawValue)
        writer.write(handle)
        writer.write(reason.rawValue)
    }
}

/// Encryption Change v1 (0x08) or v2 (0x59, which adds the key size).
public struct EncryptionChange: Sendable, Equatable {
    public static let codeV1: UInt8 = 0x08
    public static let codeV2: UInt8 = 0x59
    public var status: HCIStatus
    public var handle: UInt16
    /// 0x00 off, 0x01 on (AES-CCM on LE), 0x02 on with AES-CCM on BR/EDR.
    public var encryptionEnabled: UInt8
    /// The key size in octets; only in v2.
    public var keySize: UInt8?

    /// The event code this value encodes to.
    public var code: UInt8 { keySize == nil ? Self.codeV1 : Self.codeV2 }

    public init(status: HCIStatus, handle: UInt16, encryptionEnabled: UInt8, keySize: UInt8? = nil) {
        self.status = status
        self.handle = handle
        self.encryptionEnabled = encryptionEnabled
        self.keySize = keySize
    }
    public init(code: UInt8, parameters: ArraySlice<UInt8>) throws(DecodingError) {
        var reader = ByteReader(parameters)
        status = HCIStatus(rawValue: try reader.readUInt8())
        handle = try reader.readUInt16() & 0x0FFF
        encryptionEnabled = try reader.readUInt8()
        keySize = code == Self.codeV2 ? try reader.readUInt8() : nil
        try reader.expectEnd()
    }
    public func encoded() -> [UInt8] {
        var writer = ByteWriter()
        writer.write(status.rawValue)
        writer.write(handle)
        writer.write(encryptionEnabled)
        if let keySize { writer.write(keySize) }
        return writer.bytes
    }
}

/// Hardware Error (0x10): the controller failed and needs a reset.
public struct HardwareError: HCIParameters {
    public static let code: UInt8 = 0x10
    /// Vendor-defined cause.
    public var hardwareCode: UInt8
    public init(hardwareCode: UInt8) { self.hardwareCode = hardwareCode }
    public init(from reader: inout ByteReader) throws(DecodingError) { hardwareCode = try reader.readUInt8() }
    public func encode(to writer: inout ByteWriter) { writer.write(hardwareCode) }
}

/// Number Of Completed Packets (0x13): ACL buffers the controller has freed, per handle.
public struct NumberOfCompletedPackets: HCIParameters {
    public static let code: UInt8 = 0x13
    /// (connection handle, packets completed) pairs.
    public var completions: [(handle: UInt16, count: UInt16)]

    public init(completions: [(handle: UInt16, count: UInt16)]) { self.completions = completions }
    public init(from reader: inout ByteReader) throws(DecodingError) {
        let handles = Int(try reader.readUInt8())
        guard reader.count == handles * 4 else {
            throw .lengthMismatch(field: "Number_Of_Completed_Packets handles", declared: handles * 4, actual: reader.count)
        }
        completions = []
        for _ in 0..<handles {
            let handle = try reader.readUInt16() & 0x0FFF
            completions.append((handle, try reader.readUInt16()))
        }
    }
    public func encode(to writer: inout ByteWriter) {
        writer.write(UInt8(completions.count))
        for completion in completions {
            writer.write(completion.handle)
            writer.write(completion.count)
        }
    }
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.completions.elementsEqual(rhs.completions) { $0.handle == $1.handle && $0.count == $1.count }
    }
}

/// Data Buffer Overflow (0x1A): the controller dropped host data (a host flow-control bug).
public struct DataBufferOverflow: HCIParameters {
    public static let code: UInt8 = 0x1A
    /// 0x01 for ACL, 0x00 for synchronous data.
    public var linkType: UInt8
    public init(linkType: UInt8) { self.linkType = linkType }
    public init(from reader: inout ByteReader) throws(DecodingError) { linkType = try reader.readUInt8() }
    public func encode(to writer: inout ByteWriter) { writer.write(linkType) }
}

/// LE Meta (0x3E): an LE subevent.
public struct LEMetaEvent: HCIParameters {
    public static let code: UInt8 = 0x3E
    public var subeventCode: UInt8
    public var parameters: ArraySlice<UInt8>

    public init(subeventCode: UInt8, parameters: ArraySlice<UInt8>) {
        self.subeventCode = subeventCode
        self.parameters = parameters
    }
    public init(from reader: inout ByteReader) throws(DecodingError) {
        subeventCode = try reader.readUInt8()
        parameters = reader.readRest()
    }
    public func encode(to writer: inout ByteWriter) {
        writer.write(subeventCode)
        writer.write(bytes: parameters)
    }
    /// `LE_Connection_Complete`, or `Unknown`.
    public var name: String { HCINames.leSubevent(subeventCode) }
}
