import BluetoothCore
import HCI

/// BlueCap's name for the many-peripheral API: ``Central`` is BlueCap's `CentralManager`
/// with async/await where BlueCap has futures. One type, two names.
public typealias CentralManager = Central

/// Where the adapter under a ``Central`` stands: BlueCap's `ManagerState` (Core Bluetooth's
/// `CBManagerState`). On Linux the stack owns the controller, so three are reached:
/// ``poweredOn`` while the host is up, ``poweredOff`` once it closed or its controller
/// failed (the transport went away, a Hardware Error), and ``resetting`` while
/// ``Central/reset()`` opens it again. The others are kept so a `switch` written for
/// BlueCap compiles; nothing reports them.
public enum ManagerState: Sendable, Equatable, CustomStringConvertible {
    /// Not reported on Linux (no permission system in front of the controller).
    case unauthorized
    /// Not reported on Linux.
    case unknown
    /// Not reported on Linux (a controller without LE fails to start instead).
    case unsupported
    /// ``Central/reset()`` is opening the transport again.
    case resetting
    /// The host closed, or its controller failed: nothing works until ``Central/reset()``
    /// brings a controller back (or, for a central handed a host, a new ``Central``).
    case poweredOff
    /// The host is up.
    case poweredOn

    /// `poweredOn`, as BlueCap prints it.
    public var description: String {
        switch self {
        case .unauthorized: "unauthorized"
        case .unknown: "unknown"
        case .unsupported: "unsupported"
        case .resetting: "resetting"
        case .poweredOff: "poweredOff"
        case .poweredOn: "poweredOn"
        }
    }
}

extension Central {
    /// The adapter's state, asked of the host (the host owns it; nothing here copies it):
    /// ``ManagerState/resetting`` while ``reset()`` opens the transport again.
    public var state: ManagerState {
        if resetting != nil { return .resetting }
        return host.isClosed || host.controller.failure != nil ? .poweredOff : .poweredOn
    }

    /// The state now, then each change (BlueCap's `whenStateChanges()`). On a central that
    /// can ``reset()``, ``ManagerState/poweredOff`` is followed by ``ManagerState/resetting``
    /// and ``ManagerState/poweredOn`` again when a reset brings a controller back; the stream
    /// ends at ``close()``. On a central handed a host, it ends once the state is
    /// ``ManagerState/poweredOff``: nothing brings that host back.
    public func whenStateChanges() -> AsyncStream<ManagerState> {
        let (stream, continuation) = AsyncStream<ManagerState>.makeStream()
        let current = state
        continuation.yield(current)
        if current == .poweredOff && reopening == nil {
            continuation.finish()
        } else {
            stateWatchers.append(continuation)
        }
        return stream
    }

    /// The state may have changed (the host closed, its controller failed, a reset began or
    /// ended): every state stream hears the new one once; they end when it is for good.
    func stateChanged() {
        let current = state
        if current == .poweredOff { endScan(throwing: BluejayError.bluetoothUnavailable) }
        if current != announced {
            announced = current
            for watcher in stateWatchers { watcher.yield(current) }
        }
        guard current == .poweredOff && reopening == nil else { return }
        let watchers = stateWatchers
        stateWatchers = []
        for watcher in watchers { watcher.finish() }
    }
}
