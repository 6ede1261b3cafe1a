import ATT
import BluetoothCore
import GATT
import HCI
import Testing

/// Subscriptions and Service Changed against scripted PDU sequences: the CCCD written,
/// the affected range dropped, and no subscription where the server has no Service Changed.
extension ProcedureTests {
    @Test func subscribingWritesTheCCCDFoundLazily() async throws {
        let server = ScriptedServer()
        let client = GATTClient(bearer: server.bearer)
        server.expect("06 01 00 FF FF 00 28 0D 18", "07 10 00 18 00")
        server.expect("06 19 00 FF FF 00 28 0D 18", "01 06 19 00 0A")
        server.expect("08 10 00 18 00 03 28", "09 07 11 00 10 12 00 37 2A")
        server.expect("08 12 00 18 00 03 28", "01 08 12 00 0A")
        server.expect("04 13 00 18 00", "05 01 13 00 02 29")
        server.expect("04 14 00 18 00", "01 04 14 00 0A")
        server.expect("12 13 00 01 00", "13")
        let heartRate = try await client.characteristic(
            BluetoothUUID(UInt16(0x2A37)), in: BluetoothUUID(UInt16(0x180D)))
        try await client.setNotifications(.notify, for: heartRate)
        var values: [[UInt8]] = []
        client.addValueListener(heartRate.valueHandle) { values.append(Array($0)) }
        server.push("1B 12 00 06 48")
        #expect(values == [[0x06, 0x48]])
        // Known now: a second use costs no request.
        _ = try await client.characteristic(BluetoothUUID(UInt16(0x2A37)), in: BluetoothUUID(UInt16(0x180D)))
        await #expect(throws: GATTError.notPermitted("characteristic 2A37 Heart Rate Measurement does not indicate")) {
            try await client.setNotifications(.indicate, for: heartRate)
        }
        server.verify()
    }

    @Test func serviceChangedInvalidatesTheAffectedRange() async throws {
        let server = ScriptedServer()
        let client = GATTClient(bearer: server.bearer)
        server.expect("06 01 00 FF FF 00 28 01 18", "07 08 00 0B 00")
        server.expect("06 0C 00 FF FF 00 28 01 18", "01 06 0C 00 0A")
        server.expect("08 08 00 0B 00 03 28", "09 07 09 00 20 0A 00 05 2A")
        server.expect("08 0A 00 0B 00 03 28", "01 08 0A 00 0A")
        server.expect("04 0B 00 0B 00", "05 01 0B 00 02 29")
        server.expect("12 0B 00 02 00", "13")
        #expect(try await client.subscribeToServiceChanged())
        #expect(client.serviceChangedHandle == 0x0A)
        server.verify()

        server.expect("06 01 00 FF FF 00 28 0D 18", "07 10 00 18 00")
        server.expect("06 19 00 FF FF 00 28 0D 18", "01 06 19 00 0A")
        _ = try await client.service(BluetoothUUID(UInt16(0x180D)))
        #expect(client.discoveredServices.count == 2)
        var changed: [ClosedRange<AttributeHandle>] = []
        client.onServiceChanged = { changed.append($0) }
        server.push("1D 0A 00 10 00 20 00")
        #expect(changed == [0x10...0x20])
        #expect(client.discoveredServices.map(\.uuid) == [.genericAttribute])
        #expect(server.sent.last == [0x1E], "the indication was confirmed")
        // The next use rediscovers.
        server.expect("06 01 00 FF FF 00 28 0D 18", "07 10 00 1A 00")
        server.expect("06 1B 00 FF FF 00 28 0D 18", "01 06 1B 00 0A")
        #expect(try await client.service(BluetoothUUID(UInt16(0x180D))).endGroupHandle == 0x1A)
        server.verify()
    }

    @Test func serviceChangedStaysRecognisedAfterAChangeCoveringItself() async throws {
        let server = ScriptedServer()
        let client = GATTClient(bearer: server.bearer)
        server.expect("06 01 00 FF FF 00 28 01 18", "07 08 00 0B 00")
        server.expect("06 0C 00 FF FF 00 28 01 18", "01 06 0C 00 0A")
        server.expect("08 08 00 0B 00 03 28", "09 07 09 00 20 0A 00 05 2A")
        server.expect("08 0A 00 0B 00 03 28", "01 08 0A 00 0A")
        server.expect("04 0B 00 0B 00", "05 01 0B 00 02 29")
        server.expect("12 0B 00 02 00", "13")
        #expect(try await client.subscribeToServiceChanged())
        server.verify()
        var changed: [ClosedRange<AttributeHandle>] = []
        client.onServiceChanged = { changed.append($0) }
        // The whole database changed, the Service Changed characteristic's range included:
        // everything is forgotten, but the peer still indicates on 0x000A.
        server.push("1D 0A 00 01 00 FF FF")
        #expect(client.discoveredServices.isEmpty)
        #expect(client.serviceChangedHandle == 0x0A)
        server.push("1D 0A 00 01 00 FF FF")
        #expect(changed == [0x0001...0xFFFF, 0x0001...0xFFFF])
        #expect(server.sent.suffix(2) == [[0x1E], [0x1E]], "both indications confirmed")
    }

    @Test func noServiceChangedMeansNoSubscription() async throws {
        let server = ScriptedServer()
        let client = GATTClient(bearer: server.bearer)
        server.expect("06 01 00 FF FF 00 28 01 18", "01 06 01 00 0A")
        #expect(try await client.subscribeToServiceChanged() == false)
        server.verify()
    }
}
