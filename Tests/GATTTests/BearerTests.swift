import ATT
import BluetoothCore
import HCI
import HCITestSupport
import Testing

/// The ATT bearer against scripted PDUs: one request at a time, matching, timeout, closing,
/// server-initiated PDUs and the peer's own requests.
@Suite @BluetoothActor
struct BearerTests {
    @Test func mtuExchangeTakesTheSmallerReceiveMTU() async throws {
        let server = ScriptedServer()
        server.expect("02 05 02", "03 F7 00")
        let mtu = try await server.bearer.exchangeMTU()
        #expect(mtu == 247)
        #expect(server.bearer.mtu == 247)
        server.verify()
    }

    @Test func mtuOf23StaysTheDefault() async throws {
        let server = ScriptedServer(mtu: 23)
        server.expect("02 17 00", "03 05 02")
        #expect(try await server.bearer.exchangeMTU() == 23)
        server.verify()
    }

    @Test func serverMTUBelow23LeavesTheDefault() async throws {
        let server = ScriptedServer()
        server.expect("02 05 02", "03 10 00")
        // Part F, 3.4.2.2: ATT_MTU stays 23; the link goes on.
        #expect(try await server.bearer.exchangeMTU() == 23)
        #expect(server.bearer.isOpen)
        #expect(server.fatalErrors.isEmpty)
    }

    @Test func requestsGoOutOneAtATimeInOrder() async throws {
        let server = ScriptedServer()
        let bearer = server.bearer!
        server.expect("0A 03 00")  // answered below, once the others are queued
        var tasks: [Task<ReadResponse, any Error>] = []
        for (index, handle) in [AttributeHandle(3), 5, 7].enumerated() {
            tasks.append(
                Task { @BluetoothActor in
                    try await bearer.request(ReadRequest(handle: handle), expecting: ReadResponse.self)
                })
            while !bearer.hasOutstandingRequest || bearer.queuedRequests < index { await Task.yield() }
        }
        #expect(server.sent == [bytes("0A 03 00")], "the others wait for the first answer")
        server.expect("0A 05 00", "0B 02")
        server.expect("0A 07 00", "0B 03")
        server.push("0B 01")
        var values: [[UInt8]] = []
        for task in tasks { values.append(Array(try await task.value.value)) }
        #expect(values == [[1], [2], [3]])
        #expect(server.sent == [bytes("0A 03 00"), bytes("0A 05 00"), bytes("0A 07 00")])
        server.verify()
    }

    @Test func commandsAreNotHeldBehindAPendingRequest() async throws {
        let server = ScriptedServer()
        let bearer = server.bearer!
        // A request that is not answered yet.
        server.expect("0A 03 00")
        let pending = Task { @BluetoothActor in
            try await bearer.request(ReadRequest(handle: 3), expecting: ReadResponse.self)
        }
        while !bearer.hasOutstandingRequest { await Task.yield() }
        try bearer.send(command: WriteCommand(handle: 9, value: [0xAA]))
        #expect(server.sent.last == bytes("52 09 00 AA"))
        server.push("0B 42")
        #expect(try await pending.value.value == [0x42])
    }

