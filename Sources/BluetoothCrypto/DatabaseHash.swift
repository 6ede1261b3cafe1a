/// One attribute of a GATT server's database, as the Database Hash needs it: handle, type
/// and value, all as ATT presents them.
public struct DatabaseHashAttribute: Sendable, Hashable {
    /// The attribute handle.
    public var handle: UInt16
    /// The attribute type as ATT carries it, least significant octet first: 2 octets for a
    /// 16-bit UUID (`00 28` for «Primary Service»), 16 for a 128-bit one.
    public var typeBytes: [UInt8]
    /// The attribute value as a read would return it (for a characteristic declaration: the
    /// properties, the value handle and the characteristic UUID, least significant first).
    public var value: [UInt8]

    /// An attribute whose type is a 16-bit UUID, such as 0x2800 «Primary Service».
    public init(handle: UInt16, type: UInt16, value: [UInt8] = []) {
        self.init(handle: handle, typeBytes: [UInt8(truncatingIfNeeded: type), UInt8(type >> 8)], value: value)
    }

    /// An attribute whose type is given as ATT carries it: 2 or 16 octets, least significant
    /// first. Traps on any other length.
    public init(handle: UInt16, typeBytes: [UInt8], value: [UInt8] = []) {
        precondition(
            typeBytes.count == 2 || typeBytes.count == 16,
            "an attribute type is 2 or 16 octets, got \(typeBytes.count)")
        self.handle = handle
        self.typeBytes = typeBytes
        self.value = value
    }

    /// The type as a 16-bit UUID, or nil when it is a 128-bit one.
    public var type16: UInt16? {
        typeBytes.count == 2 ? UInt16(typeBytes[0]) | UInt16(typeBytes[1]) << 8 : nil
    }

    /// The octets this attribute adds to the hashed message: handle, type and value for the
    /// service, include and characteristic declarations and Characteristic Extended
    /// Properties; handle and type for the other five descriptors; nothing for the rest.
    var hashContribution: [UInt8] {
        guard let type = type16 else { return [] }
        let handleAndType = [UInt8(truncatingIfNeeded: handle), UInt8(handle >> 8)] + typeBytes
        switch type {
        case 0x2800, 0x2801, 0x2802, 0x2803, 0x2900: return handleAndType + value
        case 0x2901, 0x2902, 0x2903, 0x2904, 0x2905: return handleAndType
        default: return []
        }
    }
}

/// The GATT Database Hash (Core Vol 3, Part G, 7.3.1): AES-CMAC with a key of zero over the
/// database's attributes in ascending handle order, where
///
/// - «Primary Service» 0x2800, «Secondary Service» 0x2801, «Include» 0x2802,
///   «Characteristic» 0x2803 and «Characteristic Extended Properties» 0x2900 each add
///   their handle (2 octets, least significant first), type (2 octets, least significant
///   first) and value;
/// - «Characteristic User Description» 0x2901, «Client Characteristic Configuration»
///   0x2902, «Server Characteristic Configuration» 0x2903, «Characteristic Presentation
///   Format» 0x2904 and «Characteristic Aggregate Format» 0x2905 each add their handle and
///   type only (their values may differ per client or change at run time);
/// - every other attribute, characteristic values included, adds nothing. Attributes with
///   a 128-bit type add nothing either: every type above is a 16-bit UUID, and ATT carries
///   those in their 2-octet form.
///
/// `attributes` may come in any order; they are hashed sorted by handle. Two attributes
/// with the same handle are a programming error and trap.
///
/// - Returns: the 128-bit hash, most significant octet first, as the toolbox writes it.
///   The Database Hash characteristic (0x2B2A) value is the same number least significant
///   octet first, like any ATT value: `lsbFirst(fromMSBFirst: databaseHash(...))`.
public func databaseHash(attributes: [DatabaseHashAttribute]) -> [UInt8] {
    let sorted = attributes.sorted { $0.handle < $1.handle }
    for (earlier, later) in zip(sorted, sorted.dropFirst()) {
        precondition(earlier.handle != later.handle, "two attributes share handle \(earlier.handle)")
    }
    let message = sorted.flatMap(\.hashContribution)
    return aesCMAC(key: [UInt8](repeating: 0, count: 16), message: message)
}
