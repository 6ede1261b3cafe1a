import BluetoothCore

// LE connection commands (Core Vol 4, Part E, 7.8.12, 7.8.13, 7.8.18, 7.8.21, 7.8.31,
// 7.8.32, 7.8.33, 7.8.47, 7.8.49, 7.8.66) and HCI_Read_RSSI (7.5.4).

/// Connection parameters requested when initiating or updating a connection, and asked
/// for by a peer (the same four fields in LE_Create_Connection, LE_Connection_Update, the
/// LE Remote Connection Parameter Request event and its reply).
public struct LEConnectionRequest: Sendable, Equatable, LaidOut {
    /// Minimum connection interval, units of 1.25 ms (0x0006–0x0C80).
    public var intervalMin: UInt16
    /// Maximum connection interval, units of 1.25 ms.
    public var intervalMax: UInt16
    /// Peripheral latency, in connection events it may skip.
    public var latency: UInt16
    /// Supervision timeout, units of 10 ms (0x000A–0x0C80).
    public var supervisionTimeout: UInt16

    /// 30–50 ms interval, no latency, 4 s supervision timeout: a responsive default.
    public init(
        intervalMin: UInt16 = 24, intervalMax: UInt16 = 40, latency: UInt16 = 0, supervisionTimeout: UInt16 = 400
    ) {
        (self.intervalMin, self.intervalMax, self.latency, self.supervisionTimeout) =
            (intervalMin, intervalMax, latency, supervisionTimeout)
    }

    /// Connection_Interval_Min, Connection_Interval_Max, Max_Latency, Supervision_Timeout
    /// (LE_Create_Connection's names; the event and the reply call them Interval_Min,
    /// Interval_Max, Max_Latency, Timeout).
    public static let layout = MessageLayout(
        "Requested_Connection_Parameters", Self.init(intervalMin:intervalMax:latency:supervisionTimeout:),
        Field("Connection_Interval_Min", \.intervalMin), Field("Connection_Interval_Max", \.intervalMax),
        Field("Max_Latency", \.latency), Field("Supervision_Timeout", \.supervisionTimeout))
}

/// HCI_LE_Create_Connection (0x200D): initiate a connection (legacy).
public struct LECreateConnection: HCICommand {
    /// OGF 0x08, OCF 0x00D.
    public static let opcode = HCIOpcode(rawValue: 0x200D)
    /// Answered by Command Status; LE Connection Complete follows.
    public static var completion: HCICommandCompletion { .commandStatus }
    /// Scan interval while initiating, units of 0.625 ms.
    public var scanInterval: UInt16
    /// Scan window while initiating, units of 0.625 ms.
    public var scanWindow: UInt16
    /// 0x00: connect to `peerAddress`; 0x01: to any device on the filter accept list.
    public var initiatorFilterPolicy: UInt8
    /// The peer's address type (0x00 public, 0x01 random, 0x02/0x03 identity).
    public var peerAddressType: UInt8
    /// The peer's address.
    public var peerAddress: BluetoothAddress
    /// 0x00 public, 0x01 random.
    public var ownAddressType: UInt8
    /// The connection parameters asked for.
    public var parameters: LEConnectionRequest
    /// Minimum length of a connection event, units of 0.625 ms (a hint; 0, none).
    public var minCELength: UInt16
    /// Maximum length of a connection event, units of 0.625 ms (a hint; 0, none).
    public var maxCELength: UInt16

    /// Connect to `peerAddress`, by default scanning 60 ms of every 60 ms.
    public init(
        scanInterval: UInt16 = 0x0060, scanWindow: UInt16 = 0x0060, initiatorFilterPolicy: UInt8 = 0,
        peerAddressType: UInt8,
        peerAddress: BluetoothAddress, ownAddressType: UInt8 = 0, parameters: LEConnectionRequest = .init(),
        minCELength: UInt16 = 0, maxCELength: UInt16 = 0
    ) {
        self.scanInterval = scanInterval
        self.scanWindow = scanWindow
        self.initiatorFilterPolicy = initiatorFilterPolicy
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.ownAddressType = ownAddressType
        self.parameters = parameters
        self.minCELength = minCELength
        self.maxCELength = maxCELength
    }

