import BluetoothCore
import HCI

/// BlueCap's name for the many-peripheral API: ``Central`` is BlueCap's `CentralManager`
/// with async/await where BlueCap has futures. One type, two names.
public typealias CentralManager = Central

/// Where the adapter under a ``Central`` stands: BlueCap's `ManagerState` (Core Bluetooth's
/// `CBManagerState`). On Linux the stack owns the controller, so only two are reached:
/// ``poweredOn`` while the host is up, ``poweredOff`` once it closed or its controller
/// failed (the transport went away, a Hardware Error). The others are kept so a `switch`
/// written for BlueCap compiles; nothing reports them.
public enum ManagerState: Sendable, Equatable, CustomStringConvertible {
    /// Not reported on Linux (no permission system in front of the controller).
    case unauthorized
    /// Not reported on Linux.
    case unknown
    /// Not reported on Linux (a controller without LE fails to start instead).
    case unsupported
    /// Not reported on Linux.
    case resetting
    /// The host closed, or its controller failed: nothing works until a new ``Central``.
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
    /// The adapter's state, asked of the host (the host owns it; nothing here copies it).
    public var state: ManagerState {
        host.isClosed || host.controller.failure != nil ? .poweredOff : .poweredOn
    }

    /// The state now, then each change (BlueCap's `whenStateChanges()`). Ends once the
    /// state is ``ManagerState/poweredOff``: it does not come back on this central.
    public func whenStateChanges() -> AsyncStream<ManagerState> {
        let (stream, continuation) = AsyncStream<ManagerState>.makeStream()
        let current = state
        continuation.yield(current)
        if current == .poweredOff {
            continuation.finish()
        } else {
            stateWatchers.append(continuation)
        }
        return stream
    }

    /// The host closed or its controller failed: every state stream hears it and ends.
    func poweredOff() {
        let watchers = stateWatchers
        stateWatchers = []
        for watcher in watchers {
            watcher.yield(.poweredOff)
            watcher.finish()
        }
    }
}
