import BluetoothCore

/// An HCI event decoded into what the host acts on. Events the host does not act on stay
/// as ``other`` with their raw parameters, so nothing is lost and nothing is fatal.
public enum HCIEvent: Sendable, Equatable {
    /// Disconnection Complete (0x05): a link ended, or a Disconnect failed.
    case disconnectionComplete(DisconnectionComplete)
    /// Encryption Change v1 (0x08) or v2 (0x59).
    case encryptionChange(EncryptionChange)
    /// Encryption Key Refresh Complete (0x30): an encrypted link was re-encrypted.
    case encryptionKeyRefreshComplete(EncryptionKeyRefreshComplete)
    /// Command Complete (0x0E).
    case commandComplete(CommandComplete)
    /// Command Status (0x0F).
    case commandStatus(CommandStatus)
    /// Hardware Error (0x10).
    case hardwareError(HardwareError)
    /// Number Of Completed Packets (0x13).
    case numberOfCompletedPackets(NumberOfCompletedPackets)
    /// Data Buffer Overflow (0x1A).
    case dataBufferOverflow(DataBufferOverflow)
    /// LE Meta (0x3E): a subevent code and its parameters, decoded by the LE layers.
    case leMeta(LEMetaEvent)
    /// Vendor Specific (0xFF): the parameters as sent.
    case vendorSpecific(ArraySlice<UInt8>)
    /// Any other event, kept raw.
    case other(HCIEventPacket)

    /// Decodes an event packet. A known event whose parameters are too short throws; octets
    /// past its format are ignored (the tolerance rule: ``decode(_:)`` counts them).
    public init(_ packet: HCIEventPacket) throws(DecodingError) {
        self = try Self.decode(packet).event
    }

    /// Decodes an event packet and counts the octets past its format, which a newer or
    /// sloppier controller may append (one was seen sending a Command Status with one extra
    /// octet): they are ignored, never a reason to drop the event. The count covers this
    /// event's own fields; an LE subevent's and a Command Complete's return parameters are
    /// the business of their decoders (``HCIEventPacket/extraOctets``).
    public static func decode(_ packet: HCIEventPacket) throws(DecodingError) -> (event: HCIEvent, extraOctets: Int) {
        var reader = ByteReader(packet.parameters)
        let event: HCIEvent
        switch packet.code {
        case DisconnectionComplete.code: event = .disconnectionComplete(try .init(from: &reader))
        case EncryptionChange.codeV1, EncryptionChange.codeV2:
            event = .encryptionChange(try .init(code: packet.code, from: &reader))
        case EncryptionKeyRefreshComplete.code: event = .encryptionKeyRefreshComplete(try .init(from: &reader))
        case CommandComplete.code: event = .commandComplete(try .init(from: &reader))
        case CommandStatus.code: event = .commandStatus(try .init(from: &reader))
        case HardwareError.code: event = .hardwareError(try .init(from: &reader))
        case NumberOfCompletedPackets.code: event = .numberOfCompletedPackets(try .init(from: &reader))
        case DataBufferOverflow.code: event = .dataBufferOverflow(try .init(from: &reader))
        case LEMetaEvent.code: event = .leMeta(try .init(from: &reader))
        case 0xFF: event = .vendorSpecific(reader.readRest())
        default:
            // A format this stack does not decode has no end to be past.
            event = .other(packet)
            _ = reader.readRest()
        }
        return (event, reader.skipExtraOctets())
    }

