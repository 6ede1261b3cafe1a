import ATT
import BluetoothCore
import GATT
import HCI
import Testing

/// Reads as a server answers them, byte for byte (Core 6.0 Vol 3, Part F, 3.4.4.3–3.4.4.12;
/// Part G, 4.8 and 4.12.1–2), against ``makeConformanceServer()``'s database.
@Suite("Server conformance: reads") @BluetoothActor
struct ServerConformanceReadTests {
    /// Part G, 4.8.1 (Read Characteristic Value) over Part F, 3.4.4.3–4: the value, cut to
    /// ATT_MTU − 1 octets.
    @Test func readCharacteristicValue() throws {
        let link = RawLink(try makeConformanceServer())
        #expect(link.send("0a 10 00") == "0b 01")
        #expect(link.send("0a 13 00") == "0b 12 34")
        #expect(link.send("0a 0a 00") == "0b 0a 0b 00 29 2b", "a declaration is an attribute like any other")
        #expect(link.send("0a 18 00") == "0b " + countingHex(from: 0, count: 22))
        #expect(link.send("02 00 02") == "03 05 02")
        #expect(link.send("0a 18 00") == "0b " + countingHex(from: 0, count: 30))
    }

    /// Part F, 3.4.4.3: Invalid Handle for a handle with no attribute (0x0000 included),
    /// Read Not Permitted for a value that is not readable, each naming the request's
    /// handle; a request of the wrong length is Invalid PDU.
    @Test func readErrorsNameTheHandle() throws {
        let link = RawLink(try makeConformanceServer())
        #expect(link.send("0a 00 00") == "01 0a 00 00 01")
        #expect(link.send("0a 3c 00") == "01 0a 3c 00 01")
        #expect(link.send("0a ff ff") == "01 0a ff ff 01")
        #expect(link.send("0a 1b 00") == "01 0a 1b 00 02")
        #expect(link.send("0a 1d 00") == "01 0a 1d 00 02")
        #expect(link.send("0a 08 00") == "01 0a 08 00 02", "Service Changed is indicated, never read")
        #expect(link.send("0a 2d 00") == "01 0a 2d 00 02")
        #expect(link.send("0a 10") == "01 0a 00 00 04")
    }

    /// Part F, 3.4.4.3 with Part C, 10.3.1: a value that needs encryption is Insufficient
    /// Encryption on a plain link; one that needs an authenticated key is Insufficient
    /// Authentication until the link has one. Read Blob and Read Multiple alike.
    @Test func readsNeedTheLinksSecurity() throws {
        let server = try makeConformanceServer()
        var security = LinkSecurity.none
        server.linkSecurity = { _ in security }
        let link = RawLink(server)
        #expect(link.send("0a 22 00") == "01 0a 22 00 0f")
        #expect(link.send("0a 24 00") == "01 0a 24 00 05")
        #expect(link.send("0c 22 00 00 00") == "01 0c 22 00 0f")
        #expect(link.send("0e 10 00 24 00") == "01 0e 24 00 05")
        security = .encrypted
        #expect(link.send("0a 22 00") == "0b 06")
        #expect(link.send("0a 24 00") == "01 0a 24 00 05")
        security = .authenticated
        #expect(link.send("0a 24 00") == "0b 07")
        #expect(link.send("0e 22 00 24 00") == "0f 06 07")
    }

    /// Part F, 3.4.4.3 and 3.2.5: a value that needs authorization is read only when the
    /// app grants it; without an authorizer, Insufficient Authorization with its handle.
    @Test func readsNeedTheAppsAuthorization() async throws {
        let server = try makeConformanceServer()
        let link = RawLink(server)
        #expect(await link.sendAwaiting("0a 26 00") == "01 0a 26 00 08")
        let grant = Switch()
        server.authorizer = { _ in grant.on }
        #expect(await link.sendAwaiting("0c 26 00 00 00") == "01 0c 26 00 08")
        grant.on = true
        #expect(await link.sendAwaiting("0a 26 00") == "0b 08")
        #expect(await link.sendAwaiting("0c 26 00 01 00") == "0d")
    }

