import ATT
import BluetoothCore

/// Why services cannot be laid out in the database: the entry (`services[1].characteristics[0]`,
/// counted among the services added together) and what is wrong with it.
public struct DatabaseLayoutError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The entry at fault.
    public let entry: String
    /// What is wrong with it.
    public let reason: String

    /// Readable: `services[1].characteristics[0]: handle 0x0010 is taken by services[0] (declaration)`.
    public var description: String { "\(entry): \(reason)" }
}

/// A service laid out: its attributes, where its characteristics landed, and its CCCDs.
struct PlacedService {
    var attributes: [Attribute]
    var served: ServedService
    /// Each characteristic with a CCCD (the server's or the app's), by value handle.
    var cccds: [(value: AttributeHandle, cccd: AttributeHandle, characteristic: CharacteristicDefinition)]
}

/// Lays out services added together (Core 6.0 Vol 3, Part G, 3): each attribute at the
/// handle its definition gives, else at the one after the attribute before it; a service
/// without a handle goes after the one before it, or after the table's last attribute.
/// Handles only grow within a service, none is used twice, no service's group overlaps
/// another's, none passes its service's end handle, and every include names a service in
/// the table or among those laid out; anything else is refused naming the entry.
struct DatabaseLayout {
    /// The services already in the table.
    private var existing: [Service] = []
    /// Who holds each handle, for the refusals.
    private var taken: [Int: String] = [:]
    /// Where a service without a handle goes.
    private var next = 1

    /// A layout around the attributes `table` holds.
    init(table: [Attribute]) {
        for (index, attribute) in table.enumerated() {
            taken[Int(attribute.handle.rawValue)] = "an attribute already served"
            next = max(next, Int(attribute.handle.rawValue) + 1)
            guard attribute.type == .primaryService || attribute.type == .secondaryService,
                let uuid = BluetoothUUID(littleEndianBytes: attribute.value[...])
            else { continue }
            // The group's end as the table answers Read By Group Type: declared, else the
            // last attribute before the next service.
            var end = attribute.groupEndHandle ?? attribute.handle
            if attribute.groupEndHandle == nil {
                for later in table[(index + 1)...] {
                    if later.type == .primaryService || later.type == .secondaryService { break }
                    end = later.handle
                }
            }
            next = max(next, Int(end.rawValue) + 1)
            existing.append(
                Service(
                    uuid: uuid, handle: attribute.handle, endGroupHandle: end,
                    isPrimary: attribute.type == .primaryService))
        }
    }

    /// Lays out `definitions`, in order; nothing is kept when one is refused.
    mutating func lay(_ definitions: [ServiceDefinition]) throws(DatabaseLayoutError) -> [PlacedService] {
        var placed: [PlacedService] = []
        var includeHandles: [[AttributeHandle]] = []
        for (index, definition) in definitions.enumerated() {
            var includes: [AttributeHandle] = []
            placed.append(try lay(definition, at: "services[\(index)]", includes: &includes))
            includeHandles.append(includes)
        }
        // Groups, then includes: an include may name a service laid out after it.
        let added = placed.map(\.served.service)
        for (index, service) in added.enumerated() {
            for other in existing where other.handles.overlaps(service.handles) {
                throw DatabaseLayoutError(
                    entry: "services[\(index)]",
                    reason:
                        "handles \(Self.range(service)) overlap service \(other.uuid) (\(Self.range(other))), already served"
                )
            }
            for (otherIndex, other) in added.enumerated()
            where otherIndex < index && other.handles.overlaps(service.handles) {
                throw DatabaseLayoutError(
                    entry: "services[\(index)]",
                    reason: "handles \(Self.range(service)) overlap services[\(otherIndex)] (\(Self.range(other)))")
            }
        }
        for (index, definition) in definitions.enumerated() {
            for (number, include) in definition.includes.enumerated() {
                let entry = "services[\(index)].includes[\(number)]"
                guard
                    let target = (existing + added).first(where: {
                        $0.uuid == include.uuid && (include.serviceHandle ?? $0.handle) == $0.handle
                    })
                else {
                    let at = include.serviceHandle.map { " at \(hex($0, digits: 4))" } ?? ""
                    throw DatabaseLayoutError(
                        entry: entry, reason: "no service \(include.uuid)\(at) is in the database or added with it")
                }
                guard target.handle != added[index].handle else {
                    throw DatabaseLayoutError(entry: entry, reason: "a service cannot include itself")
                }
                var value = target.handle.bytes + target.endGroupHandle.bytes
                // Only a 16-bit UUID goes in the declaration (Part G, 3.2).
                if target.uuid.shortValue != nil { value += target.uuid.attributeBytes }
                placed[index].attributes.append(
                    Attribute(handle: includeHandles[index][number], type: .include, value: value))
            }
            placed[index].attributes.sort { $0.handle < $1.handle }
        }
        existing += added
        return placed
    }