    @Test func errorResponseEndsTheRequestWithTheCodeByName() async throws {
        let server = ScriptedServer()
        server.expect("0A 2E 00", "01 0A 2E 00 0F")
        do {
            _ = try await server.bearer.request(ReadRequest(handle: 0x2E), expecting: ReadResponse.self)
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .insufficientEncryption)
            #expect(error.description.contains("insufficientEncryption"))
        }
        #expect(server.bearer.isOpen)
    }

    @Test func aResponseForNoRequestIsDroppedAndTheBearerGoesOn() async throws {
        let server = ScriptedServer()
        server.push("0B 01 02")
        #expect(server.bearer.discardedPDUs == 1)
        #expect(server.bearer.isOpen)
        server.expect("0A 03 00", "0B 07")
        #expect(try await server.bearer.request(ReadRequest(handle: 3), expecting: ReadResponse.self).value == [7])
    }

    @Test func aResponseThatDoesNotMatchClosesTheBearerAndFailsTheQueue() async throws {
        let server = ScriptedServer()
        let bearer = server.bearer!
        server.expect("0A 03 00")
        let first = Task { @BluetoothActor in
            try await bearer.request(ReadRequest(handle: 3), expecting: ReadResponse.self)
        }
        while !bearer.hasOutstandingRequest { await Task.yield() }
        let second = Task { @BluetoothActor in
            try await bearer.request(ReadRequest(handle: 4), expecting: ReadResponse.self)
        }
        while bearer.queuedRequests < 1 { await Task.yield() }
        server.push("13")  // a Write Response to a Read Request
        for task in [first, second] {
            let result = await task.result
            guard case let .failure(error) = result, let error = error as? ATTError, case .protocolError = error else {
                Issue.record("expected a protocol error, got \(result)")
                continue
            }
        }
        #expect(!bearer.isOpen)
        #expect(server.fatalErrors.count == 1)
        await #expect(throws: ATTError.self) {
            try await bearer.request(ReadRequest(handle: 5), expecting: ReadResponse.self)
        }
        #expect(server.sent.count == 1, "nothing goes out after the bearer closed")
    }

    @Test func anErrorResponseForAnotherRequestIsAProtocolError() async throws {
        let server = ScriptedServer()
        server.expect("0A 03 00", "01 12 03 00 01")
        await #expect(throws: ATTError.self) {
            try await server.bearer.request(ReadRequest(handle: 3), expecting: ReadResponse.self)
        }
        #expect(!server.bearer.isOpen)
    }

    @Test func aMalformedResponseIsAProtocolError() async throws {
        let server = ScriptedServer()
        server.expect("02 05 02", "03 05")  // one byte short
        do {
            try await server.bearer.exchangeMTU()
            Issue.record("expected an error")
        } catch {
            guard case .protocolError = error else { Issue.record("got \(error)"); return }
        }
        #expect(!server.bearer.isOpen)
    }

    @Test func transactionTimeoutAfter30sClosesTheBearer() async throws {
        let server = ScriptedServer()
        let bearer = server.bearer!
        server.expect("0A 03 00")  // never answered
        let request = Task { @BluetoothActor in
            try await bearer.request(ReadRequest(handle: 3), expecting: ReadResponse.self)
        }
        while server.clock.sleeperCount == 0 { await Task.yield() }
        server.clock.advance(by: .seconds(29))
        await Task.yield()
        #expect(bearer.isOpen)
        server.clock.advance(by: .seconds(1))
        let result = await request.result
        #expect(throws: ATTError.timeout) { try result.get() }
        #expect(!bearer.isOpen)
        #expect(server.fatalErrors == [.timeout])
        // A late response changes nothing; a new request is refused.
        server.push("0B 01")
        await #expect(throws: ATTError.closed(.timeout)) {
            try await bearer.request(ReadRequest(handle: 3), expecting: ReadResponse.self)
        }
    }

    @Test func closingEndsEveryRequestOnce() async throws {
        let server = ScriptedServer()
        let bearer = server.bearer!
        server.expect("0A 03 00")
        let requests = (0..<3).map { index in
            Task { @BluetoothActor in
                try await bearer.request(ReadRequest(handle: 3 + index), expecting: ReadResponse.self)
            }
        }
        while !bearer.hasOutstandingRequest || bearer.queuedRequests < 2 { await Task.yield() }
        bearer.close(.disconnected(.connectionTimeout))
        for request in requests {
            let result = await request.result
            #expect(throws: ATTError.disconnected(.connectionTimeout)) { try result.get() }
        }
        #expect(server.fatalErrors.isEmpty, "a link that went down is not the bearer's fault")
    }

    @Test func notificationsArriveInOrderAndIndicationsAreConfirmedAfterDelivery() async throws {
        let server = ScriptedServer()
        var seen: [(AttributeHandle, [UInt8], Int)] = []
        server.bearer.onNotification = { handle, value in seen.append((handle, Array(value), server.sent.count)) }
        server.bearer.onIndication = { handle, value in seen.append((handle, Array(value), server.sent.count)) }
        for index in 0..<1000 {
            server.bearer.receive([0x1B, 0x26, 0x00, UInt8(index >> 8), UInt8(index & 0xFF)][...])
        }
        #expect(seen.count == 1000)
        #expect(seen.enumerated().allSatisfy { $0.element.1 == [UInt8($0.offset >> 8), UInt8($0.offset & 0xFF)] })
        server.push("1D 29 00 01 02")
        #expect(seen.last?.0 == 0x29)
        #expect(seen.last?.2 == 0, "delivered before the confirmation went out")
        #expect(server.sent == [[0x1E]])
    }

    @Test func multipleHandleValueNotificationIsSplit() async throws {
        let server = ScriptedServer()
        var seen: [(AttributeHandle, [UInt8])] = []
        server.bearer.onNotification = { seen.append(($0, Array($1))) }
        server.push("23 03 00 02 00 AA BB 05 00 01 00 CC")
        #expect(seen.map(\.0) == [3, 5])
        #expect(seen.map(\.1) == [[0xAA, 0xBB], [0xCC]])
    }

    @Test func aMalformedNotificationIsDroppedAndTheNextDelivered() async throws {
        let server = ScriptedServer()
        var seen: [AttributeHandle] = []
        server.bearer.onNotification = { handle, _ in seen.append(handle) }
        server.push("1B 03")
        server.push("1B 04 00 01")
        #expect(seen == [4])
        #expect(server.bearer.discardedPDUs == 1)
    }

    @Test func thePeersMTURequestIsAnswered() async throws {
        let server = ScriptedServer(mtu: 247)
        server.push("02 00 01")
        #expect(server.sent == [bytes("03 F7 00")])
        #expect(server.bearer.mtu == 247)
    }

    @Test func thePeersRequestsWithoutAServerAreRefused() async throws {
        let server = ScriptedServer()
        server.push("0A 03 00")
        server.push("52 03 00 01")  // a command: ignored, no answer
        #expect(server.sent == [bytes("01 0A 00 00 06")])
    }

    @Test func aPDULongerThanTheMTUIsRefusedBeforeSending() async throws {
        let server = ScriptedServer()
        await #expect(throws: ATTError.pduTooLong(length: 24, mtu: 23)) {
            try await server.bearer.request(
                WriteRequest(handle: 3, value: Array(repeating: 0, count: 21)[...]), expecting: WriteResponse.self)
        }
        #expect(server.sent.isEmpty)
    }
}
