import BluetoothCore

/// An HCI event decoded into what the host acts on. Events the host does not act on stay
/// as `other` with their raw parameters, so nothing is lost and nothing is fatal.
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

    /// The Vendor Specific event's code, which the specification leaves to vendors.
    static let vendorSpecificCode: UInt8 = 0xFF

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
        let parameters = packet.parameters
        switch packet.code {
        case DisconnectionComplete.code: return try decode(parameters, as: HCIEvent.disconnectionComplete)
        case EncryptionChange.codeV1, EncryptionChange.codeV2:
            let (change, extraOctets) = try EncryptionChange.layout(code: packet.code).decodeCountingExtraOctets(
                parameters)
            return (.encryptionChange(change), extraOctets)
        case EncryptionKeyRefreshComplete.code: return try decode(parameters, as: HCIEvent.encryptionKeyRefreshComplete)
        case CommandComplete.code: return try decode(parameters, as: HCIEvent.commandComplete)
        case CommandStatus.code: return try decode(parameters, as: HCIEvent.commandStatus)
        case HardwareError.code: return try decode(parameters, as: HCIEvent.hardwareError)
        case NumberOfCompletedPackets.code: return try decode(parameters, as: HCIEvent.numberOfCompletedPackets)
        case DataBufferOverflow.code: return try decode(parameters, as: HCIEvent.dataBufferOverflow)
        case LEMetaEvent.code: return try decode(parameters, as: HCIEvent.leMeta)
        // The parameters are the vendor's format; a format this stack does not decode has
        // no end to be past.
        case vendorSpecificCode: return (.vendorSpecific(parameters), 0)
        default: return (.other(packet), 0)
        }
    }

    /// Decodes the parameters of event `Event` under the tolerance rule, as `event` wraps them.
    private static func decode<Event: HCIEventParameters>(
        _ parameters: ArraySlice<UInt8>, as event: (Event) -> HCIEvent
    )
        throws(DecodingError) -> (event: HCIEvent, extraOctets: Int)
    {
        let (decoded, extraOctets) = try Event.decodeCountingExtraOctets(parameters)
        return (event(decoded), extraOctets)
    }

    /// The event as a packet.
    public var packet: HCIEventPacket {
        switch self {
        case .disconnectionComplete(let event): event.packet
        case .encryptionChange(let event): HCIEventPacket(code: event.code, parameters: event.encoded()[...])
        case .encryptionKeyRefreshComplete(let event): event.packet
        case .commandComplete(let event): event.packet
        case .commandStatus(let event): event.packet
        case .hardwareError(let event): event.packet
        case .numberOfCompletedPackets(let event): event.packet
        case .dataBufferOverflow(let event): event.packet
        case .leMeta(let event): event.packet
        case .vendorSpecific(let parameters): HCIEventPacket(code: Self.vendorSpecificCode, parameters: parameters)
        case .other(let packet): packet
        }
    }
}

/// The parameters of one HCI event (Core Vol 4, Part E, 7.7): its code, and its fields
/// declared by a layout named as ``HCINames`` names the event.
public protocol HCIEventParameters: HCIParameters {
    /// The event code.
    static var code: UInt8 { get }
}

extension HCIEventParameters {
    /// The event as a packet.
    public var packet: HCIEventPacket { HCIEventPacket(code: Self.code, parameters: encoded()[...]) }
}

/// Command Complete (0x0E): a command finished; carries its return parameters.
public struct CommandComplete: HCIEventParameters {
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
        (self.numHCICommandPackets, self.opcode, self.returnParameters) =
            (numHCICommandPackets, opcode, returnParameters)
    }

    /// Num_HCI_Command_Packets, Command_Opcode, Return_Parameters (the command's: decoded
    /// by ``HCIController/CommandResult``, which knows the command).
    public static let layout = MessageLayout(
        "Command_Complete", Self.init(numHCICommandPackets:opcode:returnParameters:),
        Field("Num_HCI_Command_Packets", \.numHCICommandPackets),
        Field("Command_Opcode", \.opcode), .rest("Return_Parameters", \.returnParameters))
}

/// Command Status (0x0F): a command was accepted (or refused); its outcome comes later.
public struct CommandStatus: HCIEventParameters {
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
        (self.status, self.numHCICommandPackets, self.opcode) = (status, numHCICommandPackets, opcode)
    }

    /// Status, Num_HCI_Command_Packets, Command_Opcode.
    public static let layout = MessageLayout(
        "Command_Status", Self.init(status:numHCICommandPackets:opcode:),
        Field("Status", \.status), Field("Num_HCI_Command_Packets", \.numHCICommandPackets),
        Field("Command_Opcode", \.opcode))
}

/// Disconnection Complete (0x05).
public struct DisconnectionComplete: HCIEventParameters {
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
        (self.status, self.handle, self.reason) = (status, handle, reason)
    }

    /// Status, Connection_Handle, Reason.
    public static let layout = MessageLayout(
        "Disconnection_Complete", Self.init(status:handle:reason:),
        Field("Status", \.status), Field("Connection_Handle", \.handle), Field("Reason", \.reason))
}

