import ATT
import BluetoothCore
import FoundationEssentials
import GATT
import HCI

/// BlueCap's names for what the manager serves: its services and characteristics, taking
/// services out again, updates and answers to writes, and the adapter's state.
extension PeripheralManager {
    /// The services added, in order (BlueCap's `services`).
    public var services: [MutableService] { added.map(\.service) }

    /// Every characteristic of every service added (BlueCap's `characteristics`).
    public var characteristics: [MutableCharacteristic] { services.flatMap(\.characteristics) }

    /// The services added with `uuid` (BlueCap's `service(withUUID:)`), nil when none.
    public func service(withUUID uuid: BluetoothUUID) -> [MutableService]? {
        let found = services.filter { $0.uuid == uuid }
        return found.isEmpty ? nil : found
    }

    /// The characteristics served with `uuid` (BlueCap's `characteristics(withUUID:)`), nil
    /// when none.
    public func characteristics(withUUID uuid: BluetoothUUID) -> [MutableCharacteristic]? {
        let found = characteristics.filter { $0.uuid == uuid }
        return found.isEmpty ? nil : found
    }

    /// Takes `service` out of the database (BlueCap's `remove(_:)`): centrals subscribed to
    /// Service Changed are told, and its characteristics are served no more. A service that
    /// was not added, or that a service still served includes, stays, and the log says why.
    public func remove(_ service: MutableService) {
        guard let index = added.firstIndex(where: { $0.service === service }) else {
            return logger.log(.warning, "remove: service \(service.uuid) was not added")
        }
        do throws(GATTServerError) { try server.remove(added[index].served) } catch {
            return logger.log(.warning, "remove: \(error)")
        }
        for characteristic in added[index].served.characteristics {
            bound.removeValue(forKey: characteristic.valueHandle)?.unbind()
            forgetServed(characteristic)
        }
        added.remove(at: index)
    }

    /// Takes every service added out of the database, the last added first (BlueCap's
    /// `removeAllServices()`).
    public func removeAllServices() {
        for service in services.reversed() { remove(service) }
    }

    /// Sets `characteristic`'s value and sends it to the centrals subscribed now (BlueCap's
    /// `updateValue(_:forCharacteristic:)`), in order with its
    /// ``MutableCharacteristic/update(withData:)`` calls: false when it is not served here.
    /// Indications are confirmed afterwards; ``updateValue(_:for:)`` waits for them.
    public func updateValue(_ value: Data, forCharacteristic characteristic: MutableCharacteristic) -> Bool {
        guard let handle = characteristic.valueHandle, bound[handle] === characteristic else { return false }
        return characteristic.send([UInt8](value))
    }

    /// Answers a write the app was handed (BlueCap's `respondToRequest(_:withResult:)`); the
    /// same as ``MutableCharacteristic/respondToRequest(_:withResult:)``.
    public func respondToRequest(_ request: CharacteristicWriteRequest, withResult result: ATTErrorCode) {
        request.characteristic.respondToRequest(request, withResult: result)
    }

    // MARK: - Serving

    /// `service`'s characteristics hold their values from now on, served at `served`.
    func serve(_ service: MutableService, at served: ServedService) {
        added.append((service, served))
        for (characteristic, landed) in zip(service.characteristics, served.characteristics) {
            let handle = landed.valueHandle
            bound[handle] = characteristic
            server.setReadHandler(for: handle) { [characteristic] _ in
                .success(characteristic.state.withLock { $0.value })
            }
            server.setWriteHandler(for: handle) { [weak self, characteristic] request in
                guard let self else { return .unlikelyError }
                return await characteristic.received(request, from: connectedCentral(request.connection))
            }
            let updates = characteristic.bind(to: self, valueHandle: handle)
            Task { @BluetoothActor [weak self] in
                for await update in updates { try? await self?.send(update, at: handle) }
            }
        }
    }

    /// A central turned a subscription on or off: the server's event, told to the app's
    /// characteristic and to ``events()``.
    func subscriptionChanged(_ subscription: GATTSubscription) {
        bound[subscription.handle]?.subscription(
            of: connectedCentral(subscription.connection),
            on: subscription.notifications || subscription.indications)
        emit(.subscriptionChanged(subscription))
    }

    /// The central on link `handle`, as BlueCap's handlers get it.
    func connectedCentral(_ handle: ConnectionHandle) -> ConnectedCentral {
        let link = host.connections.connection(handle)
        let identifier = link.map {
            PeripheralIdentifier(
                address: $0.peerAddress, addressType: AddressType(rawValue: $0.peerAddressType) ?? .random
            ).uuid
        }
        let mtu = (try? host.bearers.bearer(for: handle).mtu) ?? 23
        return ConnectedCentral(
            handle: handle, identifier: identifier ?? UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
            maximumUpdateValueLength: mtu - 3)
    }

    // MARK: - The adapter's state

    /// The adapter's state, asked of the host (BlueCap's `state`): ``ManagerState/poweredOn``
    /// while the stack is up, ``ManagerState/poweredOff`` once it closed or its controller
    /// was lost.
    public var state: ManagerState { host.isClosed || host.controller.failure != nil ? .poweredOff : .poweredOn }

    /// Whether the adapter is on (BlueCap's `poweredOn`).
    public var poweredOn: Bool { state == .poweredOn }

    /// The state now, then each change (BlueCap's `whenStateChanges()`); ends once the state
    /// is ``ManagerState/poweredOff``, which nothing brings back on this manager.
    public func whenStateChanges() -> AsyncStream<ManagerState> {
        let (stream, continuation) = AsyncStream<ManagerState>.makeStream()
        let current = state
        continuation.yield(current)
        if current == .poweredOff { continuation.finish() } else { stateWatchers.append(continuation) }
        return stream
    }

    /// The host closed or its controller failed: every state stream hears it and ends.
    func stateChanged() {
        guard state == .poweredOff else { return }
        let watchers = stateWatchers
        stateWatchers = []
        for watcher in watchers {
            watcher.yield(.poweredOff)
            watcher.finish()
        }
    }
}
