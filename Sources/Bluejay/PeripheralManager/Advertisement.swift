import BluetoothCore
import GAP
import HCI

/// What a peripheral advertises, in typed fields (Core Supplement Part A): the AD
/// structures are built from it and shared out between the advertising data and the scan
/// response. BlueCap's `startAdvertising(name, uuids)` takes the first two fields.
public struct Advertisement: Sendable, Equatable {
    /// The local name (Complete Local Name; Shortened when it has to be cut).
    public var localName: String?
    /// Service UUIDs (Complete List of 16-, 32- and 128-bit Service UUIDs).
    public var serviceUUIDs: [BluetoothUUID]
    /// Manufacturer Specific Data.
    public var manufacturerData: ManufacturerData?
    /// Service Data by service UUID.
    public var serviceData: [BluetoothUUID: [UInt8]]
    /// The TX Power Level to announce, in dBm.
    public var txPowerLevel: Int8?
    /// The GAP Appearance value.
    public var appearance: UInt16?
    /// More AD structures, sent as given (after the typed ones).
    public var otherStructures: [ADStructure]

    /// An advertisement of these fields.
    public init(
        localName: String? = nil, serviceUUIDs: [BluetoothUUID] = [], manufacturerData: ManufacturerData? = nil,
        serviceData: [BluetoothUUID: [UInt8]] = [:], txPowerLevel: Int8? = nil, appearance: UInt16? = nil,
        otherStructures: [ADStructure] = []
    ) {
        self.localName = localName
        self.serviceUUIDs = serviceUUIDs
        self.manufacturerData = manufacturerData
        self.serviceData = serviceData
        self.txPowerLevel = txPowerLevel
        self.appearance = appearance
        self.otherStructures = otherStructures
    }

    /// The AD structures, in the order they are placed: Flags first (for a discoverable
    /// kind: LE General Discoverable, BR/EDR Not Supported), then the UUID lists, the name,
    /// and the rest.
    public func structures(kind: AdvertisingKind) -> [ADStructure] {
        var structures: [ADStructure] = []
        // Flags (Core Supplement Part A, 1.3): 0x02 LE General Discoverable Mode, 0x04
        // BR/EDR Not Supported. A non-connectable broadcaster need not be discoverable.
        if kind != .nonConnectable { structures.append(ADStructure(type: ADType.flags, data: [0x06])) }
        for (width, type) in [
            (2, ADType.completeServiceUUIDs16), (4, ADType.completeServiceUUIDs32),
            (16, ADType.completeServiceUUIDs128),
        ] {
            let uuids = serviceUUIDs.filter { Self.width(of: $0) == width }
            if !uuids.isEmpty { structures.append(ADStructure(type: type, data: uuids.flatMap(\.littleEndianBytes))) }
        }
        if let localName { structures.append(ADStructure(type: ADType.completeLocalName, data: Array(localName.utf8))) }
        if let txPowerLevel {
            structures.append(ADStructure(type: ADType.txPowerLevel, data: [UInt8(bitPattern: txPowerLevel)]))
        }
        if let appearance {
            structures.append(
                ADStructure(
                    type: ADType.appearance, data: [UInt8(truncatingIfNeeded: appearance), UInt8(appearance >> 8)]))
        }
        if let manufacturerData {
            let company = manufacturerData.companyIdentifier
            structures.append(
                ADStructure(
                    type: ADType.manufacturerSpecificData,
                    data: [UInt8(truncatingIfNeeded: company), UInt8(company >> 8)] + manufacturerData.data))
        }
        for (uuid, data) in serviceData.sorted(by: { $0.key.description < $1.key.description }) {
            let type =
                switch Self.width(of: uuid) {
                case 2: ADType.serviceData16
                case 4: ADType.serviceData32
                default: ADType.serviceData128
                }
            structures.append(ADStructure(type: type, data: uuid.littleEndianBytes + data))
        }
        return structures + otherStructures
    }

    /// 2, 4 or 16: how many octets the UUID takes in AD structures.
    private static func width(of uuid: BluetoothUUID) -> Int { uuid.littleEndianBytes.count }

    /// The advertising data and scan response, each at most `maximum` octets: structures go
    /// to the advertising data while they fit, then to the scan response (only for the
    /// scannable kinds); a name that fits neither is shortened (Shortened Local Name).
    /// Throws `AdvertisingError.dataTooLong` when a structure fits
    /// nowhere.
    public func split(kind: AdvertisingKind, maximum: Int = LESetAdvertisingData.maximumLength) throws(AdvertisingError)
        -> (data: AdvertisingData, scanResponse: AdvertisingData)
    {
        var data: [ADStructure] = [], response: [ADStructure] = []
        func size(_ list: [ADStructure]) -> Int { list.reduce(0) { $0 + 2 + $1.data.count } }
        for var structure in structures(kind: kind) {
            if size(data) + 2 + structure.data.count <= maximum {
                data.append(structure)
                continue
            }
            if kind != .nonConnectable, size(response) + 2 + structure.data.count <= maximum {
                response.append(structure)
                continue
            }
            if structure.type == ADType.completeLocalName {
                // Shortened to what is left where there is most room, at a character boundary.
                let room = max(maximum - size(data), kind == .nonConnectable ? 0 : maximum - size(response)) - 2
                var name = Substring(String(decoding: structure.data, as: UTF8.self))
                while name.utf8.count > room, !name.isEmpty { name.removeLast() }
                if !name.isEmpty {
                    structure = ADStructure(type: ADType.shortenedLocalName, data: Array(name.utf8))
                    if size(data) + 2 + structure.data.count <= maximum {
                        data.append(structure)
                    } else {
                        response.append(structure)
                    }
                    continue
                }
            }
            throw .dataTooLong(
                what: "the advertisement (AD type \(hex(structure.type, digits: 2)))",
                length: size(data) + 2 + structure.data.count,
                maximum: maximum)
        }
        return (AdvertisingData(structures: data), AdvertisingData(structures: response))
    }
}
