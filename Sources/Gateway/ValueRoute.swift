import Bluejay

/// Where one characteristic's values go: its value topic, its `/json` topic and decoder when
/// ``KnownCharacteristic`` knows it. Made once per subscription or poll, not per value: the
/// topics' strings and the decoder's look-up (a UUID parsed for each known characteristic)
/// cost as much as the rest of a value's way.
struct ValueRoute: Sendable {
    /// `PREFIX/GATEWAY/ADDRESS/SERVICE/CHARACTERISTIC`.
    let topic: String
    /// `…/json`, and what decodes the values to it; nil when not a known characteristic.
    let json: (topic: String, characteristic: KnownCharacteristic)?

    /// The route of `rule`'s values at `address` under `topics`.
    init(_ rule: CharacteristicRule, at address: BluetoothAddress, topics: Topics) {
        topic = topics.value(address, rule)
        json = KnownCharacteristic(rule.characteristic.uuid).map { (topics.json(address, rule), $0) }
    }
}
