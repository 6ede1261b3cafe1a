import ATT
import BluetoothCore
import GATT
import HCI
import Testing

/// Writes as a server answers them, byte for byte (Core 6.0 Vol 3, Part F, 3.4.5; Part G,
/// 4.9.1–4.9.3 and 4.12.3), against ``makeConformanceServer()``'s database. Queued writes
/// are ServerConformanceQueuedWriteTests'.
@Suite("Server conformance: writes") @BluetoothActor
struct ServerConformanceWriteTests {
    /// Part G, 4.9.3 (Write Characteristic Value) over Part F, 3.4.5.1–2: Write Response,
    /// and the value is the one written, an empty one included.
    @Test func writeCharacteristicValue() throws {
        let link = RawLink(try makeConformanceServer())
        #expect(link.send("12 13 00 ab cd ef") == "13")
        #expect(link.send("0a 13 00") == "0b ab cd ef")
        #expect(link.send("12 13 00") == "13")
        #expect(link.send("0a 13 00") == "0b")
    }

    /// Part F, 3.4.5.1: Invalid Handle for no attribute, Write Not Permitted for a value
    /// that takes no Write Request (read-only, or Write Command only), each naming the
    /// request's handle; nothing changes. A request too short for its handle is Invalid PDU.
    @Test func writeErrorsNameTheHandle() throws {
        let server = try makeConformanceServer()
        let link = RawLink(server)
        #expect(link.send("12 00 00 01") == "01 12 00 00 01")
        #expect(link.send("12 3c 00 01") == "01 12 3c 00 01")
        #expect(link.send("12 10 00 02") == "01 12 10 00 03")
        #expect(link.send("12 1d 00 02") == "01 12 1d 00 03")
        #expect(link.send("12 0f 00 02") == "01 12 0f 00 03", "a declaration is read-only (Part G, 3.3.1)")
        #expect(link.send("12 13") == "01 12 00 00 04")
        #expect(server.value(of: 0x0010) == [0x01] && server.value(of: 0x001D) == [0x00])
    }

    /// Part F, 3.4.5.1 and 3.2.9: a value longer than 512 octets is Invalid Attribute Value
    /// Length (an ATT_MTU of 517 carries it); 512 is written.
    @Test func aValuePast512OctetsIsInvalidAttributeValueLength() throws {
        let server = try makeConformanceServer()
        let link = RawLink(server)
        #expect(link.send("02 05 02") == "03 05 02")
        #expect(link.send("12 18 00 " + countingHex(from: 0, count: 513)) == "01 12 18 00 0d")
        #expect(server.value(of: 0x0018) == conformanceLongValue)
        #expect(link.send("12 18 00 " + countingHex(from: 0, count: 512)) == "13")
        #expect(server.value(of: 0x0018)?.count == 512)
    }

    /// Part F, 3.4.5.1 with Part C, 10.3.1 and 3.2.5: writes need the link's security and
    /// the app's authorization as reads do; a refused write changes nothing.
    @Test func writesNeedTheLinksSecurityAndTheAppsAuthorization() async throws {
        let server = try makeConformanceServer()
        var security = LinkSecurity.none
        server.linkSecurity = { _ in security }
        let link = RawLink(server)
        #expect(link.send("12 22 00 60") == "01 12 22 00 0f")
        #expect(link.send("12 24 00 70") == "01 12 24 00 05")
        #expect(await link.sendAwaiting("12 26 00 80") == "01 12 26 00 08")
        #expect(
            server.value(of: 0x0022) == [0x06] && server.value(of: 0x0024) == [0x07]
                && server.value(of: 0x0026) == [0x08])
        security = .authenticated
        #expect(link.send("12 22 00 60") == "13")
        #expect(link.send("12 24 00 70") == "13")
        let grant = Switch()
        grant.on = true
        server.authorizer = { _ in grant.on }
        #expect(await link.sendAwaiting("12 26 00 80") == "13")
        #expect(
            server.value(of: 0x0022) == [0x60] && server.value(of: 0x0024) == [0x70]
                && server.value(of: 0x0026) == [0x80])
    }

    /// Part G, 4.9.1 (Write Without Response) over Part F, 3.4.5.3: never answered; written
    /// where the value takes Write Command, and where it cannot be written for any reason
    /// (no such handle, not permitted, too long, the link's security, malformed) ignored.
    @Test func writeCommandIsNeverAnsweredAndDroppedWhenNotAllowed() throws {
        let server = try makeConformanceServer()
        let link = RawLink(server)
        #expect(link.send("52 1d 00 77") == nil)
        #expect(server.value(of: 0x001D) == [0x77])
        #expect(link.send("52 13 00 99") == nil, "Write Request only")
        #expect(link.send("52 10 00 99") == nil, "read-only")
        #expect(link.send("52 3c 00 99") == nil)
        #expect(link.send("52 00 00 99") == nil)
        #expect(link.send("52 1d") == nil)
        #expect(link.send("02 05 02") == "03 05 02")
        #expect(link.send("52 1d 00 " + countingHex(from: 0, count: 513)) == nil)
        #expect(server.value(of: 0x0013) == [0x12, 0x34] && server.value(of: 0x0010) == [0x01])
        #expect(server.value(of: 0x001D) == [0x77])
    }

    /// Part G, 4.9.2 (Signed Write Without Response) over Part F, 3.4.5.4: never answered.
    /// No characteristic here has the Authenticated Signed Writes property (0x40) and the
    /// server keeps no signing key, so no signature can verify, and 3.4.5.4 says such a
    /// command is ignored: nothing is written, wherever it points.
    @Test func signedWriteCommandIsNeverAnsweredAndIgnoredUnverified() throws {
        let server = try makeConformanceServer()
        let link = RawLink(server)
        let signature = " 00 00 00 00 a0 a1 a2 a3 a4 a5 a6 a7"
        #expect(link.send("d2 1d 00 77" + signature) == nil)
        #expect(link.send("d2 13 00 77" + signature) == nil)
        #expect(link.send("d2 3c 00 77" + signature) == nil)
        #expect(link.send("d2 1d 00 77") == nil, "too short for a signature")
        #expect(server.value(of: 0x001D) == [0x00] && server.value(of: 0x0013) == [0x12, 0x34])
    }

    /// Part G, 4.12.3 (Write Characteristic Descriptors): a descriptor takes what its
    /// permissions allow; a read-only one is Write Not Permitted. A CCCD takes two octets
    /// (else Invalid Attribute Value Length) holding only the bits its characteristic's
    /// properties allow (3.3.3.3); we refuse others with the profile error CCCD Improperly
    /// Configured (0xFD, Core Specification Supplement, Part B, 1.2).
    @Test func writeCharacteristicDescriptors() throws {
        let server = try makeConformanceServer()
        let link = RawLink(server)
        #expect(link.send("12 2c 00 55") == "13")
        #expect(link.send("0a 2c 00") == "0b 55")
        #expect(link.send("12 2d 00 66") == "13")
        #expect(server.value(of: 0x002D) == [0x66])
        #expect(link.send("12 19 00 41") == "01 12 19 00 03")
        #expect(link.send("12 29 00 00 00") == "01 12 29 00 03")
        #expect(link.send("12 20 00 03 00") == "13")
        #expect(link.send("12 20 00 01") == "01 12 20 00 0d")
        #expect(link.send("12 20 00 04 00") == "01 12 20 00 fd")
        #expect(link.send("12 09 00 01 00") == "01 12 09 00 fd", "Service Changed indicates only")
        #expect(link.send("0a 20 00") == "0b 03 00")
    }
}