    /// The first `count` handles in a row that no attribute or service group holds, else
    /// those after the last (nil when none are left); they are held from now on.
    mutating func reserve(_ count: Int) -> AttributeHandle? {
        let groups = existing.map { Int($0.handle.rawValue)...Int($0.endGroupHandle.rawValue) }
        var start = 1
        while start + count - 1 <= 0xFFFF {
            let wanted = start...(start + count - 1)
            if let group = groups.first(where: { $0.overlaps(wanted) }) {
                start = group.upperBound + 1
            } else if let held = wanted.first(where: { taken[$0] != nil }) {
                start = held + 1
            } else {
                for handle in wanted { taken[handle] = "our own services" }
                return AttributeHandle(rawValue: UInt16(start))
            }
        }
        return nil
    }

    /// `0x0010–0x0015`.
    private static func range(_ service: Service) -> String {
        "\(hex(service.handle, digits: 4))–\(hex(service.endGroupHandle, digits: 4))"
    }

    /// Lays out one service; its includes get handles here and values once every service has one.
    private mutating func lay(
        _ definition: ServiceDefinition, at entry: String,
        includes: inout [AttributeHandle]
    ) throws(DatabaseLayoutError) -> PlacedService {
        let end = definition.endHandle.map { Int($0.rawValue) }
        var last = next - 1
        let declaration = try take(
            definition.handle, after: &last, ordered: false, end: nil, by: "\(entry) (declaration)", at: entry)
        if let end, end < declaration {
            throw DatabaseLayoutError(
                entry: entry,
                reason:
                    "end_handle \(hex(UInt16(end), digits: 4)) is before the service's handle \(hex(UInt16(declaration), digits: 4))"
            )
        }
        var attributes = [
            Attribute(
                handle: AttributeHandle(rawValue: UInt16(declaration)),
                type: definition.isPrimary ? .primaryService : .secondaryService, value: definition.uuid.attributeBytes,
                groupEndHandle: definition.endHandle)
        ]
        for (number, include) in definition.includes.enumerated() {
            let spot = "\(entry).includes[\(number)]"
            includes.append(
                AttributeHandle(rawValue: UInt16(try take(include.handle, after: &last, end: end, by: spot, at: spot))))
        }
        var served: [ServedCharacteristic] = []
        var cccds: [(value: AttributeHandle, cccd: AttributeHandle, characteristic: CharacteristicDefinition)] = []
        for (number, characteristic) in definition.characteristics.enumerated() {
            let spot = "\(entry).characteristics[\(number)]"
            func handle(_ wanted: AttributeHandle?, _ role: String, _ place: String) throws(DatabaseLayoutError)
                -> AttributeHandle
            {
                AttributeHandle(
                    rawValue: UInt16(try take(wanted, after: &last, end: end, by: "\(place) (\(role))", at: place)))
            }
            let declarationHandle = try handle(characteristic.handle, "declaration", spot)
            let valueHandle = try handle(characteristic.valueHandle, "value", spot)
            attributes.append(
                Attribute(
                    handle: declarationHandle, type: .characteristic,
                    value: CharacteristicDeclaration(
                        properties: characteristic.properties, valueHandle: valueHandle,
                        uuid: characteristic.uuid
                    ).value))
            attributes.append(
                Attribute(
                    handle: valueHandle, type: characteristic.uuid, value: characteristic.value,
                    permissions: characteristic.permissions))
            let declared = Set(characteristic.descriptors.map(\.uuid))
            if !characteristic.extendedProperties.isEmpty, !declared.contains(.characteristicExtendedProperties) {
                let bits = characteristic.extendedProperties.rawValue
                attributes.append(
                    Attribute(
                        handle: try handle(nil, "extended properties", spot), type: .characteristicExtendedProperties,
                        value: [UInt8(truncatingIfNeeded: bits), UInt8(bits >> 8)]))
            }
            var cccd: AttributeHandle?
            if characteristic.hasCCCD {
                cccd = try handle(nil, "CCCD", spot)
                attributes.append(
                    Attribute(
                        handle: cccd!, type: .clientCharacteristicConfiguration, value: [0, 0],
                        permissions: [.read, .write]))
            }
            for (index, descriptor) in characteristic.descriptors.enumerated() {
                let place = "\(spot).descriptors[\(index)]"
                let descriptorHandle = try handle(descriptor.handle, "descriptor", place)
                // The app's own CCCD, when it took that on: per client, as ours.
                if !characteristic.automaticCCCD, cccd == nil, descriptor.uuid == .clientCharacteristicConfiguration {
                    cccd = descriptorHandle
                }
                attributes.append(
                    Attribute(
                        handle: descriptorHandle, type: descriptor.uuid, value: descriptor.value,
                        permissions: descriptor.permissions))
            }
            if let cccd { cccds.append((valueHandle, cccd, characteristic)) }
            served.append(
                ServedCharacteristic(
                    uuid: characteristic.uuid, properties: characteristic.properties,
                    valueHandle: valueHandle, cccdHandle: cccd))
        }
        let groupEnd = AttributeHandle(rawValue: UInt16(end ?? last))
        next = Int(groupEnd.rawValue) + 1
        let service = Service(
            uuid: definition.uuid, handle: AttributeHandle(rawValue: UInt16(declaration)), endGroupHandle: groupEnd,
            isPrimary: definition.isPrimary)
        return PlacedService(
            attributes: attributes, served: ServedService(service: service, characteristics: served), cccds: cccds)
    }

