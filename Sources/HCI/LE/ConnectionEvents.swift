import BluetoothCore

/// The link parameters a connection runs with.
public struct LEConnectionParameters: Sendable, Equatable, LaidOut {
    /// Connection interval, units of 1.25 ms.
    public var interval: UInt16
    /// Peripheral latency, in connection events.
    public var latency: UInt16
    /// Supervision timeout, units of 10 ms.
    public var supervisionTimeout: UInt16

    /// Parameters as reported by the controller.
    public init(interval: UInt16, latency: UInt16, supervisionTimeout: UInt16) {
        (self.interval, self.latency, self.supervisionTimeout) = (interval, latency, supervisionTimeout)
    }

    /// Connection_Interval, Peripheral_Latency, Supervision_Timeout.
    public static let layout = MessageLayout(
        "Connection_Parameters", Self.init(interval:latency:supervisionTimeout:),
        Field("Connection_Interval", \.interval), Field("Peripheral_Latency", \.latency),
        Field("Supervision_Timeout", \.supervisionTimeout))

    /// `interval 30.00 ms, latency 0, supervision timeout 4000 ms`.
    public var description: String {
        let milliseconds = Double(interval) * 1.25
        return "interval \(milliseconds) ms, latency \(latency), supervision timeout \(Int(supervisionTimeout) * 10) ms"
    }
}

/// The LE Meta subevents about connections, as the host acts on them: the three kinds of
/// connection complete are one case, and fields the host does not use (the resolvable
/// private addresses, the clock accuracy) are left in the subevents' declarations below.
public enum LEConnectionEvent: Sendable, Equatable {
    /// LE Connection Complete (0x01) or LE Enhanced Connection Complete v1/v2 (0x0A/0x29).
    case connectionComplete(
        status: HCIStatus, handle: ConnectionHandle, role: UInt8, peerAddressType: UInt8,
        peerAddress: BluetoothAddress, parameters: LEConnectionParameters)
    /// LE Connection Update Complete (0x03).
    case connectionUpdateComplete(status: HCIStatus, handle: ConnectionHandle, parameters: LEConnectionParameters)
    /// LE Read Remote Features Complete (0x04).
    case remoteFeaturesComplete(status: HCIStatus, handle: ConnectionHandle, features: LEFeatures)
    /// LE Remote Connection Parameter Request (0x06): the peer asks for new parameters; the
    /// host must answer with the Reply or the Negative Reply command.
    case remoteConnectionParameterRequest(handle: ConnectionHandle, parameters: LEConnectionRequest)
    /// LE Data Length Change (0x07): the maximum payload octets and times now in use.
    case dataLengthChange(
        handle: ConnectionHandle, maxTxOctets: UInt16, maxTxTime: UInt16, maxRxOctets: UInt16, maxRxTime: UInt16)
    /// LE PHY Update Complete (0x0C): 1 = 1M, 2 = 2M, 3 = Coded.
    case phyUpdateComplete(status: HCIStatus, handle: ConnectionHandle, txPHY: UInt8, rxPHY: UInt8)

    /// The connection subevents, by subevent code.
    private static let subevents: [UInt8: any LEConnectionSubevent.Type] = {
        let types: [any LEConnectionSubevent.Type] = [
            LEConnectionComplete.self, LEEnhancedConnectionComplete.self, LEEnhancedConnectionCompleteV2.self,
            LEConnectionUpdateComplete.self, LEReadRemoteFeaturesComplete.self, LERemoteConnectionParameterRequest.self,
            LEDataLengthChange.self, LEPHYUpdateComplete.self,
        ]
        return Dictionary(uniqueKeysWithValues: types.map { ($0.subeventCode, $0) })
    }()

    /// Decodes a connection subevent; `nil` for other subevents. Octets past the
    /// subevent's format are ignored (the tolerance rule).
    public static func decode(_ event: LEMetaEvent) throws(DecodingError) -> LEConnectionEvent? {
        try decodeCountingExtraOctets(event)?.event
    }

    /// Decodes a connection subevent and counts the octets past its format, which are
    /// ignored; `nil` for other subevents.
    public static func decodeCountingExtraOctets(_ event: LEMetaEvent) throws(DecodingError) -> (
        event: LEConnectionEvent, extraOctets: Int
    )? {
        guard let subevent = subevents[event.subeventCode] else { return nil }
        return try decode(subevent, event.parameters)
    }

