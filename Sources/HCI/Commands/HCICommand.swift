import BluetoothCore

/// A value that encodes to and decodes from a run of HCI parameter bytes: command
/// parameters, return parameters, event parameters.
public protocol HCIParameters: Sendable, Equatable {
    /// Decodes the parameters; extra or missing bytes are an error.
    init(from reader: inout ByteReader) throws(DecodingError)
    /// Encodes the parameters.
    func encode(to writer: inout ByteWriter)
}

extension HCIParameters {
    /// The encoded parameters.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter()
        encode(to: &writer)
        return writer.bytes
    }

    /// Decodes parameters that must fill `bytes` exactly.
    public init(decoding bytes: ArraySlice<UInt8>) throws(DecodingError) {
        var reader = ByteReader(bytes)
        try self.init(from: &reader)
        try reader.expectEnd()
    }
}

/// How the controller answers a command.
public enum HCICommandCompletion: Sendable {
    /// Command Complete carries the result (status + return parameters).
    case commandComplete
    /// Command Status acknowledges it; the outcome comes later in another event.
    case commandStatus
}

/// An HCI command: its opcode, its parameters, and what its Command Complete returns.
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
    public init(from reader: inout ByteReader) throws(DecodingError) {}
    public func encode(to writer: inout ByteWriter) {}
}
