import ATT
import BluetoothCore
import GATT
import HCI
import Testing

/// The GATT server for apps, queried by our own client over bearers wired back to back: one
/// link per client, so what one client sets (its CCCDs, its prepare queue) is seen to stay
/// its own.
@Suite @BluetoothActor
struct GATTServerTests {
    final class Link {
        var client: ATTBearer!
        var server: ATTBearer!
        /// The bearers' clock. It never moves: these tests are about what the server
        /// answers, and ATT's 30 s timeout, on the real clock, fired in them while a handler's
        /// `Task.yield()` waited for a cooperative pool that other tests kept busy.
        let clock = ManualClock()
        /// Every PDU the server side sent, in order.
        var sent: [[UInt8]] = []
    }

    /// Every link a test made, kept for as long as the test runs: the bearers' closures hold
    /// theirs weakly, as a test may end with a PDU still to send (the confirmation of an
    /// indication it awaited), and what a finished test's link would carry is dropped.
    final class Links {
        var all: [Link] = []
    }
    let links = Links()

    func makeLink(_ gattServer: GATTServer, connection: ConnectionHandle = 1) -> (Link, GATTClient) {
        let link = Link()
        links.all.append(link)
        link.client = ATTBearer(connection: connection, clock: link.clock, logger: .silent) {
            [weak link] (pdu: [UInt8]) throws(HCIError) in
            guard let link else { return }
            Task { @BluetoothActor [link] in link.server.receive(pdu[...]) }
        }
        link.server = ATTBearer(connection: connection, clock: link.clock, logger: .silent) {
            [weak link] (pdu: [UInt8]) throws(HCIError) in
            guard let link else { return }
            link.sent.append(pdu)
            Task { @BluetoothActor [link] in link.client.receive(pdu[...]) }
        }
        link.server.server = gattServer
        return (link, GATTClient(bearer: link.client))
    }

    static let service = BluetoothUUID("B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A00")!
    static let readable = BluetoothUUID(UInt16(0xFF01))
    static let writable = BluetoothUUID(UInt16(0xFF02))
    static let notifying = BluetoothUUID(UInt16(0xFF03))
    static let indicating = BluetoothUUID(UInt16(0xFF04))
    static let secret = BluetoothUUID(UInt16(0xFF05))

    /// A server with one service of five characteristics. The writable and the secret one
    /// declare Reliable Write (Part G, 3.3.3.1): the tests write them together.
    func makeServer() throws -> (GATTServer, ServedService) {
        let server = GATTServer(deviceName: "Bluejay peripheral")
        let reliable = MutableDescriptor(uuid: BluetoothUUID(UInt16(0x2900)), value: [0x01, 0x00])
        let served = try server.add(
            ServiceDefinition(
                uuid: Self.service,
                characteristics: [
                    CharacteristicDefinition(
                        uuid: Self.readable, properties: [.read], value: Array("hello".utf8),
                        descriptors: [.userDescription("greeting")]),
                    CharacteristicDefinition(
                        uuid: Self.writable, properties: [.read, .write, .writeWithoutResponse, .extendedProperties],
                        permissions: [.read, .write, .writeWithoutResponse], value: [0], descriptors: [reliable]),
                    CharacteristicDefinition(uuid: Self.notifying, properties: [.notify]),
                    CharacteristicDefinition(uuid: Self.indicating, properties: [.read, .indicate], value: [0]),
                    CharacteristicDefinition(
                        uuid: Self.secret, properties: [.read, .write, .extendedProperties],
                        permissions: [.read, .write, .readEncrypted, .writeEncrypted], value: Array("secret".utf8),
                        descriptors: [reliable]),
                ]))
        return (server, served)
    }

