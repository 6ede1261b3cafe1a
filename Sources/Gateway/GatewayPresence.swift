import Bluejay

/// Presence on MQTT: `…/ADDRESS/presence` for each tracked device, `home` once heard and
/// `not_home` after `away_after` unheard (retained), and a Home Assistant `device_tracker`
/// for each.
extension GatewayService {
    /// Starts tracking: Home Assistant is told of each tracked device, then a loop marks
    /// devices gone as their time runs out (a quarter of `away_after` late at most).
    func startPresence() async -> Task<Void, Never> {
        presence = PresenceTracker(configuration.presence, started: .now)
        if let discovery {
            for device in configuration.presence.tracked {
                let message = discovery.tracker(of: device)
                mqtt.setRetained(message.topic, Array(message.payload.utf8))
            }
        }
        let tick = configuration.presence.awayAfter / 4
        logger.info(
            "presence: \(configuration.presence.tracked.count) devices, away after \(configuration.presence.awayAfter)")
        return Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: tick)
                await self.expirePresence()
            }
        }
    }

    /// An advertisement from `address`: its tracked device, if any, is `home`.
    func sighted(_ address: BluetoothAddress) async {
        guard let (device, state) = presence?.sighted(address, at: .now) else { return }
        await publish(state, of: device)
    }

    private func expirePresence() async {
        for (device, state) in presence?.expire(at: .now) ?? [] { await publish(state, of: device) }
    }

    private func publish(_ state: PresenceState, of device: BluetoothAddress) async {
        logger.info("\(device.description.uppercased()): \(state.rawValue)")
        mqtt.setRetained(topics.presence(device), Array(state.rawValue.utf8))
    }
}

extension HomeAssistantDiscovery {
    /// A `device_tracker` of `…/ADDRESS/presence` (`home` / `not_home`), in the device's own
    /// Home Assistant device under the gateway's.
    public func tracker(of device: BluetoothAddress) -> Message {
        let addressID = Self.addressID(device)
        let objectID = "bluejay_\(gateway)_\(addressID)_presence"
        let fields: [String: Any] = [
            "name": "Presence",
            "unique_id": objectID,
            "state_topic": topics.presence(device),
            "payload_home": PresenceState.home.rawValue,
            "payload_not_home": PresenceState.notHome.rawValue,
            "source_type": "bluetooth_le",
            "availability_topic": topics.status,
            "device": [
                "identifiers": ["bluejay_\(addressID)"], "name": "BLE \(device.description.uppercased())",
                "via_device": gatewayDevice,
            ],
        ]
        return Message(topic: "\(prefix)/device_tracker/\(objectID)/config", payload: JSONText.encode(fields))
    }
}
