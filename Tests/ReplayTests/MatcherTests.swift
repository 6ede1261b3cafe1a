import BluetoothCore
import Foundation
import HCI
import Testing

/// The matching rules of a replay, packet by packet: exact by default, the fields of the
/// rule table by their kind.
@Suite struct MatcherTests {
    /// LE Set Random Address (0x2005) with `address` (little-endian on the wire).
    func setRandomAddress(_ address: [UInt8]) -> [UInt8] { [0x01, 0x05, 0x20, 0x06] + address }

    /// One ACL packet on handle 0x0040 (PB `boundary`) carrying `data`.
    func acl(_ data: [UInt8], continuing: Bool = false) -> [UInt8] {
        [0x02, 0x40, continuing ? 0x10 : 0x00, UInt8(data.count), 0x00] + data
    }

    /// An SMP PDU in an L2CAP frame (channel 0x0006).
    func smp(_ pdu: [UInt8]) -> [UInt8] { [UInt8(pdu.count), 0x00, 0x06, 0x00] + pdu }

    @Test func exactByDefault() {
        var matcher = ReplayMatcher()
        let reset: [UInt8] = [0x01, 0x03, 0x0C, 0x00]
        #expect(matcher.match(expected: reset, actual: reset) == nil)
        let scanEnable: [UInt8] = [0x01, 0x0C, 0x20, 0x02, 0x01, 0x00]
        #expect(
            matcher.match(expected: scanEnable, actual: [0x01, 0x0C, 0x20, 0x02, 0x01, 0x01])?.contains(
                "octet 5 differs") == true)
        #expect(
            matcher.match(expected: scanEnable, actual: reset)?.contains("4 octets long, the recording's 6") == true)
        #expect(
            matcher.match(expected: reset, actual: acl([0x00]))?.contains(
                "acl packet where the recording has a command") == true)
        // An ATT PDU is exact too: a Write Request with another value.
        let write = acl([0x05, 0x00, 0x04, 0x00, 0x12, 0x13, 0x00, 0x02])
        var other = write
        other[12] = 0x03
        #expect(matcher.match(expected: write, actual: other) != nil)
        // No rule covers an SMP Pairing Request: its octets are exact.
        let request = acl(smp([0x01, 0x03, 0x00, 0x0D, 0x10, 0x07, 0x07]))
        var lowered = request
        lowered[13] = 0x01
        #expect(matcher.match(expected: request, actual: lowered) != nil)
    }

    @Test func aRandomAddressIsBoundOneToOneAndKeepsItsSubType() {
        var matcher = ReplayMatcher()
        let recorded: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0x05, 0xC6]  // static random: top bits 11
        let mine: [UInt8] = [0x11, 0x22, 0x33, 0x44, 0x55, 0xE6]
        #expect(matcher.match(expected: setRandomAddress(recorded), actual: setRandomAddress(mine)) == nil)
        #expect(matcher.boundValueDiffered)
        // The same recorded address later must be the same host address…
        #expect(matcher.match(expected: setRandomAddress(recorded), actual: setRandomAddress(mine)) == nil)
        #expect(
            matcher.match(expected: setRandomAddress(recorded), actual: setRandomAddress([0, 0, 0, 0, 0, 0xC0]))?
                .contains("was sent as") == true)
        // …and another recorded address may not reuse it.
        #expect(
            matcher.match(expected: setRandomAddress([9, 9, 9, 9, 9, 0xC9]), actual: setRandomAddress(mine))?.contains(
                "reused") == true)
        // A resolvable private address (top bits 01) where a static one was recorded fails.
        var fresh = ReplayMatcher()
        #expect(
            fresh.match(expected: setRandomAddress(recorded), actual: setRandomAddress([1, 2, 3, 4, 5, 0x46]))?
                .contains("sub-type") == true)
    }

    @Test func encryptionKeysAreBoundAndTheHandleIsExact() {
        var matcher = ReplayMatcher()
        func enable(handle: UInt8, rand: UInt8, ltk: UInt8) -> [UInt8] {
            [0x01, 0x19, 0x20, 28, handle, 0x00] + Array(repeating: rand, count: 8) + [0x00, 0x00]
                + Array(repeating: ltk, count: 16)
        }
        #expect(
            matcher.match(
                expected: enable(handle: 1, rand: 0xAA, ltk: 0x11), actual: enable(handle: 1, rand: 0xBB, ltk: 0x22))
                == nil)
        #expect(
            matcher.match(
                expected: enable(handle: 1, rand: 0xAA, ltk: 0x11), actual: enable(handle: 2, rand: 0xBB, ltk: 0x22))?
                .contains("octet 4") == true)
        #expect(
            matcher.match(
                expected: enable(handle: 1, rand: 0xAA, ltk: 0x11), actual: enable(handle: 1, rand: 0xBB, ltk: 0x33))?
                .contains("Long_Term_Key") == true)
    }

    /// A Pairing Public Key (65 octets) spans three 27-octet ACL fragments; the key is
    /// bound as a whole, across them.
    @Test func smpValuesAreMatchedAcrossFragments() {
        let recordedKey = Array(repeating: UInt8(0xAB), count: 64)
        let hostKey = Array(repeating: UInt8(0xCD), count: 64)
        func fragments(_ key: [UInt8]) -> [[UInt8]] {
            let frame = smp([0x0C] + key)
            return stride(from: 0, to: frame.count, by: 27).map { start in
                acl(Array(frame[start..<min(frame.count, start + 27)]), continuing: start > 0)
            }
        }
        var matcher = ReplayMatcher()
        for (expected, actual) in zip(fragments(recordedKey), fragments(hostKey)) {
            #expect(matcher.match(expected: expected, actual: actual) == nil)
        }
        #expect(matcher.boundValueDiffered)
        // The next Pairing Random is a new value: bound afresh.
        #expect(
            matcher.match(
                expected: acl(smp([0x04] + Array(repeating: 1, count: 16))),
                actual: acl(smp([0x04] + Array(repeating: 2, count: 16)))) == nil)
        // Reusing the nonce for the next recorded nonce is caught.
        #expect(
            matcher.match(
                expected: acl(smp([0x04] + Array(repeating: 3, count: 16))),
                actual: acl(smp([0x04] + Array(repeating: 2, count: 16))))?.contains("reused") == true)
        // A key whose last fragment is wrong is caught when the field completes.
        var strict = ReplayMatcher()
        let recorded = fragments(recordedKey), sent = fragments(hostKey)
        #expect(strict.match(expected: recorded[0], actual: sent[0]) == nil)
        #expect(strict.match(expected: recorded[0], actual: sent[0]) == nil)  // the same key starts again: a new PDU
        var header = sent[1]
        header[3] = 26  // a shorter continuation
        #expect(strict.match(expected: recorded[1], actual: header) != nil)
    }

    /// Confirm and DHKey check values follow from the random ones: exact while every
    /// bound value equals its recording, free in value (not length) once one differed.
    @Test func derivedValuesAreExactUntilARandomValueDiffers() {
        let confirm = acl(smp([0x03] + Array(repeating: 0x10, count: 16)))
        let otherConfirm = acl(smp([0x03] + Array(repeating: 0x20, count: 16)))
        var deterministic = ReplayMatcher()
        #expect(
            deterministic.match(
                expected: acl(smp([0x04] + Array(repeating: 1, count: 16))),
                actual: acl(smp([0x04] + Array(repeating: 1, count: 16)))) == nil)
        #expect(!deterministic.boundValueDiffered)
        #expect(
            deterministic.match(expected: confirm, actual: otherConfirm)?.contains("Confirm_Value (derived)") == true)

        var random = ReplayMatcher()
        #expect(
            random.match(
                expected: acl(smp([0x04] + Array(repeating: 1, count: 16))),
                actual: acl(smp([0x04] + Array(repeating: 2, count: 16)))) == nil)
        #expect(random.match(expected: confirm, actual: otherConfirm) == nil)
    }

    @Test func theRuleTableNamesEveryValueAHostMakesUp() {
        let names = Set(ReplayRule.standard.map(\.name))
        for name in [
            "LE_Set_Random_Address", "LE_Enable_Encryption", "LE_Long_Term_Key_Request_Reply", "Pairing_Random",
            "Pairing_Confirm", "Pairing_Public_Key", "Pairing_DHKey_Check", "Encryption_Information",
            "Central_Identification",
        ] {
            #expect(names.contains(name), "\(name)")
        }
        // Every field lies inside its packet's fixed parameters.
        for rule in ReplayRule.standard {
            for field in rule.fields { #expect(field.offset >= 0 && field.length > 0, "\(rule.name) \(field.name)") }
        }
    }

    /// With rules of its own a replay can be looser or stricter: no rules means every
    /// octet is exact, even a random address.
    @Test func noRulesMeansEveryOctetIsExact() {
        var matcher = ReplayMatcher(rules: [])
        #expect(
            matcher.match(
                expected: setRandomAddress([1, 2, 3, 4, 5, 0xC6]), actual: setRandomAddress([1, 2, 3, 4, 5, 0xC7]))
                != nil)
    }

    /// The in-process check of every host packet of the bring-up: whichever octet of
    /// whichever packet is broken, bring-up fails at that record with the report.
    @Test @BluetoothActor func everyHostPacketOfTheBringUpIsChecked() async throws {
        let path = Repository.trace("bumble-bringup")
        for record in try hostRecords(path) {
            let corrupt = try corruptedCopy(of: path, record: record.number, octet: record.length - 1)
            defer { try? FileManager.default.removeItem(atPath: corrupt) }
            let replay = try ReplayTransport(path: corrupt)
            let controller = HCIController(transport: replay, configuration: .init(logger: .silent))
            defer { controller.close() }
            do {
                try await controller.start()
                Issue.record("record \(record.number) broken, yet bring-up succeeded")
            } catch {
                guard case let .transport(.replayMismatch(mismatch)) = error else {
                    Issue.record("record \(record.number): \(error)"); continue
                }
                #expect(mismatch.recordNumber == record.number)
                #expect(mismatch == replay.mismatch)
                #expect(mismatch.description.contains("expected: "))
                #expect(mismatch.description.contains("HCI Command"))
            }
        }
    }
}