    /// LE_Scan_Interval, LE_Scan_Window, Initiator_Filter_Policy, Peer_Address_Type,
    /// Peer_Address, Own_Address_Type, the connection parameters, Min_CE_Length, Max_CE_Length.
    public static let layout = MessageLayout(
        "LE_Create_Connection",
        Self.init(
            scanInterval:scanWindow:initiatorFilterPolicy:peerAddressType:peerAddress:ownAddressType:parameters:
            minCELength:maxCELength:),
        Field("LE_Scan_Interval", \.scanInterval), Field("LE_Scan_Window", \.scanWindow),
        Field("Initiator_Filter_Policy", \.initiatorFilterPolicy), Field("Peer_Address_Type", \.peerAddressType),
        Field("Peer_Address", \.peerAddress), Field("Own_Address_Type", \.ownAddressType), .group(\.parameters),
        Field("Min_CE_Length", \.minCELength), Field("Max_CE_Length", \.maxCELength))
}

/// Initiating_PHYs of LE_Extended_Create_Connection: the PHYs to initiate on, each with
/// parameters of its own. This stack initiates on the LE 1M PHY alone.
public enum LEInitiatingPHYs: UInt8, Sendable {
    /// Bit 0: the LE 1M PHY, one set of parameters.
    case le1M = 0x01
}

/// HCI_LE_Extended_Create_Connection [v1] (0x2043), initiating on the LE 1M PHY.
public struct LEExtendedCreateConnection: HCICommand {
    /// OGF 0x08, OCF 0x043.
    public static let opcode = HCIOpcode(rawValue: 0x2043)
    /// Answered by Command Status; LE (Enhanced) Connection Complete follows.
    public static var completion: HCICommandCompletion { .commandStatus }
    /// 0x00: connect to `peerAddress`.
    public var initiatorFilterPolicy: UInt8
    /// 0x00 public, 0x01 random.
    public var ownAddressType: UInt8
    /// The peer's address type.
    public var peerAddressType: UInt8
    /// The peer's address.
    public var peerAddress: BluetoothAddress
    /// The PHYs the parameters below are for: LE 1M.
    public var initiatingPHYs: LEInitiatingPHYs
    /// Scan interval on the 1M PHY, units of 0.625 ms.
    public var scanInterval: UInt16
    /// Scan window on the 1M PHY, units of 0.625 ms.
    public var scanWindow: UInt16
    /// The connection parameters asked for.
    public var parameters: LEConnectionRequest
    /// Minimum length of a connection event, units of 0.625 ms (a hint; 0, none).
    public var minCELength: UInt16
    /// Maximum length of a connection event, units of 0.625 ms (a hint; 0, none).
    public var maxCELength: UInt16

    /// Connect to `peerAddress` on the 1M PHY, by default scanning 60 ms of every 60 ms.
    public init(
        initiatorFilterPolicy: UInt8 = 0, ownAddressType: UInt8 = 0, peerAddressType: UInt8,
        peerAddress: BluetoothAddress,
        initiatingPHYs: LEInitiatingPHYs = .le1M, scanInterval: UInt16 = 0x0060, scanWindow: UInt16 = 0x0060,
        parameters: LEConnectionRequest = .init(), minCELength: UInt16 = 0, maxCELength: UInt16 = 0
    ) {
        self.initiatorFilterPolicy = initiatorFilterPolicy
        self.ownAddressType = ownAddressType
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.initiatingPHYs = initiatingPHYs
        self.scanInterval = scanInterval
        self.scanWindow = scanWindow
        self.parameters = parameters
        self.minCELength = minCELength
        self.maxCELength = maxCELength
    }

    /// Initiator_Filter_Policy, Own_Address_Type, Peer_Address_Type, Peer_Address,
    /// Initiating_PHYs, then for the one PHY: Scan_Interval, Scan_Window, the connection
    /// parameters, Min_CE_Length, Max_CE_Length.
    public static let layout = MessageLayout(
        "LE_Extended_Create_Connection",
        Self.init(
            initiatorFilterPolicy:ownAddressType:peerAddressType:peerAddress:initiatingPHYs:scanInterval:scanWindow:
            parameters:
            minCELength:maxCELength:),
        Field("Initiator_Filter_Policy", \.initiatorFilterPolicy), Field("Own_Address_Type", \.ownAddressType),
        Field("Peer_Address_Type", \.peerAddressType), Field("Peer_Address", \.peerAddress),
        .code("Initiating_PHYs", errorField: "Initiating_PHYs (only LE 1M is modelled)", \.initiatingPHYs),
        Field("Scan_Interval", \.scanInterval), Field("Scan_Window", \.scanWindow), .group(\.parameters),
        Field("Min_CE_Length", \.minCELength), Field("Max_CE_Length", \.maxCELength))
}

