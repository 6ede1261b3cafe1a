import ATT
import BluetoothCore
import GATT
import HCI
import HCITestSupport
import TestTraits
import Testing

/// The protocol around the requests, byte for byte (Core 6.0 Vol 3, Part F, 3.3, 3.4.1,
/// 3.4.2 and 3.4.7; Part G, 4.10–4.11), against ``makeConformanceServer()``'s database.
@Suite("Server conformance: protocol, notifications and indications") @BluetoothActor
struct ServerConformanceProtocolTests {
    /// Part F, 3.4.1.1 and 3.3.1: a request the server does not support, an opcode without
    /// the Command Flag no version defines included, is Request Not Supported naming handle
    /// 0x0000, whatever follows the opcode.
    @Test func unsupportedRequestsAreRequestNotSupported() throws {
        let link = RawLink(try makeConformanceServer())
        #expect(link.send("14 01 00") == "01 14 00 00 06")
        #expect(link.send("1a") == "01 1a 00 00 06")
        #expect(link.send("22 01 00 02 00") == "01 22 00 00 06")
        #expect(link.send("30") == "01 30 00 00 06")
        #expect(link.send("3f 01 02 03") == "01 3f 00 00 06")
    }

    /// Part F, 3.3.1 and 3.4.1.1: a command the server does not support (the Command Flag,
    /// 0x40, set) is ignored: no answer, with or without the Authentication Signature Flag.
    @Test func unknownCommandsAreIgnored() throws {
        let link = RawLink(try makeConformanceServer())
        for command in ["40", "41 01 00", "53 1d 00 01", "70 01 02", "7f", "c0", "d3 1d 00 01", "ff ff ff"] {
            #expect(link.send(command) == nil, "\(command)")
        }
        #expect(link.send("0a 10 00") == "0b 01", "the link still answers")
    }

    /// Part F, 3.3 and 3.4: what a client sends as a server would (responses, a
    /// confirmation with no indication of ours outstanding) is not a request: no answer.
    @Test func responsesToNoRequestGetNoAnswer() throws {
        let link = RawLink(try makeConformanceServer())
        for pdu in [
            "01 0a 10 00 01", "03 17 00", "05 01 10 00 01 b0", "0b 01", "0d", "13", "17 13 00 00 00 01", "19", "1e",
        ] {
            #expect(link.send(pdu) == nil, "\(pdu)")
        }
        #expect(link.send("0a 10 00") == "0b 01", "the link still answers")
    }

    /// Part F, 3.4.2: Exchange MTU answers with our Receive MTU (517); ATT_MTU becomes the
    /// smaller of the two, and a Client Rx MTU below 23 leaves the default (3.4.2.2).
    @Test(arguments: [("02 10 00", 22), ("02 17 00", 22), ("02 1b 00", 26), ("02 ff ff", 30)])
    func exchangeMTUSetsWhatResponsesHold(request: String, readLength: Int) throws {
        let link = RawLink(try makeConformanceServer())
        #expect(link.send(request) == "03 05 02")
        #expect(link.send("0a 18 00") == "0b " + countingHex(from: 0, count: readLength))
    }

    /// Part G, 4.10 (Characteristic Value Notification) over Part F, 3.4.7.1: a client whose
    /// CCCD has notifications on gets Handle Value Notification (0x1B), the value cut to
    /// ATT_MTU − 3, and sends nothing back; others get nothing, nor does it once they are off.
    @Test func notificationsGoToSubscribedClientsCutToMTUMinusThree() throws {
        let server = try makeConformanceServer()
        let link = RawLink(server, connection: 0x0040), other = RawLink(server, connection: 0x0041)
        #expect(other.send("0a 10 00") == "0b 01")
        #expect(server.notify(0x001F, value: [0x01, 0x02]).isEmpty, "nobody subscribed")
        #expect(link.send("12 20 00 01 00") == "13")
        #expect(server.notify(0x001F, value: [0x01, 0x02]) == [0x0040])
        #expect(server.notify(0x001F, value: conformanceLongValue) == [0x0040])
        #expect(
            RawLink.text(link.outbox.pdus.suffix(2)) == "1b 1f 00 01 02 | 1b 1f 00 " + countingHex(from: 0, count: 20))
        #expect(RawLink.text(other.outbox.pdus[1...]) == nil)
        #expect(link.send("12 20 00 02 00") == "13")
        #expect(server.notify(0x001F, value: [0x03]).isEmpty, "indications on, notifications off")
        #expect(link.outbox.pdus.count == 4)
    }

    /// Part G, 4.11 (Characteristic Value Indications) over Part F, 3.4.7.2–3: Handle Value
    /// Indication (0x1D), the value cut to ATT_MTU − 3; the next waits until the client's
    /// Handle Value Confirmation (0x1E), which gets no answer; a confirmation with no
    /// indication outstanding is dropped.
    @Test(.hangGuard)
    func indicationsWaitForEachConfirmation() async throws {
        let server = try makeConformanceServer()
        // A clock that stands still: the first indication's 30 s ATT timeout cannot close the
        // bearer before the second is queued, however long a loaded machine takes to get there
        // (under ThreadSanitizer, beside other work, it once took longer than that).
        let link = RawLink(server, clock: ManualClock())
        #expect(link.send("12 20 00 02 00") == "13")
        let before = link.outbox.pdus.count
        let first = Task { @BluetoothActor in try await server.indicate(0x001F, value: conformanceLongValue, to: 0x0040)
        }
        // The second is asked for once the first is out, so their order is certain.
        #expect(await eventually { link.bearer.indicationsPending == 1 })
        let second = Task { @BluetoothActor in try await server.indicate(0x001F, value: [0x02], to: 0x0040) }
        #expect(await eventually { link.bearer.indicationsPending == 2 })
        #expect(RawLink.text(link.outbox.pdus[before...]) == "1d 1f 00 " + countingHex(from: 0, count: 20))
        // The confirmation gets no answer of its own: what follows it is the waiting indication.
        #expect(link.send("1e") == "1d 1f 00 02")
        try await first.value
        #expect(link.send("1e") == nil)
        try await second.value
        let discarded = link.bearer.discardedPDUs
        #expect(link.send("1e") == nil)
        #expect(link.bearer.discardedPDUs == discarded + 1)
        #expect(link.bearer.indicationsPending == 0)
    }

    /// Part G, 7.1 and 7.3: a service added while a client has Service Changed indications
    /// on is indicated to it (the new range, 0x003C–0x003C), and the Database Hash it reads
    /// after, by handle or by Read By Type on 0x2B2A, is the new one.
    @Test(.hangGuard)
    func anAddedServiceIsIndicatedAndChangesTheDatabaseHash() async throws {
        let server = try makeConformanceServer()
        let link = RawLink(server)
        #expect(link.send("12 09 00 02 00") == "13")
        let hash = server.base.databaseHashValue
        try server.add(ServiceDefinition(uuid: BluetoothUUID(UInt16(0xA007))))
        #expect(await eventually { link.outbox.pdus.count == 2 })
        #expect(RawLink.text(link.outbox.pdus[1...]) == "1d 08 00 3c 00 3c 00")
        #expect(link.send("1e") == nil)
        #expect(server.base.databaseHashValue != hash)
        #expect(link.send("0a 0d 00") == "0b " + server.base.databaseHashValue.hexDump)
        #expect(link.send("08 01 00 ff ff 2a 2b") == "09 12 0d 00 " + server.base.databaseHashValue.hexDump)
    }
}
