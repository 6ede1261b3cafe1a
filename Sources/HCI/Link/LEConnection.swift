import BluetoothCore

/// One LE connection as the host knows it.
public struct LEConnection: Sendable, Equatable {
    /// The connection handle.
    public let handle: ConnectionHandle
    /// 0x00 central, 0x01 peripheral (our role).
    public let role: UInt8
    /// The peer's address type as the controller reported it.
    public let peerAddressType: UInt8
    /// The peer's address.
    public let peerAddress: BluetoothAddress
    /// Interval, latency and supervision timeout now in use.
    public internal(set) var parameters: LEConnectionParameters
    /// Transmit PHY: 1 = 1M, 2 = 2M, 3 = Coded.
    public internal(set) var txPHY: UInt8 = 1
    /// Receive PHY: 1 = 1M, 2 = 2M, 3 = Coded.
    public internal(set) var rxPHY: UInt8 = 1
    /// Maximum link-layer payload octets sent (27 until data length is extended).
    public internal(set) var maxTxOctets: UInt16 = 27
    /// Maximum link-layer payload octets received.
    public internal(set) var maxRxOctets: UInt16 = 27
    /// The peer's LE features, once read.
    public internal(set) var remoteFeatures: LEFeatures?
}

/// Why a connection operation failed.
public enum ConnectionError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The peer was not found in the time allowed; the attempt was cancelled.
    case connectionTimeout
    /// The attempt was cancelled by the host.
    case cancelled
    /// Another connection attempt is in progress (the controller allows one at a time).
    case busy
    /// The controller reported the connection failed with this status.
    case failed(HCIStatus)
    /// No connection has this handle.
    case notConnected(ConnectionHandle)
    /// The link went down while waiting; the reason.
    case disconnected(HCIStatus)
    /// An expected event did not arrive in time.
    case eventTimeout(String)
    /// A command failed.
    case hci(HCIError)

    /// Readable, with codes by name.
    public var description: String {
        switch self {
        case .connectionTimeout: "connectionTimeout: the peripheral did not answer in time; the attempt was cancelled"
        case .cancelled: "the connection attempt was cancelled"
        case .busy: "another connection attempt is in progress"
        case let .failed(status): "connection failed: \(status)"
        case let .notConnected(handle): "no connection with handle \(hex(handle, digits: 4))"
        case let .disconnected(reason): "disconnected: \(reason)"
        case let .eventTimeout(what): "timed out waiting for \(what)"
        case let .hci(error): error.description
        }
    }
}
