import BluetoothCore
import HCI

/// Told about Bluetooth availability and connections. Held weakly.
@MainActor
public protocol ConnectionObserver: AnyObject {
    /// The host came up (true) or went away (false).
    func bluetoothAvailable(_ available: Bool)
    /// Connected to a peripheral.
    func connected(to peripheral: PeripheralIdentifier)
    /// Disconnected from a peripheral.
    func disconnected(from peripheral: PeripheralIdentifier)
    /// Auto-reconnection attempt `attempt` to `peripheral` begins (``Bluejay/autoReconnectPolicy``).
    func reconnecting(to peripheral: PeripheralIdentifier, attempt: Int)
    /// The last auto-reconnection attempt failed with `error`: Bluejay stays disconnected.
    func reconnectFailed(to peripheral: PeripheralIdentifier, error: any Error)

    // Earlier spellings, still called, so an app written against them works. (Swift does
    // not flag a method that implements a deprecated requirement; the deprecation shows in
    // the documentation and wherever one is called.)

    /// Connected, as Bluejay's README spells it (with the peripheral's object, here its
    /// ``Peripheral``).
    @available(*, deprecated, message: "Bluejay calls connected(to: PeripheralIdentifier); implement that one")
    func connected(to peripheral: Peripheral)
    /// Disconnected, as Bluejay's README spells it.
    @available(*, deprecated, message: "Bluejay calls disconnected(from: PeripheralIdentifier); implement that one")
    func disconnected(from peripheral: Peripheral)
    /// Connected, as Bluejay 0.1 spelled it.
    @available(*, deprecated, message: "Bluejay calls connected(to: PeripheralIdentifier); implement that one")
    func connected(_ peripheral: Peripheral)
    /// Disconnected, as Bluejay 0.1 spelled it (sic).
    @available(*, deprecated, message: "Bluejay calls disconnected(from: PeripheralIdentifier); implement that one")
    func disconected()
}

extension ConnectionObserver {
    /// Does nothing unless implemented.
    public func bluetoothAvailable(_ available: Bool) {}
    /// Does nothing unless implemented.
    public func connected(to peripheral: PeripheralIdentifier) {}
    /// Does nothing unless implemented.
    public func disconnected(from peripheral: PeripheralIdentifier) {}
    /// Does nothing unless implemented.
    public func reconnecting(to peripheral: PeripheralIdentifier, attempt: Int) {}
    /// Does nothing unless implemented.
    public func reconnectFailed(to peripheral: PeripheralIdentifier, error: any Error) {}
    /// Does nothing unless implemented.
    @available(*, deprecated, message: "Bluejay calls connected(to: PeripheralIdentifier); implement that one")
    public func connected(to peripheral: Peripheral) {}
    /// Does nothing unless implemented.
    @available(*, deprecated, message: "Bluejay calls disconnected(from: PeripheralIdentifier); implement that one")
    public func disconnected(from peripheral: Peripheral) {}
    /// Does nothing unless implemented.
    @available(*, deprecated, message: "Bluejay calls connected(to: PeripheralIdentifier); implement that one")
    public func connected(_ peripheral: Peripheral) {}
    /// Does nothing unless implemented.
    @available(*, deprecated, message: "Bluejay calls disconnected(from: PeripheralIdentifier); implement that one")
    public func disconected() {}

    /// Tells the observer `peripheral`'s link is up, in each spelling it may implement.
    func heardConnected(_ peripheral: Peripheral) {
        connected(to: peripheral.identifier)
        (EarlierSpellings() as any EarlierSpellingCalls).connected(self, peripheral)
    }

    /// Tells the observer `peripheral`'s link ended, in each spelling it may implement.
    func heardDisconnected(_ peripheral: Peripheral) {
        disconnected(from: peripheral.identifier)
        (EarlierSpellings() as any EarlierSpellingCalls).disconnected(self, peripheral)
    }
}

