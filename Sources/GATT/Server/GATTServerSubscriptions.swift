import ATT
import BluetoothCore
import HCI

/// Subscriptions (each client's CCCDs), and the notifications and indications they let
/// the server send.
extension GATTServer {
    /// Each client's subscription to the value at `handle`, for clients that turned
    /// something on.
    public func subscribers(of handle: AttributeHandle) -> [GATTSubscription] {
        guard let entry = subscribable[handle] else { return [] }
        return clients.compactMap { bearer, client in
            let bits = client.cccds[entry.cccd] ?? 0
            guard bits != 0 else { return nil }
            return GATTSubscription(
                connection: bearer.connection, handle: handle, uuid: entry.uuid,
                notifications: bits & 0x0001 != 0, indications: bits & 0x0002 != 0)
        }.sorted { $0.connection < $1.connection }
    }

    /// Notifies `value` (cut to each link's ATT_MTU - 3) to every client with notifications
    /// on for `handle`, or to those of `connections`; returns the links it went to. A link
    /// whose send fails is skipped (it is going down).
    @discardableResult
    public func notify(_ handle: AttributeHandle, value: [UInt8], to connections: [ConnectionHandle]? = nil)
        -> [ConnectionHandle]
    {
        var sent: [ConnectionHandle] = []
        guard let entry = subscribable[handle] else { return sent }
        // Straight over the bearers, with no list of subscriptions built: this runs per value.
        for bearer in served where bearer.isOpen && connections?.contains(bearer.connection) ?? true {
            guard let client = bearer.serverState as? LinkClient, (client.cccds[entry.cccd] ?? 0) & 0x0001 != 0 else {
                continue
            }
            do {
                try bearer.notify(handle: handle, value: value[...])
                sent.append(bearer.connection)
            } catch {
                bearer.logger.log(
                    .info, "notifying \(hex(handle, digits: 4)) on \(hex(bearer.connection, digits: 4)): \(error)")
            }
        }
        if sent.count > 1 { sent.sort() }
        return sent
    }

    /// Indicates `value` to the client on `connection` and returns once it confirms; it
    /// must have indications on for `handle` (else `ATTError.protocolError`).
    public func indicate(_ handle: AttributeHandle, value: [UInt8], to connection: ConnectionHandle)
        async throws(ATTError)
    {
        guard subscribers(of: handle).contains(where: { $0.connection == connection && $0.indications }),
            let bearer = client(of: connection)?.bearer
        else {
            throw .protocolError(
                "the client on \(hex(connection, digits: 4)) has not turned indications on for \(hex(handle, digits: 4))"
            )
        }
        try await bearer.indicate(handle: handle, value: value[...])
    }

    /// Stores a CCCD write (two octets; only the bits the characteristic's properties allow)
    /// and tells the app.
    func writeCCCD(_ value: [UInt8], of valueHandle: AttributeHandle, connection: ConnectionHandle) -> ATTErrorCode? {
        guard let entry = subscribable[valueHandle] else { return .unlikelyError }
        guard value.count == 2 else { return .invalidAttributeValueLength }
        let bits = UInt16(value[0]) | UInt16(value[1]) << 8
        var allowed: UInt16 = 0
        if entry.properties.contains(.notify) { allowed |= 0x0001 }
        if entry.properties.contains(.indicate) { allowed |= 0x0002 }
        guard bits & ~allowed == 0 else { return .cccdImproperlyConfigured }
        // The table writes for a client that reached us through its bearer.
        guard let link = client(of: connection)?.client else { return .unlikelyError }
        let old = link.cccds[entry.cccd] ?? 0
        link.cccds[entry.cccd] = bits
        if let client = link.bonded, bondedClients[client] != nil {
            bondedClients[client]?.cccds[entry.cccd] = bits
            if old != bits { save(client) }
        }
        if old != bits {
            onSubscriptionChanged?(
                GATTSubscription(
                    connection: connection, handle: valueHandle, uuid: entry.uuid,
                    notifications: bits & 1 != 0, indications: bits & 2 != 0))
        }
        return nil
    }
}
