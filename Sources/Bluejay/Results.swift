import BluetoothCore
import GAP
import HCI

/// How a connection attempt ended.
public enum ConnectionResult: Sendable {
    /// Connected to this peripheral.
    case success(PeripheralIdentifier)
    /// Cancelled before it completed.
    case cancelled
    /// Failed, with why.
    case failure(any Error)
}

/// How a disconnection ended.
public enum DisconnectionResult: Sendable {
    /// Disconnected from this peripheral (Bluejay's README spells it `.success`; later iOS
    /// versions renamed it `.disconnected`, which cannot also be a case here: a switch
    /// written for one would not be exhaustive for the other).
    case success(PeripheralIdentifier)
    /// Cancelled.
    case cancelled
    /// Failed, with why.
    case failure(any Error)
}

/// The outcome of a read, or of each value of a listen.
public enum ReadResult<R> {
    /// The value, decoded.
    case success(R)
    /// Cancelled.
    case cancelled
    /// Failed, with why.
    case failure(any Error)
}

/// The outcome of a write (or an end of listen).
public enum WriteResult: Sendable {
    /// Written.
    case success
    /// Cancelled.
    case cancelled
    /// Failed, with why.
    case failure(any Error)
}

/// The outcome of a background task.
public enum RunResult<R> {
    /// The task's result.
    case success(R)
    /// Cancelled.
    case cancelled
    /// Failed, with why (the first error a step threw).
    case failure(any Error)
}

/// With or without a response from the peripheral (CoreBluetooth's `CBCharacteristicWriteType`).
public enum WriteType: Sendable {
    /// Write Request: the peripheral confirms.
    case withResponse
    /// Write Command: nothing confirms it.
    case withoutResponse
}

/// How long to wait.
public enum Timeout: Sendable, Equatable {
    /// Up to this many seconds.
    case seconds(Double)
    /// For ever.
    case none

    var duration: Duration? {
        if case let .seconds(seconds) = self { return Duration(seconds: seconds) }
        return nil
    }
}

extension Duration {
    /// `seconds` as iOS APIs give a timeout (`TimeInterval`): nil for none (infinity, NaN,
    /// or more than 30 years), zero for a negative value.
    init?(seconds: Double) {
        guard !seconds.isNaN, seconds < 1e9 else { return nil }
        self = seconds <= 0 ? .zero : .nanoseconds(Int64(seconds * 1e9))
    }
}

/// What happens when a second listen is asked for on a characteristic already listened to.
public enum MultipleListenOption: Int, Sendable {
    /// The new listen replaces the old one's callback.
    case replaceable
    /// The new listen fails with `BluejayError.multipleListenTrapped`.
    case trap
}

/// Warnings the system could show on connection events (iOS only; kept for source
/// compatibility, they change nothing here).
public struct WarningOptions: Sendable, Equatable {
    /// Warn on connection.
    public var notifyOnConnection: Bool
    /// Warn on disconnection.
    public var notifyOnDisconnection: Bool
    /// Warn on notification.
    public var notifyOnNotification: Bool

    /// Options as given.
    public init(
        notifyOnConnection: Bool = false, notifyOnDisconnection: Bool = false, notifyOnNotification: Bool = false
    ) {
        (self.notifyOnConnection, self.notifyOnDisconnection, self.notifyOnNotification) =
            (notifyOnConnection, notifyOnDisconnection, notifyOnNotification)
    }

    /// No warnings.
    public static let `default` = WarningOptions()
}

/// A peripheral found by a scan.
public struct ScanDiscovery: Sendable {
    /// Who it is.
    public let peripheralIdentifier: PeripheralIdentifier
    /// What it advertised (advertisement and scan response merged).
    public let advertisementPacket: AdvertisingData
    /// Signal strength in dBm (127 when the controller did not say).
    public let rssi: Int
    /// Whether it accepts connections: its advertising PDU is connectable (BlueCap's
    /// `advertisements.isConnectable`).
    public let isConnectable: Bool

    /// What a scan heard of `discovery`.
    init(_ discovery: Discovery) {
        peripheralIdentifier = PeripheralIdentifier(
            address: discovery.address, addressType: discovery.addressType,
            name: discovery.advertisement.localName)
        advertisementPacket = discovery.advertisement
        rssi = Int(discovery.rssi ?? 127)
        isConnectable = discovery.connectable
    }

    /// The peripheral, as Bluejay's README names it (`discovery.peripheral.identifier`):
    /// on iOS a `CBPeripheral`, here its `PeripheralIdentifier`.
    public var peripheral: PeripheralIdentifier { peripheralIdentifier }
}

/// What a scan does after a discovery.
public enum ScanAction {
    /// Keep scanning.
    case `continue`
    /// Ignore this peripheral for the rest of the scan.
    case blacklist
    /// Stop scanning.
    case stop
    /// Stop scanning and connect to this peripheral, with ``Bluejay/connect(_:timeout:warningOptions:completion:)``'s
    /// default timeout (none); the completion runs on the main actor.
    case connect(ScanDiscovery, @MainActor (ConnectionResult) -> Void)
}

/// What a synchronous listen does after a value.
public enum ListenAction {
    /// Wait for the next value.
    case keepListening
    /// Stop listening and return.
    case done
}

extension ReadResult: Sendable where R: Sendable {}
extension RunResult: Sendable where R: Sendable {}