/// Encryption Change v1 (0x08) or v2 (0x59, which adds the key size): one value for both,
/// with a layout for each, since the host treats them alike.
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
        (self.status, self.handle, self.encryptionEnabled, self.keySize) = (status, handle, encryptionEnabled, keySize)
    }

    /// v1: Status, Connection_Handle, Encryption_Enabled.
    public static let layoutV1 = MessageLayout(
        "Encryption_Change", { Self(status: $0, handle: $1, encryptionEnabled: $2) },
        Field("Status", \.status), Field("Connection_Handle", \.handle),
        Field("Encryption_Enabled", \.encryptionEnabled))

    /// v2: v1's fields, then Encryption_Key_Size.
    public static let layoutV2 = MessageLayout(
        "Encryption_Change_v2", Self.init(status:handle:encryptionEnabled:keySize:),
        Field("Status", \.status), Field("Connection_Handle", \.handle),
        Field("Encryption_Enabled", \.encryptionEnabled),
        Field(
            "Encryption_Key_Size", read: { reader throws(DecodingError) in try reader.readUInt8() },
            write: { change, writer in writer.write(change.keySize ?? 0) }))

    /// The layout of event `code`: v2's for 0x59, v1's otherwise.
    public static func layout(code: UInt8) -> any MessageLayoutProtocol<EncryptionChange> {
        code == codeV2 ? layoutV2 : layoutV1
    }

    /// The encoded parameters; the key size only in v2.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter()
        Self.layout(code: code).encode(self, to: &writer)
        return writer.bytes
    }
}

/// Hardware Error (0x10): the controller failed and needs a reset.
public struct HardwareError: HCIEventParameters {
    /// 0x10 HCI_Hardware_Error.
    public static let code: UInt8 = 0x10
    /// Vendor-defined cause.
    public var hardwareCode: UInt8
    /// Creates the event from its field.
    public init(hardwareCode: UInt8) { self.hardwareCode = hardwareCode }
    /// Hardware_Code.
    public static let layout = MessageLayout(
        "Hardware_Error", Self.init(hardwareCode:), Field("Hardware_Code", \.hardwareCode))
}

/// Number Of Completed Packets (0x13): ACL buffers the controller has freed, per handle.
public struct NumberOfCompletedPackets: HCIEventParameters {
    /// 0x13 HCI_Number_Of_Completed_Packets.
    public static let code: UInt8 = 0x13
    /// (connection handle, packets completed) pairs.
    public var completions: [(handle: ConnectionHandle, count: UInt16)]

    /// Creates the event from (handle, count) pairs.
    public init(completions: [(handle: ConnectionHandle, count: UInt16)]) { self.completions = completions }

    /// Num_Handles, then a Connection_Handle and its Num_Completed_Packets for each handle.
    /// Fewer octets than Num_Handles says is an error; more are left for the caller.
    public static let layout = MessageLayout(
        "Number_Of_Completed_Packets", Self.init(completions:),
        Field(
            "Num_Handles, Connection_Handle[i], Num_Completed_Packets[i]",
            read: { reader throws(DecodingError) in
                let handles = Int(try reader.readUInt8())
                guard reader.count >= handles * 4 else {
                    throw .lengthMismatch(
                        field: "Number_Of_Completed_Packets handles", declared: handles * 4, actual: reader.count)
                }
                var completions: [(handle: ConnectionHandle, count: UInt16)] = []
                for _ in 0..<handles {
                    completions.append((try ConnectionHandle(from: &reader), try reader.readUInt16()))
                }
                return completions
            },
            write: { event, writer in
                writer.write(UInt8(event.completions.count))
                for completion in event.completions {
                    completion.handle.encode(to: &writer)
                    writer.write(completion.count)
                }
            }))

    /// Equal when the pairs match in order (tuples are not `Equatable`).
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.completions.elementsEqual(rhs.completions) { $0.handle == $1.handle && $0.count == $1.count }
    }
}

/// Data Buffer Overflow (0x1A): the controller dropped host data (a host flow-control bug).
public struct DataBufferOverflow: HCIEventParameters {
    /// 0x1A HCI_Data_Buffer_Overflow.
    public static let code: UInt8 = 0x1A
    /// 0x01 for ACL, 0x00 for synchronous data.
    public var linkType: UInt8
    /// Creates the event from its field.
    public init(linkType: UInt8) { self.linkType = linkType }
    /// Link_Type.
    public static let layout = MessageLayout(
        "Data_Buffer_Overflow", Self.init(linkType:), Field("Link_Type", \.linkType))
}

/// LE Meta (0x3E): an LE subevent.
public struct LEMetaEvent: HCIEventParameters {
    /// 0x3E HCI_LE_Meta.
    public static let code: UInt8 = 0x3E
    /// Subevent_Code: which LE event this is (0x01 LE Connection Complete, …).
    public var subeventCode: UInt8
    /// The subevent's parameters, after the subevent code.
    public var parameters: ArraySlice<UInt8>

    /// Creates the event from its fields.
    public init(subeventCode: UInt8, parameters: ArraySlice<UInt8>) {
        (self.subeventCode, self.parameters) = (subeventCode, parameters)
    }

    /// Subevent_Code, then the subevent's parameters (decoded by its declaration, an
    /// ``LESubeventParameters``).
    public static let layout = MessageLayout(
        "LE_Meta", Self.init(subeventCode:parameters:),
        Field("Subevent_Code", \.subeventCode), .rest("Subevent_Parameters", \.parameters))

    /// `LE_Connection_Complete`, or `Unknown`.
    public var name: String { HCINames.leSubevent(subeventCode) }
}

/// The parameters of one LE Meta subevent (Core Vol 4, Part E, 7.7.65): its subevent code,
/// and its fields (after the code) declared by a layout named as ``HCINames`` names it.
public protocol LESubeventParameters: HCIParameters {
    /// The subevent code.
    static var subeventCode: UInt8 { get }
}

extension LESubeventParameters {
    /// The subevent as the LE Meta event that carries it.
    public var meta: LEMetaEvent { LEMetaEvent(subeventCode: Self.subeventCode, parameters: encoded()[...]) }
}