    /// Decodes the parameters of subevent `Subevent` under the tolerance rule.
    private static func decode<Subevent: LEConnectionSubevent>(_: Subevent.Type, _ parameters: ArraySlice<UInt8>)
        throws(DecodingError) -> (event: LEConnectionEvent, extraOctets: Int)
    {
        let (subevent, extraOctets) = try Subevent.decodeCountingExtraOctets(parameters)
        return (subevent.event, extraOctets)
    }

    /// The connection the event is about.
    public var handle: ConnectionHandle {
        switch self {
        case let .connectionComplete(_, handle, _, _, _, _), let .connectionUpdateComplete(_, handle, _),
            let .remoteFeaturesComplete(_, handle, _), let .remoteConnectionParameterRequest(handle, _),
            let .dataLengthChange(handle, _, _, _, _),
            let .phyUpdateComplete(_, handle, _, _):
            handle
        }
    }

    /// The subevent as a controller sends it (for scripted controllers and tests); a
    /// connection complete is encoded as the legacy LE Connection Complete (0x01), with
    /// central clock accuracy 0.
    public func encoded() -> LEMetaEvent {
        switch self {
        case let .connectionComplete(status, handle, role, peerAddressType, peerAddress, parameters):
            LEConnectionComplete(
                status: status, handle: handle, role: role, peerAddressType: peerAddressType, peerAddress: peerAddress,
                parameters: parameters, centralClockAccuracy: 0
            ).meta
        case let .connectionUpdateComplete(status, handle, parameters):
            LEConnectionUpdateComplete(status: status, handle: handle, parameters: parameters).meta
        case let .remoteFeaturesComplete(status, handle, features):
            LEReadRemoteFeaturesComplete(status: status, handle: handle, features: features).meta
        case let .remoteConnectionParameterRequest(handle, parameters):
            LERemoteConnectionParameterRequest(handle: handle, parameters: parameters).meta
        case let .dataLengthChange(handle, maxTxOctets, maxTxTime, maxRxOctets, maxRxTime):
            LEDataLengthChange(
                handle: handle, maxTxOctets: maxTxOctets, maxTxTime: maxTxTime, maxRxOctets: maxRxOctets,
                maxRxTime: maxRxTime
            ).meta
        case let .phyUpdateComplete(status, handle, txPHY, rxPHY):
            LEPHYUpdateComplete(status: status, handle: handle, txPHY: txPHY, rxPHY: rxPHY).meta
        }
    }
}

/// An LE subevent about a connection: its declaration, and how the host reads it.
public protocol LEConnectionSubevent: LESubeventParameters {
    /// The subevent as the host acts on it.
    var event: LEConnectionEvent { get }
}

/// LE Connection Complete and LE Enhanced Connection Complete: the fields the host acts on,
/// which both carry. The enhanced one's resolvable private addresses are not part of the
/// event.
public protocol LEConnectionCompletion: LEConnectionSubevent {
    /// Status: 0x00 if the connection exists.
    var status: HCIStatus { get }
    /// Connection_Handle of the new link.
    var handle: ConnectionHandle { get }
    /// Role: 0x00 central, 0x01 peripheral.
    var role: UInt8 { get }
    /// Peer_Address_Type.
    var peerAddressType: UInt8 { get }
    /// Peer_Address.
    var peerAddress: BluetoothAddress { get }
    /// The interval, latency and timeout the connection runs with.
    var parameters: LEConnectionParameters { get }
}

extension LEConnectionCompletion {
    /// A connection complete.
    public var event: LEConnectionEvent {
        .connectionComplete(
            status: status, handle: handle, role: role, peerAddressType: peerAddressType, peerAddress: peerAddress,
            parameters: parameters)
    }
}

// MARK: The connection subevents (Core Vol 4, Part E, 7.7.65)

