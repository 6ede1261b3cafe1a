import BluetoothCore

// LE extended advertising sets (Core Vol 4, Part E, 7.8.52–7.8.60) and the LE Advertising Set
// Terminated subevent (7.7.65.18); the legacy commands are in AdvertisingCommands.swift.

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
        (self.advertisingHandle, self.address) = (advertisingHandle, address)
    }

    /// Advertising_Handle, Random_Address.
    public static let layout = MessageLayout(
        "LE_Set_Advertising_Set_Random_Address", Self.init(advertisingHandle:address:),
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
    public init(
        advertisingHandle: UInt8 = 0,
        eventProperties: AdvertisingEventProperties = [.connectable, .scannable, .legacy],
        intervalMin: UInt32 = 0xA0, intervalMax: UInt32 = 0xA0, channelMap: UInt8 = 0x07, ownAddressType: UInt8 = 0,
        peerAddressType: UInt8 = 0,
        peerAddress: BluetoothAddress = BluetoothAddress(littleEndianBytes: [0, 0, 0, 0, 0, 0]),
        filterPolicy: UInt8 = 0, txPower: Int8 = 0x7F, primaryPHY: UInt8 = 0x01, secondaryMaxSkip: UInt8 = 0,
        secondaryPHY: UInt8 = 0x01, sid: UInt8 = 0, scanRequestNotification: Bool = false
    ) {
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
        Self.init(
            advertisingHandle:eventProperties:intervalMin:intervalMax:channelMap:ownAddressType:peerAddressType:
            peerAddress:
            filterPolicy:txPower:primaryPHY:secondaryMaxSkip:secondaryPHY:sid:scanRequestNotification:),
        Field("Advertising_Handle", \.advertisingHandle), Field("Advertising_Event_Properties", \.eventProperties),
        .uint24("Primary_Advertising_Interval_Min", \.intervalMin),
        .uint24("Primary_Advertising_Interval_Max", \.intervalMax),
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
        public static let layout = MessageLayout(
            "LE_Set_Extended_Advertising_Parameters", Self.init(selectedTxPower:),
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
            let operation: AdvertisingDataOperation =
                index == 0 ? .firstFragment : index == starts.count - 1 ? .lastFragment : .intermediateFragment
            return (operation, part)
        }
    }
}

/// HCI_LE_Set_Extended_Advertising_Data (0x2037, 7.8.54) and
/// HCI_LE_Set_Extended_Scan_Response_Data (0x2038, 7.8.55): one fragment of an advertising
/// set's data or scan response. The two commands have the same parameters; `Kind` says which
/// one this is (``LESetExtendedAdvertisingData``, ``LESetExtendedScanResponseData``).
public struct LESetExtendedData<Kind: ExtendedDataKind>: HCICommand {
    /// The command's opcode.
    public static var opcode: HCIOpcode { Kind.opcode }
    /// The set.
    public var advertisingHandle: UInt8
    /// Which fragment this is.
    public var operation: AdvertisingDataOperation
    /// 0x00: the controller may fragment; 0x01: it should not.
    public var fragmentPreference: UInt8
    /// This fragment's data, at most 251 octets.
    public var data: ArraySlice<UInt8>

    /// A fragment of set `advertisingHandle`'s data or scan response.
    public init(
        advertisingHandle: UInt8, operation: AdvertisingDataOperation = .complete, fragmentPreference: UInt8 = 0x01,
        data: ArraySlice<UInt8>
    ) {
        (self.advertisingHandle, self.operation, self.fragmentPreference, self.data) =
            (advertisingHandle, operation, fragmentPreference, data)
    }

    /// Advertising_Handle, Operation, Fragment_Preference, then the data's length and the
    /// data under the names of `Kind`'s command.
    public static var layout: Layout { Kind.layout }

    /// The layout's type: the four fields.
    public typealias Layout = MessageLayout<Self, UInt8, AdvertisingDataOperation, UInt8, ArraySlice<UInt8>>

    /// The layout of command `name`, whose data fields are called `length` and `data`.
    static func layout(_ name: String, length: String, data: String) -> Layout {
        MessageLayout(
            name, Self.init(advertisingHandle:operation:fragmentPreference:data:),
            Field("Advertising_Handle", \.advertisingHandle), .code("Operation", \.operation),
            Field("Fragment_Preference", \.fragmentPreference),
            .lengthPrefixed(length, data, maximum: 251, \.data))
    }
}

