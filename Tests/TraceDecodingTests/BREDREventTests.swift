import BluetoothCore
import HCI
import Testing
import TraceDecoding

// BR/EDR events print their fields, as LE events do (Core Vol 4, Part E, 7.7). Event names
// come from HCINames, so each expectation starts at the event code.

private let peer = "66 55 44 33 22 11"

@Suite("BR/EDR events in traces")
struct BREDREventTests {
    static let cases: [(code: UInt8, parameters: String, printed: String)] = [
        (
            0x02, "02 \(peer) 01 00 e7 b1 0d f0 01 01 00 00 00 00 0c 02 5a 0c 02 5a 00 00 00 00",
            "2 response(s): 11:22:33:44:55:66, F0:0D:B1:E7:00:01"
        ),
        (0x04, "\(peer) 0c 02 5a 01", "peer 11:22:33:44:55:66, class 0x5a020c, link type ACL"),
        (0x06, "00 0b 00", "status 0x00 success, handle 0x000b"),
        (0x07, "00 \(peer) 50 68 6f 6e 65 00 00 00", "status 0x00 success, peer 11:22:33:44:55:66, name \"Phone\""),
        (0x12, "00 \(peer) 00", "status 0x00 success, peer 11:22:33:44:55:66, role central"),
        (0x14, "00 0b 00 02 20 03", "status 0x00 success, handle 0x000b, mode sniff, interval 800 slots (500.0 ms)"),
        (0x17, peer, "peer 11:22:33:44:55:66"),
        (0x1B, "0b 00 05", "handle 0x000b, max slots 5"),
        (
            0x23, "00 0b 00 01 02 0f 00 00 00 00 00 00 00",
            "status 0x00 success, handle 0x000b, page 1 of 2, features 0x000000000000000f"
        ),
        (
            0x2C, "00 0c 00 \(peer) 02 0c 02 3c 00 3c 00 03",
            "status 0x00 success, handle 0x000c, peer 11:22:33:44:55:66, link type eSCO, interval 12 slots, window 2 slots, "
                + "rx 60 tx 60 octets, air mode transparent"
        ),
        (0x31, peer, "peer 11:22:33:44:55:66"),
        (
            0x32, "\(peer) 01 00 03",
            "peer 11:22:33:44:55:66, IO capability DisplayYesNo, OOB data absent, authentication 0x03 dedicated bonding, MITM"
        ),
        (0x33, "\(peer) 40 e2 01 00", "peer 11:22:33:44:55:66, value 123456"),
        (0x3B, "\(peer) 2a 00 00 00", "peer 11:22:33:44:55:66, passkey <redacted 4 octets>"),
        (0x36, "00 \(peer)", "status 0x00 success, peer 11:22:33:44:55:66"),
    ]

    @Test("Each main BR/EDR event prints its fields", arguments: cases)
    func fields(code: UInt8, parameters: String, printed: String) throws {
        var capture = CaptureBuilder()
        capture.event(code, hexBytes(parameters))
        var formatter = TraceFormatter()
        let line = formatter.format(try capture.file().records[0])
        let length = hexBytes(parameters).count
        #expect(line.contains("(\(hex(code, digits: 2))) plen \(length): \(printed)"), "\(line)")
        #expect(line.hasSuffix(printed), "\(line)")
    }

    @Test("A link key is never printed")
    func linkKeyRedacted() throws {
        var capture = CaptureBuilder()
        capture.event(0x18, hexBytes("\(peer) " + String(repeating: "a5 ", count: 16) + "05"))
        var formatter = TraceFormatter()
        let line = formatter.format(try capture.file().records[0])
        #expect(
            line.hasSuffix(
                "plen 23: peer 11:22:33:44:55:66, key <redacted 16 octets>, key type 0x05 authenticated combination P-192"
            ))
        #expect(!line.contains("a5"))
    }

    @Test("With showsSecrets the link key and the passkey print in clear, and are counted for the warning")
    func secretsShownWhenAsked() throws {
        var capture = CaptureBuilder()
        capture.event(0x18, hexBytes("\(peer) " + String(repeating: "a5 ", count: 16) + "05"))
        capture.event(0x3B, hexBytes("\(peer) 2a 00 00 00"))
        var formatter = TraceFormatter()
        formatter.showsSecrets = true
        let lines = try capture.file().records.map { formatter.format($0) }
        #expect(
            lines[0].hasSuffix(
                "key " + String(repeating: "a5", count: 16) + ", key type 0x05 authenticated combination P-192"),
            "\(lines[0])")
        #expect(lines[1].hasSuffix("passkey 000042"), "\(lines[1])")
        #expect(formatter.secretsShown == 2)
    }

    @Test("An Extended Inquiry Result shows the name of its extended inquiry response")
    func extendedInquiryResult() throws {
        let response = hexBytes("06 09 50 68 6f 6e 65") + [UInt8](repeating: 0, count: 233)
        var capture = CaptureBuilder()
        capture.event(0x2F, hexBytes("01 \(peer) 01 00 0c 02 5a 00 00 c4") + response)
        var formatter = TraceFormatter()
        let line = formatter.format(try capture.file().records[0])
        #expect(
            line.hasSuffix(
                "(0x2f) plen 255: 1 response(s): 11:22:33:44:55:66, class 0x5a020c, RSSI -60 dBm, name \"Phone\""))
    }

    @Test("An event too short for its fields prints as malformed, with its bytes")
    func malformed() throws {
        var capture = CaptureBuilder()
        capture.event(0x06, [0x00])
        var formatter = TraceFormatter()
        let line = formatter.format(try capture.file().records[0])
        #expect(line.hasSuffix("(0x06) plen 1 (malformed: truncated: needed 2 byte(s), 0 left) [00]"))
    }

    @Test("A BR/EDR Connection Complete announces its handle, as an LE one does")
    func announcement() throws {
        var capture = CaptureBuilder()
        capture.l2cap(handle: 0x000B, cid: 0x0040, [1], received: true)
        capture.connectionComplete(handle: 0x000B)
        capture.l2cap(handle: 0x000B, cid: 0x0040, [1], received: true)
        var formatter = TraceFormatter()
        let printed = try capture.file().records.map { formatter.format($0) }
        #expect(printed[0].contains("(handle never announced)"))
        #expect(!printed[2].contains("(handle never announced)"))
    }
}
