import BluetoothCore
import HCI
import SMP
import Testing
import TraceDecoding
import TraceTestSupport

// Secrets in `bluejay trace`: the printer shows `<redacted N octets>` for them unless asked,
// `trace --redact` (BTSnoopRedaction with PacketSecrets) zeroes them in a copy that is the
// same file octet for octet everywhere else, and the check's failure report hides them.

/// `<package root>/Fixtures/traces/NAME.btsnoop`, from this file's path.
private func recordedSession(_ name: String) -> String {
    var components = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
    components.removeLast(3)
    return components.joined(separator: "/") + "/Fixtures/traces/\(name).btsnoop"
}

/// The H4 bytes of a record (indicator first).
private func h4(_ record: BTSnoopRecord) -> [UInt8] {
    if case let .packet(type, body) = record.content { [type.rawValue] + body } else { [] }
}

/// Redacts `original` and expects what `trace --redact` promises (``redactionProblems(_:)``).
private func redactAndCompare(_ original: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws
    -> BTSnoopRedaction
{
    let (redaction, problems) = try redactionProblems(original)
    #expect(problems.isEmpty, "\(problems)", sourceLocation: sourceLocation)
    return redaction
}

@Suite("Redaction")
struct RedactionTests {
    @Test(
        "The recorded LE Secure Connections pairing: nonces, checks, the LTK and both IRKs zeroed; public keys and the rest kept"
    )
    func recordedPairing() throws {
        let original = try readWholeFile(recordedSession("pairing"))
        let redaction = try redactAndCompare(original)
        let names = redaction.zeroed.map(\.field.name)
        #expect(
            names.sorted() == [
                "Confirm_Value", "DHKey_Check", "DHKey_Check", "Identity_Resolving_Key", "Identity_Resolving_Key",
                "Long_Term_Key", "Random_Value", "Random_Value",
            ], "\(redaction.zeroed)")
        let before = try BTSnoopFile(bytes: original), after = try BTSnoopFile(bytes: redaction.bytes)
        // The public keys (split across fragments on the way out) are untouched, and the copy
        // decodes and counts like the original.
        #expect(TraceSummary(file: after).smp == TraceSummary(file: before).smp)
        #expect(TraceCheck(file: after).failure == nil)
        let publicKeys = before.records.filter { h4($0).count > 30 && h4($0)[9] == 0x0C }
        #expect(!publicKeys.isEmpty)
        for record in publicKeys { #expect(h4(after.records[record.number - 1]) == h4(record)) }

        // Printed, the copy reads as the original does: the same marks, where it was zeroed.
        var printOriginal = TraceFormatter(file: before), printCopy = TraceFormatter(file: after)
        let originalLines = before.records.map { printOriginal.format($0) }
        let copyLines = after.records.map { printCopy.format($0) }
        #expect(copyLines == originalLines)
        #expect(copyLines.filter { $0.contains("<redacted 16 octets>") }.count == 8)
        #expect(printOriginal.secretsShown == 0)
        // Asked to show secrets, the copy shows zeros there, and the count says so.
        var showing = TraceFormatter(file: after)
        showing.showsSecrets = true
        let shown = after.records.map { showing.format($0) }
        #expect(!shown.contains { $0.contains("redacted") })
        #expect(showing.secretsShown == 8)
        let encryption = try #require(shown.first { $0.contains("LE_Enable_Encryption (0x2019) plen 28") })
        #expect(
            encryption.hasSuffix(
                "[01 00 00 00 00 00 00 00 00 00 00 00 " + [UInt8](repeating: 0, count: 16).hexDump + "]"))
    }

    @Test("Every real trace the repository carries redacts to a copy that differs only in zeroed secret fields")
    func realTraces() throws {
        for name in traceNames {
            _ = try redactAndCompare(try readWholeFile(tracesDirectory + "/" + name))
        }
    }

    @Test("A key split across ACL fragments is zeroed in each fragment's record and printed redacted once whole")
    func fragmentedKeyInACapture() throws {
        let ltk: [UInt8] = (0..<16).map { (index: Int) -> UInt8 in 0xA0 + UInt8(index) }
        let pdu: [UInt8] = [0x11, 0x00, 0x06, 0x00, 0x06] + ltk  // L2CAP header, Encryption Information
        var capture = CaptureBuilder()
        capture.leConnectionComplete(handle: 0x0040)
        capture.acl(handle: 0x0040, Array(pdu[0..<9]), received: true)
        capture.l2cap(handle: 0x0040, cid: 0x0004, [0x0A, 0x03, 0x00], received: false)
        capture.acl(handle: 0x0040, Array(pdu[9...]), received: true, start: false)
        let file = try capture.file()
        var formatter = TraceFormatter(file: file)
        let lines = file.records.map { formatter.format($0) }
        #expect(
            lines[3].hasSuffix("L2CAP SMP (0x0006) len 17: SMP 0x06 Encryption_Information [06 <redacted 16 octets>]"),
            "\(lines[3])")

        var secrets = PacketSecrets()
        var zeroedRecords: [[UInt8]] = []
        for record in file.records {
            var bytes = h4(record)
            guard case let .packet(type, body) = record.content else { continue }
            let fields: [SecretField] = secrets.secretFields(type: type, body: body, direction: record.direction)
            bytes.zero(fields.map { (field: SecretField) -> SecretField in field.shifted(by: 1) })
            zeroedRecords.append(bytes)
        }
        let fourZeros: [UInt8] = [0, 0, 0, 0]
        #expect(Array(zeroedRecords[1].suffix(4)) == fourZeros)
        let secondHeader: [UInt8] = Array(h4(file.records[1]).dropLast(4))
        #expect(Array(zeroedRecords[1].dropLast(4)) == secondHeader)
        let twelveZeros = [UInt8](repeating: 0, count: 12)
        #expect(Array(zeroedRecords[3].dropFirst(5)) == twelveZeros)
        #expect(zeroedRecords[2] == h4(file.records[2]))
    }

    @Test("trace --check's failure report shows no secret of the record it stops at")
    func checkFailureIsRedacted() throws {
        // A Pairing Random one octet too long: the check fails on it.
        var capture = CaptureBuilder()
        capture.leConnectionComplete(handle: 0x0040)
        capture.l2cap(handle: 0x0040, cid: 0x0006, [0x04] + (0..<17).map { 0xA0 + UInt8($0) }, received: true)
        let failure = try #require(TraceCheck(file: try capture.file()).failure)
        #expect(failure.recordNumber == 2)
        #expect(failure.description.contains("06 00 04 <redacted 16 octets> b0"), "\(failure)")
        #expect(!failure.description.contains("a0 a1"))
    }
}
