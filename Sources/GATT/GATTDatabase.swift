import BluetoothCore
import HCI

/// What a client knows of a peer's attribute database: the services found so far and,
/// per service and characteristic, what was discovered inside. The lazy procedures fill it,
/// Service Changed empties the affected range, and the discovery cache stores and restores
/// it whole.
public struct GATTDatabase: Sendable, Equatable {
    /// Services found, primary and secondary (``Service/isPrimary``), in handle order.
    public var services: [Service] = []
    /// Whether ``services`` holds every service (a full discovery ran).
    public var isComplete = false
    /// Included services by the including service's declaration handle.
    public var includes: [AttributeHandle: [IncludedService]] = [:]
    /// Characteristics by their service's declaration handle.
    public var characteristics: [AttributeHandle: [Characteristic]] = [:]
    /// Descriptors by their characteristic's value handle.
    public var descriptors: [AttributeHandle: [Descriptor]] = [:]

    /// An empty database: nothing discovered yet.
    public init() {}

    /// A database holding exactly these parts.
    public init(
        services: [Service], isComplete: Bool, includes: [AttributeHandle: [IncludedService]] = [:],
        characteristics: [AttributeHandle: [Characteristic]] = [:], descriptors: [AttributeHandle: [Descriptor]] = [:]
    ) {
        self.services = services.sorted { $0.handle < $1.handle }
        self.isComplete = isComplete
        self.includes = includes
        self.characteristics = characteristics
        self.descriptors = descriptors
    }

    /// Whether nothing is known.
    public var isEmpty: Bool { services.isEmpty && !isComplete }

    /// The first known primary service with `uuid`, else the first secondary one.
    public func service(_ uuid: BluetoothUUID) -> Service? {
        services.first { $0.uuid == uuid && $0.isPrimary } ?? services.first { $0.uuid == uuid }
    }

    /// The known characteristic whose value sits at `valueHandle`, with its service.
    public func characteristic(valueHandle: AttributeHandle) -> (service: Service, characteristic: Characteristic)? {
        for service in services where service.handles.contains(valueHandle) {
            if let characteristic = characteristics[service.handle]?.first(where: { $0.valueHandle == valueHandle }) {
                return (service, characteristic)
            }
        }
        return nil
    }

    /// Adds a service found by a partial discovery (no-op when known).
    mutating func insert(_ service: Service) {
        guard !services.contains(where: { $0.handle == service.handle }) else { return }
        services.append(service)
        services.sort { $0.handle < $1.handle }
    }

    /// Forgets everything in `range` (Service Changed): services overlapping it with all
    /// they hold, and descriptors inside it. The service list is no longer complete.
    public mutating func invalidate(_ range: ClosedRange<AttributeHandle>) {
        let dropped = services.filter { $0.handles.overlaps(range) }
        guard !dropped.isEmpty || descriptors.keys.contains(where: range.contains) || isComplete else { return }
        services.removeAll { $0.handles.overlaps(range) }
        for service in dropped {
            characteristics[service.handle] = nil
            includes[service.handle] = nil
        }
        descriptors = descriptors.filter { !range.contains($0.key) }
        isComplete = false
    }

    /// Whether a full tree is known: every service, and inside each its includes,
    /// characteristics and their descriptors.
    public var isFullyDiscovered: Bool {
        isComplete
            && services.allSatisfy { service in
                guard includes[service.handle] != nil, let characteristics = characteristics[service.handle] else {
                    return false
                }
                return characteristics.allSatisfy { descriptors[$0.valueHandle] != nil }
            }
    }
}