/// Calls the earlier spellings of ``ConnectionObserver``'s events. They are deprecated for
/// apps; these calls go through a witness that is deprecated itself, of a requirement that
/// is not, so Bluejay's own build does not raise the warning meant for apps.
@MainActor
private protocol EarlierSpellingCalls {
    func connected(_ observer: any ConnectionObserver, _ peripheral: Peripheral)
    func disconnected(_ observer: any ConnectionObserver, _ peripheral: Peripheral)
}

@MainActor
private struct EarlierSpellings: EarlierSpellingCalls {
    @available(*, deprecated)
    func connected(_ observer: any ConnectionObserver, _ peripheral: Peripheral) {
        observer.connected(to: peripheral)
        observer.connected(peripheral)
    }

    @available(*, deprecated)
    func disconnected(_ observer: any ConnectionObserver, _ peripheral: Peripheral) {
        observer.disconnected(from: peripheral)
        observer.disconected()
    }
}

/// Told when the connected peripheral's services change (a Service Changed indication).
@MainActor
public protocol ServiceObserver: AnyObject {
    /// The services the change invalidated; they are rediscovered on next use.
    func didModifyServices(from peripheral: PeripheralIdentifier, invalidatedServices: [ServiceIdentifier])
}

/// Told of each RSSI reading asked for with ``Bluejay/readRSSI()->()``.
@MainActor
public protocol RSSIObserver: AnyObject {
    /// The reading in dBm, or the error that prevented it.
    func didReadRSSI(from peripheral: PeripheralIdentifier, RSSI: Int, error: (any Error)?)
}

/// Told whenever Bluejay's log grows.
@MainActor
public protocol LogObserver: AnyObject {
    /// The whole log so far.
    func logFileUpdated(logs: String)
}

/// The observers, held weakly, and the log.
extension Bluejay {
    /// An observer held weakly.
    struct WeakBox {
        weak var object: AnyObject?
    }

    /// A connection observer held weakly.
    struct WeakConnectionObserver {
        weak var observer: (any ConnectionObserver)?
    }

    // MARK: Observers and logs

    /// Hears availability and connection events; held weakly.
    public func register(connectionObserver: any ConnectionObserver) {
        connectionObservers.removeAll { $0.observer == nil || $0.observer === connectionObserver }
        connectionObservers.append(WeakConnectionObserver(observer: connectionObserver))
        if host != nil { connectionObserver.bluetoothAvailable(true) }
    }

    /// Stops telling `connectionObserver`.
    public func unregister(connectionObserver: any ConnectionObserver) {
        connectionObservers.removeAll { $0.observer == nil || $0.observer === connectionObserver }
    }

    /// The connection observers still there.
    var observers: [any ConnectionObserver] { connectionObservers.compactMap(\.observer) }

    /// Bluejay's README name for ``register(connectionObserver:)``.
    @available(*, deprecated, renamed: "register(connectionObserver:)")
    public func register(observer: any ConnectionObserver) { register(connectionObserver: observer) }

    /// Bluejay's README name for ``unregister(connectionObserver:)``.
    @available(*, deprecated, renamed: "unregister(connectionObserver:)")
    public func unregister(observer: any ConnectionObserver) { unregister(connectionObserver: observer) }

    /// Hears Service Changed; held weakly.
    public func register(serviceObserver: any ServiceObserver) {
        serviceObservers.removeAll { $0.object == nil || $0.object === serviceObserver }
        serviceObservers.append(WeakBox(object: serviceObserver))
    }

    /// Stops telling `serviceObserver`.
    public func unregister(serviceObserver: any ServiceObserver) {
        serviceObservers.removeAll { $0.object == nil || $0.object === serviceObserver }
    }

    /// Hears RSSI readings; held weakly.
    public func register(rssiObserver: any RSSIObserver) {
        rssiObservers.removeAll { $0.object == nil || $0.object === rssiObserver }
        rssiObservers.append(WeakBox(object: rssiObserver))
    }

    /// Stops telling `rssiObserver`.
    public func unregister(rssiObserver: any RSSIObserver) {
        rssiObservers.removeAll { $0.object == nil || $0.object === rssiObserver }
    }

