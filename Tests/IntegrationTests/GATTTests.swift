import ATT
import BluetoothCore
import Foundation
import GATT
@testable import HCI
import L2CAP
import HCITestSupport
import Testing

// The ATT bearer and GATT client against the Bumble peer's GATT database (see
// Fixtures/peer/README.md), over the real transport: discovery, reads, writes, notifications
// and MTU. The rig (GATTLink, openGATT, closeGATT) is in GATTTestSupport.swift.

extension IntegrationTests {
    // MARK: Discovery

    /// Every discovery procedure against the peer's database: all primary services with
    /// the README's handle ranges, by UUID (16- and 128-bit, and one that is absent),
    /// included services (the peer has none: each search ends on Attribute Not Found with
    /// an empty result and the bearer idle), all characteristics, characteristics by
    /// UUID, and the descriptors (exactly the six CCCDs, none searched where a
    /// characteristic has no room for any).
    @Test func gattDiscoversEveryServiceCharacteristicAndDescriptor() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let link = try await openGATT(peer)
        let client = link.client

        let services = try await client.discoverPrimaryServices()
        let serviceUUIDs: [BluetoothUUID] = [
            sig(0x1800), sig(0x1801), sig(0x180D), sig(0x180A), sig(0x180F), peerUUID(1), peerUUID(0x0200),
        ]
        #expect(services.map(\.uuid) == serviceUUIDs)
        let serviceHandles: [ClosedRange<AttributeHandle>] = [
            0x0001...0x0005, 0x0006...0x000D, 0x000E...0x0013, 0x0014...0x0018, 0x0019...0x001C,
            0x001D...0x002E, 0x0032...0x0035,
        ]
        #expect(services.map(\.handles) == serviceHandles)
        #expect(services.allSatisfy { (service: Service) -> Bool in service.isPrimary })

        // By UUID: Find By Type Value, 16-bit and 128-bit; a UUID the peer lacks gives none.
        #expect(try await client.discoverPrimaryServices(uuid: sig(0x180F)) == [services[4]])
        #expect(try await client.discoverPrimaryServices(uuid: peerUUID(1)) == [services[5]])
        #expect(try await client.discoverPrimaryServices(uuid: sig(0x1812)).isEmpty)

        // Included services: only the tolerance service has one, a secondary service with a
        // 128-bit UUID its include declaration leaves out (read from the included service's
        // declaration). Each search must end (Attribute Not Found), leaving the bearer idle.
        for service in services.dropLast() {
            #expect(try await client.findIncludedServices(in: service).isEmpty, "\(service)")
            #expect(!link.bearer.hasOutstandingRequest && link.bearer.queuedRequests == 0)
        }
        let included = try await client.findIncludedServices(in: services[6])
        let secondary = Service(uuid: peerUUID(0x0201), handle: 0x002F, endGroupHandle: 0x0031)
        let expectedIncludes: [IncludedService] = [IncludedService(declarationHandle: 0x0033, service: secondary)]
        #expect(included == expectedIncludes)
        #expect(!link.bearer.hasOutstandingRequest && link.bearer.queuedRequests == 0)

        // All characteristics of a service.
        let heartRate = try await client.discoverCharacteristics(in: services[2])
        let heartRateCharacteristics: [Characteristic] = [
            Characteristic(
                uuid: sig(0x2A37), declarationHandle: 0x000F, properties: [.notify], valueHandle: 0x0010,
                endHandle: 0x0011),
            Characteristic(
                uuid: sig(0x2A38), declarationHandle: 0x0012, properties: [.read, .write], valueHandle: 0x0013,
                endHandle: 0x0013),
        ]
        #expect(heartRate == heartRateCharacteristics)
        let custom = try await client.discoverCharacteristics(in: services[5])
        let customUUIDs: [BluetoothUUID] = (2...8).map { (short: UInt16) -> BluetoothUUID in peerUUID(short) }
        #expect(custom.map(\.uuid) == customUUIDs)
        let customHandles: [AttributeHandle] = [0x001F, 0x0021, 0x0024, 0x0026, 0x0029, 0x002B, 0x002E]
        #expect(custom.map(\.valueHandle) == customHandles)
        let customProperties: [CharacteristicProperties] = [
            [.read, .write], [.read, .indicate], [.read], [.writeWithoutResponse, .notify], [.write],
            [.notify], [.read],
        ]
        #expect(custom.map(\.properties) == customProperties)

