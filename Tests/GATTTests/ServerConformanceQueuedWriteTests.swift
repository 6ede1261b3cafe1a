import ATT
import BluetoothCore
import GATT
import HCI
import Testing

/// Queued writes as a server answers them, byte for byte (Core 6.0 Vol 3, Part F, 3.4.6;
/// Part G, 4.9.4–5 and 4.12.4), against ``makeConformanceServer()``'s database.
@Suite("Server conformance: queued writes") @BluetoothActor
struct ServerConformanceQueuedWriteTests {
    /// Part G, 4.9.4 (Write Long Characteristic Values) over Part F, 3.4.6.1–4: each part
    /// echoed in the Prepare Write Response (handle, offset, part), nothing written until
    /// Execute Write (flags 0x01), then the parts in order from offset 0: the new value.
    @Test func writeLongCharacteristicValue() throws {
        let server = try makeConformanceServer()
        let link = RawLink(server)
        #expect(link.send("16 18 00 00 00 a0 a1 a2") == "17 18 00 00 00 a0 a1 a2")
        #expect(link.send("16 18 00 03 00 a3 a4") == "17 18 00 03 00 a3 a4")
        #expect(server.value(of: 0x0018) == conformanceLongValue, "nothing is written before Execute Write")
        #expect(link.send("18 01") == "19")
        #expect(link.send("0a 18 00") == "0b a0 a1 a2 a3 a4")
        // A part at an offset inside the current value keeps what comes before it.
        #expect(link.send("16 18 00 02 00 ff") == "17 18 00 02 00 ff")
        #expect(link.send("18 01") == "19")
        #expect(link.send("0a 18 00") == "0b a0 a1 ff")
    }

    /// Part G, 4.12.4 (Write Long Characteristic Descriptors): a descriptor's parts as a
    /// value's.
    @Test func writeLongCharacteristicDescriptor() throws {
        let link = RawLink(try makeConformanceServer())
        #expect(link.send("16 2c 00 00 00 01 02") == "17 2c 00 00 00 01 02")
        #expect(link.send("16 2c 00 02 00 03") == "17 2c 00 02 00 03")
        #expect(link.send("18 01") == "19")
        #expect(link.send("0a 2c 00") == "0b 01 02 03")
    }

    /// Part F, 3.4.6.3: flags 0x00 cancels the queue: Execute Write Response, nothing
    /// written, and a later Execute Write finds the queue empty. An empty queue executes to
    /// nothing. Flags other than 0x00 and 0x01 are reserved: we take a request carrying one
    /// as Invalid PDU, and leave the queue as it was.
    @Test func executeWriteCancelsAndEmptyQueues() throws {
        let server = try makeConformanceServer()
        let link = RawLink(server)
        #expect(link.send("18 01") == "19")
        #expect(link.send("18 00") == "19")
        #expect(link.send("16 13 00 00 00 55") == "17 13 00 00 00 55")
        #expect(link.send("18 02") == "01 18 00 00 04")
        #expect(link.send("18") == "01 18 00 00 04")
        #expect(link.send("18 00") == "19")
        #expect(link.send("18 01") == "19")
        #expect(server.value(of: 0x0013) == [0x12, 0x34])
    }

    /// Part F, 3.4.6.1: what can be told at once is told at Prepare Write, naming the
    /// handle: Invalid Handle, Write Not Permitted (read-only; Write Command only), the
    /// link's security; a queue past its bound is Prepare Queue Full, and what it held stays.
    @Test func prepareWriteErrors() throws {
        let server = try makeConformanceServer()
        let link = RawLink(server)
        #expect(link.send("16 3c 00 00 00 01") == "01 16 3c 00 01")
        #expect(link.send("16 00 00 00 00 01") == "01 16 00 00 01")
        #expect(link.send("16 10 00 00 00 01") == "01 16 10 00 03")
        #expect(link.send("16 1d 00 00 00 01") == "01 16 1d 00 03")
        #expect(link.send("16 22 00 00 00 01") == "01 16 22 00 0f")
        #expect(link.send("16 24 00 00 00 01") == "01 16 24 00 05")
        #expect(link.send("16 13 00 00") == "01 16 00 00 04")
        // A part is at most ATT_MTU − 5 octets (its response echoes it): one more is a PDU
        // this bearer never carries, Invalid PDU; we name the handle it gives.
        #expect(link.send("16 13 00 00 00 " + countingHex(from: 0, count: 19)) == "01 16 13 00 04")
        server.attributes.maximumPreparedOctets = 4
        #expect(link.send("16 13 00 00 00 01 02 03") == "17 13 00 00 00 01 02 03")
        #expect(link.send("16 13 00 03 00 04 05") == "01 16 13 00 09")
        #expect(link.send("18 01") == "19")
        #expect(link.send("0a 13 00") == "0b 01 02 03")
    }

