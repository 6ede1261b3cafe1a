import ATT
import BluetoothCore
import BluetoothCrypto
import HCI

/// The small GATT server a central keeps for its peers (Core Vol 3, Part G, 7 and Part C,
/// 12): the GAP service (Device Name, Appearance) and the GATT service (Service Changed
/// with its CCCD, Client Supported Features, Database Hash). Our database never changes,
/// so Service Changed is never indicated; the Database Hash is computed from the table.
///
/// | handle | attribute |
/// | --- | --- |
/// | 0x0001 | GAP service (0x1800) |
/// | 0x0003 | Device Name (read) |
/// | 0x0005 | Appearance (read) |
/// | 0x0006 | GATT service (0x1801) |
/// | 0x0008 | Service Changed (indicate), CCCD at 0x0009 |
/// | 0x000B | Client Supported Features (read, write) |
/// | 0x000D | Database Hash (read) |
///
/// Those are the handles by default. A database that gives handles of its own, or declares
/// GAP or GATT itself, moves ours to the room it leaves or replaces them
/// (``place(genericAccess:genericAttribute:)``, as `GATTServer` adds several services).
@BluetoothActor
public final class LocalGATTServer: ATTServer {
    /// The attribute table and the ATT server over it.
    public let attributes: AttributeServer

    /// Handle of the Client Supported Features value where our GATT service is by default.
    public nonisolated static let clientSupportedFeaturesHandle: AttributeHandle = 0x000B
    /// Handle of the Database Hash value where our GATT service is by default.
    public nonisolated static let databaseHashHandle: AttributeHandle = 0x000D

    /// Where our GAP service (0x1800) is; nil when the app's database has its own.
    public private(set) var genericAccessHandle: AttributeHandle? = 0x0001
    /// Where our GATT service (0x1801) is; nil when the app's database has its own.
    public private(set) var genericAttributeHandle: AttributeHandle? = 0x0006
    /// The values of ours kept while they are out of the table, to come back with.
    private var kept: (name: [UInt8], appearance: [UInt8], features: [UInt8]) = ([], [0, 0], [0x00])
    /// Whether the Database Hash attribute holds the hash of the table as it is.
    private var hashIsCurrent = false
    /// How many handles our GAP service takes.
    public nonisolated static let genericAccessCount = 5
    /// How many handles our GATT service takes.
    public nonisolated static let genericAttributeCount = 8

    /// Handle of our Service Changed value, if we serve the GATT service.
    public var serviceChangedValueHandle: AttributeHandle? { genericAttributeHandle.map { $0 + 2 } }
    /// Handle of our Service Changed's CCCD, if we serve the GATT service.
    public var serviceChangedCCCD: AttributeHandle? { genericAttributeHandle.map { $0 + 3 } }
    /// Handle of our Client Supported Features value, if we serve the GATT service.
    public var clientSupportedFeaturesValueHandle: AttributeHandle? { genericAttributeHandle.map { $0 + 5 } }
    /// Handle of our Database Hash value, if we serve the GATT service.
    public var databaseHashValueHandle: AttributeHandle? { genericAttributeHandle.map { $0 + 7 } }

    /// A server naming this host `deviceName`, with a GAP appearance value (0 = unknown).
    public init(deviceName: String = "Bluejay", appearance: UInt16 = 0) {
        let server = AttributeServer()
        for attribute in Self.genericAccess(
            at: 0x0001, name: Array(deviceName.utf8.prefix(248)), appearance: appearance)
            + Self.genericAttribute(at: 0x0006)
        {
            server.add(attribute)
        }
        attributes = server
        updateDatabaseHash()
        // Written with ifs, not a switch over the two (optional) handles: Swift 6.0.3's
        // compiler crashes on that switch in this closure.
        // Weak self: the table may outlive this server; `server` calls its own closure.
        server.onWrite = { [weak self, unowned server] _, handle, value in
            guard let self else { return nil }
            if handle == self.serviceChangedCCCD {
                // Only indications (bit 1) make sense for Service Changed.
                guard value.count == 2, value[1] == 0, value[0] & ~0x02 == 0 else { return .cccdImproperlyConfigured }
                return nil
            }
            if handle == self.clientSupportedFeaturesValueHandle {
                // A client may set feature bits but never clear one (Part G, 7.2).
                let old = server.value(of: handle) ?? []
                for (index, byte) in old.enumerated() where value.count <= index || value[index] & byte != byte {
                    return .valueNotAllowed
                }
            }
            return nil
        }
        // A read of the Database Hash gets the hash of the table as it is now.
        server.onRead = { [weak self] _, handle in
            guard let self, handle == databaseHashValueHandle else { return nil }
            return databaseHashValue
        }
    }

    /// Our GAP service at `start`: Device Name and Appearance, read-only.
    private static func genericAccess(at start: AttributeHandle, name: [UInt8], appearance: UInt16) -> [Attribute] {
        [
            Attribute(handle: start, type: .primaryService, value: BluetoothUUID.genericAccess.attributeBytes),
            declaration(start + 1, [.read], .deviceName), Attribute(handle: start + 2, type: .deviceName, value: name),
            declaration(start + 3, [.read], .appearance),
            Attribute(
                handle: start + 4, type: .appearance,
                value: [UInt8(truncatingIfNeeded: appearance), UInt8(appearance >> 8)]),
        ]
    }

