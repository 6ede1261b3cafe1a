import Bluejay

/// Writes from MQTT: a `/set` message's hex bytes go to the characteristic it names, and
/// whatever stops them is answered on `PREFIX/GATEWAY/error` instead.
extension GatewayService {
    /// A `/set` message: hex bytes written to the characteristic. Anything wrong (not ours,
    /// not hex, not connected, refused) is answered on `PREFIX/GATEWAY/error` and touches nothing.
    func handleSet(_ message: MQTTMessage) async {
        guard !message.retained else { return refuse(message, "a retained /set is not acted on") }
        guard let (addressText, path) = topics.parseSet(message.topic) else { return }
        guard let entry = bound[addressText.uppercased()] else {
            return refuse(message, "no configured peripheral \(addressText)")
        }
        guard let rule = entry.rule.writable.first(where: { $0.topicPath == path.uppercased() }) else {
            return refuse(message, "\(path) is not configured for \(addressText) (subscribe:, poll: or write:)")
        }
        let text = String(decoding: message.payload, as: UTF8.self)
        guard let bytes = Hex.decode(text) else { return refuse(message, "the payload is not hex bytes") }
        guard entry.connected else { return refuse(message, "\(addressText) is not connected") }
        do {
            try await entry.peripheral.write(
                to: rule.characteristic, bytes: bytes,
                type: rule.writeWithoutResponse ? .withoutResponse : .withResponse)
            counters.writes += 1
            logger.debug("\(message.topic): wrote \(bytes.count) byte(s)")
        } catch {
            refuse(message, "the write failed: \(error)")
        }
    }

    private func refuse(_ message: MQTTMessage, _ reason: String) {
        counters.setErrors += 1
        logger.warning("\(message.topic): \(reason)")
        let payload = String(decoding: message.payload.prefix(64), as: UTF8.self)
        let text = JSONText.encode(["topic": message.topic, "payload": payload, "error": reason])
        Task { self.mqtt.publish(self.topics.error, Array(text.utf8)) }
    }
}
