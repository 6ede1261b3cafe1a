import BluetoothCore

// LE legacy advertising commands (Core Vol 4, Part E, 7.8.4–7.8.9); the extended advertising
// sets are in ExtendedAdvertisingCommands.swift.

extension Field {
    /// A 3-octet unsigned integer (Primary_Advertising_Interval_Min/Max); the top octet of
    /// the value is not sent.
    static func uint24(_ name: String, _ value: @escaping @Sendable (Message) -> UInt32) -> Field
    where Value == UInt32 {
        Field(
            name, read: { reader throws(DecodingError) in try reader.readUInt24() },
            write: { message, writer in writer.writeLittleEndian(UInt64(value(message) & 0xFF_FFFF), byteCount: 3) })
    }

    /// The 31 octets of legacy advertising or scan response data: a length and the data,
    /// zero-padded (7.8.7, 7.8.8). A length past 31 does not decode.
    static func legacyData(_ lengthField: String, _ name: String, _ value: @escaping @Sendable (Message) -> [UInt8])
        -> Field where Value == [UInt8]
    {
        Field(
            "\(lengthField), \(name)",
            read: { reader throws(DecodingError) in
                let length = Int(try reader.readUInt8())
                guard length <= 31 else { throw .invalidValue(field: lengthField, value: UInt64(length)) }
                return Array(try reader.readBytes(31).prefix(length))
            },
            write: { message, writer in
                let data = value(message)
                writer.write(UInt8(data.count))
                writer.write(bytes: data)
                writer.write(bytes: repeatElement(UInt8(0), count: 31 - data.count))
            })
    }
}

/// HCI_LE_Set_Random_Address (0x2005, 7.8.4): the random address legacy advertising,
/// scanning and initiating use with Own_Address_Type 0x01.
public struct LESetRandomAddress: HCICommand {
    /// OGF 0x08, OCF 0x005.
    public static let opcode = HCIOpcode(rawValue: 0x2005)
    /// The static or private random address.
    public var address: BluetoothAddress

    /// Sets the controller's random address.
    public init(address: BluetoothAddress) { self.address = address }

    /// Random_Address.
    public static let layout = MessageLayout(
        "LE_Set_Random_Address", Self.init(address:), Field("Random_Address", \.address))
}

/// HCI_LE_Set_Advertising_Parameters (0x2006, 7.8.5): how legacy advertising runs.
public struct LESetAdvertisingParameters: HCICommand {
    /// OGF 0x08, OCF 0x006.
    public static let opcode = HCIOpcode(rawValue: 0x2006)

    /// Advertising_Type: the legacy PDU sent.
    public enum AdvertisingType: UInt8, Sendable {
        /// 0x00 ADV_IND: connectable and scannable undirected.
        case connectableUndirected = 0x00
        /// 0x01 ADV_DIRECT_IND, high duty cycle.
        case connectableDirectedHighDuty = 0x01
        /// 0x02 ADV_SCAN_IND: scannable undirected.
        case scannableUndirected = 0x02
        /// 0x03 ADV_NONCONN_IND: non-connectable undirected.
        case nonConnectableUndirected = 0x03
        /// 0x04 ADV_DIRECT_IND, low duty cycle.
        case connectableDirectedLowDuty = 0x04
    }

    /// Advertising_Interval_Min, units of 0.625 ms (0x0020–0x4000).
    public var intervalMin: UInt16
    /// Advertising_Interval_Max, units of 0.625 ms (0x0020–0x4000), at least `intervalMin`.
    public var intervalMax: UInt16
    /// Which PDU is sent.
    public var advertisingType: AdvertisingType
    /// 0x00 public, 0x01 random, 0x02/0x03 resolvable private with public/random fallback.
    public var ownAddressType: UInt8
    /// For directed advertising: 0x00 public, 0x01 random.
    public var peerAddressType: UInt8
    /// For directed advertising: the central's address.
    public var peerAddress: BluetoothAddress
    /// Bit 0 channel 37, bit 1 channel 38, bit 2 channel 39 (0x07: all).
    public var channelMap: UInt8
    /// 0x00: scan and connect requests from anyone.
    public var filterPolicy: UInt8

    /// Legacy advertising parameters; 100 ms on all three channels by default.
    public init(
        intervalMin: UInt16 = 0x00A0, intervalMax: UInt16 = 0x00A0,
        advertisingType: AdvertisingType = .connectableUndirected,
        ownAddressType: UInt8 = 0, peerAddressType: UInt8 = 0,
        peerAddress: BluetoothAddress = BluetoothAddress(littleEndianBytes: [0, 0, 0, 0, 0, 0]),
        channelMap: UInt8 = 0x07, filterPolicy: UInt8 = 0
    ) {
        self.intervalMin = intervalMin
        self.intervalMax = intervalMax
        self.advertisingType = advertisingType
        self.ownAddressType = ownAddressType
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.channelMap = channelMap
        self.filterPolicy = filterPolicy
    }