/// Which of the two commands an ``LESetExtendedData`` is: its opcode and its layout.
public protocol ExtendedDataKind: Sendable {
    /// The command's opcode.
    static var opcode: HCIOpcode { get }
    /// The command's layout.
    static var layout: LESetExtendedData<Self>.Layout { get }
}

/// HCI_LE_Set_Extended_Advertising_Data (0x2037, 7.8.54).
public typealias LESetExtendedAdvertisingData = LESetExtendedData<ExtendedAdvertisingDataKind>

/// The kind of ``LESetExtendedAdvertisingData``.
public enum ExtendedAdvertisingDataKind: ExtendedDataKind {
    /// OGF 0x08, OCF 0x037.
    public static let opcode = HCIOpcode(rawValue: 0x2037)
    /// Advertising_Handle, Operation, Fragment_Preference, Advertising_Data_Length, Advertising_Data.
    public static let layout = LESetExtendedData<Self>.layout(
        "LE_Set_Extended_Advertising_Data", length: "Advertising_Data_Length", data: "Advertising_Data")
}

/// HCI_LE_Set_Extended_Scan_Response_Data (0x2038, 7.8.55).
public typealias LESetExtendedScanResponseData = LESetExtendedData<ExtendedScanResponseDataKind>

/// The kind of ``LESetExtendedScanResponseData``.
public enum ExtendedScanResponseDataKind: ExtendedDataKind {
    /// OGF 0x08, OCF 0x038.
    public static let opcode = HCIOpcode(rawValue: 0x2038)
    /// Advertising_Handle, Operation, Fragment_Preference, Scan_Response_Data_Length, Scan_Response_Data.
    public static let layout = LESetExtendedData<Self>.layout(
        "LE_Set_Extended_Scan_Response_Data", length: "Scan_Response_Data_Length", data: "Scan_Response_Data")
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
            (self.advertisingHandle, self.duration, self.maxEvents) = (advertisingHandle, duration, maxEvents)
        }

        /// Advertising_Handle[i], Duration[i], Max_Extended_Advertising_Events[i].
        public static let layout = MessageLayout(
            "Advertising_Set", Self.init(advertisingHandle:duration:maxEvents:),
            Field("Advertising_Handle", \.advertisingHandle), Field("Duration", \.duration),
            Field("Max_Extended_Advertising_Events", \.maxEvents))
    }

    /// Whether the sets advertise.
    public var enable: Bool
    /// The sets (none, with `enable` false: every set stops).
    public var sets: [Set]

    /// Starts or stops `sets`.
    public init(enable: Bool, sets: [Set]) { (self.enable, self.sets) = (enable, sets) }

    /// Enable, Num_Sets, then each set's fields.
    public static let layout = MessageLayout(
        "LE_Set_Extended_Advertising_Enable", Self.init(enable:sets:),
        .flag("Enable", \.enable),
        .counted("Num_Sets", "Advertising_Handle[i], Duration[i], Max_Extended_Advertising_Events[i]", \.sets))
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
        public static let layout = MessageLayout(
            "LE_Read_Maximum_Advertising_Data_Length", Self.init(maximumLength:),
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
        public static let layout = MessageLayout(
            "LE_Read_Number_of_Supported_Advertising_Sets", Self.init(count:),
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
    public static let layout = MessageLayout(
        "LE_Remove_Advertising_Set", Self.init(advertisingHandle:),
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
    public init(status: HCIStatus, advertisingHandle: UInt8, connectionHandle: ConnectionHandle, completedEvents: UInt8)
    {
        self.status = status
        self.advertisingHandle = advertisingHandle
        self.connectionHandle = connectionHandle
        self.completedEvents = completedEvents
    }

    /// Status, Advertising_Handle, Connection_Handle, Num_Completed_Extended_Advertising_Events.
    public static let layout = MessageLayout(
        "LE_Advertising_Set_Terminated", Self.init(status:advertisingHandle:connectionHandle:completedEvents:),
        Field("Status", \.status), Field("Advertising_Handle", \.advertisingHandle),
        Field("Connection_Handle", \.connectionHandle),
        Field("Num_Completed_Extended_Advertising_Events", \.completedEvents))
}
