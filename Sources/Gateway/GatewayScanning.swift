import Advertisements
import Bluejay
import Foundation

/// The gateway's scan: what it hears finds the peripherals configured by name or service,
/// feeds a fleet's bidding, goes to `…/ADDRESS/adv` (`advertisements:`) and, decoded, to
/// `…/ADDRESS/values` (`decode:`).
extension GatewayService {
    /// Whether anything needs the scan.
    var needsScan: Bool {
        !unmatched.isEmpty || configuration.advertisements != .off || leases != nil || configuration.decoding.enabled
            || !configuration.presence.tracked.isEmpty
    }

    /// Scans until cancelled, or until nothing needs it any more (every rule matched).
    func scan(_ central: Central) async {
        let passive = configuration.scanMode == .passive
        if passive,
            unmatched.contains(where: { if case .name = configuration.peripherals[$0].match { true } else { false } })
        {
            logger.warning("scan: passive hears no scan responses: a name: sent only in one is never matched")
        }
        do {
            try await scan(central, configuration.advertisements)
        } catch {
            // The scan could not start, or the controller went: the scan ends as a stopped
            // one does, and the log says why.
            logger.warning("scanning: \(error)")
        }
    }

    private func scan(_ central: Central, _ forwarding: AdvertisementForwarding) async throws {
        let decoding = configuration.decoding.enabled
        // Every advertisement, not one per device: values change, RSSI moves.
        let everyOne = forwarding != .off || leases != nil || decoding || presence != nil
        for try await discovery in central.startScanning(
            allowDuplicates: everyOne, active: configuration.scanMode == .active)
        {
            let identifier = discovery.peripheralIdentifier
            let key = identifier.address.description.uppercased()
            if bound[key] == nil,
                let index = unmatched.first(where: { matches(configuration.peripherals[$0].match, discovery) })
            {
                unmatched.removeAll { $0 == index }
                logger.info("\(identifier) matches \(configuration.peripherals[index].match)")
                await bind(configuration.peripherals[index], to: central.peripheral(identifier))
            }
            if leases != nil { await sighted(key, rssi: discovery.rssi) }
            if forwarding == .all || (forwarding == .configured && bound[key] != nil) {
                await forward(discovery, key: key)
            }
            if decoding { await decode(discovery, key: key) }
            if presence != nil { await sighted(identifier.address) }
            if unmatched.isEmpty, forwarding == .off, leases == nil, !decoding, presence == nil { break }
        }
    }

    private func matches(_ match: PeripheralMatch, _ discovery: ScanDiscovery) -> Bool {
        switch match {
        case .address(let identifier): identifier.address == discovery.peripheralIdentifier.address
        case .name(let name): discovery.advertisementPacket.localName == name
        case .service(let uuid): discovery.advertisementPacket.serviceUUIDs.contains(uuid)
        }
    }

    /// At most one advertisement a second per address goes to `…/ADDRESS/adv`.
    private func forward(_ discovery: ScanDiscovery, key: String) async {
        let now = ContinuousClock.now
        if let last = lastAdvertisement[key], now - last < .seconds(1) { return }
        lastAdvertisement[key] = now
        counters.advertisements += 1
        let packet = discovery.advertisementPacket
        var fields: [String: Any] = ["address": key, "rssi": discovery.rssi]
        if let name = packet.localName { fields["name"] = name }
        if !packet.serviceUUIDs.isEmpty { fields["services"] = packet.serviceUUIDs.map { $0.description.uppercased() } }
        if let power = packet.txPowerLevel { fields["tx_power"] = Int(power) }
        if !packet.manufacturerData.isEmpty {
            fields["manufacturer_data"] = Dictionary(
                packet.manufacturerData.map { (String(format: "%04X", $0.companyIdentifier), Hex.encode($0.data)) },
                uniquingKeysWith: { first, _ in first })
        }
        if !packet.serviceData.isEmpty {
            fields["service_data"] = Dictionary(
                uniqueKeysWithValues: packet.serviceData.map { ($0.key.description.uppercased(), Hex.encode($0.value)) }
            )
        }
        mqtt.send(
            topics.advertisement(discovery.peripheralIdentifier.address), Array(JSONText.encode(fields).utf8), qos: 0)
    }

    /// An advertisement of a known format, decoded (with the device's key from `keys:`),
    /// thinned by ``AdvertisementThrottle`` and published to `…/ADDRESS/values`. One that a
    /// format claims and cannot decode (no key, a wrong one, a broken payload) is counted and
    /// logged once per device and reason; one no format knows is not ours to mention.
    private func decode(_ discovery: ScanDiscovery, key: String) async {
        let address = discovery.peripheralIdentifier.address
        let decoded: DecodedAdvertisement
        do throws(AdvertisementError) {
            decoded = try AdvertisementDecoder.decode(
                discovery.advertisementPacket, address: address, key: configuration.decoding.keys[address])
        } catch {
            guard error != .unknownFormat else { return }
            if case .malformedStructures = error { return }
            counters.decodeErrors += 1
            if decodeProblems.updateValue(error.description, forKey: key) != error.description {
                logger.warning(
                    "\(key): \(error)\(configuration.decoding.keys[address] == nil ? " (keys: in the configuration)" : "")"
                )
            }
            return
        }
        counters.decoded += 1
        decodeProblems[key] = nil
        switch throttle.admit(decoded, from: key, at: .now) {
        case .duplicate:
            counters.decodedDuplicates += 1
        case .rateLimited:
            counters.decodedRateLimited += 1
        case .publish:
            counters.decodedPublished += 1
            let payload = Self.valuesJSON(decoded, rssi: discovery.rssi)
            logger.debug("\(key) \(decoded.format): \(String(decoding: payload, as: UTF8.self))")
            await announce(decoded, at: address, key: key)
            // After its entities' announcement (retained, queued by the client before this
            // value, on the same connection): Home Assistant knows them first.
            mqtt.send(topics.values(address), payload)
        }
    }

    /// Tells Home Assistant (when `homeassistant:` is on) of a decoded sensor's entities, the
    /// first time each of its values appears, before the values that fill them.
    private func announce(_ decoded: DecodedAdvertisement, at address: BluetoothAddress, key: String) async {
        guard let discovery else { return }
        let known = announcedValues[key, default: []], keys = Set(decoded.values.keys)
        guard !keys.isSubset(of: known) else { return }
        announcedValues[key] = known.union(keys)
        for message in discovery.sensors(of: decoded, at: address) {
            mqtt.setRetained(message.topic, Array(message.payload.utf8))
        }
    }

    /// The `…/values` JSON: the decoded values as `bluejay adv decode` writes them (keys
    /// sorted, `extra` an object), with the format's name and the RSSI beside them.
    nonisolated static func valuesPayload(_ decoded: DecodedAdvertisement, rssi: Int) -> String {
        String(decoding: valuesJSON(decoded, rssi: rssi), as: UTF8.self)
    }

    /// ``valuesPayload(_:rssi:)`` as the message's bytes, with no String between.
    nonisolated static func valuesJSON(_ decoded: DecodedAdvertisement, rssi: Int) -> [UInt8] {
        var members = decoded.values
        members["format"] = .string(decoded.format)
        if rssi != 127 { members["rssi"] = .integer(rssi) }  // 127: the controller did not say
        var payload: [UInt8] = []
        payload.reserveCapacity(160)
        Advertisements.JSONText.write(.object(members), to: &payload)
        return payload
    }
}
