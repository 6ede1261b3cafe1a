import ATT
import BluetoothCore

/// Reliable writes (Core Vol 3, Part G, 4.9.5): a characteristic value takes part in one
/// only when its Characteristic Extended Properties (3.3.3.1) has Reliable Write set.
///
/// ATT cannot tell a reliable write from a long write (4.9.4, 4.12.4): both are Prepare
/// Write Requests and an Execute Write. But a long write writes one attribute, so a queue
/// that writes more than one is a reliable write, and is checked. Read from the table as
/// served, whoever laid it out.
extension GATTServer {
    /// Why the queue of prepared writes to `handles` may not be executed: Write Request
    /// Rejected (0xFC, Core Specification Supplement Part B 1.2: a write refused for a reason
    /// other than permissions) naming the first attribute in it that does not permit reliable
    /// writes, when it writes more than one attribute; nil when it may. Not Request Not
    /// Supported: the server does support Execute Write, and a client reads 0x06 as that.
    func reliableWriteRefusal(_ handles: [AttributeHandle]) -> AttributeRefusal? {
        var distinct: [AttributeHandle] = []
        for handle in handles where !distinct.contains(handle) { distinct.append(handle) }
        guard distinct.count > 1 else { return nil }
        guard let refused = distinct.first(where: { !permitsReliableWrite($0) }) else { return nil }
        return AttributeRefusal(handle: refused, code: .writeRequestRejected)
    }

    /// Whether `handle` is a characteristic value whose declaration has the Extended
    /// Properties bit and whose Extended Properties descriptor has Reliable Write (bit 0).
    private func permitsReliableWrite(_ handle: AttributeHandle) -> Bool {
        let table = attributes.attributes
        guard
            let declaration = table.firstIndex(where: {
                $0.type == .characteristic && CharacteristicDeclaration(value: $0.value)?.valueHandle == handle
            }),
            let properties = CharacteristicDeclaration(value: table[declaration].value)?.properties,
            properties.contains(.extendedProperties)
        else { return false }
        // The characteristic's descriptors: up to the next declaration of any kind.
        let declarations: Set<BluetoothUUID> = [.primaryService, .secondaryService, .include, .characteristic]
        for attribute in table[(declaration + 1)...] {
            if declarations.contains(attribute.type) { break }
            if attribute.type == Self.extendedPropertiesType { return (attribute.value.first ?? 0) & 0x01 != 0 }
        }
        return false
    }

    /// Characteristic Extended Properties (0x2900).
    private static let extendedPropertiesType = BluetoothUUID(UInt16(0x2900))
}
