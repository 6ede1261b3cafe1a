import BluetoothCore
import HCI

/// One ATT PDU type: its opcode and its parameters (everything after the opcode byte).
///
/// `init(from:)` and `encode(to:)` handle the parameters only; ``encoded()`` and
/// ``init(pdu:)`` add and check the opcode byte (Core Vol 3, Part F, 3.3).
public protocol ATTPDU: Sendable, Equatable {
    /// The PDU's opcode.
    static var opcode: ATTOpcode { get }
    /// Decodes the parameters (the bytes after the opcode). Fixed-size PDUs may leave extra
    /// bytes for the caller to reject; variable ones read to the end.
    init(from reader: inout ByteReader) throws(DecodingError)
    /// Encodes the parameters (the bytes after the opcode).
    func encode(to writer: inout ByteWriter)
}

extension ATTPDU {
    /// The whole PDU, opcode first.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 23)
        writer.write(Self.opcode.rawValue)
        encode(to: &writer)
        return writer.bytes
    }

    /// Decodes a whole PDU (opcode first): a different opcode, missing or extra bytes are errors.
    ///
    /// A different opcode is ``DecodingError/invalidValue(field:value:)`` with the field
    /// `"<expected name> opcode"`, e.g. "invalid Read_Req opcode 0xb".
    public init(pdu: ArraySlice<UInt8>) throws(DecodingError) {
        var reader = ByteReader(pdu)
        let opcode = try reader.readUInt8()
        guard opcode == Self.opcode.rawValue else {
            throw .invalidValue(field: "\(Self.opcode.name) opcode", value: UInt64(opcode))
        }
        try self.init(from: &reader)
        try reader.expectEnd()
    }

    /// Decodes a whole PDU a server sent (a response, a notification or an indication)
    /// under the tolerance rule: a different opcode or too few octets are errors, octets past
    /// a fixed format are ignored and counted (``ByteReader/skipExtraOctets()``). Requests to
    /// our own server stay strict (``init(pdu:)``): the specification answers those with
    /// Invalid PDU.
    public static func decodeCountingExtraOctets(_ pdu: ArraySlice<UInt8>) throws(DecodingError) -> (pdu: Self, extraOctets: Int) {
        var reader = ByteReader(pdu)
        let opcode = try reader.readUInt8()
        guard opcode == Self.opcode.rawValue else {
            throw .invalidValue(field: "\(Self.opcode.name) opcode", value: UInt64(opcode))
        }
        let decoded = try Self(from: &reader)
        return (decoded, reader.skipExtraOctets())
    }
}

extension ByteReader {
    /// Reads fixed-size entries of `size` bytes to the end: at least one, and no partial
    /// entry (both ``DecodingError/truncated(needed:available:)``).
    mutating func readEntries<Entry>(
        size: Int, _ decode: (inout ByteReader) throws(DecodingError) -> Entry
    ) throws(DecodingError) -> [Entry] {
        guard !isAtEnd else { throw .truncated(needed: size, available: 0) }
        var entries: [Entry] = []
        while !isAtEnd {
            var entry = ByteReader(try readBytes(size))
            entries.append(try decode(&entry))
        }
        return entries
    }

    /// Reads a UUID of 2 or 16 bytes filling the rest of the PDU.
    mutating func readUUIDToEnd(field: String) throws(DecodingError) -> BluetoothUUID {
        let bytes = readRest()
        guard bytes.count == 2 || bytes.count == 16, let uuid = BluetoothUUID(littleEndianBytes: bytes) else {
            throw .invalidValue(field: "\(field) length", value: UInt64(bytes.count))
        }
        return uuid
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

extension ATTOpcode {
    /// The PDU type this opcode introduces (Core Vol 3, Part F, 3.4.8), or nil for an
    /// opcode the specification does not define: how a reader meeting any opcode (the
    /// trace checker, the fuzz targets) finds the decoder.
    public var pduType: (any ATTPDU.Type)? { Self.pduTypes[rawValue] }

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
