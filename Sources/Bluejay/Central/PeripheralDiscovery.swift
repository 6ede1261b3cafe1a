import BluetoothCore
import GATT
import HCI

/// Discovery when the app asks for it, as BlueCap's peripheral offers it (reads and writes
/// discover what they need on their own), each with an optional time limit.
extension Peripheral {
    /// Discovers the services `uuids` (every service, with their characteristics and
    /// descriptors, when nil) and returns those found; BlueCap's `discoverServices(_:timeout:)`
    /// with `BluejayError.operationTimedOut(_:)` for its `serviceDiscoveryTimeout`. What
    /// is found stays known to the link (and the discovery cache).
    public func discoverServices(_ uuids: [BluetoothUUID]?, timeout: Duration? = nil) async throws(BluejayError)
        -> [ServiceIdentifier]
    {
        try await within(timeout, "service discovery") { () async throws(BluejayError) -> [ServiceIdentifier] in
            try await self.operation(.discovery) { client throws(GATTError) in
                guard let uuids else {
                    return try await client.discoverAll().services.map { ServiceIdentifier(uuid: $0.uuid) }
                }
                var found: [ServiceIdentifier] = []
                for uuid in uuids {
                    do throws(GATTError) {
                        found.append(ServiceIdentifier(uuid: try await client.service(uuid).uuid))
                    } catch {
                        if case .serviceNotFound = error { continue }
                        throw error
                    }
                }
                return found
            }
        }
    }

    /// Every service (BlueCap's `discoverAllServices(timeout:)`).
    public func discoverAllServices(timeout: Duration? = nil) async throws(BluejayError) -> [ServiceIdentifier] {
        try await discoverServices(nil, timeout: timeout)
    }

    /// Discovers the characteristics `uuids` of `service` (all of them when nil) and returns
    /// those found: BlueCap's `Service.discoverCharacteristics(_:timeout:)`, with
    /// `BluejayError.operationTimedOut(_:)` for its `characteristicDiscoveryTimeout`.
    /// Throws `BluejayError.missingService(_:)` when the peripheral has no such service.
    public func discoverCharacteristics(
        _ uuids: [BluetoothUUID]?, of service: ServiceIdentifier,
        timeout: Duration? = nil
    ) async throws(BluejayError) -> [CharacteristicIdentifier] {
        try await within(timeout, "characteristic discovery of \(service)") {
            () async throws(BluejayError) -> [CharacteristicIdentifier] in
            try await self.operation(.discovery, CharacteristicIdentifier(uuid: service.uuid, service: service)) {
                client throws(GATTError) in
                let characteristics = try await client.characteristics(of: try await client.service(service.uuid))
                return characteristics.filter { uuids?.contains($0.uuid) ?? true }.map {
                    CharacteristicIdentifier(uuid: $0.uuid, service: service)
                }
            }
        }
    }

    /// Every characteristic of `service` (BlueCap's `discoverAllCharacteristics(timeout:)`).
    public func discoverAllCharacteristics(of service: ServiceIdentifier, timeout: Duration? = nil)
        async throws(BluejayError) -> [CharacteristicIdentifier]
    {
        try await discoverCharacteristics(nil, of: service, timeout: timeout)
    }

    /// Runs `body`, giving up with `BluejayError.operationTimedOut(_:)` (naming `what`)
    /// after `timeout` (never, when nil). The body itself runs on: its queue turn ends
    /// when its request is answered or the link goes.
    func within<T: Sendable>(
        _ timeout: Duration?, _ what: String,
        _ body: @escaping @BluetoothActor () async throws(BluejayError) -> T
    ) async throws(BluejayError) -> T {
        guard let timeout else { return try await body() }
        let outcome = Expectation<Result<T, BluejayError>>()
        let clock = clock
        let work = Task { @BluetoothActor in
            do throws(BluejayError) { outcome.fulfill(.success(try await body())) } catch {
                outcome.fulfill(.failure(error))
            }
        }
        let timer = Task { @BluetoothActor in
            do { try await clock.sleep(for: timeout) } catch { return }
            outcome.fulfill(.failure(.operationTimedOut(what)))
        }
        let result = await withTaskCancellationHandler {
            await outcome.value()
        } onCancel: {
            work.cancel()
        }
        timer.cancel()
        return try result.get()
    }
}

/// What discovery found, as BlueCap's peripheral keeps it.
extension Peripheral {
    /// The services discovered on the live link so far, in handle order (BlueCap's
    /// `services`): by ``discoverServices(_:timeout:)-(_,Duration?)``, by operations that found what they
    /// needed, or from the discovery cache. Empty while disconnected.
    public var services: [ServiceIdentifier] {
        guard let handle, let client = host.existingClient(for: handle) else { return [] }
        return client.discoveredServices.map { ServiceIdentifier(uuid: $0.uuid) }
    }

    /// The characteristics of `service` discovered on the live link so far (BlueCap's
    /// `Service.characteristics`). Empty while disconnected or before the service's
    /// characteristics were discovered.
    public func characteristics(of service: ServiceIdentifier) -> [CharacteristicIdentifier] {
        guard let handle, let client = host.existingClient(for: handle),
            let found = client.discoveredServices.first(where: { $0.uuid == service.uuid })
        else { return [] }
        return (client.database.characteristics[found.handle] ?? []).map {
            CharacteristicIdentifier(uuid: $0.uuid, service: service)
        }
    }
}
