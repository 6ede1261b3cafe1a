import ATT
import BluetoothCore
import GATT
import HCI
import Testing

/// The app's yes or no, changed by the test while the authorizer holds it.
@BluetoothActor final class Switch {
    var on = false
}

/// Authorization as the app's decision (Core Vol 3, Part F, 3.2.5): the server asks the
/// app's authorizer before it serves a read or write of an attribute that needs it.
extension GATTServerTests {
    static let authorized = BluetoothUUID(UInt16(0xFF06))
    static let authorizedDescriptor = BluetoothUUID(UInt16(0xFF07))

    /// A refusal is Insufficient Authorization and touches neither the handler nor the
    /// value; a grant serves the request as usual (handler, stored value, long write). The
    /// authorizer sees each request; Read By Type and Read Multiple are refused without
    /// asking, and without an authorizer everything that needs one is refused.
    @Test func theAppAuthorizesReadsAndWrites() async throws {
        let server = GATTServer(deviceName: "Bluejay peripheral")
        let served = try server.add(
            ServiceDefinition(
                uuid: Self.service,
                characteristics: [
                    CharacteristicDefinition(
                        uuid: Self.authorized, properties: [.read, .write, .writeWithoutResponse],
                        permissions: [.read, .write, .writeWithoutResponse, .readAuthorized, .writeAuthorized],
                        value: [1],
                        descriptors: [
                            MutableDescriptor(
                                uuid: Self.authorizedDescriptor, value: [0xD0], permissions: [.read, .readAuthorized])
                        ]),
                    CharacteristicDefinition(uuid: Self.readable, properties: [.read], value: [2]),
                ]))
        let value = served.characteristics[0].valueHandle, plain = served.characteristics[1].valueHandle
        let descriptor = value + 1
        let (_, client) = makeLink(server)

        // No authorizer: refused, the value untouched.
        do { _ = try await client.read(value); Issue.record("expected insufficientAuthorization") } catch {
            #expect(error.code == .insufficientAuthorization)
        }

        let allow = Switch()
        var asked: [GATTAuthorizationRequest] = []
        server.authorizer = { request in
            asked.append(request)
            await Task.yield()
            return allow.on
        }
        var handled: [GATTWriteRequest] = []
        server.setWriteHandler(for: value) { request in
            handled.append(request)
            return nil
        }
        var reads = 0
        server.setReadHandler(for: value) { _ in
            reads += 1
            return .success(server.value(of: value) ?? [])
        }
        do { _ = try await client.read(value); Issue.record("expected insufficientAuthorization") } catch {
            #expect(error.code == .insufficientAuthorization)
        }
        do { try await client.write(value, [9]); Issue.record("expected insufficientAuthorization") } catch {
            #expect(error.code == .insufficientAuthorization)
        }
        do {
            try await client.writeLong(value, Array(repeating: 7, count: 40));
            Issue.record("expected insufficientAuthorization")
        } catch {
            #expect(error.code == .insufficientAuthorization)
        }
        try client.writeWithoutResponse(value, [8])
        do { _ = try await client.read(descriptor); Issue.record("expected insufficientAuthorization") } catch {
            #expect(error.code == .insufficientAuthorization)
        }
        // Answered in order after the refused command: the command was refused too.
        #expect(try await client.read(plain) == [2], "an attribute without authorization is served without asking")
        #expect(handled.isEmpty && reads == 0, "a refused request reaches no handler")
        #expect(server.value(of: value) == [1], "a refused write leaves the value")
        let accesses: [GATTAuthorizationRequest.Access] = [.read, .write, .write, .write, .read]
        #expect(asked.map(\.access) == accesses)
        let refusedWrite = GATTAuthorizationRequest(
            connection: 1, handle: value, uuid: Self.authorized, access: .write, value: [9])
        #expect(asked[1] == refusedWrite)
        #expect(asked[4].uuid == Self.authorizedDescriptor)

        allow.on = true
        #expect(try await client.read(value) == [1])
        try await client.write(value, [3])
        let written: [UInt8] = [3]
        #expect(server.value(of: value) == written && handled.map(\.value) == [written])
        let longValue = [UInt8](repeating: 7, count: 40)
        try await client.writeLong(value, longValue)
        #expect(server.value(of: value) == longValue)
        #expect(try await client.read(descriptor) == [0xD0])
        #expect(reads == 1)

        // Not asked: Read By Type and Read Multiple cannot be served piecemeal.
        let before = asked.count
        do {
            _ = try await client.read(uuid: Self.authorized); Issue.record("expected insufficientAuthorization")
        } catch {
            #expect(error.code == .insufficientAuthorization)
        }
        do {
            _ = try await client.readMultiple([plain, value]); Issue.record("expected insufficientAuthorization")
        } catch {
            #expect(error.code == .insufficientAuthorization)
        }
        #expect(asked.count == before)
    }

    /// Security is checked before the app is asked: an attribute that needs encryption as
    /// well is refused for want of it without bothering the authorizer.
    @Test func securityComesBeforeAuthorization() async throws {
        let server = GATTServer(deviceName: "Bluejay peripheral")
        let served = try server.add(
            ServiceDefinition(
                uuid: Self.service,
                characteristics: [
                    CharacteristicDefinition(
                        uuid: Self.authorized, properties: [.read],
                        permissions: [.read, .readEncrypted, .readAuthorized], value: [1])
                ]))
        var asked = 0
        server.authorizer = { _ in
            asked += 1
            return true
        }
        var security = LinkSecurity.none
        server.linkSecurity = { _ in security }
        let (_, client) = makeLink(server)
        let value = served.characteristics[0].valueHandle
        do { _ = try await client.read(value); Issue.record("expected insufficientEncryption") } catch {
            #expect(error.code == .insufficientEncryption)
        }
        #expect(asked == 0)
        security = .encrypted
        #expect(try await client.read(value) == [1])
        #expect(asked == 1)
    }
}
