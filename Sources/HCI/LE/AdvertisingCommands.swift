import BluetoothCore

// LE advertising commands: legacy (Core Vol 4, Part E, 7.8.4–7.8.9) and extended advertising
// sets (7.8.52–7.8.60), and the LE Advertising Set Terminated subevent (7.7.65.18).

extension Field {
    /// A 3-octet unsigned integer (Primary_Advertising_Interval_Min/Max); the top octet of
    /// the value is not sent.
    static func uint24(_ name: String, _ value: @escaping @Sendable (Message) -> UInt32) -> Field where Value == UInt32 {
        Field(name, read: { reader throws(DecodingError) in try reader.readUInt24() },
              write: { message, writer in writer.writeLittleEndian(UInt64(value(message) & 0xFF_FFFF), byteCount: 3) })
    }

    /// The 31 octets of legacy advertising or scan response data: a length and the data,
    /// zero-padded (7.8.7, 7.8.8). A length past 31 does not decode.
    static func legacyData(_ lengthField: String, _ name: String, _ value: @escaping @Sendable (Message) -> [UInt8]) -> Field where Value == [UInt8] {
        Field("\(lengthField), \(name)", read: { reader throws(DecodingError) in
            let length = Int(try reader.readUInt8())
            guard length <= 31 else { throw .invalidValue(field: lengthField, value: UInt64(length)) }
            return Array(try reader.readBytes(31).prefix(length))
        }, write: { message, writer in
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
    public static let layout = MessageLayout("LE_Set_Random_Address", Self.init(address:), Field("Random_Address", \.address))
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
    public init(intervalMin: UInt16 = 0x00A0, intervalMax: UInt16 = 0x00A0, advertisingType: AdvertisingType = .connectableUndirected,
                ownAddressType: UInt8 = 0, peerAddressType: UInt8 = 0, peerAddress: BluetoothAddress = BluetoothAddress(littleEndianBytes: [0, 0, 0, 0, 0, 0]),
                channelMap: UInt8 = 0x07, filterPolicy: UInt8 = 0) {
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
        Self.init(intervalMin:intervalMax:advertisingType:ownAddressType:peerAddressType:peerAddress:channelMap:filterPolicy:),
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
        public static let layout = MessageLayout("LE_Read_Advertising_Physical_Channel_Tx_Power", Self.init(txPowerLevel:),
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
    public static let layout = MessageLayout("LE_Set_Advertising_Data", Self.init(data:),
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
        precondition(data.count <= LESetAdvertisingData.maximumLength, "legacy scan response data holds at most 31 octets")
        self.data = data
    }

    /// Scan_Response_Data_Length, Scan_Response_Data (31 octets, zero-padded).
    public static let layout = MessageLayout("LE_Set_Scan_Response_Data", Self.init(data:),
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
    public static let layout = MessageLayout("LE_Set_Advertising_Enable", Self.init(enable:), .flag("Advertising_Enable", \.enable))
}

// MARK: - Extended advertising sets

/// HCI_LE_Set_Advertising_Set_Random_Address (0x2035, 7.8.52).
public struct LESetAdvertisingSetRandomAddress: HCICommand {
    /// OGF 0x08, OCF 0x035.
    public static let opcode = HCIOpcode(rawValue: 0x2035)
    /// The set.
    public var advertisingHandle: UInt8
    /// Its random address.
    public var address: BluetoothAddress

    /// Sets the random address of set `advertisingHandle`.
    public init(advertisingHandle: UInt8, address: BluetoothAddress) {
        self.advertisingHandle = advertisingHandle
        self.address = address
    }

    /// Advertising_Handle, Random_Address.
    public static let layout = MessageLayout("LE_Set_Advertising_Set_Random_Address", Self.init(advertisingHandle:address:),
                                             Field("Advertising_Handle", \.advertisingHandle), Field("Random_Address", \.address))
}

/// Advertising_Event_Properties of an extended advertising set (7.8.53).
public struct AdvertisingEventProperties: OptionSet, Sendable, Hashable, WireRawRepresentable {
    /// The 16-bit field.
    public let rawValue: UInt16
    /// Properties from their bits.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// Bit 0: connectable.
    public static let connectable = AdvertisingEventProperties(rawValue: 1 << 0)
    /// Bit 1: scannable.
    public static let scannable = AdvertisingEventProperties(rawValue: 1 << 1)
    /// Bit 2: directed.
    public static let directed = AdvertisingEventProperties(rawValue: 1 << 2)
    /// Bit 3: high duty cycle directed connectable.
    public static let highDutyCycle = AdvertisingEventProperties(rawValue: 1 << 3)
    /// Bit 4: legacy advertising PDUs.
    public static let legacy = AdvertisingEventProperties(rawValue: 1 << 4)
    /// Bit 5: omit the advertiser's address from all PDUs (anonymous).
    public static let anonymous = AdvertisingEventProperties(rawValue: 1 << 5)
    /// Bit 6: include TX power in the extended header.
    public static let includeTxPower = AdvertisingEventProperties(rawValue: 1 << 6)
}

/// HCI_LE_Set_Extended_Advertising_Parameters [v1] (0x2036, 7.8.53).
public struct LESetExtendedAdvertisingParameters: HCICommand {
    /// OGF 0x08, OCF 0x036.
    public static let opcode = HCIOpcode(rawValue: 0x2036)

    /// The set, 0x00–0xEF.
    public var advertisingHandle: UInt8
    /// What kind of advertising.
    public var eventProperties: AdvertisingEventProperties
    /// Primary_Advertising_Interval_Min, units of 0.625 ms (0x000020–0xFFFFFF).
    public var intervalMin: UInt32
    /// Primary_Advertising_Interval_Max, units of 0.625 ms.
    public var intervalMax: UInt32
    /// Bit 0 channel 37, bit 1 channel 38, bit 2 channel 39.
    public var channelMap: UInt8
    /// 0x00 public, 0x01 random (the set's own), 0x02/0x03 resolvable private.
    public var ownAddressType: UInt8
    /// For directed advertising: 0x00 public, 0x01 random.
    public var peerAddressType: UInt8
    /// For directed advertising: the central's address.
    public var peerAddress: BluetoothAddress
    /// 0x00: scan and connect requests from anyone.
    public var filterPolicy: UInt8
    /// Advertising_TX_Power in dBm (-127 to 20), or 127 (0x7F): no preference.
    public var txPower: Int8
    /// 0x01 LE 1M, 0x03 LE Coded.
    public var primaryPHY: UInt8
    /// Secondary_Advertising_Max_Skip: 0 sends AUX_ADV_IND every event.
    public var secondaryMaxSkip: UInt8
    /// 0x01 LE 1M, 0x02 LE 2M, 0x03 LE Coded.
    public var secondaryPHY: UInt8
    /// Advertising_SID, 0x00–0x0F.
    public var sid: UInt8
    /// Whether LE Scan Request Received events are sent.
    public var scanRequestNotification: Bool

    /// Extended advertising parameters; by default connectable and scannable with legacy PDUs
    /// every 100 ms on all channels, LE 1M.
    public init(advertisingHandle: UInt8 = 0, eventProperties: AdvertisingEventProperties = [.connectable, .scannable, .legacy],
                intervalMin: UInt32 = 0xA0, intervalMax: UInt32 = 0xA0, channelMap: UInt8 = 0x07, ownAddressType: UInt8 = 0,
                peerAddressType: UInt8 = 0, peerAddress: BluetoothAddress = BluetoothAddress(littleEndianBytes: [0, 0, 0, 0, 0, 0]),
                filterPolicy: UInt8 = 0, txPower: Int8 = 0x7F, primaryPHY: UInt8 = 0x01, secondaryMaxSkip: UInt8 = 0,
                secondaryPHY: UInt8 = 0x01, sid: UInt8 = 0, scanRequestNotification: Bool = false) {
        self.advertisingHandle = advertisingHandle
        self.eventProperties = eventProperties
        self.intervalMin = intervalMin
        self.intervalMax = intervalMax
        self.channelMap = channelMap
        self.ownAddressType = ownAddressType
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.filterPolicy = filterPolicy
        self.txPower = txPower
        self.primaryPHY = primaryPHY
        self.secondaryMaxSkip = secondaryMaxSkip
        self.secondaryPHY = secondaryPHY
        self.sid = sid
        self.scanRequestNotification = scanRequestNotification
    }

    /// Advertising_Handle, Advertising_Event_Properties, Primary_Advertising_Interval_Min,
    /// Primary_Advertising_Interval_Max, Primary_Advertising_Channel_Map, Own_Address_Type,
    /// Peer_Address_Type, Peer_Address, Advertising_Filter_Policy, Advertising_TX_Power,
    /// Primary_Advertising_PHY, Secondary_Advertising_Max_Skip, Secondary_Advertising_PHY,
    /// Advertising_SID, Scan_Request_Notification_Enable.
    public static let layout = MessageLayout(
        "LE_Set_Extended_Advertising_Parameters",
        Self.init(advertisingHandle:eventProperties:intervalMin:intervalMax:channelMap:ownAddressType:peerAddressType:peerAddress:
                  filterPolicy:txPower:primaryPHY:secondaryMaxSkip:secondaryPHY:sid:scanRequestNotification:),
        Field("Advertising_Handle", \.advertisingHandle), Field("Advertising_Event_Properties", \.eventProperties),
        .uint24("Primary_Advertising_Interval_Min", \.intervalMin), .uint24("Primary_Advertising_Interval_Max", \.intervalMax),
        Field("Primary_Advertising_Channel_Map", \.channelMap), Field("Own_Address_Type", \.ownAddressType),
        Field("Peer_Address_Type", \.peerAddressType), Field("Peer_Address", \.peerAddress),
        Field("Advertising_Filter_Policy", \.filterPolicy), Field("Advertising_TX_Power", \.txPower),
        Field("Primary_Advertising_PHY", \.primaryPHY), Field("Secondary_Advertising_Max_Skip", \.secondaryMaxSkip),
        Field("Secondary_Advertising_PHY", \.secondaryPHY), Field("Advertising_SID", \.sid),
        .flag("Scan_Request_Notification_Enable", \.scanRequestNotification))

    /// The power the controller chose.
    public struct ReturnParameters: HCIParameters {
        /// Selected_TX_Power in dBm.
        public var selectedTxPower: Int8
        /// The return parameters from their field.
        public init(selectedTxPower: Int8) { self.selectedTxPower = selectedTxPower }
        /// Selected_TX_Power.
        public static let layout = MessageLayout("LE_Set_Extended_Advertising_Parameters", Self.init(selectedTxPower:),
                                                 Field("Selected_TX_Power", \.selectedTxPower))
    }
}

/// Operation of LE Set Extended Advertising / Scan Response Data (7.8.54): which fragment.
public enum AdvertisingDataOperation: UInt8, Sendable {
    /// 0x00: an intermediate fragment.
    case intermediateFragment = 0x00
    /// 0x01: the first fragment.
    case firstFragment = 0x01
    /// 0x02: the last fragment.
    case lastFragment = 0x02
    /// 0x03: the complete data in one command.
    case complete = 0x03
    /// 0x04: unchanged data, new Advertising DID (advertising data only).
    case unchangedData = 0x04

    /// The most data octets one command carries.
    public static let maximumFragmentLength = 251

    /// The operations for data of `length` octets sent in fragments of at most 251.
    public static func fragments(of data: [UInt8]) -> [(AdvertisingDataOperation, ArraySlice<UInt8>)] {
        guard data.count > maximumFragmentLength else { return [(.complete, data[...])] }
        let starts = Array(stride(from: 0, to: data.count, by: maximumFragmentLength))
        return starts.enumerated().map { index, start in
            let part = data[start..<min(start + maximumFragmentLength, data.count)]
            let operation: AdvertisingDataOperation = index == 0 ? .firstFragment : index == starts.count - 1 ? .lastFragment : .intermediateFragment
            return (operation, part)
        }
    }
}

/// HCI_LE_Set_Extended_Advertising_Data (0x2037, 7.8.54).
public struct LESetExtendedAdvertisingData: HCICommand {
    /// OGF 0x08, OCF 0x037.
    public static let opcode = HCIOpcode(rawValue: 0x2037)
    /// The set.
    public var advertisingHandle: UInt8
    /// Which fragment this is.
    public var operation: AdvertisingDataOperation
    /// 0x00: the controller may fragment; 0x01: it should not.
    public var fragmentPreference: UInt8
    /// This fragment's data, at most 251 octets.
    public var data: ArraySlice<UInt8>

    /// A fragment of set `advertisingHandle`'s data.
    public init(advertisingHandle: UInt8, operation: AdvertisingDataOperation = .complete, fragmentPreference: UInt8 = 0x01,
                data: ArraySlice<UInt8>) {
        self.advertisingHandle = advertisingHandle
        self.operation = operation
        self.fragmentPreference = fragmentPreference
        self.data = data
    }

    /// Advertising_Handle, Operation, Fragment_Preference, Advertising_Data_Length, Advertising_Data.
    public static let layout = MessageLayout("LE_Set_Extended_Advertising_Data", Self.init(advertisingHandle:operation:fragmentPreference:data:),
                                             Field("Advertising_Handle", \.advertisingHandle), .code("Operation", \.operation),
                                             Field("Fragment_Preference", \.fragmentPreference),
                                             .lengthPrefixed("Advertising_Data_Length", "Advertising_Data", maximum: 251, \.data))
}

/// HCI_LE_Set_Extended_Scan_Response_Data (0x2038, 7.8.55).
public struct LESetExtendedScanResponseData: HCICommand {
    /// OGF 0x08, OCF 0x038.
    public static let opcode = HCIOpcode(rawValue: 0x2038)
    /// The set.
    public var advertisingHandle: UInt8
    /// Which fragment this is.
    public var operation: AdvertisingDataOperation
    /// 0x00: the controller may fragment; 0x01: it should not.
    public var fragmentPreference: UInt8
    /// This fragment's data, at most 251 octets.
    public var data: ArraySlice<UInt8>

    /// A fragment of set `advertisingHandle`'s scan response.
    public init(advertisingHandle: UInt8, operation: AdvertisingDataOperation = .complete, fragmentPreference: UInt8 = 0x01,
                data: ArraySlice<UInt8>) {
        self.advertisingHandle = advertisingHandle
        self.operation = operation
        self.fragmentPreference = fragmentPreference
        self.data = data
    }

    /// Advertising_Handle, Operation, Fragment_Preference, Scan_Response_Data_Length, Scan_Response_Data.
    public static let layout = MessageLayout("LE_Set_Extended_Scan_Response_Data", Self.init(advertisingHandle:operation:fragmentPreference:data:),
                                             Field("Advertising_Handle", \.advertisingHandle), .code("Operation", \.operation),
                                             Field("Fragment_Preference", \.fragmentPreference),
                                             .lengthPrefixed("Scan_Response_Data_Length", "Scan_Response_Data", maximum: 251, \.data))
}

/// HCI_LE_Set_Extended_Advertising_Enable (0x2039, 7.8.56).
public struct LESetExtendedAdvertisingEnable: HCICommand {
    /// OGF 0x08, OCF 0x039.
    public static let opcode = HCIOpcode(rawValue: 0x2039)

    /// One set to start or stop.
    public struct Set: Sendable, Equatable, LaidOut {
        /// The set.
        public var advertisingHandle: UInt8
        /// How long to advertise, units of 10 ms; 0 until stopped.
        public var duration: UInt16
        /// The most extended advertising events; 0 no limit.
        public var maxEvents: UInt8

        /// Set `advertisingHandle`, with no limit by default.
        public init(advertisingHandle: UInt8, duration: UInt16 = 0, maxEvents: UInt8 = 0) {
            self.advertisingHandle = advertisingHandle
            self.duration = duration
            self.maxEvents = maxEvents
        }

        /// Advertising_Handle[i], Duration[i], Max_Extended_Advertising_Events[i].
        public static let layout = MessageLayout("Advertising_Set", Self.init(advertisingHandle:duration:maxEvents:),
                                                 Field("Advertising_Handle", \.advertisingHandle), Field("Duration", \.duration),
                                                 Field("Max_Extended_Advertising_Events", \.maxEvents))
    }

    /// Whether the sets advertise.
    public var enable: Bool
    /// The sets (none, with `enable` false: every set stops).
    public var sets: [Set]

    /// Starts or stops `sets`.
    public init(enable: Bool, sets: [Set]) {
        self.enable = enable
        self.sets = sets
    }

    /// Enable, Num_Sets, then each set's fields.
    public static let layout = MessageLayout("LE_Set_Extended_Advertising_Enable", Self.init(enable:sets:),
                                             .flag("Enable", \.enable), .counted("Num_Sets", "Advertising_Handle[i], Duration[i], Max_Extended_Advertising_Events[i]", \.sets))
}

/// HCI_LE_Read_Maximum_Advertising_Data_Length (0x203A, 7.8.57).
public struct LEReadMaximumAdvertisingDataLength: HCICommand {
    /// OGF 0x08, OCF 0x03A.
    public static let opcode = HCIOpcode(rawValue: 0x203A)
    /// The command; it has no parameters.
    public init() {}
    /// No parameters.
    public static let layout = MessageLayout("LE_Read_Maximum_Advertising_Data_Length", Self.init)

    /// The longest data one set may hold.
    public struct ReturnParameters: HCIParameters {
        /// Max_Advertising_Data_Length (0x001F–0x0672).
        public var maximumLength: UInt16
        /// The return parameters from their field.
        public init(maximumLength: UInt16) { self.maximumLength = maximumLength }
        /// Max_Advertising_Data_Length.
        public static let layout = MessageLayout("LE_Read_Maximum_Advertising_Data_Length", Self.init(maximumLength:),
                                                 Field("Max_Advertising_Data_Length", \.maximumLength))
    }
}

/// HCI_LE_Read_Number_of_Supported_Advertising_Sets (0x203B, 7.8.58).
public struct LEReadNumberOfSupportedAdvertisingSets: HCICommand {
    /// OGF 0x08, OCF 0x03B.
    public static let opcode = HCIOpcode(rawValue: 0x203B)
    /// The command; it has no parameters.
    public init() {}
    /// No parameters.
    public static let layout = MessageLayout("LE_Read_Number_of_Supported_Advertising_Sets", Self.init)

    /// How many sets the controller can run at once.
    public struct ReturnParameters: HCIParameters {
        /// Num_Supported_Advertising_Sets.
        public var count: UInt8
        /// The return parameters from their field.
        public init(count: UInt8) { self.count = count }
        /// Num_Supported_Advertising_Sets.
        public static let layout = MessageLayout("LE_Read_Number_of_Supported_Advertising_Sets", Self.init(count:),
                                                 Field("Num_Supported_Advertising_Sets", \.count))
    }
}

/// HCI_LE_Remove_Advertising_Set (0x203C, 7.8.59).
public struct LERemoveAdvertisingSet: HCICommand {
    /// OGF 0x08, OCF 0x03C.
    public static let opcode = HCIOpcode(rawValue: 0x203C)
    /// The set.
    public var advertisingHandle: UInt8
    /// Removes set `advertisingHandle`.
    public init(advertisingHandle: UInt8) { self.advertisingHandle = advertisingHandle }
    /// Advertising_Handle.
    public static let layout = MessageLayout("LE_Remove_Advertising_Set", Self.init(advertisingHandle:),
                                             Field("Advertising_Handle", \.advertisingHandle))
}

/// HCI_LE_Clear_Advertising_Sets (0x203D, 7.8.60).
public struct LEClearAdvertisingSets: HCICommand {
    /// OGF 0x08, OCF 0x03D.
    public static let opcode = HCIOpcode(rawValue: 0x203D)
    /// The command; it has no parameters.
    public init() {}
    /// No parameters.
    public static let layout = MessageLayout("LE_Clear_Advertising_Sets", Self.init)
}

/// LE Advertising Set Terminated (0x12, 7.7.65.18): a set stopped because its duration or
/// event count ran out, or because a central connected to it.
public struct LEAdvertisingSetTerminated: LESubeventParameters {
    /// 0x12.
    public static let subeventCode: UInt8 = 0x12
    /// 0x00: a connection was made; 0x3C: the duration or event limit ran out.
    public var status: HCIStatus
    /// The set that stopped.
    public var advertisingHandle: UInt8
    /// The connection made, when `status` is success.
    public var connectionHandle: ConnectionHandle
    /// Num_Completed_Extended_Advertising_Events.
    public var completedEvents: UInt8

    /// The subevent from its fields.
    public init(status: HCIStatus, advertisingHandle: UInt8, connectionHandle: ConnectionHandle, completedEvents: UInt8) {
        self.status = status
        self.advertisingHandle = advertisingHandle
        self.connectionHandle = connectionHandle
        self.completedEvents = completedEvents
    }

    /// Status, Advertising_Handle, Connection_Handle, Num_Completed_Extended_Advertising_Events.
    public static let layout = MessageLayout("LE_Advertising_Set_Terminated", Self.init(status:advertisingHandle:connectionHandle:completedEvents:),
                                             Field("Status", \.status), Field("Advertising_Handle", \.advertisingHandle),
                                             Field("Connection_Handle", \.connectionHandle),
                                             Field("Num_Completed_Extended_Advertising_Events", \.completedEvents))
}
