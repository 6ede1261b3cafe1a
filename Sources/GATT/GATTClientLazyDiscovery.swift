import ATT
import BluetoothCore
import HCI

/// Discovery as it is needed: a service, its characteristics and their descriptors found
/// the first time something asks for them and kept (until the server says they changed),
/// the whole database at once, or one adopted from the discovery cache.
extension GATTClient {
    /// The service `uuid`, discovered on first use: a primary one by UUID (Find By Type
    /// Value), else, with `includingSecondary`, a secondary one (the secondary-service
    /// sweep). The stack's own lookups of the GATT service leave secondary ones out: that
    /// service is a server's own, declared primary, and a sweep would cost every link a
    /// request.
    public func service(_ uuid: BluetoothUUID, includingSecondary: Bool = true) async throws(GATTError) -> Service {
        if let known = database.service(uuid) { return known }
        guard !database.isComplete else { throw .serviceNotFound(uuid) }
        if let found = try await discoverPrimaryServices(uuid: uuid).first {
            database.insert(found)
            return found
        }
        guard includingSecondary else { throw .serviceNotFound(uuid) }
        let secondaries = try await discoverSecondaryServices()
        for secondary in secondaries { database.insert(secondary) }
        guard let found = secondaries.first(where: { $0.uuid == uuid }) else { throw .serviceNotFound(uuid) }
        return found
    }

    /// The characteristic `uuid` of service `serviceUUID`, discovering the service and its
    /// characteristics on first use.
    public func characteristic(
        _ uuid: BluetoothUUID, in serviceUUID: BluetoothUUID,
        includingSecondary: Bool = true
    ) async throws(GATTError) -> Characteristic {
        let service = try await service(serviceUUID, includingSecondary: includingSecondary)
        guard let found = try await characteristics(of: service).first(where: { $0.uuid == uuid }) else {
            throw .characteristicNotFound(uuid, service: serviceUUID)
        }
        return found
    }

    /// The characteristics of `service`, discovered on first use.
    public func characteristics(of service: Service) async throws(GATTError) -> [Characteristic] {
        if let known = database.characteristics[service.handle] { return known }
        let found = try await discoverCharacteristics(in: service)
        database.characteristics[service.handle] = found
        return found
    }

    /// The descriptors of `characteristic`, discovered on first use.
    public func descriptors(of characteristic: Characteristic) async throws(GATTError) -> [Descriptor] {
        if let known = database.descriptors[characteristic.valueHandle] { return known }
        let found = try await discoverDescriptors(of: characteristic)
        database.descriptors[characteristic.valueHandle] = found
        return found
    }

    /// The whole tree — every primary and secondary service, their included services,
    /// characteristics and descriptors — discovering only what is not known yet, in the
    /// order of the GATT conformance tests (and BlueZ's client): primary services, secondary
    /// services, the includes of every service, then service by service its characteristics
    /// and their descriptors.
    @discardableResult
    public func discoverAll() async throws(GATTError) -> GATTDatabase {
        if !database.isComplete {
            let services = try await discoverPrimaryServices() + discoverSecondaryServices()
            database = GATTDatabase(
                services: services, isComplete: true,
                includes: database.includes.filter { key, _ in services.contains { $0.handle == key } },
                characteristics: database.characteristics.filter { key, _ in services.contains { $0.handle == key } },
                descriptors: database.descriptors)
        }
        // A secondary service the sweep did not show (a server that refused the group type)
        // is still reached through an include, and its own includes are followed in turn.
        var next = 0
        while next < database.services.count {
            let service = database.services[next]
            next += 1
            guard database.includes[service.handle] == nil else { continue }
            let includes = try await findIncludedServices(in: service)
            database.includes[service.handle] = includes
            for include in includes where !database.services.contains(where: { $0.handle == include.service.handle }) {
                database.insert(include.service)
                // Inserted in handle order: look again from the start for what is not walked.
                next = 0
            }
        }
        for service in database.services {
            for characteristic in try await characteristics(of: service) {
                _ = try await descriptors(of: characteristic)
            }
        }
        return database
    }

    /// Takes `database` (e.g. from the discovery cache, once validated) as what is known, so
    /// no discovery request is sent for anything it holds.
    public func adopt(_ database: GATTDatabase) {
        self.database = database
    }

    /// Turns notifications or indications of `characteristic` on or off through its CCCD.
    public func setNotifications(_ configuration: ClientConfiguration, for characteristic: Characteristic)
        async throws(GATTError)
    {
        switch configuration {
        case .notify where !characteristic.properties.contains(.notify):
            throw .notPermitted("characteristic \(characteristic.uuid.nameAndValue) does not notify")
        case .indicate where !characteristic.properties.contains(.indicate):
            throw .notPermitted("characteristic \(characteristic.uuid.nameAndValue) does not indicate")
        default: break
        }
        guard
            let cccd = try await descriptors(of: characteristic).first(where: {
                $0.uuid == .clientCharacteristicConfiguration
            })
        else {
            throw .descriptorNotFound(.clientCharacteristicConfiguration, characteristic: characteristic.uuid)
        }
        try await configure(cccd.handle, configuration)
    }

    /// Forgets what was discovered in `range`, so the next use rediscovers it.
    public func invalidate(_ range: ClosedRange<AttributeHandle>) {
        database.invalidate(range)
        // `serviceChangedHandle` stays: the peer keeps indicating there (our CCCD write
        // still stands), and a range covering it (0x0001…0xFFFF is the usual one) must not
        // make the next Service Changed go unnoticed.
    }

    /// The services discovered so far (for diagnostics and tests).
    public var discoveredServices: [Service] { database.services }
}
