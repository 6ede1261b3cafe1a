/// Something with one encoding on the wire: every PDU's parameters, and the field types
/// they are made of (little-endian integers, addresses, status codes, …).
///
/// Decoding reads from the reader's position and leaves what follows for the caller: too
/// few octets throw ``DecodingError/truncated(needed:available:)``; what to do with octets
/// after the last field is the caller's rule (``ByteReader/expectEnd()`` for what we must
/// refuse, ``ByteReader/skipExtraOctets()`` for what we accept).
public protocol WireCodable: Sendable {
    /// Reads the value at the reader's position.
    init(from reader: inout ByteReader) throws(DecodingError)
    /// Writes the value.
    func encode(to writer: inout ByteWriter)
}

extension UInt8: WireCodable {
    /// Reads one octet.
    public init(from reader: inout ByteReader) throws(DecodingError) { self = try reader.readUInt8() }
    /// Writes one octet.
    public func encode(to writer: inout ByteWriter) { writer.write(self) }
}

extension UInt16: WireCodable {
    /// Reads two octets, least significant first.
    public init(from reader: inout ByteReader) throws(DecodingError) { self = try reader.readUInt16() }
    /// Writes two octets, least significant first.
    public func encode(to writer: inout ByteWriter) { writer.write(self) }
}

extension UInt32: WireCodable {
    /// Reads four octets, least significant first.
    public init(from reader: inout ByteReader) throws(DecodingError) { self = try reader.readUInt32() }
    /// Writes four octets, least significant first.
    public func encode(to writer: inout ByteWriter) { writer.write(self) }
}

extension UInt64: WireCodable {
    /// Reads eight octets, least significant first.
    public init(from reader: inout ByteReader) throws(DecodingError) { self = try reader.readUInt64() }
    /// Writes eight octets, least significant first.
    public func encode(to writer: inout ByteWriter) { writer.write(self) }
}

/// One field of a message as the specification lists it: its name there
/// (`Attribute_Handle`), how it is read, and how it is written from the message.
public struct Field<Message, Value>: Sendable {
    /// The field's name in the specification.
    public let name: String
    /// Reads the field at the reader's position.
    public let read: @Sendable (inout ByteReader) throws(DecodingError) -> Value
    /// Writes the field from the message.
    public let write: @Sendable (Message, inout ByteWriter) -> Void

    /// A field read by `read` and written by `write` (for encodings a type does not have on
    /// its own: a value running to the end of the PDU, a count-prefixed list, …).
    @inlinable
    public init(
        _ name: String, read: @escaping @Sendable (inout ByteReader) throws(DecodingError) -> Value,
        write: @escaping @Sendable (Message, inout ByteWriter) -> Void
    ) {
        (self.name, self.read, self.write) = (name, read, write)
    }
}

extension Field where Value: WireCodable {
    /// A field of a type with its own encoding, at `value` of the message
    /// (`Field("Attribute_Handle", \.handle)`).
    @inlinable
    public init(_ name: String, _ value: @escaping @Sendable (Message) -> Value) {
        self.init(
            name, read: { reader throws(DecodingError) in try Value(from: &reader) },
            write: { message, writer in value(message).encode(to: &writer) })
    }
}

extension Field where Value == ArraySlice<UInt8> {
    /// A field that runs to the end of the PDU (an attribute value, a vendor payload): on
    /// decoding, a view of the received bytes, not a copy.
    @inlinable
    public static func rest(_ name: String, _ value: @escaping @Sendable (Message) -> Value) -> Field {
        Field(
            name, read: { reader in reader.readRest() },
            write: { message, writer in writer.write(bytes: value(message)) })
    }
}

/// How a message looks on the wire, declared once: its name in the specification and its
/// fields in order. Decoding, encoding and the names printed in traces all come from it, so
/// a field is spelled in one place:
///
/// ```swift
/// public static let layout = MessageLayout("Read_Blob_Req", Self.init(handle:offset:),
///                                          Field("Attribute_Handle", \.handle),
///                                          Field("Value_Offset", \.offset))
/// ```
public final class MessageLayout<Message, each Value>: Sendable {
    /// The message's name in the specification (`Read_Blob_Req`).
    public let name: String
    @usableFromInline let fields: (repeat Field<Message, each Value>)
    /// The whole decoding and encoding, composed once from the fields' closures when the
    /// layout is made. The initializer is inlinable, so they are compiled for the message's
    /// own field types where the layout is declared: decoding a PDU is then one call that
    /// neither copies the field list nor goes through generic pack code at run time.
    @usableFromInline let decoder: @Sendable (inout ByteReader) throws(DecodingError) -> Message
    @usableFromInline let encoder: @Sendable (Message, inout ByteWriter) -> Void

    /// The layout of message `name`: made by `make` from `fields`, read and written in order.
    @inlinable
    public init(
        _ name: String, _ make: @escaping @Sendable (repeat each Value) -> Message,
        _ fields: repeat Field<Message, each Value>
    ) {
        self.name = name
        self.fields = (repeat each fields)
        let reads = (repeat (each fields).read)
        var writes: [@Sendable (Message, inout ByteWriter) -> Void] = []
        for field in repeat each fields { writes.append(field.write) }
        decoder = { (reader: inout ByteReader) throws(DecodingError) -> Message in
            try make(repeat (each reads)(&reader))
        }
        encoder = { [writes] message, writer in for write in writes { write(message, &writer) } }
    }

    /// Reads every field in order and makes the message; octets after the last field are
    /// left in `reader`.
    @inlinable
    public func decode(from reader: inout ByteReader) throws(DecodingError) -> Message { try decoder(&reader) }

    /// Writes every field in order.
    @inlinable
    public func encode(_ message: Message, to writer: inout ByteWriter) { encoder(message, &writer) }

    /// The fields' names in the specification, in order.
    public var fieldNames: [String] {
        var names: [String] = []
        for field in repeat each fields { names.append(field.name) }
        return names
    }
}

/// What every ``MessageLayout`` offers, whatever its fields: what a message type's
/// declaration needs to be read and written.
public protocol MessageLayoutProtocol<Message>: Sendable {
    /// The message it lays out.
    associatedtype Message
    /// The message's name in the specification.
    var name: String { get }
    /// The fields' names in the specification, in order.
    var fieldNames: [String] { get }
    /// Reads the message; octets after the last field are left in `reader`.
    func decode(from reader: inout ByteReader) throws(DecodingError) -> Message
    /// Writes the message.
    func encode(_ message: Message, to writer: inout ByteWriter)
}

extension MessageLayout: MessageLayoutProtocol {}

/// A message declared by its ``MessageLayout``: reading and writing come from the layout,
/// so the type only lists its fields once.
public protocol LaidOut: WireCodable {
    /// The layout's type (inferred from ``layout``).
    associatedtype Layout: MessageLayoutProtocol<Self>
    /// How the message looks on the wire.
    static var layout: Layout { get }
}

extension LaidOut {
    /// Reads the message as its layout says.
    @inlinable
    public init(from reader: inout ByteReader) throws(DecodingError) { self = try Self.layout.decode(from: &reader) }
    /// Writes the message as its layout says.
    @inlinable
    public func encode(to writer: inout ByteWriter) { Self.layout.encode(self, to: &writer) }
}
