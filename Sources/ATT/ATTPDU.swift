import BluetoothCore
import L2CAP

/// One ATT PDU type (Core Vol 3, Part F, 3.4): its opcode, and its parameters declared once
/// as a `MessageLayout` (everything after the opcode byte), from which decoding, encoding
/// and the PDU's name come.
///
/// `init(from:)` and `encode(to:)` handle the parameters only; ``encoded()`` and
/// ``init(decoding:)`` add and check the opcode byte (Part F, 3.3).
public protocol ATTPDU: LaidOut, Equatable {
    /// The PDU's opcode.
    static var opcode: ATTOpcode { get }
}

extension ATTPDU {
    /// The PDU's name in trace spelling (`Read_Blob_Req`), from its layout.
    public static var name: String { layout.name }

    /// The whole PDU, opcode first, written once into an L2CAP frame with room for
    /// `capacity` octets (the bearer passes its ATT_MTU, which no PDU may exceed).
    public func frame(capacity: Int) -> OutgoingFrame {
        var frame = OutgoingFrame(capacity: capacity)
        frame.writer.write(Self.opcode.rawValue)
        encode(to: &frame.writer)
        return frame
    }

    /// The whole PDU, opcode first.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 23)
        writer.write(Self.opcode.rawValue)
        encode(to: &writer)
        return writer.bytes
    }

    /// Decodes a whole PDU (opcode first): a different opcode, missing or extra bytes are errors.
    ///
    /// A different opcode is `DecodingError.invalidValue(field:value:)` with the field
    /// `"<expected name> opcode"`, e.g. "invalid Read_Req opcode 0xb".
    public init(decoding pdu: ArraySlice<UInt8>) throws(DecodingError) {
        var reader = try Self.reader(pdu)
        try self.init(from: &reader)
        try reader.expectEnd()
    }

    /// Decodes a whole PDU a server sent (a response, a notification or an indication)
    /// under the tolerance rule: a different opcode or too few octets are errors, octets past
    /// a fixed format are ignored and counted (`ByteReader.skipExtraOctets()`). Requests to
    /// our own server stay strict (``init(decoding:)``): the specification answers those with
    /// Invalid PDU.
    public static func decodeCountingExtraOctets(_ pdu: ArraySlice<UInt8>) throws(DecodingError) -> (
        pdu: Self, extraOctets: Int
    ) {
        var reader = try reader(pdu)
        let decoded = try Self(from: &reader)
        return (decoded, reader.skipExtraOctets())
    }

    /// A reader past the opcode, which must be this PDU's.
    private static func reader(_ pdu: ArraySlice<UInt8>) throws(DecodingError) -> ByteReader {
        var reader = ByteReader(pdu)
        let opcode = try reader.readUInt8()
        guard opcode == Self.opcode.rawValue else {
            throw .invalidValue(field: "\(name) opcode", value: UInt64(opcode))
        }
        return reader
    }
}

// MARK: The fields ATT PDUs are made of (Part F, 3.4)

extension Field where Value == BluetoothUUID {
    /// An attribute type filling the rest of the PDU: 2 octets for a 16-bit UUID, else 16
    /// (ATT has no 32-bit form), least significant first. Another length is an error about
    /// `errorField` (`Read_By_Type_Req attribute type length 0x4`).
    static func attributeType(_ name: String, errorField: String, _ value: @escaping @Sendable (Message) -> Value)
        -> Field
    {
        Field(
            name,
            read: { reader throws(DecodingError) in
                let bytes = reader.readRest()
                guard bytes.count == 2 || bytes.count == 16, let uuid = BluetoothUUID(littleEndianBytes: bytes) else {
                    throw .invalidValue(field: "\(errorField) length", value: UInt64(bytes.count))
                }
                return uuid
            }, write: { message, writer in writer.writeATT(value(message)) })
    }
}

extension Field {
    /// Entries of one fixed size each, repeated to the end of the PDU: at least `minimum`,
    /// and no partial one (both `DecodingError.truncated(needed:available:)`).
    static func entries<Entry: WireCodable>(
        _ name: String, size: Int, minimum: Int = 1,
        _ value: @escaping @Sendable (Message) -> Value
    ) -> Field where Value == [Entry] {
        Field(
            name,
            read: { reader throws(DecodingError) in
                guard reader.count >= size * minimum else {
                    throw .truncated(needed: size * minimum, available: reader.count)
                }
                var entries: [Entry] = []
                while !reader.isAtEnd {
                    var entry = ByteReader(try reader.readBytes(size))
                    entries.append(try Entry(from: &entry))
                }
                return entries
            }, write: { message, writer in for entry in value(message) { entry.encode(to: &writer) } })
    }

    /// Entries that each say how long they are, repeated to the end of the PDU (at least
    /// one, of at least `minimumSize` octets): a Read Multiple Variable response or a
    /// Multiple Handle Value Notification.
    static func selfDelimitedEntries<Entry: WireCodable>(
        _ name: String, minimumSize: Int,
        _ value: @escaping @Sendable (Message) -> Value
    ) -> Field where Value == [Entry] {
        Field(
            name,
            read: { reader throws(DecodingError) in
                guard !reader.isAtEnd else { throw .truncated(needed: minimumSize, available: 0) }
                var entries: [Entry] = []
                while !reader.isAtEnd { entries.append(try Entry(from: &reader)) }
                return entries
            }, write: { message, writer in for entry in value(message) { entry.encode(to: &writer) } })
    }
}