/// HCI_LE_Create_Connection_Cancel (0x200E): stop initiating; LE Connection Complete
/// with status 0x02 follows.
public struct LECreateConnectionCancel: HCICommand {
    /// OGF 0x08, OCF 0x00E.
    public static let opcode = HCIOpcode(rawValue: 0x200E)
    /// No parameters.
    public init() {}
    /// No parameters.
    public static let layout = MessageLayout("LE_Create_Connection_Cancel", Self.init)
}

/// Return parameters that are just the connection handle the command acted on.
public struct ConnectionHandleReturn: HCIParameters {
    /// The connection.
    public var handle: ConnectionHandle
    /// Return parameters for `handle`.
    public init(handle: ConnectionHandle) { self.handle = handle }
    /// Connection_Handle.
    public static let layout = MessageLayout(
        "Connection_Handle", Self.init(handle:), Field("Connection_Handle", \.handle))
}

/// HCI_LE_Read_Remote_Features (0x2016): LE Read Remote Features Complete follows.
public struct LEReadRemoteFeatures: HCICommand {
    /// OGF 0x08, OCF 0x016.
    public static let opcode = HCIOpcode(rawValue: 0x2016)
    /// Answered by Command Status.
    public static var completion: HCICommandCompletion { .commandStatus }
    /// The connection.
    public var handle: ConnectionHandle
    /// Read the features of the peer on `handle`.
    public init(handle: ConnectionHandle) { self.handle = handle }
    /// Connection_Handle.
    public static let layout = MessageLayout(
        "LE_Read_Remote_Features", Self.init(handle:), Field("Connection_Handle", \.handle))
}

/// HCI_Read_RSSI (0x1405).
public struct ReadRSSI: HCICommand {
    /// OGF 0x05, OCF 0x005.
    public static let opcode = HCIOpcode(rawValue: 0x1405)
    /// The connection.
    public var handle: ConnectionHandle
    /// Read the RSSI of `handle`.
    public init(handle: ConnectionHandle) { self.handle = handle }
    /// Connection_Handle.
    public static let layout = MessageLayout("Read_RSSI", Self.init(handle:), Field("Connection_Handle", \.handle))

    /// The handle and the RSSI in dBm (127: not available).
    public struct ReturnParameters: HCIParameters {
        /// The connection.
        public var handle: ConnectionHandle
        /// Signal strength in dBm.
        public var rssi: Int8
        /// Return parameters.
        public init(handle: ConnectionHandle, rssi: Int8) { (self.handle, self.rssi) = (handle, rssi) }
        /// Connection_Handle, RSSI.
        public static let layout = MessageLayout(
            "Read_RSSI", Self.init(handle:rssi:), Field("Connection_Handle", \.handle), Field("RSSI", \.rssi))
    }
}

/// HCI_LE_Set_Data_Length (0x2022): ask for longer link-layer packets.
public struct LESetDataLength: HCICommand {
    /// OGF 0x08, OCF 0x022.
    public static let opcode = HCIOpcode(rawValue: 0x2022)
    /// The connection.
    public var handle: ConnectionHandle
    /// Preferred maximum payload octets to send (27–251).
    public var txOctets: UInt16
    /// Preferred maximum transmit time in microseconds (328–17040).
    public var txTime: UInt16

    /// Ask for `txOctets`/`txTime` on `handle`.
    public init(handle: ConnectionHandle, txOctets: UInt16, txTime: UInt16) {
        (self.handle, self.txOctets, self.txTime) = (handle, txOctets, txTime)
    }

    /// Connection_Handle, TX_Octets, TX_Time.
    public static let layout = MessageLayout(
        "LE_Set_Data_Length", Self.init(handle:txOctets:txTime:),
        Field("Connection_Handle", \.handle), Field("TX_Octets", \.txOctets), Field("TX_Time", \.txTime))

