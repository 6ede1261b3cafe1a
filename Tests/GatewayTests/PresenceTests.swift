import Bluejay
import Foundation
import SMP
import Testing
@testable import Gateway

/// Presence: tracked devices are `home` when heard and `not_home` after `away_after`
/// unheard; a phone behind rotating private addresses is one device, found by its IRK.
struct PresenceTests {
    static let phone = BluetoothAddress("C0:00:00:00:00:01")!
    static let tag = BluetoothAddress("D0:00:00:00:00:02")!
    /// An IRK as the configuration writes it, most significant octet first.
    static let irk: [UInt8] = (0..<16).map { UInt8($0 * 17) }
    static let tracking = PresenceTracking(devices: [tag], awayAfter: .seconds(60), irks: [phone: irk])

    @Test func theConfigurationNamesDevicesTimeAndKeys() throws {
        let yaml =
            ConfigurationTests.example + """

                presence:
                  - D0:00:00:00:00:02
                away_after: 90s
                irks:
                  C0:00:00:00:00:01: 00112233445566778899AABBCCDDEEFF
                """
        let presence = try GatewayConfiguration(yaml: yaml).presence
        #expect(presence.devices == [Self.tag] && presence.awayAfter == .seconds(90))
        #expect(presence.irks[Self.phone] == Hex.decode("00112233445566778899AABBCCDDEEFF"))
        #expect(presence.tracked == [Self.phone, Self.tag])
        #expect(
            try GatewayConfiguration(yaml: ConfigurationTests.example).presence.tracked.isEmpty, "none unless asked")
        #expect {
            try GatewayConfiguration(yaml: ConfigurationTests.example + "\nirks:\n  C0:00:00:00:00:01: 0011\n")
        } throws: { error in
            "\(error)".contains("irks.C0:00:00:00:00:01") && "\(error)".contains("16 bytes")
        }
    }

    @Test func aRotatingAddressIsItsIdentityByTheIRKInEitherOrder() {
        var tracker = PresenceTracker(Self.tracking, started: .now)
        // On the air the IRK is used least significant octet first: the configuration's
        // order reversed, and the other order as some tools store it.
        let rotating = [
            ResolvablePrivateAddress.make(with: Array(Self.irk.reversed())),
            ResolvablePrivateAddress.make(with: Self.irk),
        ]
        for address in rotating {
            #expect(address != Self.phone && tracker.identity(of: address) == Self.phone, "\(address)")
        }
        #expect(tracker.identity(of: Self.tag) == Self.tag)
        #expect(
            tracker.identity(of: ResolvablePrivateAddress.make(with: [UInt8](repeating: 7, count: 16))) == nil,
            "another IRK's")
        #expect(tracker.identity(of: BluetoothAddress("E0:00:00:00:00:03")!) == nil, "not tracked")
    }

    @Test func homeWhenHeardNotHomeAfterAwayAfter() {
        let start = ContinuousClock.now
        var tracker = PresenceTracker(Self.tracking, started: start)
        let seen = start + .seconds(10)
        let first = tracker.sighted(ResolvablePrivateAddress.make(with: Array(Self.irk.reversed())), at: seen)
        #expect(first?.0 == Self.phone && first?.1 == .home)
        #expect(tracker.sighted(Self.phone, at: seen + .seconds(1)) == nil, "home already: nothing to publish")
        // The tag was never heard: gone once away_after has passed since the start.
        #expect(tracker.expire(at: start + .seconds(59)).isEmpty)
        #expect(tracker.expire(at: start + .seconds(60)).map(\.0) == [Self.tag])
        #expect(tracker.expire(at: seen + .seconds(60)).isEmpty, "the phone's last sighting counts")
        let gone = tracker.expire(at: seen + .seconds(61))
        #expect(gone.map(\.0) == [Self.phone] && gone.map(\.1) == [.notHome])
        #expect(tracker.expire(at: seen + .seconds(300)).isEmpty, "said once")
        #expect(tracker.sighted(Self.tag, at: seen + .seconds(301))?.1 == .home)
    }

    @Test func homeAssistantTracksEachDevice() throws {
        let discovery = HomeAssistantDiscovery(
            prefix: "homeassistant", gateway: "gw1", topics: Topics(prefix: "bluejay", gateway: "gw1"))
        let message = discovery.tracker(of: Self.phone)
        #expect(message.topic == "homeassistant/device_tracker/bluejay_gw1_C00000000001_presence/config")
        let fields = try #require(try JSONSerialization.jsonObject(with: Data(message.payload.utf8)) as? [String: Any])
        #expect(fields["state_topic"] as? String == "bluejay/gw1/C0:00:00:00:00:01/presence")
        #expect(fields["payload_home"] as? String == "home" && fields["payload_not_home"] as? String == "not_home")
        #expect(
            fields["source_type"] as? String == "bluetooth_le"
                && fields["unique_id"] as? String == "bluejay_gw1_C00000000001_presence")
        #expect((fields["device"] as? [String: Any])?["identifiers"] as? [String] == ["bluejay_C00000000001"])
    }
}
