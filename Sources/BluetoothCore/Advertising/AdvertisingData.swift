/// One AD structure of advertising or scan-response data (Core Supplement Part A):
/// a length, an AD type and its data.
public struct ADStructure: Sendable, Equatable {
    /// The AD type (0x01 Flags, 0x09 Complete Local Name, 0xFF Manufacturer Specific Data, …).
    public var type: UInt8
    /// The data after the type byte.
    public var data: [UInt8]

    /// A structure of `type` carrying `data`.
    public init(type: UInt8, data: [UInt8]) { (self.type, self.data) = (type, data) }
}

/// AD type codes (Bluetooth Assigned Numbers, 2.3).
public enum ADType {
    /// 0x01 Flags.
    public static let flags: UInt8 = 0x01
    /// 0x02 Incomplete List of 16-bit Service UUIDs.
    public static let incompleteServiceUUIDs16: UInt8 = 0x02
    /// 0x03 Complete List of 16-bit Service UUIDs.
    public static let completeServiceUUIDs16: UInt8 = 0x03
    /// 0x04 Incomplete List of 32-bit Service UUIDs.
    public static let incompleteServiceUUIDs32: UInt8 = 0x04
    /// 0x05 Complete List of 32-bit Service UUIDs.
    public static let completeServiceUUIDs32: UInt8 = 0x05
    /// 0x06 Incomplete List of 128-bit Service UUIDs.
    public static let incompleteServiceUUIDs128: UInt8 = 0x06
    /// 0x07 Complete List of 128-bit Service UUIDs.
    public static let completeServiceUUIDs128: UInt8 = 0x07
    /// 0x08 Shortened Local Name.
    public static let shortenedLocalName: UInt8 = 0x08
    /// 0x09 Complete Local Name.
    public static let completeLocalName: UInt8 = 0x09
    /// 0x0A Tx Power Level (dBm).
    public static let txPowerLevel: UInt8 = 0x0A
    /// 0x14 List of 16-bit Service Solicitation UUIDs.
    public static let solicitedServiceUUIDs16: UInt8 = 0x14
    /// 0x15 List of 128-bit Service Solicitation UUIDs.
    public static let solicitedServiceUUIDs128: UInt8 = 0x15
    /// 0x16 Service Data - 16-bit UUID.
    public static let serviceData16: UInt8 = 0x16
    /// 0x19 Appearance.
    public static let appearance: UInt8 = 0x19
    /// 0x1F List of 32-bit Service Solicitation UUIDs.
    public static let solicitedServiceUUIDs32: UInt8 = 0x1F
    /// 0x20 Service Data - 32-bit UUID.
    public static let serviceData32: UInt8 = 0x20
    /// 0x21 Service Data - 128-bit UUID.
    public static let serviceData128: UInt8 = 0x21
    /// 0xFF Manufacturer Specific Data.
    public static let manufacturerSpecificData: UInt8 = 0xFF
}

/// Advertising data (or a scan response, or both merged), parsed. Modelled on BlueCap's
/// `PeripheralAdvertisements`: every field the host understands, and every structure kept
/// as sent, so unknown AD types are never lost.
public struct AdvertisingData: Sendable, Equatable {
    /// Every well-formed structure, in order (the advertisement's first, then the scan
    /// response's when merged).
    public var structures: [ADStructure]
    /// What was wrong with the bytes, if anything; the structures before the problem are kept.
    public var problem: ADProblem?

    /// Data made of these structures.
    public init(structures: [ADStructure] = []) {
        self.structures = structures
        problem = nil
    }

    /// Parses advertising or scan-response bytes. A zero length ends the significant part
    /// (the rest is padding) only if every byte after it is zero; a length that runs past
    /// the end is reported in ``problem``.
    public init(parsing bytes: some Collection<UInt8>) {
        let data = Array(bytes)
        structures = []
        problem = nil
        var index = 0
        while index < data.count {
            let length = Int(data[index])
            if length == 0 {
                if data[index...].contains(where: { $0 != 0 }) { problem = .zeroLength(offset: index) }
                return
            }
            guard index + 1 + length <= data.count else {
                problem = .runsPastEnd(offset: index, length: length, available: data.count - index - 1)
                return
            }
            structures.append(ADStructure(type: data[index + 1], data: Array(data[(index + 2)..<(index + 1 + length)])))
            index += 1 + length
        }
    }

    /// The bytes as sent: each structure as length, type, data.
    public func encoded() -> [UInt8] {
        structures.flatMap { [UInt8($0.data.count + 1), $0.type] + $0.data }
    }

    /// This data followed by `scanResponse`'s structures: one view of a peripheral.
    public func merging(_ scanResponse: AdvertisingData) -> AdvertisingData {
        var merged = AdvertisingData(structures: structures + scanResponse.structures)
        merged.problem = problem ?? scanResponse.problem
        return merged
    }

    private func all(_ type: UInt8) -> [[UInt8]] { structures.filter { $0.type == type }.map(\.data) }
    private func first(_ type: UInt8) -> [UInt8]? { structures.first { $0.type == type }?.data }