    /// The connection handle.
    public typealias ReturnParameters = ConnectionHandleReturn
}

/// HCI_LE_Set_PHY (0x2032): LE PHY Update Complete follows.
public struct LESetPHY: HCICommand {
    /// OGF 0x08, OCF 0x032.
    public static let opcode = HCIOpcode(rawValue: 0x2032)
    /// Answered by Command Status.
    public static var completion: HCICommandCompletion { .commandStatus }
    /// The connection.
    public var handle: ConnectionHandle
    /// Bit 0: no TX preference; bit 1: no RX preference.
    public var allPHYs: UInt8
    /// Preferred TX PHYs: bit 0 1M, bit 1 2M, bit 2 Coded.
    public var txPHYs: UInt8
    /// Preferred RX PHYs: bit 0 1M, bit 1 2M, bit 2 Coded.
    public var rxPHYs: UInt8
    /// Coded PHY options (0: no preference).
    public var phyOptions: UInt16

    /// Prefer `tx`/`rx` on `handle`.
    public init(handle: ConnectionHandle, allPHYs: UInt8 = 0, txPHYs: UInt8, rxPHYs: UInt8, phyOptions: UInt16 = 0) {
        (self.handle, self.allPHYs, self.txPHYs, self.rxPHYs, self.phyOptions) =
            (handle, allPHYs, txPHYs, rxPHYs, phyOptions)
    }

    /// Connection_Handle, All_PHYs, TX_PHYs, RX_PHYs, PHY_Options.
    public static let layout = MessageLayout(
        "LE_Set_PHY", Self.init(handle:allPHYs:txPHYs:rxPHYs:phyOptions:),
        Field("Connection_Handle", \.handle), Field("All_PHYs", \.allPHYs),
        Field("TX_PHYs", \.txPHYs), Field("RX_PHYs", \.rxPHYs), Field("PHY_Options", \.phyOptions))
}

/// HCI_LE_Connection_Update (0x2013) and HCI_LE_Remote_Connection_Parameter_Request_Reply
/// (0x2020): a connection's handle, the parameters asked for or accepted, and the connection
/// event lengths. The two commands have the same parameters; `Kind` says which one this is
/// (``LEConnectionUpdate``, ``LERemoteConnectionParameterRequestReply``).
public struct LEConnectionParametersCommand<Kind: ConnectionParametersCommandKind>: HCICommand {
    /// What Command Complete returns, if the command ends with it.
    public typealias ReturnParameters = Kind.ReturnParameters
    /// The command's opcode.
    public static var opcode: HCIOpcode { Kind.opcode }
    /// Which event ends the command.
    public static var completion: HCICommandCompletion { Kind.completion }
    /// The connection.
    public var handle: ConnectionHandle
    /// The interval range, latency and supervision timeout asked for or accepted.
    public var parameters: LEConnectionRequest
    /// Minimum length of a connection event, units of 0.625 ms (a hint; 0, none).
    public var minCELength: UInt16
    /// Maximum length of a connection event, units of 0.625 ms (a hint; 0, none).
    public var maxCELength: UInt16

    /// The command for `parameters` on `handle`.
    public init(
        handle: ConnectionHandle, parameters: LEConnectionRequest, minCELength: UInt16 = 0, maxCELength: UInt16 = 0
    ) {
        (self.handle, self.parameters, self.minCELength, self.maxCELength) =
            (handle, parameters, minCELength, maxCELength)
    }

    /// Connection_Handle, Interval_Min, Interval_Max, Max_Latency, Timeout, Min_CE_Length,
    /// Max_CE_Length.
    public static var layout: Layout { Kind.layout }

    /// The layout's type: the four fields.
    public typealias Layout = MessageLayout<Self, ConnectionHandle, LEConnectionRequest, UInt16, UInt16>

    /// The layout of command `name`.
    static func layout(_ name: String) -> Layout {
        MessageLayout(
            name, Self.init(handle:parameters:minCELength:maxCELength:),
            Field("Connection_Handle", \.handle), .group(\.parameters),
            Field("Min_CE_Length", \.minCELength), Field("Max_CE_Length", \.maxCELength))
    }
}

