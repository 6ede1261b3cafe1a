import ATT
import BluetoothCore
import HCI

/// Discovery as Core Vol 3, Part G specifies it, one procedure a call: primary services
/// (4.4), included services (4.5), characteristics (4.6) and descriptors (4.7).
extension GATTClient {
    // MARK: Primary service discovery (4.4)

    /// Discover All Primary Services: Read By Group Type (0x2800) over the whole database.
    public func discoverPrimaryServices() async throws(GATTError) -> [Service] {
        try await discoverServices(primary: true)
    }

    /// Every secondary service: Read By Group Type («Secondary Service», 0x2801) over the
    /// whole database. A secondary service is meant to be reached through an include
    /// (Core Vol 3 Part G §2.5.2, §4.5.1); a server groups its declarations like a primary
    /// service's (Part F §3.4.4.9), so the sweep finds them at once, as BlueZ's client and
    /// the conformance tests' order have it. A server that refuses the group type
    /// (Unsupported Group Type) has none to show this way.
    public func discoverSecondaryServices() async throws(GATTError) -> [Service] {
        do { return try await discoverServices(primary: false) } catch {
            if error.code == .unsupportedGroupType { return [] }
            throw error
        }
    }

    /// Read By Group Type over the whole database for primary or secondary service declarations.
    private func discoverServices(primary: Bool) async throws(GATTError) -> [Service] {
        try await collect(from: 0x0001, to: 0xFFFF) {
            (start: AttributeHandle) async throws(GATTError) -> ([Service], AttributeHandle) in
            let response = try await self.ask(
                ReadByGroupTypeRequest(
                    startingHandle: start, endingHandle: 0xFFFF,
                    groupType: primary ? .primaryService : .secondaryService),
                ReadByGroupTypeResponse.self)
            var services: [Service] = []
            for entry in response.entries {
                guard let uuid = BluetoothUUID(littleEndianBytes: entry.value) else {
                    throw .invalidResponse(
                        "a service UUID of \(entry.value.count) bytes at \(hex(entry.handle, digits: 4))")
                }
                guard entry.handle >= start, entry.endGroupHandle >= entry.handle else {
                    throw .invalidResponse(
                        "service group \(hex(entry.handle, digits: 4))…\(hex(entry.endGroupHandle, digits: 4)) asked from \(hex(start, digits: 4))"
                    )
                }
                services.append(
                    Service(uuid: uuid, handle: entry.handle, endGroupHandle: entry.endGroupHandle, isPrimary: primary))
            }
            return (services, services.last?.endGroupHandle ?? 0xFFFF)
        }
    }

    /// Discover Primary Service by Service UUID: Find By Type Value (0x2800, the UUID).
    public func discoverPrimaryServices(uuid: BluetoothUUID) async throws(GATTError) -> [Service] {
        try await collect(from: 0x0001, to: 0xFFFF) {
            (start: AttributeHandle) async throws(GATTError) -> ([Service], AttributeHandle) in
            let response = try await self.ask(
                FindByTypeValueRequest(
                    startingHandle: start, endingHandle: 0xFFFF, attributeType: 0x2800,
                    attributeValue: uuid.attributeBytes[...]), FindByTypeValueResponse.self)
            var services: [Service] = []
            for entry in response.entries {
                guard entry.foundHandle >= start, entry.groupEndHandle >= entry.foundHandle else {
                    throw .invalidResponse(
                        "service group \(hex(entry.foundHandle, digits: 4))…\(hex(entry.groupEndHandle, digits: 4)) asked from \(hex(start, digits: 4))"
                    )
                }
                services.append(Service(uuid: uuid, handle: entry.foundHandle, endGroupHandle: entry.groupEndHandle))
            }
            return (services, services.last?.endGroupHandle ?? 0xFFFF)
        }
    }

    // MARK: Relationship discovery (4.5)

