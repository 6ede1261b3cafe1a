import ATT
import BluetoothCore

/// Adding services: where their attributes go (``DatabaseLayout``), and where ours go
/// when the app's database takes their place.
extension GATTServer {
    /// Adds `service` and returns where its characteristics landed: at the handles its
    /// definition gives, else after the last attribute. The Database Hash is computed
    /// again, and clients subscribed to Service Changed are told of the new range.
    @discardableResult
    public func add(_ service: ServiceDefinition) throws(GATTServerError) -> ServedService {
        try add(services: [service])[0]
    }

    /// Adds `services` together (a whole database, as a file declares it): their includes
    /// may name one another, and when they give handles or declare GAP (0x1800) or GATT
    /// (0x1801) before any other service is added, ours make way. A declared GAP or GATT
    /// service replaces ours; ours otherwise go to the first handles the services leave
    /// free, or after them. All are added, or none.
    @discardableResult
    public func add(services: [ServiceDefinition]) throws(GATTServerError) -> [ServedService] {
        for characteristic in services.flatMap(\.characteristics) {
            let longest = ([characteristic.value] + characteristic.descriptors.map(\.value)).map(\.count).max() ?? 0
            guard longest <= AttributeServer.maximumValueLength else {
                throw .valueTooLong(characteristic.uuid, longest)
            }
        }
        let ours = (base.genericAccessHandle, base.genericAttributeHandle)
        let declaresGAP = services.contains { $0.uuid == .genericAccess },
            declaresGATT = services.contains { $0.uuid == .genericAttribute }
        let makeWay = self.services.isEmpty && (declaresGAP || declaresGATT || services.contains(where: \.givesHandles))
        if makeWay { moveOurs(genericAccess: nil, genericAttribute: nil) }
        var layout = DatabaseLayout(table: attributes.attributes)
        let placed: [PlacedService]
        do { placed = try layout.lay(services) } catch {
            if makeWay { moveOurs(genericAccess: ours.0, genericAttribute: ours.1) }
            throw .layout(error)
        }
        var changed = placed.map(\.served.service.handles)
        if makeWay {
            // Ours take the first room left, GAP first, as they would in an empty database.
            let gap = declaresGAP ? nil : layout.reserve(LocalGATTServer.genericAccessCount)
            let gatt = declaresGATT ? nil : layout.reserve(LocalGATTServer.genericAttributeCount)
            // A database that leaves no room for the services it does not declare is refused:
            // serving it without them would drop GAP or GATT unannounced.
            if (!declaresGAP && gap == nil) || (!declaresGATT && gatt == nil) {
                moveOurs(genericAccess: ours.0, genericAttribute: ours.1)
                let missing = !declaresGAP && gap == nil ? "GAP (0x1800)" : "GATT (0x1801)"
                throw .layout(
                    DatabaseLayoutError(
                        entry: "services",
                        reason: "no handles are left for our \(missing) service; "
                            + "declare it in the database or leave it room"))
            }
            moveOurs(genericAccess: gap, genericAttribute: gatt)
            changed += [
                gap.map { $0...$0 + (LocalGATTServer.genericAccessCount - 1) },
                gatt.map { $0...$0 + (LocalGATTServer.genericAttributeCount - 1) },
            ].compactMap { $0 }
        }
        for service in placed { install(service) }
        base.updateDatabaseHash()
        if let start = changed.map(\.lowerBound).min(), let end = changed.map(\.upperBound).max() {
            indicateServiceChanged(from: start, to: end)
        }
        return placed.map(\.served)
    }

    /// Puts a laid-out service in the table and learns its values and CCCDs.
    private func install(_ placed: PlacedService) {
        for attribute in placed.attributes { attributes.add(attribute) }
        for characteristic in placed.served.characteristics {
            valueUUIDs[characteristic.valueHandle] = characteristic.uuid
        }
        for (value, cccd, characteristic) in placed.cccds {
            subscribable[value] = Subscribable(
                uuid: characteristic.uuid, properties: characteristic.properties, cccd: cccd)
            valueOfCCCD[cccd] = value
        }
        services.append(placed.served)
    }

    /// Moves our GAP and GATT services (nil: serves none) and Service Changed's CCCD with them.
    private func moveOurs(genericAccess: AttributeHandle?, genericAttribute: AttributeHandle?) {
        if let old = base.serviceChangedValueHandle, let cccd = base.serviceChangedCCCD {
            subscribable[old] = nil
            valueOfCCCD[cccd] = nil
            valueUUIDs[old] = nil
        }
        base.place(genericAccess: genericAccess, genericAttribute: genericAttribute)
        registerServiceChanged()
    }

    /// Service Changed's CCCD is per client, as any other.
    func registerServiceChanged() {
        guard let value = base.serviceChangedValueHandle, let cccd = base.serviceChangedCCCD else { return }
        subscribable[value] = Subscribable(uuid: .serviceChanged, properties: .indicate, cccd: cccd)
        valueOfCCCD[cccd] = value
        valueUUIDs[value] = .serviceChanged
    }
}

extension ServiceDefinition {
    /// Whether it says where any of its attributes go.
    var givesHandles: Bool {
        handle != nil || endHandle != nil || includes.contains { $0.handle != nil }
            || characteristics.contains {
                $0.handle != nil || $0.valueHandle != nil || $0.descriptors.contains { $0.handle != nil }
            }
    }
}
