import ATT
import BluetoothCore
import HCI

/// Notifications and indications (Core 6.0 Vol 3 Part G 4.10, 4.11, 4.12.3): the client
/// configuration written, values handed to their listeners, and Service Changed (7.1).
extension GATTClient {
    /// Writes a Client Characteristic Configuration descriptor (0x2902).
    public func configure(_ descriptorHandle: AttributeHandle, _ configuration: ClientConfiguration)
        async throws(GATTError)
    {
        let bits = configuration.rawValue
        try await write(descriptorHandle, [UInt8(truncatingIfNeeded: bits), UInt8(bits >> 8)])
    }

    /// The Client Characteristic Configuration descriptor of the characteristic whose value
    /// is at `valueHandle`, found with Find Information requests from the next handle until a
    /// CCCD, the next declaration or the end of the database; nil when it has none. For
    /// when only the value handle is known (no discovery).
    public func clientConfigurationDescriptor(after valueHandle: AttributeHandle) async throws(GATTError)
        -> AttributeHandle?
    {
        let declarations: Set<BluetoothUUID> = [.primaryService, .secondaryService, .include, .characteristic]
        var next = valueHandle
        while next < 0xFFFF {
            let entries: [FindInformationResponse.Entry]
            do {
                entries = try await ask(
                    FindInformationRequest(startingHandle: next + 1, endingHandle: 0xFFFF), FindInformationResponse.self
                ).entries
            } catch {
                if error.code == .attributeNotFound { return nil }
                throw error
            }
            for entry in entries {
                if entry.type == .clientCharacteristicConfiguration { return entry.handle }
                if declarations.contains(entry.type) { return nil }
            }
            guard let last = entries.last?.handle, last > next else {
                throw .invalidResponse("Find Information did not move past \(hex(next, digits: 4))")
            }
            next = last
        }
        return nil
    }

    /// Calls `handler` with each notified or indicated value of `valueHandle` (a view of the
    /// received bytes: copy what you keep); returns a token for ``removeValueListener(_:)``.
    @discardableResult
    public func addValueListener(_ valueHandle: AttributeHandle, _ handler: @escaping (ArraySlice<UInt8>) -> Void)
        -> Int
    {
        nextListener += 1
        let listener = (token: nextListener, handler: handler)
        if listeners.update(valueHandle, { $0.append(listener) }) == nil { listeners[valueHandle] = [listener] }
        return nextListener
    }

    /// Stops a listener added with ``addValueListener(_:_:)``.
    public func removeValueListener(_ token: Int) {
        for handle in listeners.keys { listeners.update(handle) { $0.removeAll { $0.token == token } } }
        listeners.removeAll { $0.isEmpty }
    }

    func deliver(_ handle: AttributeHandle, _ value: ArraySlice<UInt8>, indication: Bool) {
        if indication, handle == serviceChangedHandle {
            serviceChanged(value)
        }
        onValue?(handle, value, indication)
        guard let handlers = listeners[handle] else {
            if handle != serviceChangedHandle { onUnhandledValue?(handle, value) }
            return
        }
        // In registration order, so several listeners see values in the same order.
        for listener in handlers { listener.handler(value) }
    }

    // MARK: Service Changed (Part G, 7.1)

    /// Subscribes to the peer's Service Changed indications when it has the characteristic;
    /// returns whether it does. Each indication drops what was discovered in its range.
    /// Does nothing (and returns true) when the client is already subscribed, including by
    /// ``assumeServiceChangedSubscription()``.
    @discardableResult
    public func subscribeToServiceChanged() async throws(GATTError) -> Bool {
        if isSubscribedToServiceChanged { return true }
        let characteristic: Characteristic
        do {
            characteristic = try await self.characteristic(
                .serviceChanged, in: .genericAttribute, includingSecondary: false)
        } catch {
            switch error {
            case .serviceNotFound, .characteristicNotFound: return false
            default: throw error
            }
        }
        guard characteristic.properties.contains(.indicate) else { return false }
        serviceChangedHandle = characteristic.valueHandle
        guard
            let cccd = try await descriptors(of: characteristic).first(where: {
                $0.uuid == .clientCharacteristicConfiguration
            })
        else {
            return false
        }
        try await configure(cccd.handle, .indicate)
        isSubscribedToServiceChanged = true
        return true
    }

    /// Takes the Service Changed subscription as standing without writing its CCCD: what a
    /// bonded peer keeps across connections (Core 6.0 Vol 3 Part G §2.5.2 and §3.3.3.3).
    /// The characteristic must be in the known database (adopt a cached one first); from
    /// now on its indications invalidate what they cover. Returns whether it was found.
    @discardableResult
    public func assumeServiceChangedSubscription() -> Bool {
        guard let service = database.service(.genericAttribute),
            let characteristic = database.characteristics[service.handle]?.first(where: { $0.uuid == .serviceChanged }),
            characteristic.properties.contains(.indicate)
        else { return false }
        serviceChangedHandle = characteristic.valueHandle
        isSubscribedToServiceChanged = true
        return true
    }

    /// Undoes ``assumeServiceChangedSubscription()`` when the link turned out not to be the
    /// bonded one it was assumed to be: the next ``subscribeToServiceChanged()`` writes the
    /// CCCD. Indications at the handle are still recognised.
    public func forgetAssumedServiceChangedSubscription() {
        isSubscribedToServiceChanged = false
    }

    private func serviceChanged(_ value: ArraySlice<UInt8>) {
        // An affected range of 0x0001…0xFFFF when the value is malformed: rediscover everything.
        var range: ClosedRange<AttributeHandle> = 0x0001...0xFFFF
        if value.count == 4 {
            var fields = ByteReader(value)
            guard let start = try? AttributeHandle(from: &fields), let end = try? AttributeHandle(from: &fields) else {
                return
            }
            if start <= end { range = start...end }
        }
        let dropped = database.services.filter { $0.handles.overlaps(range) }
        invalidate(range)
        onServiceChanged?(range)
        onServicesInvalidated?(dropped)
    }
}
