import BluetoothCore
import HCI

/// One signaling command (Core Vol 3, Part A, 4): code, identifier (pairs a response with
/// its request), length, data. The LE signaling channel carries one per C-frame; the BR/EDR
/// channel may carry several (``ControlFrame``).
public struct SignalingCommand: LaidOut, Equatable {
    /// What the command is.
    public var code: SignalingCode
    /// Non-zero; a response carries its request's identifier.
    public var identifier: UInt8
    /// The command's data.
    public var data: [UInt8]

    /// A command with its data.
    public init(code: SignalingCode, identifier: UInt8, data: [UInt8]) {
        self.code = code
        self.identifier = identifier
        self.data = data
    }

    /// Code, Identifier, then Length and the Data it counts. Reading stops after the data,
    /// so the commands of a C-frame are read one after another.
    public static let layout = MessageLayout("Signaling_Command", Self.init(code:identifier:data:),
                                             Field("Code", \.code), Field("Identifier", \.identifier),
                                             .lengthPrefixed("Length", "Data", lengthOctets: 2, errorField: "signaling command length", \.data))

    /// Decodes the one command filling an LE C-frame's `payload`: its Length must account
    /// for every octet after the header.
    public init(payload: ArraySlice<UInt8>) throws(DecodingError) {
        var reader = ByteReader(payload)
        self = try Self(from: &reader)
        guard reader.isAtEnd else {
            throw .lengthMismatch(field: "signaling command length", declared: data.count, actual: data.count + reader.count)
        }
    }

    /// The encoded command.
    public func encoded() -> [UInt8] { wireBytes(capacity: 4 + data.count) }
}

/// L2CAP Connection Parameter Update Request (0x12): the peripheral asks the central for
/// new connection parameters.
public struct ConnectionParameterUpdateRequest: Sendable, Equatable {
    /// The parameters asked for (interval in 1.25 ms units, timeout in 10 ms units).
    public var parameters: LEConnectionRequest

    /// A request for `parameters`.
    public init(parameters: LEConnectionRequest) { self.parameters = parameters }

    /// Decodes the command's eight data bytes.
    public init(data: [UInt8]) throws(DecodingError) {
        var reader = ByteReader(data)
        parameters = LEConnectionRequest(intervalMin: try reader.readUInt16(), intervalMax: try reader.readUInt16(),
                                         latency: try reader.readUInt16(), supervisionTimeout: try reader.readUInt16())
        try reader.expectEnd()
    }

    /// The command's data.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 8)
        writer.write(parameters.intervalMin)
        writer.write(parameters.intervalMax)
        writer.write(parameters.latency)
        writer.write(parameters.supervisionTimeout)
        return writer.bytes
    }
}

/// L2CAP Connection Parameter Update Response (0x13): 0x0000 accepted, 0x0001 rejected.
public struct ConnectionParameterUpdateResponse: Sendable, Equatable {
    /// Whether the central accepted the request.
    public var accepted: Bool

    /// A response.
    public init(accepted: Bool) { self.accepted = accepted }

    /// Decodes the command's two data bytes.
    public init(data: [UInt8]) throws(DecodingError) {
        var reader = ByteReader(data)
        let result = try reader.readUInt16()
        guard result <= 1 else { throw .invalidValue(field: "Result", value: UInt64(result)) }
        accepted = result == 0
        try reader.expectEnd()
    }

    /// The command's data.
    public func encoded() -> [UInt8] { accepted ? [0x00, 0x00] : [0x01, 0x00] }
}

/// L2CAP Command Reject (0x01) reasons.
public enum CommandRejectReason: UInt16, Sendable {
    /// 0x0000 Command not understood.
    case commandNotUnderstood = 0x0000
    /// 0x0001 Signaling MTU exceeded.
    case signalingMTUExceeded = 0x0001
    /// 0x0002 Invalid CID in request.
    case invalidCID = 0x0002

    /// The Command Reject's data.
    public var data: [UInt8] { [UInt8(truncatingIfNeeded: rawValue), UInt8(rawValue >> 8)] }
}