/// An entry of a response whose entries all have one length, given once in front (Read By
/// Type, Read By Group Type): fixed fields, then a value that takes the rest of the entry.
protocol UniformLengthEntry: WireCodable {
    /// The entry's value, the part whose length varies from response to response.
    var value: ArraySlice<UInt8> { get }
}

extension Field {
    /// A Length octet, then entries of that length to the end of the PDU (at least one):
    /// `header` octets of fixed fields and a value of Length - `header` octets. Encoding
    /// traps unless every value has one length, at most `maximumValueLength`. A Length
    /// shorter than the fixed fields is an error about `errorField`.
    static func uniformEntries<Entry: UniformLengthEntry>(
        _ name: String, header: Int, maximumValueLength: Int, errorField: String,
        _ value: @escaping @Sendable (Message) -> Value
    ) -> Field where Value == [Entry] {
        Field(
            name,
            read: { reader throws(DecodingError) in
                let length = Int(try reader.readUInt8())
                guard length >= header else {
                    throw .invalidValue(field: "\(errorField) length", value: UInt64(length))
                }
                guard !reader.isAtEnd else { throw .truncated(needed: length, available: 0) }
                var entries: [Entry] = []
                while !reader.isAtEnd {
                    var entry = ByteReader(try reader.readBytes(length))
                    entries.append(try Entry(from: &entry))
                }
                return entries
            },
            write: { message, writer in
                let entries = value(message)
                let valueLength = entries.first?.value.count ?? 0
                precondition(
                    entries.allSatisfy { $0.value.count == valueLength }, "\(name): every value must have one length")
                precondition(
                    valueLength <= maximumValueLength, "\(name): a value is at most \(maximumValueLength) bytes")
                writer.write(UInt8(header + valueLength))
                for entry in entries { entry.encode(to: &writer) }
            })
    }
}

extension ByteWriter {
    /// Writes a UUID as ATT carries it: 2 bytes for a SIG 16-bit UUID, else 16 (ATT has no
    /// 32-bit form), least significant first.
    mutating func writeATT(_ uuid: BluetoothUUID) {
        if let short = uuid.shortValue {
            write(short)
        } else {
            write(bytes: uuid.bytes.reversed())
        }
    }
}

extension ATTOpcode: WireCodable {
    /// Reads an opcode octet (the Request_Opcode_In_Error of an Error Response).
    public init(from reader: inout ByteReader) throws(DecodingError) { self.init(rawValue: try reader.readUInt8()) }
    /// Writes the opcode octet.
    public func encode(to writer: inout ByteWriter) { writer.write(rawValue) }
}

extension ATTErrorCode: WireCodable {
    /// Reads an error code octet.
    public init(from reader: inout ByteReader) throws(DecodingError) { self.init(rawValue: try reader.readUInt8()) }
    /// Writes the error code octet.
    public func encode(to writer: inout ByteWriter) { writer.write(rawValue) }
}

// MARK: Every PDU, by opcode

extension ATTOpcode {
    /// The PDU type this opcode introduces (Core Vol 3, Part F, 3.4.8), or nil for an
    /// opcode the specification does not define: how a reader meeting any opcode (the
    /// bearer, the trace checker, the fuzz targets) finds the decoder.
    public var pduType: (any ATTPDU.Type)? { Self.pduTypes[rawValue] }

    /// The PDU's name in trace spelling (`Handle_Value_Notification`), from its
    /// declaration, or `Unknown`.
    public var name: String { pduType?.name ?? "Unknown" }

    /// Whether the opcode is a response's (an Error Response included): what answers the
    /// one request outstanding on a bearer. By the specification's naming, whose response
    /// PDUs end in `_RSP`.
    public var isResponse: Bool { Self.responses[Int(rawValue)] }

    /// `0x1b Handle_Value_Notification`.
    public var description: String { "\(hex(rawValue, digits: 2)) \(name)" }

    /// ``isResponse`` for every opcode byte, worked out once from the names: the bearer asks
    /// it of every PDU it receives.
    private static let responses: [Bool] = (0...255).map { ATTOpcode(rawValue: UInt8($0)).name.hasSuffix("_Rsp") }

    private static let pduTypes: [UInt8: any ATTPDU.Type] = {
        let types: [any ATTPDU.Type] = [
            ErrorResponse.self, ExchangeMTURequest.self, ExchangeMTUResponse.self,
            FindInformationRequest.self, FindInformationResponse.self,
            FindByTypeValueRequest.self, FindByTypeValueResponse.self,
            ReadByTypeRequest.self, ReadByTypeResponse.self, ReadRequest.self, ReadResponse.self,
            ReadBlobRequest.self, ReadBlobResponse.self, ReadMultipleRequest.self,
            ReadMultipleResponse.self, ReadByGroupTypeRequest.self, ReadByGroupTypeResponse.self,
            WriteRequest.self, WriteResponse.self, WriteCommand.self, SignedWriteCommand.self,
            PrepareWriteRequest.self, PrepareWriteResponse.self, ExecuteWriteRequest.self,
            ExecuteWriteResponse.self, HandleValueNotification.self, HandleValueIndication.self,
            HandleValueConfirmation.self, ReadMultipleVariableRequest.self,
            ReadMultipleVariableResponse.self, MultipleHandleValueNotification.self,
        ]
        return Dictionary(uniqueKeysWithValues: types.map { ($0.opcode.rawValue, $0) })
    }()
}