    @Test func aClientDiscoversTheServiceWhereTheServerPutIt() async throws {
        let (server, served) = try makeServer()
        let before = LocalGATTServer().databaseHashValue
        #expect(server.base.databaseHashValue != before, "adding a service changes the Database Hash")
        let (_, client) = makeLink(server)
        let database = try await client.discoverAll()
        let serviceUUIDs: [BluetoothUUID] = [.genericAccess, .genericAttribute, Self.service]
        #expect(database.services.map(\.uuid) == serviceUUIDs)
        let service = try #require(database.services.last)
        #expect(service == served.service)
        let characteristics = try await client.characteristics(of: service)
        #expect(characteristics.map(\.uuid) == served.characteristics.map(\.uuid))
        #expect(characteristics.map(\.valueHandle) == served.characteristics.map(\.valueHandle))
        #expect(characteristics.map(\.properties) == served.characteristics.map(\.properties))
        let descriptors = try await client.descriptors(of: characteristics[0])
        let userDescription: [BluetoothUUID] = [BluetoothUUID(UInt16(0x2901))]
        #expect(descriptors.map(\.uuid) == userDescription)
        let greeting: [UInt8] = Array("greeting".utf8)
        #expect(try await client.read(descriptors[0].handle) == greeting)
        let notifyDescriptors = try await client.descriptors(of: characteristics[2])
        let cccds: [AttributeHandle] = [served.characteristics[2].cccdHandle].compactMap {
            (handle: AttributeHandle?) -> AttributeHandle? in handle
        }
        #expect(notifyDescriptors.map(\.handle) == cccds)
        // The client sees the hash the server computed.
        #expect(try await client.read(LocalGATTServer.databaseHashHandle) == server.base.databaseHashValue)
    }

    @Test func readsAndWritesGoToTheAppsAsyncHandlers() async throws {
        let (server, served) = try makeServer()
        let readable = served.characteristics[0].valueHandle, writable = served.characteristics[1].valueHandle
        var reads: [GATTReadRequest] = []
        server.setReadHandler(for: readable) { request in
            reads.append(request)
            await Task.yield()
            return .success(Array("hello from a handler, longer than one read".utf8))
        }
        var writes: [[UInt8]] = []
        server.setWriteHandler(for: writable) { request in
            await Task.yield()
            writes.append(request.value)
            return request.value == [0xEE] ? .valueNotAllowed : nil
        }
        let (_, client) = makeLink(server)
        // ATT_MTU 23: the long read takes Read then Read Blob, both from the handler.
        #expect(try await client.readLong(readable) == Array("hello from a handler, longer than one read".utf8))
        #expect(reads.map(\.offset) == [0, 22])
        try await client.write(writable, [0x01, 0x02])
        #expect(try await client.read(writable) == [0x01, 0x02])
        do {
            try await client.write(writable, [0xEE]); Issue.record("the handler's refusal must reach the client")
        } catch {
            #expect(error.code == .valueNotAllowed)
        }
        #expect(try await client.read(writable) == [0x01, 0x02], "a refused write leaves the value")
        // A command, then a request: answered in order, the command's handler first.
        try client.writeWithoutResponse(writable, [0x03])
        try await client.write(writable, [0x04])
        #expect(writes == [[0x01, 0x02], [0xEE], [0x03], [0x04]])
    }

    /// The handle an Error Response named.
    static func refusedHandle(_ error: GATTError) -> AttributeHandle? {
        if case let .att(.errorResponse(response)) = error { response.handle } else { nil }
    }

    /// Core Vol 3, Part G, 4.8: a characteristic value is read by Read, Read Blob, Read Using
    /// Characteristic UUID (Read By Type), Read Multiple and Read Multiple Variable; each
    /// serves the value the app's handler gives now, never one it gave before.
    @Test func everyKindOfReadServesTheHandlersCurrentValue() async throws {
        let (server, served) = try makeServer()
        let readable = served.characteristics[0].valueHandle, indicating = served.characteristics[3].valueHandle
        var count = 0
        var reads: [GATTReadRequest] = []
        server.setReadHandler(for: readable) { request in
            reads.append(request)
            count += 1
            await Task.yield()
            return .success(Array("value \(count)".utf8))
        }
        let (_, client) = makeLink(server)
        #expect(try await client.read(readable) == Array("value 1".utf8))
        let byType = try await client.read(uuid: Self.readable)
        #expect(byType == [HandleValue(handle: readable, value: Array("value 2".utf8))])
        #expect(try await client.readMultiple([readable, indicating]) == Array("value 3".utf8) + [0])
        #expect(try await client.readMultipleVariable([indicating, readable]) == [[0], Array("value 4".utf8)])
        #expect(try await client.readBlob(readable, offset: 6) == Array("5".utf8))
        #expect(reads.map(\.offset) == [0, 0, 0, 0, 6], "each read asks the handler once, with its offset")
        #expect(reads.allSatisfy { $0.uuid == Self.readable && $0.handle == readable })

        // The handler's refusal is each request's answer, with the handle it refused.
        server.setReadHandler(for: readable) { _ in .failure(.insufficientResources) }
        var refusals: [GATTError] = []
        do { _ = try await client.read(uuid: Self.readable) } catch { refusals.append(error) }
        do { _ = try await client.readMultiple([indicating, readable]) } catch { refusals.append(error) }
        do { _ = try await client.readMultipleVariable([indicating, readable]) } catch { refusals.append(error) }
        #expect(refusals.map(\.code) == [ATTErrorCode](repeating: .insufficientResources, count: 3))
        #expect(refusals.map(Self.refusedHandle) == [AttributeHandle?](repeating: readable, count: 3))
    }