/// LE Connection Complete (0x01, 7.7.65.1): a connection was created, or creating it failed.
public struct LEConnectionComplete: LEConnectionCompletion {
    /// 0x01.
    public static let subeventCode: UInt8 = 0x01
    /// Status: 0x00 if the connection exists.
    public var status: HCIStatus
    /// Connection_Handle of the new link.
    public var handle: ConnectionHandle
    /// Role: 0x00 central, 0x01 peripheral.
    public var role: UInt8
    /// Peer_Address_Type: 0x00 public, 0x01 random.
    public var peerAddressType: UInt8
    /// Peer_Address.
    public var peerAddress: BluetoothAddress
    /// The interval, latency and timeout the connection runs with.
    public var parameters: LEConnectionParameters
    /// Central_Clock_Accuracy: 0x00 500 ppm … 0x07 20 ppm.
    public var centralClockAccuracy: UInt8

    /// Creates the subevent from its fields.
    public init(
        status: HCIStatus, handle: ConnectionHandle, role: UInt8, peerAddressType: UInt8, peerAddress: BluetoothAddress,
        parameters: LEConnectionParameters, centralClockAccuracy: UInt8
    ) {
        self.status = status
        self.handle = handle
        self.role = role
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.parameters = parameters
        self.centralClockAccuracy = centralClockAccuracy
    }

    /// Status, Connection_Handle, Role, Peer_Address_Type, Peer_Address, the connection
    /// parameters, Central_Clock_Accuracy.
    public static let layout = MessageLayout(
        "LE_Connection_Complete",
        Self.init(status:handle:role:peerAddressType:peerAddress:parameters:centralClockAccuracy:),
        Field("Status", \.status), Field("Connection_Handle", \.handle), Field("Role", \.role),
        Field("Peer_Address_Type", \.peerAddressType), Field("Peer_Address", \.peerAddress), .group(\.parameters),
        Field("Central_Clock_Accuracy", \.centralClockAccuracy))
}

/// LE Enhanced Connection Complete [v1] (0x0A, 7.7.65.10): LE Connection Complete with the
/// resolvable private addresses in use, from a controller that resolves them.
public struct LEEnhancedConnectionComplete: LEConnectionCompletion {
    /// 0x0A.
    public static let subeventCode: UInt8 = 0x0A
    /// Status: 0x00 if the connection exists.
    public var status: HCIStatus
    /// Connection_Handle of the new link.
    public var handle: ConnectionHandle
    /// Role: 0x00 central, 0x01 peripheral.
    public var role: UInt8
    /// Peer_Address_Type: 0x00–0x03 (0x02/0x03: an identity address the controller resolved).
    public var peerAddressType: UInt8
    /// Peer_Address.
    public var peerAddress: BluetoothAddress
    /// Local_Resolvable_Private_Address: ours, or zeros when we used none.
    public var localResolvablePrivateAddress: BluetoothAddress
    /// Peer_Resolvable_Private_Address: the peer's, or zeros when it used none.
    public var peerResolvablePrivateAddress: BluetoothAddress
    /// The interval, latency and timeout the connection runs with.
    public var parameters: LEConnectionParameters
    /// Central_Clock_Accuracy: 0x00 500 ppm … 0x07 20 ppm.
    public var centralClockAccuracy: UInt8

    /// Creates the subevent from its fields.
    public init(
        status: HCIStatus, handle: ConnectionHandle, role: UInt8, peerAddressType: UInt8, peerAddress: BluetoothAddress,
        localResolvablePrivateAddress: BluetoothAddress, peerResolvablePrivateAddress: BluetoothAddress,
        parameters: LEConnectionParameters, centralClockAccuracy: UInt8
    ) {
        self.status = status
        self.handle = handle
        self.role = role
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.localResolvablePrivateAddress = localResolvablePrivateAddress
        self.peerResolvablePrivateAddress = peerResolvablePrivateAddress
        self.parameters = parameters
        self.centralClockAccuracy = centralClockAccuracy
    }

    /// Status, Connection_Handle, Role, Peer_Address_Type, Peer_Address,
    /// Local_Resolvable_Private_Address, Peer_Resolvable_Private_Address, the connection
    /// parameters, Central_Clock_Accuracy.
    public static let layout = MessageLayout(
        "LE_Enhanced_Connection_Complete",
        Self.init(
            status:handle:role:peerAddressType:peerAddress:localResolvablePrivateAddress:peerResolvablePrivateAddress:
            parameters:centralClockAccuracy:),
        Field("Status", \.status), Field("Connection_Handle", \.handle), Field("Role", \.role),
        Field("Peer_Address_Type", \.peerAddressType), Field("Peer_Address", \.peerAddress),
        Field("Local_Resolvable_Private_Address", \.localResolvablePrivateAddress),
        Field("Peer_Resolvable_Private_Address", \.peerResolvablePrivateAddress), .group(\.parameters),
        Field("Central_Clock_Accuracy", \.centralClockAccuracy))
}

