import BluetoothCore
import HCI

// Where a Central's peripheral's link stands, and the events of its connection policy.

/// Where a ``Peripheral``'s link stands.
public enum PeripheralState: Sendable, Equatable {
    /// No link, and none being made.
    case disconnected
    /// A connection attempt is under way (``Peripheral/connect(timeoutRetries:disconnectRetries:connectionTimeout:reconnectDelay:)``).
    case connecting
    /// The link is up and its GATT client ready.
    case connected
    /// The link dropped and the policy is reconnecting: attempt `attempt` of the
    /// disconnect retries.
    case reconnecting(attempt: Int)
    /// ``Peripheral/disconnect()`` is ending the link.
    case disconnecting
}

/// What happened to a ``Peripheral``'s link, as its event stream reports it (BlueCap's
/// connection future stream, as events).
public enum PeripheralEvent: Sendable, Equatable {
    /// The link is up (after a first connect or a reconnection); listens are restored.
    case connected
    /// Connection attempt `attempt` found no peer in the connection timeout.
    case connectionTimedOut(attempt: Int)
    /// The link ended, with the controller's reason.
    case disconnected(HCIStatus)
    /// ``Peripheral/disconnect()`` ended the link or the attempt (BlueCap's
    /// `forcedDisconnect`): no reconnection follows.
    case forcedDisconnect
    /// The policy tries again: reconnection `attempt`, after `delay`.
    case reconnecting(attempt: Int, delay: Duration)
    /// The policy's retries are spent (or a retry failed for good): the peripheral stays
    /// disconnected, and its value streams end with the reason.
    case gaveUp(reason: String)
}