    private func uuids(_ types: [UInt8], width: Int) -> [BluetoothUUID] {
        types.flatMap(all).flatMap { data in
            stride(from: 0, to: data.count - width + 1, by: width).compactMap {
                BluetoothUUID(littleEndianBytes: data[$0..<($0 + width)])
            }
        }
    }

    /// The Flags value (0x01 LE Limited, 0x02 LE General Discoverable, 0x04 BR/EDR Not Supported, …).
    public var flags: UInt8? { first(ADType.flags)?.first }

    /// Advertised service UUIDs, complete and incomplete lists of every width.
    public var serviceUUIDs: [BluetoothUUID] {
        uuids([ADType.incompleteServiceUUIDs16, ADType.completeServiceUUIDs16], width: 2)
            + uuids([ADType.incompleteServiceUUIDs32, ADType.completeServiceUUIDs32], width: 4)
            + uuids([ADType.incompleteServiceUUIDs128, ADType.completeServiceUUIDs128], width: 16)
    }

    /// Whether a service UUID list is marked incomplete (more services exist).
    public var hasIncompleteServiceList: Bool {
        structures.contains {
            [ADType.incompleteServiceUUIDs16, ADType.incompleteServiceUUIDs32, ADType.incompleteServiceUUIDs128]
                .contains($0.type)
        }
    }

    /// Service UUIDs the peripheral solicits (wants a central to offer).
    public var solicitedServiceUUIDs: [BluetoothUUID] {
        uuids([ADType.solicitedServiceUUIDs16], width: 2) + uuids([ADType.solicitedServiceUUIDs32], width: 4)
            + uuids([ADType.solicitedServiceUUIDs128], width: 16)
    }

    /// The complete local name, else the shortened one (UTF-8; invalid bytes replaced).
    public var localName: String? {
        (first(ADType.completeLocalName) ?? first(ADType.shortenedLocalName)).map {
            String(decoding: $0, as: UTF8.self)
        }
    }

    /// Whether ``localName`` is only the shortened name.
    public var isLocalNameShortened: Bool {
        first(ADType.completeLocalName) == nil && first(ADType.shortenedLocalName) != nil
    }

    /// The TX Power Level in dBm.
    public var txPowerLevel: Int8? { first(ADType.txPowerLevel)?.first.map { Int8(bitPattern: $0) } }

    /// The GAP Appearance value.
    public var appearance: UInt16? {
        guard let data = first(ADType.appearance), data.count >= 2 else { return nil }
        return UInt16(data[0]) | UInt16(data[1]) << 8
    }

    /// Manufacturer specific data: the company identifier and the bytes after it.
    public var manufacturerData: [ManufacturerData] {
        all(ADType.manufacturerSpecificData).compactMap { data in
            guard data.count >= 2 else { return nil }
            return ManufacturerData(companyIdentifier: UInt16(data[0]) | UInt16(data[1]) << 8, data: Array(data[2...]))
        }
    }

    /// Service data by service UUID (16, 32 and 128-bit forms).
    public var serviceData: [BluetoothUUID: [UInt8]] {
        var result: [BluetoothUUID: [UInt8]] = [:]
        for (type, width) in [(ADType.serviceData16, 2), (ADType.serviceData32, 4), (ADType.serviceData128, 16)] {
            for data in all(type) where data.count >= width {
                if let uuid = BluetoothUUID(littleEndianBytes: data[0..<width]) { result[uuid] = Array(data[width...]) }
            }
        }
        return result
    }

    /// Structures of AD types this value does not interpret, kept raw.
    public var otherStructures: [ADStructure] {
        let known: Set<UInt8> = [
            0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x14, 0x15, 0x16, 0x19, 0x1F, 0x20, 0x21, 0xFF,
        ]
        return structures.filter { !known.contains($0.type) }
    }
}

/// Manufacturer specific data (AD type 0xFF).
public struct ManufacturerData: Sendable, Equatable {
    /// The Bluetooth SIG company identifier.
    public var companyIdentifier: UInt16
    /// The bytes after the company identifier.
    public var data: [UInt8]

    /// Data of `companyIdentifier`.
    public init(companyIdentifier: UInt16, data: [UInt8]) {
        (self.companyIdentifier, self.data) = (companyIdentifier, data)
    }
}

/// How advertising data broke the AD structure rules.
public enum ADProblem: Sendable, Equatable, CustomStringConvertible {
    /// A structure's length runs past the end of the data.
    case runsPastEnd(offset: Int, length: Int, available: Int)
    /// A zero length followed by non-zero bytes.
    case zeroLength(offset: Int)

    /// What is wrong and where.
    public var description: String {
        switch self {
        case let .runsPastEnd(offset, length, available):
            "AD structure at offset \(offset) claims \(length) bytes but only \(available) follow"
        case let .zeroLength(offset):
            "AD structure at offset \(offset) has length 0 but data follows"
        }
    }
}