    /// Advertising_Interval_Min, Advertising_Interval_Max, Advertising_Type, Own_Address_Type,
    /// Peer_Address_Type, Peer_Address, Advertising_Channel_Map, Advertising_Filter_Policy.
    public static let layout = MessageLayout(
        "LE_Set_Advertising_Parameters",
        Self.init(
            intervalMin:intervalMax:advertisingType:ownAddressType:peerAddressType:peerAddress:channelMap:filterPolicy:),
        Field("Advertising_Interval_Min", \.intervalMin), Field("Advertising_Interval_Max", \.intervalMax),
        .code("Advertising_Type", \.advertisingType), Field("Own_Address_Type", \.ownAddressType),
        Field("Peer_Address_Type", \.peerAddressType), Field("Peer_Address", \.peerAddress),
        Field("Advertising_Channel_Map", \.channelMap), Field("Advertising_Filter_Policy", \.filterPolicy))
}

/// HCI_LE_Read_Advertising_Physical_Channel_Tx_Power (0x2007, 7.8.6).
public struct LEReadAdvertisingPhysicalChannelTxPower: HCICommand {
    /// OGF 0x08, OCF 0x007.
    public static let opcode = HCIOpcode(rawValue: 0x2007)
    /// The command; it has no parameters.
    public init() {}
    /// No parameters.
    public static let layout = MessageLayout("LE_Read_Advertising_Physical_Channel_Tx_Power", Self.init)

    /// The power legacy advertising is sent with.
    public struct ReturnParameters: HCIParameters {
        /// TX_Power_Level in dBm (-127 to 20).
        public var txPowerLevel: Int8
        /// The return parameters from their field.
        public init(txPowerLevel: Int8) { self.txPowerLevel = txPowerLevel }
        /// TX_Power_Level.
        public static let layout = MessageLayout(
            "LE_Read_Advertising_Physical_Channel_Tx_Power", Self.init(txPowerLevel:),
            Field("TX_Power_Level", \.txPowerLevel))
    }
}

/// HCI_LE_Set_Advertising_Data (0x2008, 7.8.7): legacy advertising data, at most 31 octets.
public struct LESetAdvertisingData: HCICommand {
    /// OGF 0x08, OCF 0x008.
    public static let opcode = HCIOpcode(rawValue: 0x2008)
    /// The most data a legacy advertising PDU carries.
    public static let maximumLength = 31
    /// The significant part of the data (AD structures).
    public var data: [UInt8]

    /// Sets the data; traps past 31 octets (the advertiser checks first).
    public init(data: [UInt8]) {
        precondition(data.count <= Self.maximumLength, "legacy advertising data holds at most 31 octets")
        self.data = data
    }

    /// Advertising_Data_Length, Advertising_Data (31 octets, zero-padded).
    public static let layout = MessageLayout(
        "LE_Set_Advertising_Data", Self.init(data:),
        .legacyData("Advertising_Data_Length", "Advertising_Data", \.data))
}

/// HCI_LE_Set_Scan_Response_Data (0x2009, 7.8.8): legacy scan response data, at most 31 octets.
public struct LESetScanResponseData: HCICommand {
    /// OGF 0x08, OCF 0x009.
    public static let opcode = HCIOpcode(rawValue: 0x2009)
    /// The significant part of the data (AD structures).
    public var data: [UInt8]

    /// Sets the data; traps past 31 octets.
    public init(data: [UInt8]) {
        precondition(
            data.count <= LESetAdvertisingData.maximumLength, "legacy scan response data holds at most 31 octets")
        self.data = data
    }

    /// Scan_Response_Data_Length, Scan_Response_Data (31 octets, zero-padded).
    public static let layout = MessageLayout(
        "LE_Set_Scan_Response_Data", Self.init(data:),
        .legacyData("Scan_Response_Data_Length", "Scan_Response_Data", \.data))
}

/// HCI_LE_Set_Advertising_Enable (0x200A, 7.8.9): starts or stops legacy advertising.
public struct LESetAdvertisingEnable: HCICommand {
    /// OGF 0x08, OCF 0x00A.
    public static let opcode = HCIOpcode(rawValue: 0x200A)
    /// Whether advertising runs.
    public var enable: Bool

    /// Starts or stops legacy advertising.
    public init(enable: Bool) { self.enable = enable }

    /// Advertising_Enable.
    public static let layout = MessageLayout(
        "LE_Set_Advertising_Enable", Self.init(enable:), .flag("Advertising_Enable", \.enable))
}
