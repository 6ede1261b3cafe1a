import ATT
import BluetoothCore
import HCI

/// A bonded client's CCCDs, kept for its next links: bound to a link once it is bonded,
/// saved through the server's hook, and restored when it reconnects (Core 6.0 Vol 3 Part G
/// 3.3.3.3: a bonded client's configuration persists across connections).
extension GATTServer {
    /// The client on `bearer`'s link is bonded as `client` (its identity address): its CCCD
    /// values, those written on this link so far and from now on, are kept for its next
    /// links.
    public func bind(_ bearer: ATTBearer, toBondedClient client: String) {
        let link = self.client(on: bearer)
        link.bonded = client
        var memory = bondedClients[client] ?? BondedClient()
        for (cccd, bits) in link.cccds { memory.cccds[cccd] = bits }
        bondedClients[client] = memory
        save(client)
    }

    /// What to store of `client` now: its CCCDs and the database as served now (it is on a
    /// link, so it sees it).
    func save(_ client: String) {
        guard let onBondedClientChanged, let memory = bondedClients[client] else { return }
        let cccds = memory.cccds.sorted { $0.key < $1.key }.compactMap { cccd, bits -> BondedClientRecord.CCCD? in
            guard bits != 0, let valueHandle = valueOfCCCD[cccd], let entry = subscribable[valueHandle] else {
                return nil
            }
            return BondedClientRecord.CCCD(handle: cccd.rawValue, characteristic: entry.uuid.description, value: bits)
        }
        onBondedClientChanged(
            client, BondedClientRecord(client: client, databaseHash: base.databaseHashValue.hexString(), cccds: cccds))
    }

    /// What is kept of a client from a `record` stored by an earlier run: the CCCDs that
    /// still configure a characteristic of the same UUID; if the database is not the one the
    /// client saw (its hash differs), the whole range counts as changed (7.1).
    private func remembered(_ record: BondedClientRecord) -> BondedClient {
        var memory = BondedClient()
        for cccd in record.cccds {
            let handle = AttributeHandle(rawValue: cccd.handle)
            guard let valueHandle = valueOfCCCD[handle],
                subscribable[valueHandle]?.uuid.description == cccd.characteristic
            else { continue }
            memory.cccds[handle] = cccd.value
        }
        if record.databaseHash != base.databaseHashValue.hexString() { memory.changed = (0x0001, .last) }
        return memory
    }

    /// The bonded `client` is back on `bearer`'s link (encrypted with the bond): its CCCD
    /// values apply again (each change told as when it is written), and if the database
    /// changed while it was away and it has Service Changed indications on, it is told
    /// which handles. When this server has not seen it yet (a new process), `stored` is
    /// what an earlier run kept (``onBondedClientChanged``). Returns the subscriptions
    /// restored.
    @discardableResult
    public func restoreBondedClient(_ client: String, on bearer: ATTBearer, stored: BondedClientRecord? = nil)
        -> [GATTSubscription]
    {
        let connection = bearer.connection
        let link = self.client(on: bearer)
        link.bonded = client
        defer { save(client) }
        guard var memory = bondedClients[client] ?? stored.map(remembered) else {
            bondedClients[client] = BondedClient()
            return []
        }
        var restored: [GATTSubscription] = []
        for (cccd, bits) in memory.cccds.sorted(by: { $0.key < $1.key }) where bits != 0 {
            guard let valueHandle = valueOfCCCD[cccd], let entry = subscribable[valueHandle], link.cccds[cccd] != bits
            else { continue }
            link.cccds[cccd] = bits
            let subscription = GATTSubscription(
                connection: connection, handle: valueHandle, uuid: entry.uuid,
                notifications: bits & 1 != 0, indications: bits & 2 != 0)
            restored.append(subscription)
            onSubscriptionChanged?(subscription)
        }
        if let changed = memory.changed {
            memory.changed = nil
            if let serviceChanged = base.serviceChangedValueHandle, let cccd = base.serviceChangedCCCD,
                memory.cccds[cccd].map({ $0 & 0x0002 != 0 }) == true
            {
                let value = changed.start.bytes + changed.end.bytes
                Task { @BluetoothActor in try? await bearer.indicate(handle: serviceChanged, value: value[...]) }
            }
        }
        bondedClients[client] = memory
        return restored
    }

    /// Forgets what was kept for `client` (its bond was removed), here and in the store
    /// (``onBondedClientChanged`` is told nil). A link it is on now keeps its CCCDs until
    /// it ends, as any unbonded client's.
    public func forgetBondedClient(_ client: String) {
        bondedClients[client] = nil
        for (_, link) in clients where link.bonded == client { link.bonded = nil }
        onBondedClientChanged?(client, nil)
    }
}