/// Which of the two commands an ``LEConnectionParametersCommand`` is.
public protocol ConnectionParametersCommandKind: Sendable {
    /// What Command Complete returns.
    associatedtype ReturnParameters: HCIParameters
    /// The command's opcode.
    static var opcode: HCIOpcode { get }
    /// Which event ends the command.
    static var completion: HCICommandCompletion { get }
    /// The command's layout.
    static var layout: LEConnectionParametersCommand<Self>.Layout { get }
}

/// HCI_LE_Connection_Update (0x2013): new parameters for a connection; LE Connection
/// Update Complete follows.
public typealias LEConnectionUpdate = LEConnectionParametersCommand<ConnectionUpdateKind>

/// The kind of ``LEConnectionUpdate``: answered by Command Status.
public enum ConnectionUpdateKind: ConnectionParametersCommandKind {
    /// Nothing: the command ends with Command Status.
    public typealias ReturnParameters = NoParameters
    /// OGF 0x08, OCF 0x013.
    public static let opcode = HCIOpcode(rawValue: 0x2013)
    /// Command Status.
    public static var completion: HCICommandCompletion { .commandStatus }
    /// Connection_Handle, the connection parameters, Min_CE_Length, Max_CE_Length.
    public static let layout = LEConnectionUpdate.layout("LE_Connection_Update")
}

/// HCI_LE_Remote_Connection_Parameter_Request_Reply (0x2020): accept the parameters the
/// peer asked for in an LE Remote Connection Parameter Request.
public typealias LERemoteConnectionParameterRequestReply = LEConnectionParametersCommand<
    RemoteConnectionParameterRequestReplyKind
>

/// The kind of ``LERemoteConnectionParameterRequestReply``: answered by Command Complete.
public enum RemoteConnectionParameterRequestReplyKind: ConnectionParametersCommandKind {
    /// The connection handle.
    public typealias ReturnParameters = ConnectionHandleReturn
    /// OGF 0x08, OCF 0x020.
    public static let opcode = HCIOpcode(rawValue: 0x2020)
    /// Command Complete.
    public static var completion: HCICommandCompletion { .commandComplete }
    /// Connection_Handle, Interval_Min, Interval_Max, Max_Latency, Timeout, Min_CE_Length,
    /// Max_CE_Length.
    public static let layout = LERemoteConnectionParameterRequestReply.layout(
        "LE_Remote_Connection_Parameter_Request_Reply")
}

/// HCI_LE_Remote_Connection_Parameter_Request_Negative_Reply (0x2021): refuse the
/// parameters the peer asked for, with a reason.
public struct LERemoteConnectionParameterRequestNegativeReply: HCICommand {
    /// OGF 0x08, OCF 0x021.
    public static let opcode = HCIOpcode(rawValue: 0x2021)
    /// The connection handle, as for the positive reply.
    public typealias ReturnParameters = ConnectionHandleReturn
    /// The connection.
    public var handle: ConnectionHandle
    /// Why: usually 0x3B Unacceptable Connection Parameters.
    public var reason: HCIStatus

    /// Refuse the request on `handle`.
    public init(handle: ConnectionHandle, reason: HCIStatus = .unacceptableConnectionParameters) {
        (self.handle, self.reason) = (handle, reason)
    }

    /// Connection_Handle, Reason.
    public static let layout = MessageLayout(
        "LE_Remote_Connection_Parameter_Request_Negative_Reply", Self.init(handle:reason:),
        Field("Connection_Handle", \.handle), Field("Reason", \.reason))
}

extension LEConnectionRequest {
    /// Whether the parameters are inside the ranges the Core specification allows
    /// (Vol 4, Part E, 7.8.12): interval 7.5 ms–4 s, latency ≤ 499, timeout 100 ms–32 s
    /// and longer than (1 + latency) × interval × 2.
    public var isValid: Bool {
        guard (6...3200).contains(intervalMin), (6...3200).contains(intervalMax), intervalMin <= intervalMax,
            latency <= 499, (10...3200).contains(supervisionTimeout)
        else { return false }
        // Timeout (10 ms units) > (1 + latency) × max interval (1.25 ms units) × 2.
        return Int(supervisionTimeout) * 10 * 100 > (1 + Int(latency)) * Int(intervalMax) * 125 * 2
    }
}