    /// Our GATT service at `start`: Service Changed and its CCCD, Client Supported Features,
    /// Database Hash (its value computed once the table is whole).
    private static func genericAttribute(at start: AttributeHandle) -> [Attribute] {
        [
            Attribute(handle: start, type: .primaryService, value: BluetoothUUID.genericAttribute.attributeBytes),
            declaration(start + 1, [.indicate], .serviceChanged),
            Attribute(handle: start + 2, type: .serviceChanged, value: [0x01, 0x00, 0xFF, 0xFF], permissions: []),
            Attribute(
                handle: start + 3, type: .clientCharacteristicConfiguration, value: [0x00, 0x00],
                permissions: [.read, .write]),
            declaration(start + 4, [.read, .write], .clientSupportedFeatures),
            Attribute(handle: start + 5, type: .clientSupportedFeatures, value: [0x00], permissions: [.read, .write]),
            declaration(start + 6, [.read], .databaseHash),
            Attribute(handle: start + 7, type: .databaseHash, value: []),
        ]
    }

    private static func declaration(
        _ handle: AttributeHandle, _ properties: CharacteristicProperties, _ uuid: BluetoothUUID
    ) -> Attribute {
        Attribute(
            handle: handle, type: .characteristic,
            value: CharacteristicDeclaration(properties: properties, valueHandle: handle + 1, uuid: uuid).value)
    }

    /// Moves our GAP and GATT services to `genericAccess` and `genericAttribute` (nil: we
    /// serve none, the app's database has its own), keeping the Device Name, Appearance and
    /// Client Supported Features. The caller has made room.
    public func place(genericAccess: AttributeHandle?, genericAttribute: AttributeHandle?) {
        if let old = genericAccessHandle {
            kept.name = attributes.value(of: old + 2) ?? kept.name
            kept.appearance = attributes.value(of: old + 4) ?? kept.appearance
            attributes.remove(from: old, to: old + (Self.genericAccessCount - 1))
        }
        if let old = genericAttributeHandle {
            kept.features = attributes.value(of: old + 5) ?? kept.features
            attributes.remove(from: old, to: old + (Self.genericAttributeCount - 1))
        }
        genericAccessHandle = genericAccess
        genericAttributeHandle = genericAttribute
        if let genericAccess {
            let bits = UInt16(kept.appearance.first ?? 0) | UInt16(kept.appearance.dropFirst().first ?? 0) << 8
            for attribute in Self.genericAccess(at: genericAccess, name: kept.name, appearance: bits) {
                attributes.add(attribute)
            }
        }
        if let genericAttribute {
            for attribute in Self.genericAttribute(at: genericAttribute) { attributes.add(attribute) }
            attributes.setValue(kept.features, of: genericAttribute + 5)
        }
        updateDatabaseHash()
    }

    /// The Database Hash of `server`'s table as served (least significant octet first); the
    /// hash value attribute's own value takes no part in it (Part G, 7.3.1).
    private static func hashValue(of server: AttributeServer) -> [UInt8] {
        let input = server.attributes.map {
            DatabaseHashAttribute(handle: $0.handle.rawValue, typeBytes: $0.type.attributeBytes, value: $0.value)
        }
        return lsbFirst(fromMSBFirst: databaseHash(attributes: input))
    }

    /// Marks the Database Hash out of date after the table changed (services added or
    /// removed). It is computed again when next read, by a client or through
    /// ``databaseHashValue``: a CMAC over the whole table, so adding services one by one
    /// costs one hash, not one each, and a server no client asks costs none.
    public func updateDatabaseHash() {
        hashIsCurrent = false
    }

    /// Brings the Database Hash attribute up to date with the table.
    private func refreshDatabaseHash() {
        guard !hashIsCurrent, let handle = databaseHashValueHandle else { return }
        hashIsCurrent = true
        attributes.setValue(Self.hashValue(of: attributes), of: handle)
    }

    /// Handle of the Service Changed value where our GATT service is by default.
    public nonisolated static let serviceChangedHandle: AttributeHandle = 0x0008
    /// Handle of Service Changed's CCCD where our GATT service is by default.
    public nonisolated static let serviceChangedCCCDHandle: AttributeHandle = 0x0009

    /// The Database Hash value as served (least significant octet first, as on the wire).
    public var databaseHashValue: [UInt8] {
        refreshDatabaseHash()
        return databaseHashValueHandle.flatMap { attributes.value(of: $0) } ?? []
    }

    /// Answers one request or command from the peer on `bearer` (its prepare queue kept on
    /// the bearer).
    public func respond(to request: ATTRequest, on bearer: ATTBearer) -> [UInt8]? {
        attributes.respond(to: request, connection: bearer.connection, mtu: bearer.mtu, client: &bearer.tableClient)
    }
}
