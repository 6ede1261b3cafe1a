import BluetoothCore

/// A run of HCI parameters declared by its `MessageLayout`: a command's parameters, its
/// return parameters, an event's or an LE subevent's (Core Vol 4, Part E, 5.4 and 7).
/// Reading and writing come from the layout, so each list of fields is written once.
///
/// One way to read, with three endings: `init(from:)` reads the fields and leaves what
/// follows to the caller; ``init(decoding:)`` is strict, for what we must refuse (bytes a
/// test pins, a command checked against what we meant to send); and
/// ``decodeCountingExtraOctets(_:)`` is the tolerance rule, for what a controller sends.
public protocol HCIParameters: LaidOut, Equatable {}

extension HCIParameters {
    /// The name in the specification, from the layout: a command's or an event's as
    /// ``HCINames`` spells it (`LE_Set_Scan_Parameters`, `Disconnection_Complete`).
    public static var name: String { layout.name }

    /// The encoded parameters.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter()
        encode(to: &writer)
        return writer.bytes
    }

    /// Decodes parameters that must fill `bytes` exactly: missing or extra octets are errors.
    public init(decoding bytes: ArraySlice<UInt8>) throws(DecodingError) {
        var reader = ByteReader(bytes)
        try self.init(from: &reader)
        try reader.expectEnd()
    }

    /// Decodes parameters a controller sent, under the tolerance rule
    /// (`MessageLayoutProtocol.decodeCountingExtraOctets(_:)`): too few octets are an
    /// error, octets past the last field are ignored and counted.
    public static func decodeCountingExtraOctets(_ bytes: ArraySlice<UInt8>) throws(DecodingError) -> (
        parameters: Self, extraOctets: Int
    ) {
        let (parameters, extraOctets) = try layout.decodeCountingExtraOctets(bytes)
        return (parameters, extraOctets)
    }
}

/// How the controller answers a command.
public enum HCICommandCompletion: Sendable {
    /// Command Complete carries the result (status + return parameters).
    case commandComplete
    /// Command Status acknowledges it; the outcome comes later in another event.
    case commandStatus
}

/// An HCI command: its opcode, its parameters, and what its Command Complete returns. Its
/// layout's name is the command's in the specification, as ``HCINames`` spells it.
public protocol HCICommand: HCIParameters {
    /// What Command Complete returns after the status byte.
    associatedtype ReturnParameters: HCIParameters = NoParameters
    /// The command's opcode.
    static var opcode: HCIOpcode { get }
    /// Which event ends the command at the HCI level.
    static var completion: HCICommandCompletion { get }
}

extension HCICommand {
    /// Command Complete, the default: most commands finish with it.
    public static var completion: HCICommandCompletion { .commandComplete }

    /// The command as a packet.
    public var packet: HCICommandPacket {
        HCICommandPacket(opcode: Self.opcode, parameters: encoded()[...])
    }
}

/// The empty parameter list.
public struct NoParameters: HCIParameters {
    /// Creates the empty parameter list.
    public init() {}
    /// No fields.
    public static let layout = MessageLayout("No_Parameters", Self.init)
}