    /// A handler the app removes while a request that reaches it waits on another handler
    /// is not asked: the stored value is served instead.
    @Test func aHandlerRemovedMidRequestIsNotAsked() async throws {
        let (server, served) = try makeServer()
        let readable = served.characteristics[0].valueHandle, indicating = served.characteristics[3].valueHandle
        var askedLater = false
        server.setReadHandler(for: indicating) { _ in
            askedLater = true
            return .success([9])
        }
        server.setReadHandler(for: readable) { _ in
            server.setReadHandler(for: indicating, nil)
            return .success([1])
        }
        let (_, client) = makeLink(server)
        #expect(try await client.readMultipleVariable([readable, indicating]) == [[1], [0]])
        #expect(!askedLater)
    }

    /// Part F, 3.4.4.1: Read By Type lists attributes of the type while they can be read; a
    /// handler refusing a later one ends the list before it, without refusing the request.
    @Test func readByTypeEndsBeforeAValueItsHandlerRefuses() async throws {
        let server = GATTServer()
        let twin = BluetoothUUID(UInt16(0xFF10))
        let served = try server.add(
            ServiceDefinition(
                uuid: Self.service,
                characteristics: [
                    CharacteristicDefinition(uuid: twin, properties: [.read], value: [1, 1]),
                    CharacteristicDefinition(uuid: twin, properties: [.read], value: [2, 2]),
                ]))
        let first = served.characteristics[0].valueHandle, second = served.characteristics[1].valueHandle
        server.setReadHandler(for: first) { _ in .success([3, 3]) }
        server.setReadHandler(for: second) { _ in .failure(.readNotPermitted) }
        let (_, client) = makeLink(server)
        let values = try await client.readFirst(uuid: twin)
        #expect(values == HandleValue(handle: first, value: [3, 3]))
        server.setReadHandler(for: second) { _ in .success([4, 4]) }
        #expect(try await client.read(uuid: twin).map(\.value) == [[3, 3], [4, 4]])
    }

    /// Part F, 3.4.6.3: a reliable write whose handler refuses one value writes none, and the
    /// queue is gone: the next Execute Write has nothing to write.
    @Test func aRefusedExecuteWriteWritesNothingAndEmptiesTheQueue() async throws {
        let (server, served) = try makeServer()
        let writable = served.characteristics[1].valueHandle, secret = served.characteristics[4].valueHandle
        server.linkSecurity = { _ in .encrypted }
        var asked: [[UInt8]] = []
        server.setWriteHandler(for: writable) { request in
            asked.append(request.value)
            return .valueNotAllowed
        }
        var written: [GATTWriteRequest] = []
        server.onValueWritten = { written.append($0) }
        let (_, client) = makeLink(server)
        do {
            try await client.reliableWrite([
                HandleValue(handle: secret, value: [7]), HandleValue(handle: writable, value: [9, 9]),
            ])
            Issue.record("the handler's refusal must reach the client")
        } catch {
            #expect(error.code == .valueNotAllowed)
            #expect(Self.refusedHandle(error) == writable)
        }
        #expect(asked == [[9, 9]])
        #expect(server.value(of: secret) == Array("secret".utf8), "nothing of a refused queue is written")
        #expect(server.value(of: writable) == [0])
        #expect(written.isEmpty)
        server.setWriteHandler(for: writable, nil)
        try await client.reliableWrite([HandleValue(handle: writable, value: [5])])
        #expect(server.value(of: writable) == [5])
        #expect(server.value(of: secret) == Array("secret".utf8), "the refused queue's parts are gone")
        #expect(written.map(\.value) == [[5]])
    }

