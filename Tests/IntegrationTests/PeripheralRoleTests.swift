import Bluejay
import BluetoothCore
import Foundation
import GATT
import HCI
import HCITestSupport
import Testing

extension IntegrationTests {
    static let periphService = BluetoothUUID("B1E70A00-9D3B-4C7A-8A5E-6F2D0C1B0A00")!
    static let periphReadable = BluetoothUUID("B1E70A01-9D3B-4C7A-8A5E-6F2D0C1B0A00")!
    static let periphWritable = BluetoothUUID("B1E70A02-9D3B-4C7A-8A5E-6F2D0C1B0A00")!
    static let periphStream = BluetoothUUID("B1E70A03-9D3B-4C7A-8A5E-6F2D0C1B0A00")!
    static let periphIndicated = BluetoothUUID("B1E70A04-9D3B-4C7A-8A5E-6F2D0C1B0A00")!
    static let periphSecret = BluetoothUUID("B1E70A05-9D3B-4C7A-8A5E-6F2D0C1B0A00")!

    /// The UUID as the central prints it: hex, most significant octet first.
    static func centralUUID(_ uuid: BluetoothUUID) -> String {
        uuid.description.replacingOccurrences(of: "-", with: "").uppercased()
    }

    /// Our host as a PERIPHERAL against a Bumble central: it finds our advertisement,
    /// connects, discovers our database where our server put it, reads (from an async
    /// handler), writes (short, long, reliable; the handler sees each value whole), receives
    /// 10,000 notifications in order, and an indication we wait to see confirmed. When it
    /// disconnects, advertising resumes and it finds us again.
    @Test(.hangGuard) func aBumbleCentralUsesOurPeripheral() async throws {
        let rig = try await PeripheralRig(name: "Bluejay Periph")
        defer { rig.close() }
        let central = rig.central, manager = rig.manager
        var events = manager.events().makeAsyncIterator()

        let served = try manager.add(
            MutableService(
                uuid: Self.periphService,
                characteristics: [
                    MutableCharacteristic(uuid: Self.periphReadable, properties: [.read], value: Array("stored".utf8)),
                    MutableCharacteristic(
                        uuid: Self.periphWritable, properties: [.read, .write, .writeWithoutResponse], value: [0]),
                    MutableCharacteristic(uuid: Self.periphStream, properties: [.notify]),
                    MutableCharacteristic(uuid: Self.periphIndicated, properties: [.read, .indicate], value: [0]),
                    MutableCharacteristic(
                        uuid: Self.periphSecret, properties: [.read], permissions: [.read, .readEncrypted],
                        value: Array("secret".utf8)),
                ]))
        var reads = 0
        try manager.onRead(Self.periphReadable) { _ in
            reads += 1
            return .success(Array("from the handler".utf8))
        }
        var written: [[UInt8]] = []
        try manager.onWrite(Self.periphWritable) { request in
            written.append(request.value)
            return request.value == [0xEE] ? .valueNotAllowed : nil
        }
        try await manager.startAdvertising("Bluejay Periph", uuids: [Self.periphService])
        #expect(manager.isAdvertising)

        // It finds us: the name and our service's 128-bit UUID, connectable.
        let found = try await central.send(["op": "scan", "name": "Bluejay Periph"])
        let connectable: Bool? = found["connectable"] as? Bool
        #expect(connectable == true)
        let advertised = AdvertisingData(parsing: hexBytes(found["data"]))
        #expect(advertised.localName == "Bluejay Periph")
        let advertisedUUIDs: [BluetoothUUID] = [Self.periphService]
        #expect(advertised.serviceUUIDs == advertisedUUIDs)
        #expect(advertised.flags == 0x06)
        // The name did not fit beside the flags and the 128-bit UUID: it is in the scan response.
        #expect(AdvertisingData(parsing: hexBytes(found["scan_response"])).localName == "Bluejay Periph")

        try await central.send([
            "op": "connect", "address": found["address"] as Any, "address_type": found["address_type"] as Any,
        ])
        guard case let .connected(link, _)? = await events.next() else { Issue.record("no connection event"); return }
        #expect(!manager.isAdvertising, "a connection stops connectable advertising")
        let exchanged: [String: Any] = try await central.send(["op": "mtu", "mtu": 247])
        let mtu: Int? = exchanged["mtu"] as? Int
        #expect(mtu == 247)
        // We raised the data length and the PHY from our side (the emulated controller
        // supports both).
        #expect(await eventually { manager.host.connections.connections[link]?.maxTxOctets == 251 })
        #expect(await eventually { manager.host.connections.connections[link]?.txPHY == 2 })
        // We ask the central for other parameters; Bumble's host accepts them.
        #expect(
            try await manager.requestConnectionParameters(
                LEConnectionRequest(intervalMin: 24, intervalMax: 40, latency: 0, supervisionTimeout: 400),
                on: link))

        // Discovery: our service, its characteristics at the handles our server gave them.
        let discovered = try await central.send(["op": "discover"])
        let services = try #require(discovered["services"] as? [[String: Any]])
        let serviceUUIDs: [String] = services.compactMap { (service: [String: Any]) -> String? in
            service["uuid"] as? String
        }
        let expectedServiceUUIDs: [String] = ["1800", "1801", Self.centralUUID(Self.periphService)]
        #expect(serviceUUIDs == expectedServiceUUIDs)
        let characteristics = try #require(services.last?["characteristics"] as? [[String: Any]])
        // Bumble names a characteristic by its value handle.
        let centralHandles: [Int] = characteristics.compactMap { (item: [String: Any]) -> Int? in item["handle"] as? Int
        }
        let servedHandles: [Int] = served.characteristics.map { (item: ServedCharacteristic) -> Int in
            Int(item.valueHandle.rawValue)
        }
        #expect(centralHandles == servedHandles)
        let centralUUIDs: [String] = characteristics.compactMap { (item: [String: Any]) -> String? in
            item["uuid"] as? String
        }
        let servedUUIDs: [String] = served.characteristics.map { (item: ServedCharacteristic) -> String in
            Self.centralUUID(item.uuid)
        }
        #expect(centralUUIDs == servedUUIDs)
        let readable = Int(served.characteristics[0].valueHandle.rawValue),
            writable = Int(served.characteristics[1].valueHandle.rawValue)
        let stream = Int(served.characteristics[2].valueHandle.rawValue),
            indicated = Int(served.characteristics[3].valueHandle.rawValue)