    /// Part F, 3.4.6.1 and 3.4.6.3: offsets and lengths are checked at Execute Write, not
    /// at Prepare Write. A part past the value's end is Invalid Offset, a value past 512
    /// octets Invalid Attribute Value Length, naming the part's handle; nothing of the
    /// queue is written (3.4.6.3 leaves the values undefined; we write none), and the
    /// queue is gone.
    @Test func offsetsAndLengthsAreCheckedAtExecuteWrite() throws {
        let server = try makeConformanceServer()
        let link = RawLink(server)
        #expect(link.send("16 18 00 1f 00 ff") == "17 18 00 1f 00 ff")
        #expect(link.send("18 01") == "01 18 18 00 07")
        // Past the end of the value the queue builds: its first part replaced the value.
        #expect(link.send("16 18 00 00 00 77") == "17 18 00 00 00 77")
        #expect(link.send("16 18 00 02 00 ff") == "17 18 00 02 00 ff")
        #expect(link.send("18 01") == "01 18 18 00 07")
        #expect(server.value(of: 0x0018) == conformanceLongValue)
        #expect(link.send("18 01") == "19", "the refused queue is gone")
        // At the value's end is no gap: the part extends it.
        #expect(link.send("16 18 00 1e 00 1e") == "17 18 00 1e 00 1e")
        #expect(link.send("18 01") == "19")
        #expect(server.value(of: 0x0018) == conformanceLongValue + [0x1E])
        // 29 parts of 18 octets (each Prepare Write fills ATT_MTU 23): 522 > 512.
        for offset in stride(from: 0, to: 522, by: 18) {
            let part =
                "16 18 00 " + [UInt8(offset & 0xFF), UInt8(offset >> 8)].hexDump + " " + countingHex(from: 0, count: 18)
            #expect(link.send(part) == "17" + String(part.dropFirst(2)))
        }
        #expect(link.send("18 01") == "01 18 18 00 0d")
        #expect(server.value(of: 0x0018) == conformanceLongValue + [0x1E])
    }

    /// Part F, 3.4.6.1 and 3.2.5: a part for a value that needs authorization is queued
    /// only when the app grants it; without an authorizer, Insufficient Authorization.
    @Test func prepareWriteNeedsTheAppsAuthorization() async throws {
        let server = try makeConformanceServer()
        let link = RawLink(server)
        #expect(await link.sendAwaiting("16 26 00 00 00 80") == "01 16 26 00 08")
        let grant = Switch()
        grant.on = true
        server.authorizer = { _ in grant.on }
        #expect(await link.sendAwaiting("16 26 00 00 00 80") == "17 26 00 00 00 80")
        #expect(link.send("18 01") == "19")
        #expect(server.value(of: 0x0026) == [0x80])
    }

    /// Part F, 3.4.6: each client has its own queue; one client's Execute Write or cancel
    /// leaves another's as it was.
    @Test func eachClientHasItsOwnQueue() throws {
        let server = try makeConformanceServer()
        let first = RawLink(server, connection: 0x0040), second = RawLink(server, connection: 0x0041)
        #expect(first.send("16 13 00 00 00 01") == "17 13 00 00 00 01")
        #expect(second.send("16 13 00 00 00 02") == "17 13 00 00 00 02")
        #expect(second.send("18 00") == "19")
        #expect(first.send("18 01") == "19")
        #expect(server.value(of: 0x0013) == [0x01])
        #expect(second.send("18 01") == "19")
        #expect(server.value(of: 0x0013) == [0x01])
    }

    /// Part G, 4.9.5 (Reliable Writes) over Part F, 3.4.6: a characteristic that declares
    /// Reliable Write in its Extended Properties (3.3.3.1), written in parts, each echoed so
    /// the client can check it, all written at Execute Write.
    @Test func reliableWriteOfCharacteristicsThatDeclareIt() throws {
        let server = try makeConformanceServer()
        let link = RawLink(server)
        #expect(link.send("16 28 00 00 00 90") == "17 28 00 00 00 90")
        #expect(link.send("16 28 00 01 00 91") == "17 28 00 01 00 91")
        #expect(link.send("18 01") == "19")
        #expect(server.value(of: 0x0028) == [0x90, 0x91])
    }

    /// Part G, 4.9.5 and 3.3.3.1: Reliable Write is a property a characteristic declares,
    /// and one that does not may take no part in a reliable write. ATT cannot tell one from
    /// a long write (4.9.4), except that a long write writes one attribute: so a queue that
    /// writes several is a reliable write, and each must declare it. The text names no
    /// error code; we take Write Request Rejected (0xFC, Supplement Part B 1.2: refused for a
    /// reason other than permissions; Request Not Supported would say Execute Write is not),
    /// naming the first attribute in the queue that does not declare it, at Execute Write
    /// (only then is the queue whole); nothing is written and the queue is gone.
    @Test func reliableWriteRefusedWhereNotDeclared() throws {
        let server = try makeConformanceServer()
        let link = RawLink(server)
        #expect(link.send("16 28 00 00 00 90") == "17 28 00 00 00 90")
        #expect(link.send("16 13 00 00 00 77") == "17 13 00 00 00 77")
        #expect(link.send("18 01") == "01 18 13 00 fc")
        #expect(server.value(of: 0x0028) == [0x09] && server.value(of: 0x0013) == [0x12, 0x34])
        #expect(link.send("18 01") == "19", "the refused queue is gone")
        // A descriptor declares no properties.
        #expect(link.send("16 2c 00 00 00 01") == "17 2c 00 00 00 01")
        #expect(link.send("16 28 00 00 00 90") == "17 28 00 00 00 90")
        #expect(link.send("18 01") == "01 18 2c 00 fc")
        #expect(server.value(of: 0x0028) == [0x09] && server.value(of: 0x002C) == [0x0A])
        // Refused before any app handler is asked to decide a value of the queue.
        var asked: [AttributeHandle] = []
        server.setWriteHandler(for: 0x0028) { request in
            asked.append(request.handle)
            return nil
        }
        #expect(link.send("16 28 00 00 00 90") == "17 28 00 00 00 90")
        #expect(link.send("16 13 00 00 00 77") == "17 13 00 00 00 77")
        #expect(link.send("18 01") == "01 18 13 00 fc")
        #expect(asked.isEmpty)
        // One attribute is a long write, which needs no declaration (writeLongCharacteristicValue).
        #expect(link.send("16 13 00 00 00 77") == "17 13 00 00 00 77")
        #expect(link.send("16 13 00 01 00 78") == "17 13 00 01 00 78")
        #expect(link.send("18 01") == "19")
        #expect(server.value(of: 0x0013) == [0x77, 0x78])
    }
}
