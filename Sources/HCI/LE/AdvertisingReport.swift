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
    public init(
        connectable: Bool, scannable: Bool, directed: Bool, isScanResponse: Bool, legacy: Bool,
        addressType: AddressType, address: BluetoothAddress, rssi: Int8?, txPower: Int8? = nil,
        dataStatus: UInt8 = 0, data: [UInt8]
    ) {
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
    public static let legacySubevent = LEAdvertisingReport.subeventCode
    /// Subevent 0x0D, LE Extended Advertising Report.
    public static let extendedSubevent = LEExtendedAdvertisingReport.subeventCode

    /// Decodes the reports of an LE Advertising Report or LE Extended Advertising Report;
    /// `nil` for any other subevent. Octets after the last report are ignored (the
    /// tolerance rule).
    public static func decode(_ event: LEMetaEvent) throws(DecodingError) -> [AdvertisingReport]? {
        try decodeCountingExtraOctets(event)?.reports
    }

    /// Decodes the reports as ``decode(_:)`` does and counts the octets after the last
    /// report, which are ignored.
    public static func decodeCountingExtraOctets(_ event: LEMetaEvent) throws(DecodingError) -> (
        reports: [AdvertisingReport], extraOctets: Int
    )? {
        switch event.subeventCode {
        case legacySubevent:
            let (legacy, extraOctets) = try LEAdvertisingReport.decodeCountingExtraOctets(event.parameters)
            return (legacy.reports.map(AdvertisingReport.init), extraOctets)
        case extendedSubevent:
            let (extended, extraOctets) = try LEExtendedAdvertisingReport.decodeCountingExtraOctets(event.parameters)
            return (extended.reports.map(AdvertisingReport.init), extraOctets)
        default:
            return nil
        }
    }

    /// Encodes reports as an LE Meta event of the legacy or extended kind (for emulated
    /// controllers in tests).
    public static func encode(_ reports: [AdvertisingReport], extended: Bool) -> LEMetaEvent {
        extended
            ? LEExtendedAdvertisingReport(reports: reports.map(LEExtendedAdvertisingReport.Report.init)).meta
            : LEAdvertisingReport(reports: reports.map(LEAdvertisingReport.Report.init)).meta
    }

    /// The report a legacy one says: its event type is the kind of PDU it came in.
    init(_ report: LEAdvertisingReport.Report) {
        let type = report.eventType
        self.init(
            connectable: type == .advInd || type == .advDirectInd,
            scannable: type == .advInd || type == .advScanInd || type == .scanRsp,
            directed: type == .advDirectInd, isScanResponse: type == .scanRsp, legacy: true,
            addressType: report.addressType,
            address: report.address, rssi: report.rssi == 127 ? nil : report.rssi, data: Array(report.data))
    }

    /// The report an extended one says: its event type is a set of properties.
    init(_ report: LEExtendedAdvertisingReport.Report) {
        let type = report.eventType
        self.init(
            connectable: type & 0x01 != 0, scannable: type & 0x02 != 0, directed: type & 0x04 != 0,
            isScanResponse: type & 0x08 != 0, legacy: type & 0x10 != 0, addressType: report.addressType,
            address: report.address,
            rssi: report.rssi == 127 ? nil : report.rssi, txPower: report.txPower == 127 ? nil : report.txPower,
            dataStatus: UInt8((type >> 5) & 0b11), data: Array(report.data))
    }
}

// MARK: The advertising report subevents (Core Vol 4, Part E, 7.7.65.2 and 7.7.65.13)

/// LE Advertising Report (0x02, 7.7.65.2): advertisements and scan responses received by
/// legacy scanning.
public struct LEAdvertisingReport: LESubeventParameters {
    /// 0x02.
    public static let subeventCode: UInt8 = 0x02

    /// The kind of advertising PDU a report came in (Event_Type).
    public enum EventType: UInt8, Sendable {
        /// ADV_IND: connectable and scannable, undirected.
        case advInd = 0x00
        /// ADV_DIRECT_IND: connectable, directed.
        case advDirectInd = 0x01
        /// ADV_SCAN_IND: scannable, undirected.
        case advScanInd = 0x02
        /// ADV_NONCONN_IND: neither connectable nor scannable.
        case advNonconnInd = 0x03
        /// SCAN_RSP: a scan response.
        case scanRsp = 0x04
    }

    /// One report.
    public struct Report: Sendable, Equatable, LaidOut {
        /// Event_Type.
        public var eventType: EventType
        /// Address_Type of the advertiser.
        public var addressType: AddressType
        /// Address of the advertiser.
        public var address: BluetoothAddress
        /// Data: at most 31 octets of advertising or scan response data.
        public var data: ArraySlice<UInt8>
        /// RSSI in dBm; 127 when the controller could not measure it.
        public var rssi: Int8

        /// Creates a report from its fields.
        public init(
            eventType: EventType, addressType: AddressType, address: BluetoothAddress, data: ArraySlice<UInt8>,
            rssi: Int8
        ) {
            (self.eventType, self.addressType, self.address, self.data, self.rssi) =
                (eventType, addressType, address, data, rssi)
        }

        /// The legacy report of `report`: the PDU kind its flags say, scan response first.
        init(_ report: AdvertisingReport) {
            let type: EventType =
                report.isScanResponse
                ? .scanRsp
                : report.directed
                    ? .advDirectInd
                    : report.connectable ? .advInd : report.scannable ? .advScanInd : .advNonconnInd
            self.init(
                eventType: type, addressType: report.addressType, address: report.address, data: report.data[...],
                rssi: report.rssi ?? 127)
        }

