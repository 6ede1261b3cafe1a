import BluetoothCore
import HCI

/// One signaling command (Core Vol 3, Part A, 4): code, identifier (pairs a response with
/// its request), length, data. The LE signaling channel carries one per C-frame; the BR/EDR
/// channel may carry several (``ControlFrame``).
///
/// The data stays as received: its code's declaration (``SignalingPDU``, found by
/// ``SignalingCode/pduType``) reads it.
public struct SignalingCommand: LaidOut, Equatable {
    /// What the command is.
    public var code: SignalingCode
    /// Non-zero; a response carries its request's identifier.
    public var identifier: UInt8
    /// The command's data.
    public var data: [UInt8]

    /// A command with its data.
    public init(code: SignalingCode, identifier: UInt8, data: [UInt8]) {
        (self.code, self.identifier, self.data) = (code, identifier, data)
    }

    /// Code, Identifier, then Length and the Data it counts. Reading stops after the data,
    /// so the commands of a C-frame are read one after another.
    public static let layout = MessageLayout(
        "Signaling_Command", Self.init(code:identifier:data:),
        Field("Code", \.code), Field("Identifier", \.identifier),
        .lengthPrefixed("Length", "Data", lengthOctets: 2, errorField: "signaling command length", \.data))

    /// Decodes the one command filling an LE C-frame's `payload`: its Length must account
    /// for every octet after the header.
    public init(decoding payload: ArraySlice<UInt8>) throws(DecodingError) {
        var reader = ByteReader(payload)
        self = try Self(from: &reader)
        guard reader.isAtEnd else {
            throw .lengthMismatch(
                field: "signaling command length", declared: data.count, actual: data.count + reader.count)
        }
    }

    /// The encoded command.
    public func encoded() -> [UInt8] { wireBytes(capacity: 4 + data.count) }
}

/// The data of one signaling command (Core Vol 3, Part A, 4.1–4.28): its code, the signaling
/// channels that carry it, and its fields declared once as a `MessageLayout`, from which
/// decoding, encoding and the command's name come.
///
/// `init(from:)` and `encode(to:)` handle the data only; ``init(command:)``,
/// ``decodeCountingExtraOctets(_:)`` and ``command(identifier:)`` go from and to a whole
/// ``SignalingCommand``, checking its code.
public protocol SignalingPDU: LaidOut, Equatable {
    /// The command's code.
    static var code: SignalingCode { get }
    /// The signaling channels that may carry it (Table 4.2).
    static var channels: SignalingChannels { get }
}

extension SignalingPDU {
    /// The command's name in trace spelling (`Connection_Req`), from its layout.
    public static var name: String { layout.name }

    /// The command's data, as its Data field carries it.
    public func encoded() -> [UInt8] { wireBytes() }

    /// The whole command, with `identifier` (a response carries its request's).
    public func command(identifier: UInt8) -> SignalingCommand {
        SignalingCommand(code: Self.code, identifier: identifier, data: encoded())
    }

    /// Decodes `command`'s data: a different code, too few octets or octets after the last
    /// field are errors. What the host answers itself (a Connection Parameter Update
    /// Request) is read this way, and refused with a Command Reject when it does not decode,
    /// as BlueZ does.
    ///
    /// A different code is `DecodingError.invalidValue(field:value:)` with the field
    /// `"<expected name> code"`, e.g. "invalid Connection_Req code 0x3".
    public init(command: SignalingCommand) throws(DecodingError) {
        var reader = try Self.reader(command)
        try self.init(from: &reader)
        try reader.expectEnd()
    }

    /// Decodes `command`'s data under the tolerance rule: a different code or too few
    /// octets are errors, octets past the format are ignored and counted
    /// (`ByteReader.skipExtraOctets()`). How everything a peer sends that the host only
    /// reads (the trace printer and checker, channel tracking) is decoded.
    public static func decodeCountingExtraOctets(_ command: SignalingCommand) throws(DecodingError) -> (
        pdu: Self, extraOctets: Int
    ) {
        var reader = try reader(command)
        let decoded = try Self(from: &reader)
        return (decoded, reader.skipExtraOctets())
    }

    /// A reader of `command`'s data, whose code must be this command's.
    private static func reader(_ command: SignalingCommand) throws(DecodingError) -> ByteReader {
        guard command.code == code else {
            throw .invalidValue(field: "\(name) code", value: UInt64(command.code.rawValue))
        }
        return ByteReader(command.data)
    }
}
