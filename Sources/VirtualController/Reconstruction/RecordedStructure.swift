import ATT
import BluetoothCore
import GATT

/// A recorded service with what its range holds, as the flat attributes imply
/// (``RecordedPeripheral/services``).
public struct RecordedService: Sendable, Equatable {
    /// The service declaration's handle.
    public var handle: AttributeHandle
    /// The last handle of the service: its End Group Handle, else the handle before the next
    /// service declaration, else the last attribute the recording shows.
    public var endHandle: AttributeHandle
    /// Primary (0x2800) or secondary (0x2801).
    public var isPrimary: Bool
    /// The service UUID; nil when the declaration's value is no UUID (2 or 16 octets).
    public var uuid: BluetoothUUID?
    /// Its include declarations, in handle order.
    public var includes: [RecordedInclude]
    /// Its characteristics, in handle order.
    public var characteristics: [RecordedCharacteristic]
}

/// An include declaration (0x2802) of a recorded service.
public struct RecordedInclude: Sendable, Equatable {
    /// The declaration's handle.
    public var handle: AttributeHandle
    /// The included service's first handle, when the declaration's value says.
    public var startHandle: AttributeHandle?
    /// The included service's last handle.
    public var endHandle: AttributeHandle?
    /// The included service's UUID, when the declaration carries a 16-bit one.
    public var uuid: BluetoothUUID?
}

/// A recorded characteristic: its declaration, its value attribute and its descriptors.
public struct RecordedCharacteristic: Sendable, Equatable {
    /// The characteristic declaration's handle.
    public var declarationHandle: AttributeHandle
    /// The Characteristic Value Handle the declaration gives.
    public var valueHandle: AttributeHandle
    /// The characteristic UUID.
    public var uuid: BluetoothUUID
    /// The declared properties.
    public var properties: CharacteristicProperties
    /// The last value seen at the value handle; nil when the recording never shows it.
    public var value: [UInt8]?
    /// The value a client found first, when it differs from ``value``
    /// (``RecordedAttribute/initialValue``): the virtual peer starts from it.
    public var initialValue: [UInt8]?
    /// The attributes after the value handle up to the next declaration or the service's
    /// end whose type the recording shows.
    public var descriptors: [RecordedAttribute]
}

extension RecordedPeripheral {
    /// The services the attributes imply, in handle order: each service declaration (0x2800,
    /// 0x2801) with the include and characteristic declarations in its range, and each
    /// characteristic with its descriptors (the typed attributes after its value handle, up
    /// to the next declaration or the service's end).
    public var services: [RecordedService] {
        let primary = BluetoothUUID.primaryService, secondary = BluetoothUUID.secondaryService
        let include = BluetoothUUID.include, characteristic = BluetoothUUID.characteristic
        let declarationTypes: Set<BluetoothUUID> = [primary, secondary, include, characteristic]
        let declarations = attributes.filter { $0.type == primary || $0.type == secondary }
        let lastHandle = attributes.last?.handle ?? .first
        var services: [RecordedService] = []
        for (position, declaration) in declarations.enumerated() {
            let next = position + 1 < declarations.count ? declarations[position + 1].handle - 1 : lastHandle
            let end = max(declaration.handle, declaration.groupEndHandle ?? next)
            let inside = attributes.filter { $0.handle > declaration.handle && $0.handle <= end }
            var service = RecordedService(
                handle: declaration.handle, endHandle: end, isPrimary: declaration.type == primary,
                uuid: declaration.value.flatMap(Self.uuid(from:)), includes: [], characteristics: [])
            // Where each characteristic's descriptors stop: the next declaration of any kind.
            let declared = inside.filter { attribute in attribute.type.map(declarationTypes.contains) ?? false }
            let boundaries: [Int] = declared.map { Int($0.handle.rawValue) } + [Int(end.rawValue) + 1]
            for attribute in inside {
                if attribute.type == include {
                    service.includes.append(Self.include(attribute))
                } else if attribute.type == characteristic,
                    let declaration = attribute.value.flatMap(CharacteristicDeclaration.init(value:))
                {
                    let valueHandle = declaration.valueHandle
                    let stop = boundaries.first { $0 > Int(attribute.handle.rawValue) } ?? Int(end.rawValue) + 1
                    let descriptors = inside.filter {
                        $0.handle > valueHandle && Int($0.handle.rawValue) < stop && $0.type != nil
                    }
                    service.characteristics.append(
                        RecordedCharacteristic(
                            declarationHandle: attribute.handle, valueHandle: valueHandle, uuid: declaration.uuid,
                            properties: declaration.properties, value: self.attribute(at: valueHandle)?.value,
                            initialValue: self.attribute(at: valueHandle)?.initialValue, descriptors: descriptors))
                }
            }
            services.append(service)
        }
        return services
    }

