import BluetoothCore

// The types the fields of SMP commands have (Core Vol 3, Part H, 3.5 and 3.6). Every one
// has a fixed size, and says whether it is secret, so a command's length and its secret
// fields follow from its declaration (its MessageLayout) and are written nowhere else.

/// A type an SMP command's field has: its size on the wire, and whether the field is secret.
public protocol SMPField: Sendable {
    /// Octets on the wire: SMP has no field of varying length.
    static var length: Int { get }
    /// Whether the field must not reach a log or a shared capture (a key, a nonce, a
    /// confirm or check value): only ``SecretValue`` is.
    static var isSecret: Bool { get }
}

extension SMPField {
    /// Not secret.
    public static var isSecret: Bool { false }
}

extension UInt8: SMPField {
    /// One octet.
    public static var length: Int { 1 }
}

extension UInt16: SMPField {
    /// Two octets.
    public static var length: Int { 2 }
}

extension BluetoothAddress: SMPField {
    /// Six octets.
    public static var length: Int { 6 }
}

/// A one-octet field whose every value is valid, read and written as its raw value: the
/// AuthReq and key distribution flags, a Pairing Failed reason.
public protocol OneOctetField: SMPField, WireRawRepresentable where RawValue == UInt8 {}

extension OneOctetField {
    /// One octet.
    public static var length: Int { 1 }
}

#if compiler(>=6.2)
    /// Octets of a fixed count that are not secret, as on the wire (least significant first):
    /// Central Identification's Rand (8) and the coordinates of a public key (32 each).
    public struct Octets<let count: Int>: SMPField, WireCodable, Hashable {
        /// The octets, least significant first.
        public let bytes: [UInt8]

        /// `count` octets.
        public static var length: Int { count }
    }

    /// Rand's 8 octets (``Octets`` of 8; on Swift 6.0 and 6.1 the count is a type's).
    public typealias Octets8 = Octets<8>
    /// A secret's 16 octets.
    public typealias Octets16 = Octets<16>
    /// A public key coordinate's 32 octets.
    public typealias Octets32 = Octets<32>
#else
    // Swift 6.0 and 6.1 have no integer generic parameters (SE-0452, Swift 6.2): the count is
    // the static property of a type that stands for it, and the three sizes SMP uses have the
    // same names as on Swift 6.2 (Octets8, Octets16, Octets32).

    /// Octets of a fixed count that are not secret, as on the wire (least significant first):
    /// Central Identification's Rand (8) and the coordinates of a public key (32 each).
    public struct Octets<Count: OctetCount>: SMPField, WireCodable, Hashable {
        /// The octets, least significant first.
        public let bytes: [UInt8]

        /// `Count.count` octets.
        public static var length: Int { Count.count }
    }

    /// The count of an ``Octets`` (Swift 6.0 and 6.1 only).
    public protocol OctetCount: Sendable, Hashable {
        /// How many octets.
        static var count: Int { get }
    }

    /// 8 octets.
    public enum OctetCount8: OctetCount { public static var count: Int { 8 } }
    /// 16 octets.
    public enum OctetCount16: OctetCount { public static var count: Int { 16 } }
    /// 32 octets.
    public enum OctetCount32: OctetCount { public static var count: Int { 32 } }

    /// Rand's 8 octets.
    public typealias Octets8 = Octets<OctetCount8>
    /// A secret's 16 octets.
    public typealias Octets16 = Octets<OctetCount16>
    /// A public key coordinate's 32 octets.
    public typealias Octets32 = Octets<OctetCount32>
#endif

extension Octets {
    /// Wraps `bytes`, which must be ``length`` octets: the sizes are the specification's,
    /// so another is a programming error.
    public init(_ bytes: some Collection<UInt8>) {
        precondition(bytes.count == Self.length, "this SMP field has \(Self.length) octets, not \(bytes.count)")
        self.bytes = Array(bytes)
    }

    /// Reads ``length`` octets.
    public init(from reader: inout ByteReader) throws(DecodingError) {
        bytes = Array(try reader.readBytes(Self.length))
    }
    /// Writes the octets.
    public func encode(to writer: inout ByteWriter) { writer.write(bytes: bytes) }
}

/// A 128-bit secret of pairing, as on the wire (least significant octet first): a key (the
/// LTK, IRK or CSRK), a nonce, or a confirm or check value. A field of this type is what
/// ``SMPSecretFields`` names, so logs, traces and redacted captures leave it out; for the
/// same reason it prints as `<redacted 16 octets>`.
public struct SecretValue: SMPField, WireCodable, Hashable, CustomStringConvertible {
    private let octets: Octets16

    /// The 16 octets, least significant first.
    public var bytes: [UInt8] { octets.bytes }

    /// Wraps `bytes`, which must be 16 octets.
    public init(_ bytes: some Collection<UInt8>) { octets = Octets(bytes) }

    /// Reads 16 octets.
    public init(from reader: inout ByteReader) throws(DecodingError) { octets = try Octets(from: &reader) }
    /// Writes the 16 octets.
    public func encode(to writer: inout ByteWriter) { octets.encode(to: &writer) }
    /// 16 octets.
    public static var length: Int { Octets16.length }
    /// Secret.
    public static var isSecret: Bool { true }
    /// `<redacted 16 octets>`, never the value.
    public var description: String { "<redacted \(Self.length) octets>" }
}

// MARK: Fields the specification restricts

extension Field where Value == UInt8 {
    /// A one-octet field whose values outside `range` the specification forbids (a key size,
    /// an address type): another is ``DecodingError/invalidValue(field:value:)`` naming it.
    static func octet(_ name: String, in range: ClosedRange<UInt8>, _ value: @escaping @Sendable (Message) -> UInt8)
        -> Field
    {
        Field(
            name,
            read: { reader throws(DecodingError) in
                let octet = try reader.readUInt8()
                guard range.contains(octet) else { throw .invalidValue(field: name, value: UInt64(octet)) }
                return octet
            }, write: { message, writer in writer.write(value(message)) })
    }
}
