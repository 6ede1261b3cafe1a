import ATT
import BluetoothCore

extension GATTServer {
    /// Takes `served` (as ``add(_:)`` returned it) out of the database: its attributes, their
    /// handlers, and every client's CCCDs and queued prepared writes for them. Its handles are
    /// not handed out again (a later service goes after the last attribute). The Database Hash
    /// is computed again and clients subscribed to Service Changed are told of the range, as
    /// when a service is added (Core Vol 3, Part G, 7.1); bonded clients away now are told
    /// when they come back.
    public func remove(_ served: ServedService) throws(GATTServerError) {
        let declaration = served.service.handle
        guard let index = services.firstIndex(where: { $0.service.handle == declaration }) else {
            throw .serviceNotFound(served.service.uuid)
        }
        let removed = services[index].service
        let range = removed.handle...removed.endGroupHandle
        // An include names the service by its handles: removing it would leave the include
        // pointing at nothing.
        for other in services where other.service.handle != declaration {
            for attribute in attributes.attributes
            where (other.service.handle...other.service.endGroupHandle).contains(attribute.handle)
                && attribute.type == .include && attribute.value.count >= 4
                && AttributeHandle(rawValue: UInt16(attribute.value[0]) | UInt16(attribute.value[1]) << 8)
                    == removed.handle
            {
                throw .serviceIncluded(removed.uuid, by: other.service.uuid)
            }
        }
        services.remove(at: index)
        attributes.remove(from: removed.handle, to: removed.endGroupHandle)
        for handle in readHandlers.keys where range.contains(handle) { readHandlers[handle] = nil }
        for handle in writeHandlers.keys where range.contains(handle) { writeHandlers[handle] = nil }
        handled.readHandled = Set(readHandlers.keys)
        handled.writeHandled = Set(writeHandlers.keys)
        for handle in valueUUIDs.keys where range.contains(handle) { valueUUIDs[handle] = nil }
        for handle in subscribable.keys where range.contains(handle) { subscribable[handle] = nil }
        for handle in valueOfCCCD.keys where range.contains(handle) { valueOfCCCD[handle] = nil }
        for (_, link) in clients {
            link.cccds = link.cccds.filter { !range.contains($0.key) }
            link.table.forget(range)
        }
        base.updateDatabaseHash()
        for (client, memory) in bondedClients where memory.cccds.keys.contains(where: { range.contains($0) }) {
            var kept = memory
            kept.cccds = memory.cccds.filter { !range.contains($0.key) }
            bondedClients[client] = kept
            save(client)
        }
        indicateServiceChanged(from: removed.handle, to: removed.endGroupHandle)
    }
}