    @Test func permissionsAreEnforcedWithTheSpecsCodes() async throws {
        let (server, served) = try makeServer()
        var security = LinkSecurity.none
        server.linkSecurity = { _ in security }
        let (_, client) = makeLink(server)
        let notifying = served.characteristics[2].valueHandle, secret = served.characteristics[4].valueHandle
        do { _ = try await client.read(notifying); Issue.record("expected readNotPermitted") } catch {
            #expect(error.code == .readNotPermitted)
        }
        do {
            try await client.write(served.characteristics[0].valueHandle, [1]);
            Issue.record("expected writeNotPermitted")
        } catch {
            #expect(error.code == .writeNotPermitted)
        }
        do { _ = try await client.read(secret); Issue.record("expected insufficientEncryption") } catch {
            #expect(error.code == .insufficientEncryption)
        }
        do { try await client.write(secret, [1]); Issue.record("expected insufficientEncryption") } catch {
            #expect(error.code == .insufficientEncryption)
        }
        security = .encrypted
        #expect(try await client.read(secret) == Array("secret".utf8))
        do {
            try await client.write(served.characteristics[1].valueHandle, Array(repeating: 0, count: 513));
            Issue.record("expected a length error")
        } catch {
            // Our client refuses it before sending: 512 is the limit on both sides.
            guard case .valueTooLong = error else { Issue.record("unexpected \(error)"); return }
        }
    }

    @Test func eachClientHasItsOwnCCCDsAndNotificationsArriveInOrder() async throws {
        let (server, served) = try makeServer()
        let notifying = served.characteristics[2]
        var events: [GATTSubscription] = []
        server.onSubscriptionChanged = { events.append($0) }
        let (_, first) = makeLink(server, connection: 1)
        let (_, second) = makeLink(server, connection: 2)
        let cccd = try #require(notifying.cccdHandle)
        try await first.configure(cccd, .notify)
        #expect(try await first.read(cccd) == [0x01, 0x00])
        #expect(try await second.read(cccd) == [0x00, 0x00], "another client's CCCD is its own")
        let subscribed = GATTSubscription(
            connection: 1, handle: notifying.valueHandle, uuid: Self.notifying, notifications: true, indications: false)
        #expect(events == [subscribed])
        do {
            try await second.configure(cccd, .indicate); Issue.record("indications are not among its properties")
        } catch {
            #expect(error.code == .cccdImproperlyConfigured)
        }
        do { try await second.write(cccd, [0x01]); Issue.record("a CCCD holds two octets") } catch {
            #expect(error.code == .invalidAttributeValueLength)
        }

        var received: [[UInt8]] = []
        let done = BluetoothCore.Expectation<Void>()
        _ = first.addValueListener(notifying.valueHandle) { value in
            received.append(Array(value))
            if received.count == 1000 { done.fulfill(()) }
        }
        var secondReceived = 0
        _ = second.addValueListener(notifying.valueHandle) { _ in secondReceived += 1 }
        for index in 0..<1000 {
            let value: [UInt8] = [UInt8(index & 0xFF), UInt8(index >> 8)]
            #expect(server.notify(notifying.valueHandle, value: value) == [1])
        }
        await done.value()
        // Typed outside #expect: Swift 6.0's type checker gave up on it inside.
        let sent: [[UInt8]] = (0..<1000).map { (index: Int) -> [UInt8] in [UInt8(index & 0xFF), UInt8(index >> 8)] }
        #expect(received == sent)
        #expect(secondReceived == 0)
        // Gone: its subscription goes with it.
        server.linkEnded(1)
        #expect(server.subscribers(of: notifying.valueHandle).isEmpty)
    }

