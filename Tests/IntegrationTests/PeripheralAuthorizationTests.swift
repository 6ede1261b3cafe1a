import Bluejay
import BluetoothCore
import Foundation
import GATT
import HCI
import HCITestSupport
import Testing

/// The app's yes or no, changed by the test while the authorizer holds it.
@BluetoothActor final class AuthorizationSwitch {
    var on = false
}

extension IntegrationTests {
    /// Authorization as the app's callback, against a Bumble central: a characteristic
    /// declared with read and write authorization is refused with Insufficient
    /// Authorization (0x08) while the app says no, its handler not run and its value
    /// untouched; once the app says yes, the same central reads and writes it.
    @Test(.hangGuard) func theAppAuthorizesACentralsReadsAndWrites() async throws {
        let rig = try await PeripheralRig(name: "Bluejay Authz")
        defer { rig.close() }
        let central = rig.central, manager = rig.manager
        var events = manager.events().makeAsyncIterator()
        let served = try manager.add(
            MutableService(
                uuid: Self.periphService,
                characteristics: [
                    MutableCharacteristic(
                        uuid: Self.periphSecret, properties: [.read, .write],
                        permissions: [.read, .write, .readAuthorized, .writeAuthorized], value: Array("kept".utf8))
                ]))
        let handle = served.characteristics[0].valueHandle
        let allow = AuthorizationSwitch()
        var asked: [GATTAuthorizationRequest] = []
        manager.onAuthorize { request in
            asked.append(request)
            return allow.on
        }
        var written: [[UInt8]] = []
        try manager.onWrite(Self.periphSecret) { request in
            written.append(request.value)
            return nil
        }
        try await manager.startAdvertising("Bluejay Authz", uuids: [Self.periphService])

        try await central.connect(toAdvertised: "Bluejay Authz")
        guard case let .connected(link, _)? = await events.next() else { Issue.record("no connection event"); return }
        try await central.send(["op": "discover"])
        do {
            try await central.send(["op": "read", "handle": Int(handle.rawValue)])
            Issue.record("the read needs the app's authorization")
        } catch let error as CentralError {
            #expect(error.attError == Int(ATTErrorCode.insufficientAuthorization.rawValue))
        }
        do {
            try await central.send(["op": "write", "handle": Int(handle.rawValue), "value": "ee"])
            Issue.record("the write needs the app's authorization")
        } catch let error as CentralError {
            #expect(error.attError == Int(ATTErrorCode.insufficientAuthorization.rawValue))
        }
        #expect(written.isEmpty, "a refused write reaches no handler")
        #expect(try manager.value(of: Self.periphSecret) == Array("kept".utf8), "a refused write leaves the value")
        #expect(
            asked == [
                GATTAuthorizationRequest(connection: link, handle: handle, uuid: Self.periphSecret, access: .read),
                GATTAuthorizationRequest(
                    connection: link, handle: handle, uuid: Self.periphSecret, access: .write, value: [0xEE]),
            ])

        allow.on = true
        #expect(
            hexBytes(try await central.send(["op": "read", "handle": Int(handle.rawValue)])["value"])
                == Array("kept".utf8))
        try await central.send(["op": "write", "handle": Int(handle.rawValue), "value": "0102"])
        #expect(written == [[0x01, 0x02]])
        #expect(try manager.value(of: Self.periphSecret) == [0x01, 0x02])
        #expect(asked.count == 4)
    }
}