    /// The attributes the recording shows only in use (read, written, notified, refused),
    /// never in a discovery response: their type is unknown.
    public var undiscoveredAttributes: [RecordedAttribute] { attributes.filter { $0.type == nil } }

    /// Attributes whose type the recording shows but that lie in no recorded service (their
    /// service's discovery is not in the recording).
    public var attributesOutsideServices: [RecordedAttribute] {
        let ranges = services.map { $0.handle...$0.endHandle }
        return attributes.filter { attribute in
            attribute.type != nil && !ranges.contains { $0.contains(attribute.handle) }
        }
    }

    /// What the recording does not show of this peer, in words: the gaps a stand-in for it
    /// has to fill or leave open (e.g. `no advertising data recorded`, `ATT_MTU not
    /// recorded`, `value never seen: 0x0012 (2A37 Heart Rate Measurement)`).
    public var missing: [String] {
        var missing: [String] = []
        if addressIsMadeUp {
            missing.append("address not in the recording (made up): the connection began before the capture")
        }
        if advertisingData == nil && scanResponseData == nil { missing.append("no advertising data recorded") }
        if name == nil { missing.append("no name recorded (no Local Name advertised, no Device Name read)") }
        if mtu == nil { missing.append("ATT_MTU not recorded (no MTU exchange: the default 23 applies)") }
        if attributes.isEmpty {
            missing.append("no ATT traffic recorded: the GATT database is unknown")
            return missing
        }
        let services = services
        if services.isEmpty { missing.append("no service discovery recorded") }
        for service in services
        where service.characteristics.isEmpty && service.includes.isEmpty && service.endHandle > service.handle {
            missing.append(
                "characteristic discovery not recorded for service \(hex(service.handle, digits: 4))"
                    + (service.uuid.map { " (\($0.nameAndValue))" } ?? ""))
        }
        for service in services {
            for characteristic in service.characteristics {
                if characteristic.value == nil {
                    missing.append(
                        "value never seen: \(hex(characteristic.valueHandle, digits: 4)) (\(characteristic.uuid.nameAndValue))"
                    )
                }
                for descriptor in characteristic.descriptors where descriptor.value == nil {
                    missing.append(
                        "value never seen: \(hex(descriptor.handle, digits: 4)) (\(descriptor.type.map(\.nameAndValue) ?? "unknown type"))"
                    )
                }
            }
        }
        let outside = attributesOutsideServices
        if !outside.isEmpty {
            missing.append(
                "attributes outside any recorded service (its discovery is not in the recording): "
                    + outside.map { hex($0.handle, digits: 4) }.joined(separator: ", "))
        }
        let undiscovered = undiscoveredAttributes
        if !undiscovered.isEmpty {
            missing.append(
                "handles known only from use, never discovered: "
                    + undiscovered.map { hex($0.handle, digits: 4) }.joined(separator: ", "))
        }
        return missing
    }

    /// A UUID from a declaration's value (2 or 16 octets, least significant first).
    static func uuid(from value: [UInt8]) -> BluetoothUUID? {
        value.count == 2 || value.count == 16 ? BluetoothUUID(littleEndianBytes: value) : nil
    }

    /// An include declaration's value: Included Service Handle, End Group Handle, and the
    /// service UUID when it is a 16-bit one (Vol 3, Part G, 3.2).
    static func include(_ attribute: RecordedAttribute) -> RecordedInclude {
        var include = RecordedInclude(handle: attribute.handle)
        guard let value = attribute.value, value.count >= 4 else { return include }
        include.startHandle = AttributeHandle(rawValue: UInt16(value[0]) | UInt16(value[1]) << 8)
        include.endHandle = AttributeHandle(rawValue: UInt16(value[2]) | UInt16(value[3]) << 8)
        if value.count == 6 { include.uuid = BluetoothUUID(littleEndianBytes: value[4...]) }
        return include
    }
}

extension RecordedInclude {
    /// An include declaration whose value is not known yet.
    init(handle: AttributeHandle) {
        self.handle = handle
    }
}
