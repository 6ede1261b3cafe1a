import BluetoothCore
import Host

// The faces on a host: what each does when the host's state changes or it closes.

extension BluetoothHost {
    /// The central of this host, made on first use: the one ``Central`` that hears its links
    /// end (Bluejay runs its one peripheral on it).
    public var central: Central { (centralFace as? Central) ?? Central(host: self) }
}

extension Central: HostFace {
    /// The controller failed: the state streams hear it.
    package func hostStateChanged() { stateChanged() }
}

extension PeripheralManager: HostFace {
    /// The controller failed: the state streams hear it, and end.
    package func hostStateChanged() { stateChanged() }
    /// The host closed: the state streams hear it, and end.
    package func hostClosed() { stateChanged() }
}
