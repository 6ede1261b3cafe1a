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
@BluetoothActor
public final class LocalGATTServer: ATTServer {
    /// The attribute table and the ATT server over it.
    public let attributes: AttributeServer

    /// Handle of the Client Supported Features value.
    public nonisolated static let clientSupportedFeaturesHandle: AttributeHandle = 0x000B
    /// Handle of the Database Hash value.
    public nonisolated static let databaseHashHandle: AttributeHandle = 0x000D

    /// A server naming this host `deviceName`, with a GAP appearance value (0 = unknown).
    public init(deviceName: String = "Bluejay", appearance: UInt16 = 0) {
        let server = AttributeServer()
        func declare(_ handle: AttributeHandle, _ properties: CharacteristicProperties, _ uuid: BluetoothUUID) {
            server.add(handle: handle, type: .characteristic,
                       value: CharacteristicDeclaration(properties: properties, valueHandle: handle + 1, uuid: uuid).value)
        }
        server.add(handle: 0x0001, type: .primaryService, value: BluetoothUUID.genericAccess.attributeBytes)
        declare(0x0002, [.read], .deviceName)
        server.add(handle: 0x0003, type: .deviceName, value: Array(deviceName.utf8.prefix(248)))
        declare(0x0004, [.read], .appearance)
        server.add(handle: 0x0005, type: .appearance, value: [UInt8(truncatingIfNeeded: appearance), UInt8(appearance >> 8)])
        server.add(handle: 0x0006, type: .primaryService, value: BluetoothUUID.genericAttribute.attributeBytes)
        declare(0x0007, [.indicate], .serviceChanged)
        server.add(handle: 0x0008, type: .serviceChanged, value: [0x01, 0x00, 0xFF, 0xFF], permissions: [])
        server.add(handle: 0x0009, type: .clientCharacteristicConfiguration, value: [0x00, 0x00], permissions: [.read, .write])
        declare(0x000A, [.read, .write], .clientSupportedFeatures)
        server.add(handle: Self.clientSupportedFeaturesHandle, type: .clientSupportedFeatures, value: [0x00], permissions: [.read, .write])
        declare(0x000C, [.read], .databaseHash)
        server.add(handle: Self.databaseHashHandle, type: .databaseHash, value: Self.hashValue(of: server))
        attributes = server
        server.onWrite = { [unowned server] _, handle, value in
            switch handle {
            case 0x0009:
                // Only indications (bit 1) make sense for Service Changed.
                guard value.count == 2, value[1] == 0, value[0] & ~0x02 == 0 else { return .cccdImproperlyConfigured }
                return nil
            case Self.clientSupportedFeaturesHandle:
                // A client may set feature bits but never clear one (Part G, 7.2).
                let old = server.value(of: handle) ?? []
                for (index, byte) in old.enumerated() where value.count <= index || value[index] & byte != byte {
                    return .valueNotAllowed
                }
                return nil
            default:
                return nil
            }
        }
    }

    /// The Database Hash of `server`'s table as served (least significant octet first); the
    /// hash value attribute's own value takes no part in it (Part G, 7.3.1).
    private static func hashValue(of server: AttributeServer) -> [UInt8] {
        let input = server.attributes.map { DatabaseHashAttribute(handle: $0.handle.rawValue, typeBytes: $0.type.attributeBytes, value: $0.value) }
        return lsbFirst(fromMSBFirst: databaseHash(attributes: input))
    }

    /// Computes the Database Hash again after the table changed (services added).
    public func updateDatabaseHash() {
        attributes.setValue(Self.hashValue(of: attributes), of: Self.databaseHashHandle)
    }

    /// Handle of the Service Changed value.
    public nonisolated static let serviceChangedHandle: AttributeHandle = 0x0008
    /// Handle of Service Changed's CCCD.
    public nonisolated static let serviceChangedCCCDHandle: AttributeHandle = 0x0009

    /// The Database Hash value as served (least significant octet first, as on the wire).
    public var databaseHashValue: [UInt8] { attributes.value(of: Self.databaseHashHandle) ?? [] }

    /// Answers one request or command from a peer.
    public func respond(to pdu: ArraySlice<UInt8>, connection: ConnectionHandle, mtu: Int) -> [UInt8]? {
        attributes.respond(to: pdu, connection: connection, mtu: mtu)
    }

    /// Forgets the link's prepare queue.
    public func linkEnded(_ connection: ConnectionHandle) { attributes.linkEnded(connection) }
}