        // Characteristics by UUID.
        let control = try await client.discoverCharacteristics(in: services[5], uuid: peerUUID(6))
        let controlHandles: [AttributeHandle] = [0x0029]
        #expect(control.map(\.valueHandle) == controlHandles)
        #expect(try await client.discoverCharacteristics(in: services[2], uuid: sig(0x2A38)) == [heartRate[1]])
        #expect(try await client.discoverCharacteristics(in: services[5], uuid: sig(0x2A19)).isEmpty)

        // Descriptors of every characteristic: the six CCCDs, nothing else.
        let tree = try await discoverTree(client)
        #expect(tree.services == services)
        #expect(tree.allCharacteristics.count == 18)
        let cccdHandles: [AttributeHandle] = [0x0009, 0x0011, 0x001C, 0x0022, 0x0027, 0x002C]
        let cccds: [Descriptor] = cccdHandles.map { (handle: AttributeHandle) -> Descriptor in
            Descriptor(uuid: .clientCharacteristicConfiguration, handle: handle)
        }
        #expect(tree.allDescriptors == cccds)
        // Find Information over the whole database: every attribute, 16-bit and 128-bit
        // types mixed (two response formats), each handle once.
        let everything = try await client.discoverDescriptors(in: 0x0001...0xFFFF)
        let everyHandle: [AttributeHandle] = Array(0x0001...0x0035)
        #expect(everything.map(\.handle) == everyHandle)
        func attributeType(at handle: AttributeHandle) -> BluetoothUUID? {
            everything.first { (descriptor: Descriptor) -> Bool in descriptor.handle == handle }?.uuid
        }
        #expect(attributeType(at: 0x002F) == .secondaryService)
        #expect(attributeType(at: 0x0033) == .include)
        #expect(attributeType(at: 0x0024) == peerUUID(4))
        #expect(attributeType(at: 0x0010) == sig(0x2A37))
        await closeGATT(link)
    }

    // MARK: Reads

    /// Read, read long (the 512-byte value, i % 256), Read Multiple, Read Multiple
    /// Variable, Read Using Characteristic UUID; and a refusal by name.
    @Test func gattReadsEveryWay() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let link = try await openGATT(peer)
        let client = link.client
        let manufacturer = try await link.characteristic(sig(0x2A29), in: sig(0x180A))
        let serial = try await link.characteristic(sig(0x2A25), in: sig(0x180A))
        let battery = try await link.characteristic(sig(0x2A19), in: sig(0x180F))
        let location = try await link.characteristic(sig(0x2A38), in: sig(0x180D))
        let long = try await link.characteristic(peerUUID(2), in: peerUUID(1))

        #expect(try await client.read(manufacturer.valueHandle) == Array("Bluejay".utf8))
        #expect(try await client.readLong(long.valueHandle) == (0..<512).map { UInt8($0 % 256) })
        // Fixed-length values concatenated: battery level 87, body sensor location 1.
        #expect(try await client.readMultiple([battery.valueHandle, location.valueHandle]) == [0x57, 0x01])
        // Variable length: each value with its own length (Bumble implements it).
        #expect(
            try await client.readMultipleVariable([manufacturer.valueHandle, serial.valueHandle, battery.valueHandle])
                == [Array("Bluejay".utf8), Array("BJ-0001".utf8), [0x57]])
        // Read Using Characteristic UUID, over the whole database and within one service.
        #expect(
            try await client.read(uuid: sig(0x2A29)) == [
                HandleValue(handle: manufacturer.valueHandle, value: Array("Bluejay".utf8))
            ])
        let deviceInformation = try await client.service(sig(0x180A))
        #expect(
            try await client.read(uuid: sig(0x2A25), in: deviceInformation.handles) == [
                HandleValue(handle: serial.valueHandle, value: Array("BJ-0001".utf8))
            ])
        // Nothing of that type in the range: the server's Attribute Not Found is the answer.
        #expect(
            await failure { () async throws(GATTError) in try await client.read(uuid: sig(0x2A29), in: 0x0001...0x0010)
            }?.code == .attributeNotFound)

        // The heart rate measurement only notifies: the peer refuses a read, by name.
        let measurement = try await link.characteristic(sig(0x2A37), in: sig(0x180D))
        let refused = await failure { () async throws(GATTError) in try await client.read(measurement.valueHandle) }
        #expect(refused?.code == .readNotPermitted)
        #expect(refused?.description.contains("readNotPermitted") == true)
        await closeGATT(link)
    }

    /// B1E70004 needs an encrypted link; ours is not: the read fails with
    /// insufficientEncryption, by name, and the link stays usable.
    @Test func gattReadOfTheEncryptedValueFailsWithInsufficientEncryption() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let link = try await openGATT(peer)
        let secret = try await link.characteristic(peerUUID(4), in: peerUUID(1))
        #expect(secret.properties == [.read])
        let error = await failure { () async throws(GATTError) in try await link.client.read(secret.valueHandle) }
        #expect(error?.code == .insufficientEncryption)
        #expect(error?.description.contains("insufficientEncryption") == true, "\(String(describing: error))")
        // Read long and read by UUID are refused the same way.
        #expect(
            await failure { () async throws(GATTError) in try await link.client.readLong(secret.valueHandle) }?.code
                == .insufficientEncryption)
        #expect(
            await failure { () async throws(GATTError) in try await link.client.read(uuid: peerUUID(4)) }?.code
                == .insufficientEncryption)
        let readOnly = try await link.characteristic(peerUUID(8), in: peerUUID(1))
        let readOnlyValue: [UInt8] = Array("Bluejay read-only".utf8)
        #expect(try await link.client.read(readOnly.valueHandle) == readOnlyValue)
        await closeGATT(link)
    }

    // MARK: Writes

    /// Write Request (read back), a wrong length refused by name, Write Command (the echo
    /// characteristic notifies every value back, in order), reliable write of two values
    /// (both read back), a long write at the default MTU, and a write to a read-only value
    /// refused by name.
    @Test func gattWritesEveryWay() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let link = try await openGATT(peer)
        let client = link.client
        let location = try await link.characteristic(sig(0x2A38), in: sig(0x180D))
        let long = try await link.characteristic(peerUUID(2), in: peerUUID(1))
        let echo = try await link.characteristic(peerUUID(5), in: peerUUID(1))
        let readOnly = try await link.characteristic(peerUUID(8), in: peerUUID(1))

        try await client.write(location.valueHandle, [0x05])
        #expect(try await client.read(location.valueHandle) == [0x05])
        let tooLong = await failure { () async throws(GATTError) in
            try await client.write(location.valueHandle, [0x01, 0x02])
        }
        #expect(tooLong?.code == .invalidAttributeValueLength)
        #expect(tooLong?.description.contains("invalidAttributeValueLength") == true)
        let notPermitted = await failure { () async throws(GATTError) in
            try await client.write(readOnly.valueHandle, [0x00])
        }
        #expect(notPermitted?.code == .writeNotPermitted)

        // Write Command: subscribed first, every value comes back as a notification.
        let echoes = Arrivals<[UInt8]>()
        client.addValueListener(echo.valueHandle) { echoes.append(Array($0)) }
        try await client.setNotifications(.notify, for: echo)
        let echoed: [[UInt8]] = (0..<20).map { (index: Int) -> [UInt8] in Array("echo \(index)".utf8) }
        let longEcho: [UInt8] = (0..<512).map { (index: Int) -> UInt8 in UInt8(truncatingIfNeeded: index * 7) }
        let sent: [[UInt8]] = echoed + [longEcho]
        for value in sent { try client.writeWithoutResponse(echo.valueHandle, value) }
        #expect(await echoes.waitFor(sent.count))
        #expect(echoes.values == sent)
        // Longer than ATT_MTU - 3: refused before anything is sent.
        #expect(throws: GATTError.valueTooLong(length: 515, maximum: 514)) {
            try client.writeWithoutResponse(echo.valueHandle, [UInt8](repeating: 0, count: 515))
        }

        // Reliable write: two characteristics prepared, echoes checked, executed together.
        let reliableLong: [UInt8] = (0..<300).map { (index: Int) -> UInt8 in UInt8(255 - index % 256) }
        try await client.reliableWrite([
            HandleValue(handle: long.valueHandle, value: reliableLong),
            HandleValue(handle: location.valueHandle, value: [0x07]),
        ])
        #expect(try await client.readLong(long.valueHandle) == reliableLong)
        #expect(try await client.read(location.valueHandle) == [0x07])

        // A long write at ATT_MTU 517 goes in one Prepare Write (512 ≤ 517 - 5).
        let full: [UInt8] = (0..<512).map { (index: Int) -> UInt8 in UInt8(truncatingIfNeeded: index * 3) }
        try await client.writeLong(long.valueHandle, full)
        #expect(try await client.readLong(long.valueHandle) == full)
        await closeGATT(link)
    }

    /// `preferredMTU: 23` keeps ATT_MTU at 23, so a 512-byte value really goes as Prepare
    /// Write parts of 18 bytes and one Execute Write (counted in a capture of the link),
    /// and is read back equal over Read + Read Blob in the same connection; 513 bytes are
    /// refused at Execute with invalidAttributeValueLength, by name, leaving the value as
    /// it was. Discovery at this MTU (many short responses) finds the same tree.
    @Test func gattLongWriteAndReadAtMTU23() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let path = NSTemporaryDirectory() + "bluejay-gatt-long-\(UUID().uuidString).btsnoop"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let capture = try BTSnoopWriter(path: path)
        let link = try await openGATT(peer, preferredMTU: 23, capture: capture)
        let client = link.client
        #expect(link.bearer.mtu == 23)
        #expect(client.maximumWriteLength == 20)

        let long = try await link.characteristic(peerUUID(2), in: peerUUID(1))
        let stored: [UInt8] = (0..<512).map { (index: Int) -> UInt8 in UInt8(index % 256) }
        #expect(try await client.readLong(long.valueHandle) == stored)
        let storedTail: [UInt8] = Array(stored[500...])
        #expect(try await client.readLong(long.valueHandle, offset: 500) == storedTail)

        let value: [UInt8] = (0..<512).map { (index: Int) -> UInt8 in UInt8(255 - index % 256) }
        // Too long for a Write Request at this MTU: only a long write can carry it.
        #expect(
            await failure { () async throws(GATTError) in try await client.write(long.valueHandle, value) }
                == .valueTooLong(length: 512, maximum: 20))
        try await client.writeLong(long.valueHandle, value)
        #expect(try await client.readLong(long.valueHandle) == value)

        let refused = await failure { () async throws(GATTError) in
            try await client.writeLong(long.valueHandle, [UInt8](repeating: 0xAA, count: 513))
        }
        #expect(refused?.code == .invalidAttributeValueLength)
        #expect(refused?.description.contains("invalidAttributeValueLength") == true, "\(String(describing: refused))")
        #expect(try await client.readLong(long.valueHandle) == value, "a refused long write changes nothing")

        let small = try await discoverTree(client)
        await closeGATT(link)
        capture.close()

        // What went over the link: 512 and 513 bytes in parts of 23 - 5 = 18, 29 Prepare
        // Write Requests each, each followed by an Execute Write (flags 0x01: write).
        let sent = try sentATTPDUs(path)
        let prepares: Int = sent.filter { (pdu: [UInt8]) -> Bool in pdu.first == 0x16 }.count
        #expect(prepares == 58)
        let executes: [[UInt8]] = sent.filter { (pdu: [UInt8]) -> Bool in pdu.first == 0x18 }
        #expect(executes == [[0x18, 0x01], [0x18, 0x01]])
        #expect(!sent.contains { (pdu: [UInt8]) -> Bool in pdu.first == 0x12 }, "no Write Request at all")

        // The same tree as at ATT_MTU 517.
        let again = try await openGATT(peer)
        #expect(again.bearer.mtu == 517)
        #expect(try await discoverTree(again.client) == small)
        await closeGATT(again)
    }

    // MARK: Notifications and indications

    /// The CCCD reads back what subscribing wrote; a flood of 1,000 notifications on the
    /// stream characteristic (README: payload = u32 LE sequence number, then zeros)
    /// arrives complete and in order, at 20 and at 244 bytes.
    @Test func gattThousandNotificationsArriveInOrderWithNoneLost() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let link = try await openGATT(peer)
        let client = link.client
        let stream = try await link.characteristic(peerUUID(7), in: peerUUID(1))
        let control = try await link.characteristic(peerUUID(6), in: peerUUID(1))
        let cccd = try await link.cccd(of: stream)

        // Not subscribed yet: the peer refuses the flood, by name.
        let early = await failure { () async throws(GATTError) in
            try await client.write(control.valueHandle, ControlPoint.flood(count: 1000, length: 20))
        }
        #expect(early?.code == .cccdImproperlyConfigured)
        #expect(try await client.read(cccd.handle) == [0x00, 0x00])

        let received = Arrivals<[UInt8]>()
        client.addValueListener(stream.valueHandle) { received.append(Array($0)) }
        try await client.setNotifications(.notify, for: stream)
        #expect(try await client.read(cccd.handle) == [0x01, 0x00])

        for length in [20, 244] {
            received.removeAll()
            try await client.write(control.valueHandle, ControlPoint.flood(count: 1000, length: UInt16(length)))
            #expect(await received.waitFor(1000), "got \(received.values.count) of 1000 at \(length) bytes")
            // One more round trip: anything sent before its response has arrived by now.
            #expect(try await client.read(cccd.handle) == [0x01, 0x00])
            #expect(received.values.count == 1000)
            let sequence = received.values.map {
                UInt32($0[0]) | UInt32($0[1]) << 8 | UInt32($0[2]) << 16 | UInt32($0[3]) << 24
            }
            #expect(sequence == Array(0..<1000), "in order, none lost, none twice")
            #expect(received.values.allSatisfy { $0.count == length && $0[4...].allSatisfy { $0 == 0 } })
            // The peer's flood task has ended (a second flood would otherwise be refused as busy).
            #expect(await peerLogs(peer, "flood of 1000 x \(length) B sent"))
        }
        await closeGATT(link)
    }

    /// Unsubscribing stops notifications: during an endless flood, no value arrives after
    /// the Write Response of the CCCD write, and the number we received is exactly the
    /// number the peer says it sent (it checks the CCCD before every batch).
    @Test func gattUnsubscribeStopsNotifications() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let link = try await openGATT(peer)
        let client = link.client
        let stream = try await link.characteristic(peerUUID(7), in: peerUUID(1))
        let control = try await link.characteristic(peerUUID(6), in: peerUUID(1))
        let cccd = try await link.cccd(of: stream)
        let received = Arrivals<[UInt8]>()
        client.addValueListener(stream.valueHandle) { received.append(Array($0)) }
        try await client.setNotifications(.notify, for: stream)

        let total: UInt32 = 100_000_000
        try await client.write(control.valueHandle, ControlPoint.flood(count: total, length: 20))
        #expect(await received.waitFor(200))
        try await client.setNotifications(.none, for: stream)
        // The Write Response is in: the peer stopped before it (the CCCD was already 0).
        let atResponse = received.values.count
        #expect(try await client.read(cccd.handle) == [0x00, 0x00])
        #expect(received.values.count == atResponse, "nothing after the unsubscribe's Write Response")
        #expect(atResponse < Int(total))
        let sequence = received.values.map {
            UInt32($0[0]) | UInt32($0[1]) << 8 | UInt32($0[2]) << 16 | UInt32($0[3]) << 24
        }
        #expect(sequence == Array(0..<UInt32(atResponse)))
        #expect(
            await peerLogs(peer, "(stopped early: \(atResponse) of \(total))"),
            "the peer sent exactly what we received: \(peer.log.suffix(600))")
        // And the peer knows: a new flood is refused until we subscribe again.
        let refused = await failure { () async throws(GATTError) in
            try await client.write(control.valueHandle, ControlPoint.flood(count: 10, length: 20))
        }
        #expect(refused?.code == .cccdImproperlyConfigured)
        #expect(received.values.count == atResponse)
        await closeGATT(link)
    }

    /// Indications are confirmed: control point 0x04 makes the peer indicate B1E70003
    /// twice (after a refusal by name while not subscribed). Bumble sends one indication at a time per bearer and holds the next until
    /// the previous one is confirmed (or its 30 s GATT timeout passes), so the second
    /// arriving well inside 10 s proves the first was confirmed. The CCCD reads back 0x0002,
    /// and written back to 0 directly, reads 0 and the peer refuses to indicate again.
    @Test func gattIndicationsAreConfirmed() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let link = try await openGATT(peer)
        let client = link.client
        let indicated = try await link.characteristic(peerUUID(3), in: peerUUID(1))
        let control = try await link.characteristic(peerUUID(6), in: peerUUID(1))
        let cccd = try await link.cccd(of: indicated)

        let first = Array("first".utf8), second = Array("second one".utf8)
        let refused = await failure { () async throws(GATTError) in
            try await client.write(control.valueHandle, ControlPoint.indicate(first))
        }
        #expect(refused?.code == .cccdImproperlyConfigured, "no indication without a subscription")

        let received = Arrivals<[UInt8]>()
        var kinds: [Bool] = []
        client.onValue = { handle, _, indication in if handle == indicated.valueHandle { kinds.append(indication) } }
        client.addValueListener(indicated.valueHandle) { received.append(Array($0)) }
        try await client.setNotifications(.indicate, for: indicated)
        #expect(try await client.read(cccd.handle) == [0x02, 0x00])

        try await client.write(control.valueHandle, ControlPoint.indicate(first))
        try await client.write(control.valueHandle, ControlPoint.indicate(second))
        #expect(await received.waitFor(2))
        #expect(received.values == [first, second])
        #expect(kinds == [true, true], "both came as indications")
        #expect(try await client.read(indicated.valueHandle) == second)
        #expect(!peer.log.contains("GATT Indicate timeout"))

        // The descriptor written directly: off again, read back, and the peer knows it.
        try await client.write(cccd.handle, [0x00, 0x00])
        #expect(try await client.read(cccd.handle) == [0x00, 0x00])
        let off = await failure { () async throws(GATTError) in
            try await client.write(control.valueHandle, ControlPoint.indicate(first))
        }
        #expect(off?.code == .cccdImproperlyConfigured)
        #expect(received.values.count == 2)
        await closeGATT(link)
    }

    // MARK: MTU

    /// The MTU exchange: by default we offer 517 and Bumble's server offers its maximum,
    /// 517 (GATT_SERVER_DEFAULT_MAX_MTU), so ATT_MTU = min(ours, theirs) = 517; with
    /// `preferredMTU: 23` it stays 23; in between, ours wins. Each time, the peer's
    /// indication of the longest value the control point can carry arrives whole: ATT_MTU
    /// - 4 bytes (the Write Request also carries the command byte), at most 511 (Bumble
    /// refuses written values over 512 bytes).
    @Test func gattMTUExchangeTakesTheSmallerOfBoth() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        for (preferred, expected) in [(ATTBearer.maximumMTU, 517), (23, 23), (185, 185)] as [(UInt16, Int)] {
            let link = try await openGATT(peer, preferredMTU: preferred, exchangeMTU: false)
            #expect(link.bearer.mtu == ATTBearer.defaultMTU, "23 until exchanged")
            #expect(try await link.client.exchangeMTU() == expected)
            #expect(link.bearer.mtu == expected)
            #expect(link.client.maximumWriteLength == expected - 3)

            let indicated = try await link.characteristic(peerUUID(3), in: peerUUID(1))
            let control = try await link.characteristic(peerUUID(6), in: peerUUID(1))
            let received = Arrivals<[UInt8]>()
            link.client.addValueListener(indicated.valueHandle) { received.append(Array($0)) }
            try await link.client.setNotifications(.indicate, for: indicated)
            let biggest = (0..<min(expected - 4, 511)).map { UInt8(truncatingIfNeeded: $0) }
            try await link.client.write(control.valueHandle, ControlPoint.indicate(biggest))
            #expect(await received.waitFor(1))
            #expect(received.values == [biggest])
            await closeGATT(link)
        }
    }
}