        /// Event_Type, Address_Type, Address, Data_Length, Data, RSSI.
        public static let layout = MessageLayout(
            "LE_Advertising_Report_Entry", Self.init(eventType:addressType:address:data:rssi:),
            .code("Event_Type", \.eventType), .code("Address_Type", \.addressType),
            Field("Address", \.address), .lengthPrefixed("Data_Length", "Data", maximum: 31, \.data),
            Field("RSSI", \.rssi))
    }

    /// The reports, in the order received.
    public var reports: [Report]

    /// Creates the subevent from its reports.
    public init(reports: [Report]) { self.reports = reports }

    /// Num_Reports, then each report's fields.
    public static let layout = MessageLayout(
        "LE_Advertising_Report", Self.init(reports:), .counted("Num_Reports", "Reports", \.reports))
}

/// LE Extended Advertising Report (0x0D, 7.7.65.13): advertisements and scan responses
/// received by extended scanning, legacy PDUs included.
public struct LEExtendedAdvertisingReport: LESubeventParameters {
    /// 0x0D.
    public static let subeventCode: UInt8 = 0x0D

    /// One report.
    public struct Report: Sendable, Equatable, LaidOut {
        /// Event_Type: bit 0 connectable, 1 scannable, 2 directed, 3 scan response, 4 legacy
        /// PDU, bits 5–6 data status.
        public var eventType: UInt16
        /// Address_Type of the advertiser.
        public var addressType: AddressType
        /// Address of the advertiser.
        public var address: BluetoothAddress
        /// Primary_PHY: 0x01 LE 1M, 0x03 LE Coded.
        public var primaryPHY: UInt8
        /// Secondary_PHY: 0x00 none, 0x01 LE 1M, 0x02 LE 2M, 0x03 LE Coded.
        public var secondaryPHY: UInt8
        /// Advertising_SID: the advertising set's identifier; 0xFF none.
        public var advertisingSID: UInt8
        /// TX_Power in dBm; 127 not available.
        public var txPower: Int8
        /// RSSI in dBm; 127 not available.
        public var rssi: Int8
        /// Periodic_Advertising_Interval, units of 1.25 ms; 0 none.
        public var periodicAdvertisingInterval: UInt16
        /// Direct_Address_Type of a directed advertisement's target.
        public var directAddressType: UInt8
        /// Direct_Address: a directed advertisement's target.
        public var directAddress: BluetoothAddress
        /// Data: advertising or scan response data.
        public var data: ArraySlice<UInt8>

        /// Creates a report from its fields.
        public init(
            eventType: UInt16, addressType: AddressType, address: BluetoothAddress, primaryPHY: UInt8,
            secondaryPHY: UInt8,
            advertisingSID: UInt8, txPower: Int8, rssi: Int8, periodicAdvertisingInterval: UInt16,
            directAddressType: UInt8,
            directAddress: BluetoothAddress, data: ArraySlice<UInt8>
        ) {
            self.eventType = eventType
            self.addressType = addressType
            self.address = address
            self.primaryPHY = primaryPHY
            self.secondaryPHY = secondaryPHY
            self.advertisingSID = advertisingSID
            self.txPower = txPower
            self.rssi = rssi
            self.periodicAdvertisingInterval = periodicAdvertisingInterval
            self.directAddressType = directAddressType
            self.directAddress = directAddress
            self.data = data
        }

        /// The extended report of `report`, as received on the LE 1M PHY from no advertising
        /// set, not periodic, not directed.
        init(_ report: AdvertisingReport) {
            var eventType = UInt16(report.dataStatus & 0b11) << 5
            if report.connectable { eventType |= 0x01 }
            if report.scannable { eventType |= 0x02 }
            if report.directed { eventType |= 0x04 }
            if report.isScanResponse { eventType |= 0x08 }
            if report.legacy { eventType |= 0x10 }
            self.init(
                eventType: eventType, addressType: report.addressType, address: report.address, primaryPHY: 0x01,
                secondaryPHY: 0x00,
                advertisingSID: 0xFF, txPower: report.txPower ?? 127, rssi: report.rssi ?? 127,
                periodicAdvertisingInterval: 0,
                directAddressType: 0, directAddress: BluetoothAddress(littleEndianBytes: [0, 0, 0, 0, 0, 0]),
                data: report.data[...])
        }

        /// Event_Type, Address_Type, Address, Primary_PHY, Secondary_PHY, Advertising_SID,
        /// TX_Power, RSSI, Periodic_Advertising_Interval, Direct_Address_Type, Direct_Address,
        /// Data_Length, Data.
        public static let layout = MessageLayout(
            "LE_Extended_Advertising_Report_Entry",
            Self.init(
                eventType:addressType:address:primaryPHY:secondaryPHY:advertisingSID:txPower:rssi:
                periodicAdvertisingInterval:
                directAddressType:directAddress:data:),
            Field("Event_Type", \.eventType), .code("Address_Type", \.addressType), Field("Address", \.address),
            Field("Primary_PHY", \.primaryPHY), Field("Secondary_PHY", \.secondaryPHY),
            Field("Advertising_SID", \.advertisingSID),
            Field("TX_Power", \.txPower), Field("RSSI", \.rssi),
            Field("Periodic_Advertising_Interval", \.periodicAdvertisingInterval),
            Field("Direct_Address_Type", \.directAddressType), Field("Direct_Address", \.directAddress),
            .lengthPrefixed("Data_Length", "Data", \.data))
    }

    /// The reports, in the order received.
    public var reports: [Report]

    /// Creates the subevent from its reports.
    public init(reports: [Report]) { self.reports = reports }

    /// Num_Reports, then each report's fields.
    public static let layout = MessageLayout(
        "LE_Extended_Advertising_Report", Self.init(reports:),
        .counted("Num_Reports", "Reports", \.reports))
}