    /// Find Included Services: Read By Type (0x2802) over the service; a 128-bit included
    /// service's UUID is read from its declaration (Read Request) as soon as the include that
    /// lacks it arrives, before the sweep goes on (the order the conformance tests expect).
    /// An included service is marked as the services discovered so far know it; one they do
    /// not hold is secondary when every service is known (a full discovery), else taken
    /// for primary (nothing says otherwise without reading its declaration's type).
    public func findIncludedServices(in service: Service) async throws(GATTError) -> [IncludedService] {
        try await collect(from: service.handle, to: service.endGroupHandle) {
            (start: AttributeHandle) async throws(GATTError) -> ([IncludedService], AttributeHandle) in
            let response = try await self.ask(
                ReadByTypeRequest(startingHandle: start, endingHandle: service.endGroupHandle, attributeType: .include),
                ReadByTypeResponse.self)
            var includes: [IncludedService] = []
            for entry in response.entries {
                guard entry.value.count == 4 || entry.value.count == 6, entry.handle >= start else {
                    throw .invalidResponse(
                        "an include declaration of \(entry.value.count) bytes at \(hex(entry.handle, digits: 4))")
                }
                // Included_Service_Attribute_Handle, End_Group_Handle, and the UUID when 16-bit.
                var fields = ByteReader(entry.value)
                guard let first = try? AttributeHandle(from: &fields), let last = try? AttributeHandle(from: &fields)
                else { continue }
                var uuid = fields.isAtEnd ? nil : BluetoothUUID(littleEndianBytes: fields.remaining)
                if uuid == nil {
                    // The include left the UUID out (Core Vol 3 Part G §4.5.1: it does for a
                    // 128-bit UUID): the included service's declaration holds it. A server
                    // that left out a 16-bit one is served as well.
                    let bytes = try await self.read(first)
                    guard let declared = BluetoothUUID(littleEndianBytes: bytes) else {
                        throw .invalidResponse(
                            "the included service's declaration at \(hex(first, digits: 4)) holds no UUID (\(bytes.count) octets)"
                        )
                    }
                    uuid = declared
                }
                guard let uuid else { continue }
                let isPrimary =
                    self.database.services.first { $0.handle == first }?.isPrimary ?? !self.database.isComplete
                includes.append(
                    IncludedService(
                        declarationHandle: entry.handle,
                        service: Service(uuid: uuid, handle: first, endGroupHandle: last, isPrimary: isPrimary)))
            }
            return (includes, includes.last?.declarationHandle ?? service.endGroupHandle)
        }
    }

    // MARK: Characteristic discovery (4.6)

    /// Discover All Characteristics of a Service (or, with `uuid`, Discover Characteristics
    /// by UUID: the same Read By Type (0x2803) walk, keeping the matching ones).
    public func discoverCharacteristics(in service: Service, uuid: BluetoothUUID? = nil) async throws(GATTError)
        -> [Characteristic]
    {
        let declared = try await collect(from: service.handle, to: service.endGroupHandle) {
            (start: AttributeHandle) async throws(GATTError) -> ([Characteristic], AttributeHandle) in
            let response = try await self.ask(
                ReadByTypeRequest(
                    startingHandle: start, endingHandle: service.endGroupHandle,
                    attributeType: .characteristic), ReadByTypeResponse.self)
            var characteristics: [Characteristic] = []
            for entry in response.entries {
                guard entry.handle >= start, let declaration = CharacteristicDeclaration(value: entry.value) else {
                    throw .invalidResponse(
                        "a characteristic declaration of \(entry.value.count) bytes at \(hex(entry.handle, digits: 4))")
                }
                characteristics.append(
                    Characteristic(
                        uuid: declaration.uuid, declarationHandle: entry.handle, properties: declaration.properties,
                        valueHandle: declaration.valueHandle, endHandle: service.endGroupHandle))
            }
            return (characteristics, characteristics.last?.declarationHandle ?? service.endGroupHandle)
        }
        // Each characteristic ends where the next declaration begins (Part G, 3.3).
        var all = declared
        for index in all.indices.dropLast() {
            // A declaration at handle 0x0000 (a broken server, asked from 0) ends nothing before it.
            let next = all[index + 1].declarationHandle
            all[index].endHandle = max(all[index].valueHandle, next == 0 ? 0 : next - 1)
        }
        guard let uuid else { return all }
        return all.filter { $0.uuid == uuid }
    }

    // MARK: Characteristic descriptor discovery (4.7)

    /// Discover All Characteristic Descriptors: Find Information after the value handle up to
    /// the characteristic's end.
    public func discoverDescriptors(of characteristic: Characteristic) async throws(GATTError) -> [Descriptor] {
        guard characteristic.mayHaveDescriptors else { return [] }
        return try await discoverDescriptors(in: characteristic.valueHandle + 1...characteristic.endHandle)
    }

    /// Find Information over `range`: every attribute's handle and type.
    public func discoverDescriptors(in range: ClosedRange<AttributeHandle>) async throws(GATTError) -> [Descriptor] {
        try await discoverDescriptors(from: range.lowerBound, to: range.upperBound)
    }

    /// Find Information from `start` to `end` as given: the first request goes out even when
    /// the range is one a server must refuse (start 0x0000, or after `end`), so its answer
    /// (Invalid Handle) is what the caller sees.
    public func discoverDescriptors(from start: AttributeHandle, to end: AttributeHandle) async throws(GATTError)
        -> [Descriptor]
    {
        try await collect(from: start, to: end) {
            (next: AttributeHandle) async throws(GATTError) -> ([Descriptor], AttributeHandle) in
            let response = try await self.ask(
                FindInformationRequest(startingHandle: next, endingHandle: end), FindInformationResponse.self)
            let descriptors = response.entries.map { Descriptor(uuid: $0.type, handle: $0.handle) }
            guard descriptors.allSatisfy({ $0.handle >= next }) else {
                throw .invalidResponse("Find Information answered handles before \(hex(next, digits: 4))")
            }
            return (descriptors, descriptors.last?.handle ?? end)
        }
    }
}
