import BluetoothCore

/// One advertisement or scan response as a controller reports it, from either the
/// legacy LE Advertising Report (0x02) or the LE Extended Advertising Report (0x0D).
public struct AdvertisingReport: Sendable, Equatable {
    /// The advertiser may be connected to.
    public var connectable: Bool
    /// The advertiser answers scan requests.
    public var scannable: Bool
    /// The advertisement is directed at one device.
    public var directed: Bool
    /// This is a scan response, not an advertisement.
    public var isScanResponse: Bool
    /// Sent with legacy advertising PDUs.
    public var legacy: Bool
    /// The advertiser's address type.
    public var addressType: AddressType
    /// The advertiser's address.
    public var address: BluetoothAddress
    /// Received signal strength in dBm; `nil` when the controller could not measure it (127).
    public var rssi: Int8?
    /// The advertiser's TX power in dBm, when the extended report carries it.
    public var txPower: Int8?
    /// 0 complete; 1 incomplete, more reports follow; 2 incomplete, truncated (extended reports only).
    public var dataStatus: UInt8
    /// The advertising data or scan-response data bytes.
    public var data: [UInt8]

    /// A report with every field given.
    public init(connectable: Bool, scannable: Bool, directed: Bool, isScanResponse: Bool, legacy: Bool,
                addressType: AddressType, address: BluetoothAddress, rssi: Int8?, txPower: Int8? = nil,
                dataStatus: UInt8 = 0, data: [UInt8]) {
        self.connectable = connectable
        self.scannable = scannable
        self.directed = directed
        self.isScanResponse = isScanResponse
        self.legacy = legacy
        self.addressType = addressType
        self.address = address
        self.rssi = rssi
        self.txPower = txPower
        self.dataStatus = dataStatus
        self.data = data
    }

    /// Subevent 0x02, LE Advertising Report.
    public static let legacySubevent: UInt8 = 0x02
    /// Subevent 0x0D, LE Extended Advertising Report.
    public static let extendedSubevent: UInt8 = 0x0D

    /// Decodes the reports of an LE Advertising Report or LE Extended Advertising Report;
    /// `nil` for any other subevent. Octets after the last report are ignored (the
    /// tolerance rule).
    public static func decode(_ event: LEMetaEvent) throws(DecodingError) -> [AdvertisingReport]? {
        try decodeCountingExtraOctets(event)?.reports
    }

    /// Decodes the reports as ``decode(_:)`` does and counts the octets after the last
    /// report, which are ignored.
    public static func decodeCountingExtraOctets(_ event: LEMetaEvent) throws(DecodingError) -> (reports: [AdvertisingReport], extraOctets: Int)? {
        var reader = ByteReader(event.parameters)
        let decodeOne: (inout ByteReader) throws(DecodingError) -> AdvertisingReport
        switch event.subeventCode {
        case legacySubevent: decodeOne = decodeLegacy
        case extendedSubevent: decodeOne = decodeExtended
        default: return nil
        }
        let count = Int(try reader.readUInt8())
        var reports: [AdvertisingReport] = []
        reports.reserveCapacity(count)
        for _ in 0..<count { reports.append(try decodeOne(&reader)) }
        return (reports, reader.skipExtraOctets())
    }

    private static func addressType(_ raw: UInt8) throws(DecodingError) -> AddressType {
        guard let type = AddressType(rawValue: raw) else { throw .invalidValue(field: "Address_Type", value: UInt64(raw)) }
        return type
    }

    private static func decodeLegacy(_ reader: inout ByteReader) throws(DecodingError) -> AdvertisingReport {
        let eventType = try reader.readUInt8()
        guard eventType <= 0x04 else { throw .invalidValue(field: "Event_Type", value: UInt64(eventType)) }
        let type = try addressType(try reader.readUInt8())
        let address = try BluetoothAddress(from: &reader)
        let length = Int(try reader.readUInt8())
        guard length <= 31 else { throw .invalidValue(field: "Data_Length", value: UInt64(length)) }
        let data = Array(try reader.readBytes(length))
        let rssi = Int8(bitPattern: try reader.readUInt8())
        // ADV_IND 0, ADV_DIRECT_IND 1, ADV_SCAN_IND 2, ADV_NONCONN_IND 3, SCAN_RSP 4.
        return AdvertisingReport(connectable: eventType <= 1, scannable: eventType == 0 || eventType == 2 || eventType == 4,
                                 directed: eventType == 1, isScanResponse: eventType == 4, legacy: true,
                                 addressType: type, address: address, rssi: rssi == 127 ? nil : rssi, data: data)
    }

    private static func decodeExtended(_ reader: inout ByteReader) throws(DecodingError) -> AdvertisingReport {
        let eventType = try reader.readUInt16()
        let type = try addressType(try reader.readUInt8())
        let address = try BluetoothAddress(from: &reader)
        _ = try reader.readUInt8()   // primary PHY
        _ = try reader.readUInt8()   // secondary PHY
        _ = try reader.readUInt8()   // advertising SID
        let txPower = Int8(bitPattern: try reader.readUInt8())
        let rssi = Int8(bitPattern: try reader.readUInt8())
        _ = try reader.readUInt16()  // periodic advertising interval
        _ = try reader.readUInt8()   // direct address type
        _ = try reader.readBytes(6)  // direct address
        let length = Int(try reader.readUInt8())
        let data = Array(try reader.readBytes(length))
        return AdvertisingReport(connectable: eventType & 0x01 != 0, scannable: eventType & 0x02 != 0,
                                 directed: eventType & 0x04 != 0, isScanResponse: eventType & 0x08 != 0,
                                 legacy: eventType & 0x10 != 0, addressType: type, address: address,
                                 rssi: rssi == 127 ? nil : rssi, txPower: txPower == 127 ? nil : txPower,
                                 dataStatus: UInt8((eventType >> 5) & 0b11), data: data)
    }

    /// Encodes reports as an LE Meta event of the legacy or extended kind (for emulated
    /// controllers in tests).
    public static func encode(_ reports: [AdvertisingReport], extended: Bool) -> LEMetaEvent {
        var writer = ByteWriter()
        writer.write(UInt8(reports.count))
        for report in reports {
            if extended {
                var eventType: UInt16 = 0
                if report.connectable { eventType |= 0x01 }
                if report.scannable { eventType |= 0x02 }
                if report.directed { eventType |= 0x04 }
                if report.isScanResponse { eventType |= 0x08 }
                if report.legacy { eventType |= 0x10 }
                eventType |= UInt16(report.dataStatus & 0b11) << 5
                writer.write(eventType)
                writer.write(report.addressType.rawValue)
                report.address.encode(to: &writer)
                writer.write(UInt8(1))
                writer.write(UInt8(0))
                writer.write(UInt8(0xFF))
                writer.write(UInt8(bitPattern: report.txPower ?? 127))
                writer.write(UInt8(bitPattern: report.rssi ?? 127))
                writer.write(UInt16(0))
                writer.write(UInt8(0))
                writer.write(bytes: [UInt8](repeating: 0, count: 6))
            } else {
                let eventType: UInt8 = report.isScanResponse ? 4 : report.directed ? 1
                    : report.connectable ? 0 : report.scannable ? 2 : 3
                writer.write(eventType)
                writer.write(report.addressType.rawValue)
                report.address.encode(to: &writer)
            }
            writer.write(UInt8(report.data.count))
            writer.write(bytes: report.data)
            if !extended { writer.write(UInt8(bitPattern: report.rssi ?? 127)) }
        }
        return LEMetaEvent(subeventCode: extended ? extendedSubevent : legacySubevent, parameters: writer.bytes[...])
    }
}
