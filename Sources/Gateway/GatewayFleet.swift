import Bluejay
import HCI

/// The fleet (`fleet: on`): gateways on one broker share the peripherals by retained leases
/// (Lease.swift), and only a lease of ours connects one. The subscriptions' messages are
/// sorted here too, as the lease topics come first.
extension GatewayService {
    /// A connection refused for want of room in the controller (Connection Limit Exceeded,
    /// Memory Capacity Exceeded), however it reached us.
    static func refusedForRoom(_ error: BluejayError) -> Bool {
        let status: HCIStatus
        switch error {
        case .connection(.failed(let refused)), .connection(.hci(.commandFailed(_, let refused))),
            .hci(.commandFailed(_, let refused)):
            status = refused
        default: return false
        }
        return status == .connectionLimitExceeded || status == .memoryCapacityExceeded
    }

    /// A message of our subscriptions: a lease, a gateway's status (in a fleet), or a `/set`.
    func handleMessage(_ message: MQTTMessage) async {
        if var leases {
            if let address = topics.parseLease(message.topic) {
                let actions = leases.received(address, lease: Lease(payload: message.payload), now: .current)
                self.leases = leases
                return await carryOut(actions)
            }
            if let gateway = topics.parseGatewayStatus(message.topic) {
                leases.status(of: gateway, online: message.payload == Array("online".utf8))
                self.leases = leases
                return
            }
        }
        if await answeredLeftover(message) { return }
        await handleSet(message)
    }

    /// The lease protocol's deadlines, looked at every ``leaseTick``.
    func fleetTick() async {
        guard var leases else { return }
        let actions = leases.tick(now: .current)
        self.leases = leases
        await carryOut(actions)
    }

    /// A sighting of a configured peripheral, for the fleet's bidding.
    func sighted(_ key: String, rssi: Int) async {
        guard var leases, bound[key] != nil else { return }
        let actions = leases.sighted(key, rssi: rssi, now: .current)
        self.leases = leases
        await carryOut(actions)
    }

    /// What the lease protocol asks for.
    func carryOut(_ actions: [FleetLeases.Action]) async {
        for action in actions {
            switch action {
            case .publish(let address, let lease):
                logger.debug("lease \(address): \(lease)")
                mqtt.setRetained(topics.lease(address), lease.payload)
            case .clear(let address):
                logger.info("lease \(address) released")
                mqtt.clearRetained(topics.lease(address))
            case .connect(let address):
                guard let entry = bound[address] else { continue }
                logger.info("lease \(address) is ours: connecting")
                tasks.append(Task { await self.connect(entry) })
            case .disconnect(let address):
                guard let entry = bound[address] else { continue }
                // Lost to a better lease, or handed over (load spread): another gateway has it.
                logger.info("lease \(address) went to another gateway: disconnecting")
                for task in entry.work { task.cancel() }
                entry.work = []
                await entry.peripheral.disconnect()
                entry.connected = false
                mqtt.setRetained(topics.status(entry.address), Array("offline".utf8))
            }
        }
    }
}
