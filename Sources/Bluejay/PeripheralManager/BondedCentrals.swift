import ATT
import BluetoothCore
import FoundationEssentials
import GATT
import SMP
import Storage

/// Where our GATT server keeps what it knows of each bonded central across restarts: the
/// store's `bonds/gatt-server/` folder, one `BondedClientRecord` (JSON, format
/// `bluejay-gatt-server-client`) per central, named after its identity address like its bond
/// (`bonds/F00DB1E70001.json` → `bonds/gatt-server/F00DB1E70001.json`), written atomically
/// with mode 0600. Unpairing removes it with the bond.
public struct BondedCentralStore: Sendable {
    /// The folder the records live in.
    public let directory: StoreDirectory

    /// The records next to `bonds`' files.
    public init(bonds: BondStore) { directory = bonds.directory.subdirectory("gatt-server") }

    /// Stores `record`, replacing the central's earlier one.
    public func save(_ record: BondedClientRecord) throws(StoreError) {
        try directory.writeJSON(record, to: BondStore.fileName(record.client))
    }

    /// The record of the central with identity address `client`, if there is a readable one.
    public func record(for client: String) -> BondedClientRecord? {
        guard let record = directory.readJSON(BondedClientRecord.self, from: BondStore.fileName(client)),
            record.isUsable, record.client == client
        else { return nil }
        return record
    }

    /// Forgets the record of `client`; returns whether there was one.
    @discardableResult
    public func remove(_ client: String) throws(StoreError) -> Bool {
        try directory.remove(BondStore.fileName(client))
    }
}

extension PeripheralManager {
    /// The store of what the server keeps of bonded centrals (next to the bonds).
    public var bondedCentrals: BondedCentralStore { BondedCentralStore(bonds: host.security.bonds) }

    /// Keeps the server's memory of each bonded central in ``bondedCentrals`` as it changes.
    func keepBondedCentralsInStore() {
        let store = bondedCentrals
        server.onBondedClientChanged = { client, record in
            // A store that cannot be written costs the central its subscriptions after a
            // restart, nothing more: it subscribes again.
            if let record { try? store.save(record) } else { _ = try? store.remove(client) }
        }
    }

    /// A bonded central is back on `bearer`'s link, encrypted with `bond`: its
    /// subscriptions apply again, from this run's memory or else from the store.
    func restoreBondedCentral(_ bond: Bond, on bearer: ATTBearer) {
        // The app's characteristics hear of the subscriptions that apply again.
        for subscription in server.restoreBondedClient(
            bond.address, on: bearer, stored: bondedCentrals.record(for: bond.address))
        {
            bound[subscription.handle]?.subscription(
                of: connectedCentral(subscription.connection),
                on: subscription.notifications || subscription.indications)
        }
    }

    /// Forgets the central with identity address `address`: its bond, and the
    /// subscriptions kept for it (here and in the store). Returns whether there was a bond.
    /// A link it is on now stays, unbonded.
    @discardableResult
    public func unpair(_ address: BluetoothAddress) throws(StoreError) -> Bool {
        let removed = try host.security.bonds.remove(address)
        server.forgetBondedClient(address.description)
        return removed
    }
}