    /// The event as a packet.
    public var packet: HCIEventPacket {
        switch self {
        case .disconnectionComplete(let event): HCIEventPacket(code: DisconnectionComplete.code, parameters: event.encoded()[...])
        case .encryptionChange(let event): HCIEventPacket(code: event.code, parameters: event.encoded()[...])
        case .encryptionKeyRefreshComplete(let event): HCIEventPacket(code: EncryptionKeyRefreshComplete.code, parameters: event.encoded()[...])
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
    /// 0x0E HCI_Command_Complete.
    public static let code: UInt8 = 0x0E
    /// How many commands the host may now send (command flow control).
    public var numHCICommandPackets: UInt8
    /// The command that completed; 0x0000 only returns command credits.
    public var opcode: HCIOpcode
    /// The return parameters, starting with the status for almost every command.
    public var returnParameters: ArraySlice<UInt8>

    /// Creates the event from its fields.
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
    /// 0x0F HCI_Command_Status.
    public static let code: UInt8 = 0x0F
    /// Status: 0x00 if the command is now pending; otherwise why the controller refused it.
    public var status: HCIStatus
    /// Num_HCI_Command_Packets: how many commands the host may now send (command flow control).
    public var numHCICommandPackets: UInt8
    /// Command_Opcode: the command this status answers.
    public var opcode: HCIOpcode

    /// Creates the event from its fields.
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
    /// 0x05 HCI_Disconnection_Complete.
    public static let code: UInt8 = 0x05
    /// Status: 0x00 if the link is gone; otherwise why the disconnection failed.
    public var status: HCIStatus
    /// Connection_Handle of the link (12 bits).
    public var handle: ConnectionHandle
    /// Why the link ended (an HCI error code: 0x08, 0x13, 0x16, 0x3E, …).
    public var reason: HCIStatus

    /// Creates the event from its fields.
    public init(status: HCIStatus, handle: ConnectionHandle, reason: HCIStatus) {
        self.status = status
        self.handle = handle
        self.reason = reason
    }
    public init(from reader: inout ByteReader) throws(DecodingError) {
        status = HCIStatus(rawValue: try reader.readUInt8())
        handle = try ConnectionHandle(from: &reader)
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
    /// 0x08 HCI_Encryption_Change [v1].
    public static let codeV1: UInt8 = 0x08
    /// 0x59 HCI_Encryption_Change [v2].
    public static let codeV2: UInt8 = 0x59
    /// Status: 0x00 if the encryption change succeeded.
    public var status: HCIStatus
    /// Connection_Handle of the link (12 bits).
    public var handle: ConnectionHandle
    /// 0x00 off, 0x01 on (AES-CCM on LE), 0x02 on with AES-CCM on BR/EDR.
    public var encryptionEnabled: UInt8
    /// The key size in octets; only in v2.
    public var keySize: UInt8?

    /// The event code this value encodes to.
    public var code: UInt8 { keySize == nil ? Self.codeV1 : Self.codeV2 }

    /// Creates the event from its fields; a `keySize` makes it v2.
    public init(status: HCIStatus, handle: ConnectionHandle, encryptionEnabled: UInt8, keySize: UInt8? = nil) {
        self.status = status
        self.handle = handle
        self.encryptionEnabled = encryptionEnabled
        self.keySize = keySize
    }
    /// Decodes the parameters of event `code` (v1 or v2); missing bytes are an error, extra
    /// ones are ignored (the tolerance rule).
    public init(code: UInt8, parameters: ArraySlice<UInt8>) throws(DecodingError) {
        var reader = ByteReader(parameters)
        try self.init(code: code, from: &reader)
    }

    /// Decodes the fields of event `code` (v1 or v2) from `reader`, leaving what follows.
    public init(code: UInt8, from reader: inout ByteReader) throws(DecodingError) {
        status = HCIStatus(rawValue: try reader.readUInt8())
        handle = try ConnectionHandle(from: &reader)
        encryptionEnabled = try reader.readUInt8()
        keySize = code == Self.codeV2 ? try reader.readUInt8() : nil
    }

    /// The encoded parameters; the key size only in v2.
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
    /// 0x10 HCI_Hardware_Error.
    public static let code: UInt8 = 0x10
    /// Vendor-defined cause.
    public var hardwareCode: UInt8
    /// Creates the event from its field.
    public init(hardwareCode: UInt8) { self.hardwareCode = hardwareCode }
    public init(from reader: inout ByteReader) throws(DecodingError) { hardwareCode = try reader.readUInt8() }
    public func encode(to writer: inout ByteWriter) { writer.write(hardwareCode) }
}

/// Number Of Completed Packets (0x13): ACL buffers the controller has freed, per handle.
public struct NumberOfCompletedPackets: HCIParameters {
    /// 0x13 HCI_Number_Of_Completed_Packets.
    public static let code: UInt8 = 0x13
    /// (connection handle, packets completed) pairs.
    public var completions: [(handle: ConnectionHandle, count: UInt16)]

    /// Creates the event from (handle, count) pairs.
    public init(completions: [(handle: ConnectionHandle, count: UInt16)]) { self.completions = completions }
    public init(from reader: inout ByteReader) throws(DecodingError) {
        let handles = Int(try reader.readUInt8())
        // Fewer octets than Num_Handles says is an error; more are left for the caller.
        guard reader.count >= handles * 4 else {
            throw .lengthMismatch(field: "Number_Of_Completed_Packets handles", declared: handles * 4, actual: reader.count)
        }
        completions = []
        for _ in 0..<handles {
            let handle = try ConnectionHandle(from: &reader)
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
    /// Equal when the pairs match in order (tuples are not `Equatable`).
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.completions.elementsEqual(rhs.completions) { $0.handle == $1.handle && $0.count == $1.count }
    }
}

/// Data Buffer Overflow (0x1A): the controller dropped host data (a host flow-control bug).
public struct DataBufferOverflow: HCIParameters {
    /// 0x1A HCI_Data_Buffer_Overflow.
    public static let code: UInt8 = 0x1A
    /// 0x01 for ACL, 0x00 for synchronous data.
    public var linkType: UInt8
    /// Creates the event from its field.
    public init(linkType: UInt8) { self.linkType = linkType }
    public init(from reader: inout ByteReader) throws(DecodingError) { linkType = try reader.readUInt8() }
    public func encode(to writer: inout ByteWriter) { writer.write(linkType) }
}

/// LE Meta (0x3E): an LE subevent.
public struct LEMetaEvent: HCIParameters {
    /// 0x3E HCI_LE_Meta.
    public static let code: UInt8 = 0x3E
    /// Subevent_Code: which LE event this is (0x01 LE Connection Complete, …).
    public var subeventCode: UInt8
    /// The subevent's parameters, after the subevent code.
    public var parameters: ArraySlice<UInt8>

    /// Creates the event from its fields.
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