    /// Takes `wanted`, else the handle after `last`, for `owner`: a handle not in use, after
    /// `last` when `ordered` (handles grow within a service), and not past `end`.
    private mutating func take(
        _ wanted: AttributeHandle?, after last: inout Int, ordered: Bool = true, end: Int?,
        by owner: String, at entry: String
    ) throws(DatabaseLayoutError) -> Int {
        let handle = wanted.map { Int($0.rawValue) } ?? last + 1
        func refuse(_ reason: String) -> DatabaseLayoutError { DatabaseLayoutError(entry: entry, reason: reason) }
        guard handle != 0 else { throw refuse("handle 0x0000 is reserved") }
        guard handle <= 0xFFFF else { throw refuse("no handle is left after 0xFFFF") }
        let text = hex(UInt16(handle), digits: 4)
        if ordered, handle <= last {
            throw refuse("handle \(text) is not after \(hex(UInt16(last), digits: 4)), the attribute before it")
        }
        if let end, handle > end {
            throw refuse("handle \(text) is past the service's end_handle \(hex(UInt16(end), digits: 4))")
        }
        if let holder = taken[handle] { throw refuse("handle \(text) is taken by \(holder)") }
        taken[handle] = owner
        last = handle
        return handle
    }
}

extension BluetoothUUID {
    /// 0x2900 Characteristic Extended Properties descriptor.
    public static let characteristicExtendedProperties = BluetoothUUID(UInt16(0x2900))
}