/// LE Enhanced Connection Complete [v2] (0x29, 7.7.65.10): v1's fields, then the
/// advertising set and periodic sync the connection came from.
public struct LEEnhancedConnectionCompleteV2: LEConnectionSubevent {
    /// 0x29.
    public static let subeventCode: UInt8 = 0x29
    /// Every field of v1.
    public var connection: LEEnhancedConnectionComplete
    /// Advertising_Handle: the advertising set the connection came from (0xFF: none).
    public var advertisingHandle: UInt8
    /// Sync_Handle: the periodic advertising train it came from (0xFFFF: none).
    public var syncHandle: UInt16

    /// Creates the subevent from its fields.
    public init(connection: LEEnhancedConnectionComplete, advertisingHandle: UInt8, syncHandle: UInt16) {
        (self.connection, self.advertisingHandle, self.syncHandle) = (connection, advertisingHandle, syncHandle)
    }

    /// v1's fields, Advertising_Handle, Sync_Handle.
    public static let layout = MessageLayout(
        "LE_Enhanced_Connection_Complete_v2", Self.init(connection:advertisingHandle:syncHandle:),
        .group(\.connection), Field("Advertising_Handle", \.advertisingHandle),
        Field("Sync_Handle", \.syncHandle))

    /// A connection complete, as v1's.
    public var event: LEConnectionEvent { connection.event }
}

/// LE Connection Update Complete (0x03, 7.7.65.3): a connection's parameters changed.
public struct LEConnectionUpdateComplete: LEConnectionSubevent {
    /// 0x03.
    public static let subeventCode: UInt8 = 0x03
    /// Status: 0x00 if the update happened.
    public var status: HCIStatus
    /// Connection_Handle of the link.
    public var handle: ConnectionHandle
    /// The interval, latency and timeout now in use.
    public var parameters: LEConnectionParameters

    /// Creates the subevent from its fields.
    public init(status: HCIStatus, handle: ConnectionHandle, parameters: LEConnectionParameters) {
        (self.status, self.handle, self.parameters) = (status, handle, parameters)
    }

    /// Status, Connection_Handle, the connection parameters.
    public static let layout = MessageLayout(
        "LE_Connection_Update_Complete", Self.init(status:handle:parameters:),
        Field("Status", \.status), Field("Connection_Handle", \.handle), .group(\.parameters))

    /// A connection update complete.
    public var event: LEConnectionEvent {
        .connectionUpdateComplete(status: status, handle: handle, parameters: parameters)
    }
}

/// LE Read Remote Features Complete (0x04, 7.7.65.4): the features the peer's link layer
/// supports.
public struct LEReadRemoteFeaturesComplete: LEConnectionSubevent {
    /// 0x04.
    public static let subeventCode: UInt8 = 0x04
    /// Status: 0x00 if the features were read.
    public var status: HCIStatus
    /// Connection_Handle of the link.
    public var handle: ConnectionHandle
    /// LE_Features: the peer's, first eight octets.
    public var features: LEFeatures

    /// Creates the subevent from its fields.
    public init(status: HCIStatus, handle: ConnectionHandle, features: LEFeatures) {
        (self.status, self.handle, self.features) = (status, handle, features)
    }

    /// Status, Connection_Handle, LE_Features.
    public static let layout = MessageLayout(
        "LE_Read_Remote_Features_Complete", Self.init(status:handle:features:),
        Field("Status", \.status), Field("Connection_Handle", \.handle), Field("LE_Features", \.features))

    /// A remote features complete.
    public var event: LEConnectionEvent { .remoteFeaturesComplete(status: status, handle: handle, features: features) }
}

/// LE Remote Connection Parameter Request (0x06, 7.7.65.6): the peer asks for new
/// connection parameters.
public struct LERemoteConnectionParameterRequest: LEConnectionSubevent {
    /// 0x06.
    public static let subeventCode: UInt8 = 0x06
    /// Connection_Handle of the link.
    public var handle: ConnectionHandle
    /// The interval range, latency and timeout the peer asks for.
    public var parameters: LEConnectionRequest

