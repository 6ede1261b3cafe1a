import Advertisements
import Bluejay
import Testing
@testable import Gateway

/// The decoded advertisements' part of the gateway: `scan:`, `decode:`, `rate_limit:` and
/// `keys:` read (and refused with line and field), the throttle's duplicates and rate limit,
/// and the `…/values` payload.
struct AdvertisementDecodingTests {
    static let head = "gateway: gw1\ntransport: hci0\nbroker: mqtt://h\n"
    static let tail = "peripherals:\n  - address: C0:FF:EE:00:00:11\n"

    @Test func theDefaultsDecodeEveryAdvertisementOnceASecondScanningActively() throws {
        let configuration = try GatewayConfiguration(yaml: Self.head + Self.tail)
        #expect(configuration.scanMode == .active)
        #expect(configuration.decoding == AdvertisementDecoding(enabled: true, rateLimit: .seconds(1), keys: [:]))
    }

    @Test func theKeysAreRead() throws {
        let configuration = try GatewayConfiguration(
            yaml: Self.head + """
                scan: passive
                decode: all
                rate_limit: 500ms
                keys:
                  54:48:E6:8F:80:A5: 231d39c1d7cc1ab1aee224cd096db932
                  "a4:c1:38:00:00:01/public": "0x00112233445566778899AABBCCDDEEFF"

                """ + Self.tail)
        #expect(configuration.scanMode == .passive)
        #expect(configuration.decoding.rateLimit == .milliseconds(500))
        let first = try #require(BluetoothAddress("54:48:E6:8F:80:A5")),
            second = try #require(BluetoothAddress("A4:C1:38:00:00:01"))
        #expect(configuration.decoding.keys[first].map(Hex.encode) == "231d39c1d7cc1ab1aee224cd096db932")
        #expect(configuration.decoding.keys[second]?.count == 16)
        let off = try GatewayConfiguration(yaml: Self.head + "decode: off\nrate_limit: off\n" + Self.tail)
        #expect(!off.decoding.enabled && off.decoding.rateLimit == nil)
        #expect(
            configuration.description.hasSuffix(
                ", decoding advertisements (passive scan, rate limit 0.5 seconds, 2 key(s))"), "\(configuration)")
        #expect(!configuration.description.contains("231d"), "no key in the logs")
    }

    /// Typed, and built by interpolation: Swift 6.0 gives up type-checking the `+` chains inline.
    static let mistakes: [(String, String)] = [
        ("\(head)scan: sideways\n\(tail)", "line 4: scan: 'sideways' is not active or passive"),
        ("\(head)decode: some\n\(tail)", "line 4: decode: 'some' is not all or off"),
        ("\(head)rate_limit: often\n\(tail)", "line 4: rate_limit: 'often' is not a duration"),
        (
            "\(head)keys:\n  54:48:E6:8F:80:A5: 231d\n\(tail)",
            "line 5: keys.54:48:E6:8F:80:A5: the key must be 16 bytes"
        ),
        (
            "\(head)keys:\n  kitchen: 231d39c1d7cc1ab1aee224cd096db932\n\(tail)",
            "line 5: keys.kitchen: 'kitchen' is not a Bluetooth address"
        ),
        (
            "\(head)keys:\n  54:48:E6:8F:80:A5: 231d39c1d7cc1ab1aee224cd096db932\n  54:48:e6:8f:80:a5: 231d39c1d7cc1ab1aee224cd096db932\n\(tail)",
            "line 6: keys.54:48:e6:8f:80:a5: given twice"
        ),
        ("\(head)keys: [1, 2]\n\(tail)", "line 4: keys: expected a mapping"),
    ]

    @Test(arguments: mistakes)
    func mistakesNameTheLineAndTheField(yaml: String, expected: String) {
        do {
            _ = try GatewayConfiguration(yaml: yaml)
            Issue.record("accepted: \(yaml)")
        } catch {
            #expect(error.description.hasPrefix(expected), "got: \(error)")
        }
    }

    static func reading(_ counter: Int, temperature: Int64 = 2150, format: String = "bthome-v2") -> DecodedAdvertisement
    {
        DecodedAdvertisement(
            format: format,
            values: ["packet_counter": .integer(counter), "temperature": .scaled(temperature, exponent: -2)])
    }

    /// A repeat of the packet last published is dropped at once; a new one within the rate
    /// limit is held back, and published by its first repeat after it.
    @Test func repeatsAreDroppedAndTheRateLimitHoldsNewPacketsBack() {
        var throttle = AdvertisementThrottle(rateLimit: .seconds(1))
        let start = ContinuousClock.now
        #expect(throttle.admit(Self.reading(7), from: "A", at: start) == .publish)
        #expect(throttle.admit(Self.reading(7), from: "A", at: start + .milliseconds(300)) == .duplicate)
        #expect(throttle.admit(Self.reading(8), from: "A", at: start + .milliseconds(500)) == .rateLimited)
        #expect(
            throttle.admit(Self.reading(8), from: "B", at: start + .milliseconds(500)) == .publish,
            "each device its own")
        #expect(
            throttle.admit(Self.reading(8), from: "A", at: start + .seconds(1)) == .publish,
            "the held-back packet's repeat")
        #expect(
            throttle.admit(Self.reading(8), from: "A", at: start + .seconds(5)) == .duplicate, "a repeat, however late")
        #expect(throttle.devices == 2)
    }

    /// A device not heard for ten minutes is forgotten (a gateway runs for months, and
    /// addresses come and go); one still repeating its packet is not.
    @Test func devicesNotHeardAreForgotten() {
        var throttle = AdvertisementThrottle(rateLimit: .seconds(1))
        let start = ContinuousClock.now
        #expect(throttle.admit(Self.reading(1), from: "gone", at: start) == .publish)
        #expect(throttle.admit(Self.reading(1), from: "steady", at: start) == .publish)
        #expect(throttle.admit(Self.reading(1), from: "steady", at: start + .seconds(500)) == .duplicate)
        throttle.prune(start + .seconds(700))
        #expect(throttle.devices == 1)
        #expect(
            throttle.admit(Self.reading(1), from: "steady", at: start + .seconds(701)) == .duplicate, "still remembered"
        )
    }

    /// A press is not restated by the next packet: it passes the limit, never the repeat check.
    @Test func eventsPassTheRateLimit() {
        var throttle = AdvertisementThrottle(rateLimit: .seconds(60))
        let start = ContinuousClock.now
        let press = DecodedAdvertisement(
            format: "bthome-v2", values: ["packet_counter": .integer(2), "button": .string("press")])
        #expect(throttle.admit(Self.reading(1), from: "A", at: start) == .publish)
        #expect(throttle.admit(press, from: "A", at: start + .milliseconds(10)) == .publish)
        #expect(throttle.admit(press, from: "A", at: start + .milliseconds(20)) == .duplicate)
    }

    /// Without a counter (Govee, iBeacon) only the rate limit thins; without a limit, every
    /// new packet goes out; an encrypted packet's counter tells packets apart too.
    @Test func formatsWithoutCountersAndNoLimit() {
        let start = ContinuousClock.now
        var limited = AdvertisementThrottle(rateLimit: .seconds(1))
        let govee = DecodedAdvertisement(format: "govee", values: ["temperature": .scaled(215, exponent: -1)])
        #expect(limited.admit(govee, from: "G", at: start) == .publish)
        #expect(limited.admit(govee, from: "G", at: start + .milliseconds(100)) == .rateLimited)
        #expect(limited.admit(govee, from: "G", at: start + .seconds(1)) == .publish)
        var unlimited = AdvertisementThrottle(rateLimit: nil)
        for counter in 1...5 { #expect(unlimited.admit(Self.reading(counter), from: "A", at: start) == .publish) }
        #expect(unlimited.admit(Self.reading(5), from: "A", at: start) == .duplicate)
        func sealed(_ counter: Int) -> DecodedAdvertisement {
            DecodedAdvertisement(
                format: "bthome-v2", values: ["extra": .object(["encryption_counter": .integer(counter)])])
        }
        #expect(unlimited.admit(sealed(1), from: "E", at: start) == .publish)
        #expect(unlimited.admit(sealed(1), from: "E", at: start) == .duplicate)
        #expect(unlimited.admit(sealed(2), from: "E", at: start) == .publish)
    }

    /// The payload is `bluejay adv decode`'s values with the format and the RSSI beside them.
    @Test func theValuesPayload() throws {
        let decoded = try AdvertisementDecoder.decode(bytes: Hex.decode("0201060e16d2fc400005015a020208039411")!)
        #expect(
            GatewayService.valuesPayload(decoded, rssi: -61)
                == #"{"battery":90,"format":"bthome-v2","humidity":45.0,"packet_counter":5,"rssi":-61,"temperature":20.5}"#
        )
        #expect(!GatewayService.valuesPayload(decoded, rssi: 127).contains("rssi"), "127: the controller did not say")
    }
}
