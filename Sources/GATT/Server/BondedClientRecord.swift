import ATT
import BluetoothCore

/// What a GATT server keeps of one bonded client between its links and across restarts
/// (Core Vol 3, Part G, 3.3.3.3: a CCCD's value persists across connections for bonded
/// devices; 7.1: a bonded client is told of changes made while it was away).
///
/// Stored as JSON (format `bluejay-gatt-server-client`, version 1), one file per bond next
/// to it (`bonds/gatt-server/ADDRESS.json`, mode 0600, written by the app layer's store):
///
/// ```json
/// {"format": "bluejay-gatt-server-client", "version": 1, "client": "F0:0D:B1:E7:00:01",
///  "databaseHash": "3f0c…", "cccds": [{"handle": 9, "characteristic": "2A05", "value": 2}]}
/// ```
///
/// `databaseHash` is the Database Hash value as served (hex, least significant octet first)
/// when the client last saw the database; `cccds` its CCCD values by CCCD handle, each with
/// the UUID of the characteristic it configures, so that a value whose handle now belongs to
/// another characteristic (the database changed meanwhile) is not applied.
public struct BondedClientRecord: Codable, Sendable, Equatable {
    /// One CCCD value of the client.
    public struct CCCD: Codable, Sendable, Equatable {
        /// The CCCD's handle.
        public var handle: UInt16
        /// The UUID of the characteristic it configures, as `BluetoothUUID`
        /// prints it.
        public var characteristic: String
        /// The value: bit 0 notifications, bit 1 indications.
        public var value: UInt16

        /// A CCCD value.
        public init(handle: UInt16, characteristic: String, value: UInt16) {
            (self.handle, self.characteristic, self.value) = (handle, characteristic, value)
        }
    }

    /// Always `bluejay-gatt-server-client`.
    public var format = "bluejay-gatt-server-client"
    /// The file format's version.
    public var version = 1
    /// The client's identity address, as its bond names it.
    public var client: String
    /// The Database Hash the client last saw, hex.
    public var databaseHash: String
    /// Its CCCD values (only those not 0x0000).
    public var cccds: [CCCD]

    /// A record of `client`.
    public init(client: String, databaseHash: String, cccds: [CCCD]) {
        (self.client, self.databaseHash, self.cccds) = (client, databaseHash, cccds)
    }

    /// Whether this version reads it.
    public var isUsable: Bool { format == "bluejay-gatt-server-client" && version == 1 }
}
