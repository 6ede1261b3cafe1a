import BluetoothCore

/// One Security Manager Protocol command type (Core Vol 3, Part H, 3.5 and 3.6): its code,
/// and its parameters declared once as a `MessageLayout` of ``SMPField``s (everything
/// after the Code octet), from which decoding, encoding, the command's name, its length and
/// its secret fields come.
///
/// `init(from:)` and `encode(to:)` handle the parameters only; ``SMPPDU/init(decoding:)`` and
/// ``encoded()`` add the Code octet (Part H, 3.3).
public protocol SMPCommand: LaidOut, Hashable where Layout: SMPParameters {
    /// The command's code.
    static var code: SMPCode { get }
    /// The command as an ``SMPPDU``, the value the Security Manager receives and matches.
    var pdu: SMPPDU { get }
}

extension SMPCommand {
    /// The command's name in trace spelling (`Pairing_Request`), from its layout.
    public static var name: String { layout.name }

    /// Every field of the command in order, offsets from the Code octet.
    public static var fields: [SMPFieldPosition] {
        layout.fieldPositions.map {
            SMPFieldPosition(name: $0.name, offset: 1 + $0.offset, length: $0.length, isSecret: $0.isSecret)
        }
    }

    /// The command's length, Code octet included: its fields' sizes added up. Part H gives
    /// every command one length, and a PDU of another is refused (Invalid Parameters).
    public static var length: Int { 1 + layout.fieldPositions.reduce(0) { $0 + $1.length } }

    /// The command's secret fields, offsets from the Code octet.
    public static var secretFields: [SecretField] {
        fields.filter(\.isSecret).map { SecretField($0.name, offset: $0.offset, length: $0.length) }
    }

    /// The command as sent: Code, then parameters.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: Self.length)
        writer.write(Self.code.rawValue)
        encode(to: &writer)
        return writer.bytes
    }
}

/// Where a field of an SMP command lies, as its declaration gives it.
public struct SMPFieldPosition: Sendable, Hashable {
    /// The field's name in the specification (`Confirm_Value`).
    public let name: String
    /// Where the field starts; each list says from where.
    public let offset: Int
    /// How many octets it has.
    public let length: Int
    /// Whether it is secret (its type is ``SecretValue``).
    public let isSecret: Bool
}

/// What the layout of an SMP command tells beyond `MessageLayoutProtocol`, from the types
/// of its fields: where each field lies, and whether it is secret.
public protocol SMPParameters<Message>: MessageLayoutProtocol {
    /// Every field in order, offsets from the first parameter.
    var fieldPositions: [SMPFieldPosition] { get }
}

// A layout extension for one module's fields; it lives here rather than beside
// MessageLayout in BluetoothCore because only SMP has field types that know their size.
extension MessageLayout: SMPParameters where repeat each Value: SMPField {
    /// Each field at the offset its predecessors' sizes give.
    public var fieldPositions: [SMPFieldPosition] {
        let names = fieldNames
        var positions: [SMPFieldPosition] = []
        var offset = 0
        for (length, isSecret) in repeat ((each Value).length, (each Value).isSecret) {
            positions.append(
                SMPFieldPosition(name: names[positions.count], offset: offset, length: length, isSecret: isSecret))
            offset += length
        }
        return positions
    }
}