    /// Hears the log grow; held weakly.
    public func register(logObserver: any LogObserver) {
        logObservers.removeAll { $0.object == nil || $0.object === logObserver }
        logObservers.append(WeakBox(object: logObserver))
    }

    /// Stops telling `logObserver`.
    public func unregister(logObserver: any LogObserver) {
        logObservers.removeAll { $0.object == nil || $0.object === logObserver }
    }

    /// The peer's Service Changed invalidated `services` on link `handle`.
    func servicesInvalidated(_ handle: ConnectionHandle, _ services: [ServiceIdentifier]) {
        guard let connection, connection.handle == handle else { return }
        for case let observer as any ServiceObserver in serviceObservers.compactMap(\.object) {
            observer.didModifyServices(from: connection.peripheral, invalidatedServices: services)
        }
    }

    /// Asks the controller for the link's RSSI; the reading (or the error, e.g. a controller
    /// that does not support Read RSSI) goes to the RSSI observers. Throws
    /// `BluejayError.backgroundTaskRunning` while a background task runs (the task reads
    /// it with ``SynchronizedPeripheral/readRSSI()``) and `BluejayError.notConnected`
    /// when not connected, as Bluejay's reference says.
    public func readRSSI() throws {
        let (host, connection) = try linkForRSSI()
        Task { @MainActor in
            let result = await Task { @BluetoothActor () -> Result<Int8, ConnectionError> in
                do throws(ConnectionError) {
                    return .success(try await host.connections.readRSSI(connection.handle))
                } catch { return .failure(error) }
            }.value
            for case let observer as any RSSIObserver in self.rssiObservers.compactMap(\.object) {
                switch result {
                case let .success(rssi): observer.didReadRSSI(from: connection.peripheral, RSSI: Int(rssi), error: nil)
                case let .failure(error):
                    observer.didReadRSSI(from: connection.peripheral, RSSI: 127, error: BluejayError.connection(error))
                }
            }
        }
    }

    /// The link a Read RSSI asks about, or why it cannot be asked: a background task
    /// running (it alone talks to the peripheral until it ends), or no link. A task whose
    /// outcome is decided has ended, though the queue may not have moved on yet: its
    /// completion, which runs on the main actor, may ask at once.
    func linkForRSSI() throws(BluejayError) -> (BluetoothHost, Connection) {
        if let running = queue.running, running.kind == .backgroundTask, !running.isFinished {
            throw .backgroundTaskRunning
        }
        guard let connection, let host else { throw .notConnected }
        return (host, connection)
    }

    /// Adds a line to Bluejay's log: the log file in the store directory (`bluejay.log`,
    /// mode 0600, from ``start(mode:)`` on; kept in memory before) and, at `info`, the
    /// stack's swift-log route as layer `bluejay` (``StartOptions/logger``; with
    /// `HCILogger.system(levels:)` an app's own logging backend sees it).
    public func log(_ string: String) {
        logger.log(.info, string)
        if let logFile {
            do { try logFile.append(string + "\n") } catch { logger.log(.error, "writing \(logFile.path): \(error)") }
        } else {
            logLines.append(string)
        }
        let observers = logObservers.compactMap(\.object)
        guard !observers.isEmpty, let logs = getLogs() else { return }
        for case let observer as any LogObserver in observers { observer.logFileUpdated(logs: logs) }
    }

    /// Logs `string` on the main actor in its turn, from either actor (the operations on
    /// the stack's actor).
    nonisolated func logLater(_ string: String) {
        post { self.log(string) }
    }

    /// The whole log, or nil when it is empty.
    public func getLogs() -> String? {
        guard let logFile else { return logLines.isEmpty ? nil : logLines.joined(separator: "\n") }
        guard let text = try? logFile.contents(), !text.isEmpty else { return nil }
        return text.hasSuffix("\n") ? String(text.dropLast()) : text
    }

    /// Empties the log.
    public func clearLogs() {
        logLines = []
        try? logFile?.truncate()
    }
}