    /// Part G, 4.8.3 (Read Long Characteristic Values) over Part F, 3.4.4.5–6: each part
    /// from its offset, cut to ATT_MTU − 1; at the value's end an empty part; past it,
    /// Invalid Offset with the handle. A short value is read whole at offset 0: Attribute
    /// Not Long is something a server "can" send (3.4.4.5), and we take the reading that
    /// answers instead.
    @Test func readLongCharacteristicValue() throws {
        let link = RawLink(try makeConformanceServer())
        #expect(link.send("0c 18 00 00 00") == "0d " + countingHex(from: 0, count: 22))
        #expect(link.send("0c 18 00 16 00") == "0d " + countingHex(from: 22, count: 8))
        #expect(link.send("0c 18 00 1e 00") == "0d")
        #expect(link.send("0c 18 00 1f 00") == "01 0c 18 00 07")
        #expect(link.send("0c 18 00 ff ff") == "01 0c 18 00 07")
        #expect(link.send("0c 10 00 00 00") == "0d 01")
        #expect(link.send("0c 3c 00 00 00") == "01 0c 3c 00 01")
        #expect(link.send("0c 1b 00 00 00") == "01 0c 1b 00 02")
        #expect(link.send("0c 18 00 00") == "01 0c 00 00 04")
    }

    /// Part G, 4.8.4 (Read Multiple Characteristic Values) over Part F, 3.4.4.7–8: the
    /// values in the request's order, concatenated, cut to ATT_MTU − 1.
    @Test func readMultiple() throws {
        let link = RawLink(try makeConformanceServer())
        #expect(link.send("0e 10 00 13 00 2f 00") == "0f 01 12 34 b1 b1")
        #expect(link.send("0e 2f 00 10 00") == "0f b1 b1 01")
        #expect(link.send("0e 18 00 10 00") == "0f " + countingHex(from: 0, count: 22))
        #expect(link.send("0e 10 00 10 00") == "0f 01 01", "a handle twice is read twice")
    }

    /// Part F, 3.4.4.7: a handle with no attribute is Invalid Handle, one that may not be
    /// read its reason, naming that handle. Where both occur, the text names "the first"
    /// of each without ordering the two: we take the handles in the request's order and
    /// the first that fails gives code and handle. Fewer than two handles is Invalid PDU.
    /// An attribute that needs authorization is refused without asking the app.
    @Test func readMultipleErrors() throws {
        let link = RawLink(try makeConformanceServer())
        #expect(link.send("0e 10 00 3c 00") == "01 0e 3c 00 01")
        #expect(link.send("0e 00 00 10 00") == "01 0e 00 00 01")
        #expect(link.send("0e 10 00 1b 00 3c 00") == "01 0e 1b 00 02")
        #expect(link.send("0e 3c 00 1b 00") == "01 0e 3c 00 01")
        #expect(link.send("0e 10 00 26 00") == "01 0e 26 00 08")
        #expect(link.send("0e 10 00") == "01 0e 00 00 04")
        #expect(link.send("0e 10 00 13") == "01 0e 00 00 04")
    }

    /// Part G, 4.8.5 (Read Multiple Variable Length Characteristic Values) over Part F,
    /// 3.4.4.11–12: each value with its length, in the request's order. The tuples end at
    /// ATT_MTU − 1 octets: the value that crosses it keeps its whole length and loses its
    /// tail, and a tuple whose length no longer fits is left out.
    @Test func readMultipleVariable() throws {
        let link = RawLink(try makeConformanceServer())
        #expect(link.send("20 10 00 13 00 2f 00") == "21 01 00 01 02 00 12 34 02 00 b1 b1")
        #expect(link.send("20 13 00 18 00 10 00") == "21 02 00 12 34 1e 00 " + countingHex(from: 0, count: 16))
        #expect(link.send("20 10 00 3c 00") == "01 20 3c 00 01")
        #expect(link.send("20 10 00 1b 00") == "01 20 1b 00 02")
        #expect(link.send("20 10 00") == "01 20 00 00 04")
    }

    /// Part G, 4.12.1–2 (Read Characteristic Descriptors, Read Long Characteristic
    /// Descriptors): descriptors read as values do; a CCCD holds this client's bits (3.3.3.3).
    @Test func readDescriptors() throws {
        let server = try makeConformanceServer()
        let link = RawLink(server)
        #expect(link.send("0a 19 00") == "0b 6c 6f 6e 67")
        #expect(link.send("0c 19 00 02 00") == "0d 6e 67")
        #expect(link.send("0a 29 00") == "0b 01 00")
        #expect(link.send("0a 20 00") == "0b 00 00")
        #expect(link.send("12 20 00 02 00") == "13")
        #expect(link.send("0a 20 00") == "0b 02 00")
        #expect(RawLink(server, connection: 0x0041).send("0a 20 00") == "0b 00 00", "another client's CCCD is its own")
    }
}
