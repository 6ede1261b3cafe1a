/// A Bluetooth UUID: 16-bit and 32-bit SIG-assigned forms are shorthands for 128-bit UUIDs
/// on the Bluetooth Base UUID `0000xxxx-0000-1000-8000-00805F9B34FB` (Core Vol 3, Part B,
/// 2.5.1). Equal UUIDs compare equal whatever form they were read in.
public struct BluetoothUUID: Hashable, Sendable, CustomStringConvertible {
    /// The 128-bit value, most significant byte first (as written in text).
    public let bytes: [UInt8]

    /// Hashes the 128 bits as two words: the synthesized hash fed the array to the hasher
    /// a byte at a time, and every value delivered looks its characteristic up by UUID.
    public func hash(into hasher: inout Hasher) {
        guard bytes.count == 16 else { return hasher.combine(bytes) }
        bytes.withUnsafeBytes { raw in
            hasher.combine(raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
            hasher.combine(raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        }
    }

    /// The Bluetooth Base UUID's last 96 bits.
    private static let baseTail: [UInt8] = [0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0x80, 0x5F, 0x9B, 0x34, 0xFB]

    /// A SIG-assigned 16-bit UUID (e.g. 0x180D Heart Rate).
    public init(_ value: UInt16) { self.init(UInt32(value)) }

    /// A SIG-assigned 32-bit UUID.
    public init(_ value: UInt32) {
        bytes =
            [
                UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8),
                UInt8(truncatingIfNeeded: value),
            ] + Self.baseTail
    }

    /// A 128-bit UUID from 16 bytes, most significant first.
    public init(bigEndianBytes: some Collection<UInt8>) {
        precondition(bigEndianBytes.count == 16, "a 128-bit UUID has 16 bytes")
        bytes = Array(bigEndianBytes)
    }

    /// A UUID as it appears in a PDU: 2, 4 or 16 bytes, least significant first.
    public init?(littleEndianBytes data: some Collection<UInt8>) {
        switch data.count {
        case 2, 4:
            let value = data.reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            self.init(value)
        case 16: self.init(bigEndianBytes: data.reversed())
        default: return nil
        }
    }

    /// Parses `180D`, `0x180D`, `0000180D`, `0000180D-0000-1000-8000-00805F9B34FB` or the
    /// same 32 digits without dashes. Dashes go only where the 128-bit form has them
    /// (8-4-4-4-12): `2A37-0000` is no UUID.
    public init?(_ text: String) {
        var body = Substring(text)
        if body.hasPrefix("0x") || body.hasPrefix("0X") { body = body.dropFirst(2) }
        let groups = body.split(separator: "-", omittingEmptySubsequences: false).map(\.count)
        guard
            groups == [4] || groups == [8] || groups == [32]
                || (groups == [8, 4, 4, 4, 12] && body.count == text.count)
        else { return nil }
        let hexText = body.filter { $0 != "-" }
        guard hexText.allSatisfy(\.isHexDigit) else { return nil }
        if hexText.count <= 8 {
            guard let value = UInt32(hexText, radix: 16) else { return nil }
            self.init(value)
            return
        }
        var parsed: [UInt8] = []
        var index = hexText.startIndex
        while index < hexText.endIndex {
            let next = hexText.index(index, offsetBy: 2)
            guard let byte = UInt8(hexText[index..<next], radix: 16) else { return nil }
            parsed.append(byte)
            index = next
        }
        self.init(bigEndianBytes: parsed)
    }

    /// The 16-bit value when the UUID is a SIG-assigned 16-bit one.
    public var shortValue: UInt16? {
        guard bytes[0] == 0, bytes[1] == 0, Array(bytes[4...]) == Self.baseTail else { return nil }
        return UInt16(bytes[2]) << 8 | UInt16(bytes[3])
    }

    /// The 32-bit value when the UUID is on the Base UUID.
    public var value32: UInt32? {
        guard Array(bytes[4...]) == Self.baseTail else { return nil }
        return bytes[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }

    /// The shortest wire form (2, 4 or 16 bytes), least significant first.
    public var littleEndianBytes: [UInt8] {
        if let short = shortValue { return [UInt8(truncatingIfNeeded: short), UInt8(short >> 8)] }
        if let value = value32 { return (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        return bytes.reversed()
    }

    /// `180D` for SIG 16-bit UUIDs, the 8-digit form for 32-bit, else the full form.
    public var description: String {
        if let short = shortValue {
            return [UInt8(short >> 8), UInt8(truncatingIfNeeded: short)].hexString(uppercase: true)
        }
        if value32 != nil { return bytes[0..<4].hexString(uppercase: true) }
        let text = bytes.hexString(uppercase: true)
        let parts = [
            text.prefix(8), text.dropFirst(8).prefix(4), text.dropFirst(12).prefix(4), text.dropFirst(16).prefix(4),
            text.dropFirst(20),
        ]
        return parts.joined(separator: "-")
    }
}

extension String {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: Character(target), omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
