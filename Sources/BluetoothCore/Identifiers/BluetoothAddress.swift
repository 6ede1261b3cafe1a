/// A Bluetooth device address (BD_ADDR), stored as on the wire: least significant byte
/// first. Printed most significant byte first, as people write it.
public struct BluetoothAddress: WireCodable, Hashable, Sendable, CustomStringConvertible {
    /// The six bytes in wire order (little-endian).
    public let bytes: [UInt8]

    /// Wraps six bytes in wire order.
    public init(littleEndianBytes bytes: some Collection<UInt8>) {
        precondition(bytes.count == 6, "a BD_ADDR has six bytes")
        self.bytes = Array(bytes)
    }

    /// Parses `AA:BB:CC:DD:EE:FF` (most significant first); `nil` if malformed.
    public init?(_ text: String) {
        // Empty parts count, so a stray colon is malformed rather than ignored.
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6 else { return nil }
        var bytes: [UInt8] = []
        for part in parts.reversed() {
            // Two hex digits exactly: UInt8(_:radix:) alone would also take "+1" and "-0".
            guard part.count == 2, part.allSatisfy(\.isHexDigit), let byte = UInt8(part, radix: 16) else { return nil }
            bytes.append(byte)
        }
        self.bytes = bytes
    }

    /// Reads six bytes from a PDU.
    public init(from reader: inout ByteReader) throws(DecodingError) {
        bytes = Array(try reader.readBytes(6))
    }

    /// Writes the six bytes into a PDU.
    public func encode(to writer: inout ByteWriter) { writer.write(bytes: bytes) }

    /// `AA:BB:CC:DD:EE:FF`.
    public var description: String {
        bytes.reversed().hexString(uppercase: true, separator: ":")
    }
}

/// The address type of an advertiser or a peer (Core Vol 4, Part E, 7.7.65.2).
public enum AddressType: UInt8, Sendable, Hashable, CustomStringConvertible {
    /// A public device address.
    case `public` = 0x00
    /// A random device address (static or private).
    case random = 0x01
    /// A public identity address, resolved by the controller from a private address.
    case publicIdentity = 0x02
    /// A random static identity address, resolved by the controller.
    case randomIdentity = 0x03
    /// No address was sent (anonymous extended advertising).
    case anonymous = 0xFF

    /// `public`, `random`, `public-identity`, `random-identity` or `anonymous`.
    public var description: String {
        switch self {
        case .public: "public"
        case .random: "random"
        case .publicIdentity: "public-identity"
        case .randomIdentity: "random-identity"
        case .anonymous: "anonymous"
        }
    }
}

extension BluetoothAddress {
    /// Why a text is not `ADDRESS[/random|/public]`.
    public enum TypedTextError: Error, Equatable, Sendable, CustomStringConvertible {
        /// More than one `/`.
        case shape
        /// The part before the `/` is not `AA:BB:CC:DD:EE:FF`.
        case address(String)
        /// The part after the `/` is neither `random` nor `public`.
        case type(String)

        /// What is wrong, for a person.
        public var description: String {
            switch self {
            case .shape: "expected ADDRESS or ADDRESS/random or ADDRESS/public"
            case let .address(text): "'\(text)' is not an address: expected six octets in hex, AA:BB:CC:DD:EE:FF"
            case let .type(text): "'\(text)' is not an address type: expected random or public"
            }
        }
    }

    /// An address as people write it with its type: `AA:BB:CC:DD:EE:FF/random`, `…/public`,
    /// or the address alone (`type` nil: the caller decides, by a scan or a default). Hex
    /// digits and the type in either case; the type as ``AddressType``'s description prints it.
    public static func parse(typed text: String) throws(TypedTextError) -> (
        address: BluetoothAddress, type: AddressType?
    ) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2 else { throw .shape }
        guard let address = BluetoothAddress(String(parts[0])) else { throw .address(String(parts[0])) }
        guard parts.count == 2 else { return (address, nil) }
        switch parts[1].lowercased() {
        case "public": return (address, .public)
        case "random": return (address, .random)
        default: throw .type(String(parts[1]))
        }
    }
}