    @Test func indicationsGoOneAtATimeAndEachIsConfirmed() async throws {
        let (server, served) = try makeServer()
        let indicating = served.characteristics[3]
        let (link, client) = makeLink(server)
        do {
            try await server.indicate(indicating.valueHandle, value: [1], to: 1); Issue.record("not subscribed")
        } catch {
            guard case .protocolError = error else { Issue.record("unexpected \(error)"); return }
        }
        try await client.configure(try #require(indicating.cccdHandle), .indicate)
        var received: [[UInt8]] = []
        _ = client.addValueListener(indicating.valueHandle) { received.append(Array($0)) }
        // Asked in this order on the stack's actor: child tasks of `async let` start on the
        // global executor, in any order under load (CI once had [1], [3], [2]).
        let one = Task { @BluetoothActor in try await server.indicate(indicating.valueHandle, value: [1], to: 1) }
        let two = Task { @BluetoothActor in try await server.indicate(indicating.valueHandle, value: [2], to: 1) }
        let three = Task { @BluetoothActor in try await server.indicate(indicating.valueHandle, value: [3], to: 1) }
        for indication in [one, two, three] { try await indication.value }
        #expect(received == [[1], [2], [3]])
        #expect(link.server.indicationsPending == 0)
        // Never two indications without a confirmation between them.
        var outstanding = 0
        for pdu in link.sent where pdu.first == 0x1D {
            outstanding += 1
            #expect(outstanding == 1)
            outstanding = 0  // the client confirms each before the next is sent (checked by the order above)
        }
        #expect(link.sent.filter { $0.first == 0x1D }.count == 3)
    }

    @Test func longAndReliableWritesReachTheHandlerWhole() async throws {
        let (server, served) = try makeServer()
        let writable = served.characteristics[1].valueHandle, secret = served.characteristics[4].valueHandle
        server.linkSecurity = { _ in .encrypted }
        var writes: [GATTWriteRequest] = []
        server.setWriteHandler(for: writable) { request in
            writes.append(request)
            return nil
        }
        let (_, client) = makeLink(server)
        let long = (0..<300).map { UInt8($0 % 256) }
        try await client.writeLong(writable, long)
        #expect(writes.map(\.value) == [long])
        #expect(try await client.readLong(writable) == long)
        try await client.reliableWrite([
            HandleValue(handle: writable, value: [9, 9]), HandleValue(handle: secret, value: [7]),
        ])
        #expect(writes.last?.value == [9, 9])
        #expect(server.value(of: secret) == [7])
        // The queue is bounded: past it, Prepare Queue Full, and the value stays.
        server.attributes.maximumPreparedOctets = 100
        do { try await client.writeLong(writable, long); Issue.record("expected prepareQueueFull") } catch {
            #expect(error.code == .prepareQueueFull)
        }
        #expect(server.value(of: writable) == [9, 9])
    }

    @Test func aServiceAddedLaterIsIndicatedToServiceChangedSubscribers() async throws {
        let (server, _) = try makeServer()
        let (_, client) = makeLink(server)
        let heard = try await watchServiceChanged(client)
        _ = try await client.discoverAll()
        let hash = server.base.databaseHashValue
        let added = try server.add(
            ServiceDefinition(
                uuid: BluetoothUUID(UInt16(0x180F)),
                characteristics: [
                    CharacteristicDefinition(uuid: BluetoothUUID(UInt16(0x2A19)), properties: [.read], value: [87])
                ]))
        await heard.told.value()
        #expect(server.base.databaseHashValue != hash)
        #expect(try await client.read(added.characteristics[0].valueHandle) == [87])
    }

    /// What a client hears of Service Changed: the services it was told are no longer
    /// valid, and a signal at the first indication.
    @BluetoothActor final class Invalidations {
        var services: [Service] = []
        let told = BluetoothCore.Expectation<Void>()
    }

    /// Subscribes `client` to Service Changed and collects what it is told.
    func watchServiceChanged(_ client: GATTClient) async throws -> Invalidations {
        #expect(try await client.subscribeToServiceChanged())
        let heard = Invalidations()
        client.onServicesInvalidated = { services in
            heard.services += services
            heard.told.fulfill(())
        }
        return heard
    }
}
