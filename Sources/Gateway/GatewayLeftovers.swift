import Bluejay

/// What an earlier run left retained on the broker that this run would not publish. Both
/// kinds are found the same way: the gateway subscribes to their topics before it connects,
/// the broker replays the retained messages there, and each is answered as it arrives.
/// Only replays count (`retained`): live messages on those topics are this run's own.
extension GatewayService {
    /// Answers `message` if it is on a leftover's topic (whether or not it needed an
    /// answer); false for every other message.
    func answeredLeftover(_ message: MQTTMessage) async -> Bool {
        if let address = topics.parsePeripheralStatus(message.topic) {
            await staleStatus(address, message)
            return true
        }
        if let staleDiscovery, staleDiscovery.matches(message.topic) {
            await staleConfiguration(message)
            return true
        }
        return false
    }

    /// A retained `online` of an address of ours this run does not serve (yet): a killed
    /// run's leftover (found by name last time, or no longer configured), made `offline`.
    private func staleStatus(_ address: String, _ message: MQTTMessage) async {
        guard message.retained, message.payload == Array("online".utf8), bound[address.uppercased()] == nil else {
            return
        }
        logger.info("\(address): left online by an earlier run; marking it offline")
        mqtt.setRetained(message.topic, Array("offline".utf8))
    }

    /// A retained Home Assistant configuration of ours that this configuration no longer
    /// announces (``StaleDiscovery/isStale(_:payload:)``), deleted: Home Assistant then
    /// removes its entity.
    private func staleConfiguration(_ message: MQTTMessage) async {
        guard message.retained, staleDiscovery?.isStale(message.topic, payload: message.payload) == true else { return }
        logger.info("\(message.topic): announced by an earlier run, no longer configured; deleting it")
        mqtt.clearRetained(message.topic)
    }
}