    /// Creates the subevent from its fields.
    public init(handle: ConnectionHandle, parameters: LEConnectionRequest) {
        (self.handle, self.parameters) = (handle, parameters)
    }

    /// Connection_Handle, Interval_Min, Interval_Max, Max_Latency, Timeout.
    public static let layout = MessageLayout(
        "LE_Remote_Connection_Parameter_Request", Self.init(handle:parameters:),
        Field("Connection_Handle", \.handle), .group(\.parameters))

    /// A remote connection parameter request.
    public var event: LEConnectionEvent { .remoteConnectionParameterRequest(handle: handle, parameters: parameters) }
}

/// LE Data Length Change (0x07, 7.7.65.7): the largest link-layer payloads and times now
/// in use on a link.
public struct LEDataLengthChange: LEConnectionSubevent {
    /// 0x07.
    public static let subeventCode: UInt8 = 0x07
    /// Connection_Handle of the link.
    public var handle: ConnectionHandle
    /// Max_TX_Octets: the largest payload sent, in octets.
    public var maxTxOctets: UInt16
    /// Max_TX_Time: the longest time to send one packet, in microseconds.
    public var maxTxTime: UInt16
    /// Max_RX_Octets: the largest payload received, in octets.
    public var maxRxOctets: UInt16
    /// Max_RX_Time: the longest time to receive one packet, in microseconds.
    public var maxRxTime: UInt16

    /// Creates the subevent from its fields.
    public init(
        handle: ConnectionHandle, maxTxOctets: UInt16, maxTxTime: UInt16, maxRxOctets: UInt16, maxRxTime: UInt16
    ) {
        (self.handle, self.maxTxOctets, self.maxTxTime, self.maxRxOctets, self.maxRxTime) =
            (handle, maxTxOctets, maxTxTime, maxRxOctets, maxRxTime)
    }

    /// Connection_Handle, Max_TX_Octets, Max_TX_Time, Max_RX_Octets, Max_RX_Time.
    public static let layout = MessageLayout(
        "LE_Data_Length_Change", Self.init(handle:maxTxOctets:maxTxTime:maxRxOctets:maxRxTime:),
        Field("Connection_Handle", \.handle), Field("Max_TX_Octets", \.maxTxOctets),
        Field("Max_TX_Time", \.maxTxTime), Field("Max_RX_Octets", \.maxRxOctets),
        Field("Max_RX_Time", \.maxRxTime))

    /// A data length change.
    public var event: LEConnectionEvent {
        .dataLengthChange(
            handle: handle, maxTxOctets: maxTxOctets, maxTxTime: maxTxTime, maxRxOctets: maxRxOctets,
            maxRxTime: maxRxTime)
    }
}

/// LE PHY Update Complete (0x0C, 7.7.65.12): the PHYs a link now uses.
public struct LEPHYUpdateComplete: LEConnectionSubevent {
    /// 0x0C.
    public static let subeventCode: UInt8 = 0x0C
    /// Status: 0x00 if the PHYs were updated (or stayed, when nothing changed).
    public var status: HCIStatus
    /// Connection_Handle of the link.
    public var handle: ConnectionHandle
    /// TX_PHY: 1 = 1M, 2 = 2M, 3 = Coded.
    public var txPHY: UInt8
    /// RX_PHY: 1 = 1M, 2 = 2M, 3 = Coded.
    public var rxPHY: UInt8

    /// Creates the subevent from its fields.
    public init(status: HCIStatus, handle: ConnectionHandle, txPHY: UInt8, rxPHY: UInt8) {
        (self.status, self.handle, self.txPHY, self.rxPHY) = (status, handle, txPHY, rxPHY)
    }

    /// Status, Connection_Handle, TX_PHY, RX_PHY.
    public static let layout = MessageLayout(
        "LE_PHY_Update_Complete", Self.init(status:handle:txPHY:rxPHY:),
        Field("Status", \.status), Field("Connection_Handle", \.handle),
        Field("TX_PHY", \.txPHY), Field("RX_PHY", \.rxPHY))

    /// A PHY update complete.
    public var event: LEConnectionEvent {
        .phyUpdateComplete(status: status, handle: handle, txPHY: txPHY, rxPHY: rxPHY)
    }
}