        // Read, from the handler.
        let handled: [String: Any] = try await central.send(["op": "read", "handle": readable])
        let handlerValue: [UInt8] = Array("from the handler".utf8)
        #expect(hexBytes(handled["value"]) == handlerValue)
        #expect(reads == 1)
        // Writes: short, refused, long, reliable.
        try await central.send(["op": "write", "handle": writable, "value": "0102"])
        guard case let .valueWritten(write)? = await events.next() else { Issue.record("no write event"); return }
        let firstWrite: [UInt8] = [1, 2]
        #expect(write.value == firstWrite && write.connection == link)
        do {
            try await central.send(["op": "write", "handle": writable, "value": "ee"])
            Issue.record("the handler's refusal must reach the central")
        } catch let error as CentralError {
            #expect(error.attError == Int(ATTErrorCode.valueNotAllowed.rawValue))
        }
        let long: [UInt8] = (0..<300).map { (index: Int) -> UInt8 in UInt8(index % 251) }
        try await central.send(["op": "write_long", "handle": writable, "value": hexString(long)])
        try await central.send(["op": "reliable_write", "writes": [["handle": writable, "value": "0a0b0c"]]])
        let writtenValues: [[UInt8]] = [[1, 2], [0xEE], long, [0x0A, 0x0B, 0x0C]]
        #expect(written == writtenValues)
        let reliablyWritten: [UInt8] = [0x0A, 0x0B, 0x0C]
        #expect(try manager.value(of: Self.periphWritable) == reliablyWritten)
        do {
            try await central.send(["op": "write", "handle": readable, "value": "00"])
            Issue.record("a read-only value must refuse writes")
        } catch let error as CentralError {
            #expect(error.attError == Int(ATTErrorCode.writeNotPermitted.rawValue))
        }

        // 10,000 notifications, in order.
        try await central.send(["op": "subscribe", "handle": stream])
        while let event = await events.next() {
            if case let .subscriptionChanged(subscription) = event {
                let streamHandle = UInt16(stream)
                #expect(subscription.notifications && subscription.handle.rawValue == streamHandle)
                break
            }
        }
        let count = 10_000
        let expected: [[UInt8]] = (0..<count).map { (index: Int) -> [UInt8] in
            [UInt8(index & 0xFF), UInt8(index >> 8), 0xB1, 0xE7]
        }
        for value in expected {
            try await manager.updateValue(value, for: Self.periphStream)
        }
        let values = try await central.send(["op": "values", "handle": stream, "count": count, "timeout": 120])
        let hexValues: [String] = values["values"] as? [String] ?? []
        let received: [[UInt8]] = hexValues.map { (value: String) -> [UInt8] in hexBytes(value) }
        #expect(received.count == count)
        #expect(received == expected)

        // An indication: updateValue returns once the central confirmed it.
        try await central.send(["op": "subscribe", "handle": indicated, "indicate": true])
        try await manager.updateValue([0x42], for: Self.periphIndicated)
        try await manager.updateValue([0x43], for: Self.periphIndicated)
        let indications: [String: Any] = try await central.send(["op": "values", "handle": indicated, "count": 2])
        let indicatedValues: [String]? = indications["values"] as? [String]
        #expect(indicatedValues == ["42", "43"])
        let lastIndicated: [UInt8] = [0x43]
        #expect(manager.server.attributes.attribute(at: served.characteristics[3].valueHandle)?.value == lastIndicated)

        // A value that needs encryption: refused until the central pairs with us (after our
        // Security Request; LE Secure Connections, Just Works, we answer as responder), then
        // served.
        let secret = Int(served.characteristics[4].valueHandle.rawValue)
        do {
            try await central.send(["op": "read", "handle": secret])
            Issue.record("an encrypted value must be refused on a plain link")
        } catch let error as CentralError {
            #expect(error.attError == Int(ATTErrorCode.insufficientEncryption.rawValue))
        }
        // We ask for security; the central pairs with us.
        try manager.requestSecurity(on: link)
        #expect(await eventually { manager.host.security.isEncrypted(link) })
        let secretRead: [String: Any] = try await central.send(["op": "read", "handle": secret])
        let secretValue: [UInt8] = Array("secret".utf8)
        #expect(hexBytes(secretRead["value"]) == secretValue)

        // The central leaves; advertising resumes and it finds us again.
        try await central.send(["op": "disconnect"])
        while let event = await events.next() {
            if case let .disconnected(handle, reason) = event {
                #expect(handle == link)
                #expect(reason == .remoteUserTerminatedConnection)
                break
            }
        }
        #expect(try manager.subscribers(of: Self.periphStream).isEmpty, "a central's CCCDs go with its link")
        let again = try await central.send(["op": "scan", "name": "Bluejay Periph"])
        let againAddress: String? = again["address"] as? String
        let foundAddress: String? = found["address"] as? String
        #expect(againAddress == foundAddress)
        #expect(manager.isAdvertising)
    }
}
