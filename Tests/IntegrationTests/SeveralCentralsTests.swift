import Bluejay
import BluetoothCore
import Foundation
import GATT
import HCI
import HCITestSupport
import Testing

extension IntegrationTests {
    /// Two Bumble centrals (`peer.py --central --centrals 2`) on our peripheral at once:
    /// advertising resumes after the first connects, so the second finds us too; each
    /// subscribes and gets its own notifications, in order, interleaved with the other's;
    /// CCCDs are per client (one turns indications on, the other reads its own CCCD as
    /// 0x0000). Then one misbehaves (requests back to back without waiting, a malformed
    /// PDU, an unknown command) and drops its link: the other keeps reading and receiving
    /// every notification, in order.
    @Test(.hangGuard) func twoCentralsUseOurPeripheralAtOnce() async throws {
        let rig = try await PeripheralRig(name: "Bluejay Two", centrals: 2)
        defer { rig.close() }
        let central = rig.central, manager = rig.manager
        var events = manager.events().makeAsyncIterator()
        let served = try manager.add(
            MutableService(
                uuid: Self.periphService,
                characteristics: [
                    MutableCharacteristic(uuid: Self.periphReadable, properties: [.read], value: Array("both".utf8)),
                    MutableCharacteristic(uuid: Self.periphStream, properties: [.notify]),
                    MutableCharacteristic(uuid: Self.periphIndicated, properties: [.read, .indicate], value: [0]),
                ]))
        let readable = Int(served.characteristics[0].valueHandle.rawValue)
        let stream = served.characteristics[1].valueHandle
        let indicated = served.characteristics[2]
        let indicatedCCCD = Int(try #require(indicated.cccdHandle).rawValue)
        try await manager.startAdvertising(
            Advertisement(localName: "Bluejay Two", serviceUUIDs: [Self.periphService]), resumption: .afterConnection)

        var links: [ConnectionHandle] = []
        for index in 0..<2 {
            try await central.connect(toAdvertised: "Bluejay Two", central: index)
            guard let link = await Self.nextConnection(&events) else {
                Issue.record("no connection event for central \(index)"); return
            }
            links.append(link)
            try await central.send(["op": "discover", "central": index])
            try await central.send(["op": "subscribe", "handle": Int(stream.rawValue), "central": index])
        }
        #expect(links[0] != links[1])
        #expect(manager.host.connections.connections.count == 2, "both links are up at once")
        let sortedLinks: [ConnectionHandle] = links.sorted()
        #expect(
            await eventually { () -> Bool in manager.server.subscribers(of: stream).map(\.connection) == sortedLinks })

        // CCCDs are per client.
        try await central.send([
            "op": "subscribe", "handle": Int(indicated.valueHandle.rawValue), "indicate": true, "central": 1,
        ])
        let firstCCCD: [String: Any] = try await central.send(["op": "read", "handle": indicatedCCCD, "central": 0])
        let unsubscribed: [UInt8] = [0x00, 0x00]
        #expect(hexBytes(firstCCCD["value"]) == unsubscribed)
        let secondCCCD: [String: Any] = try await central.send(["op": "read", "handle": indicatedCCCD, "central": 1])
        let indicating: [UInt8] = [0x02, 0x00]
        #expect(hexBytes(secondCCCD["value"]) == indicating)
        let indicationSubscribers: [ConnectionHandle] = manager.server.subscribers(of: indicated.valueHandle).map(
            \.connection)
        #expect(indicationSubscribers == [links[1]])

        // Each its own notifications, interleaved on our side, in order on each.
        let count = 300
        for index in 0..<count {
            for (which, link) in links.enumerated() {
                let value: [UInt8] = [UInt8(which), UInt8(index & 0xFF), UInt8(index >> 8)]
                #expect(manager.server.notify(stream, value: value, to: [link]) == [link])
            }
        }
        for which in 0..<2 {
            let values =
                try await central.send([
                    "op": "values", "handle": Int(stream.rawValue), "count": count, "central": which,
                ])["values"] as? [String]
            // Typed outside #expect: Swift 6.0's type checker gave up on it inside.
            let sent: [[UInt8]] = (0..<count).map { (index: Int) -> [UInt8] in
                [UInt8(which), UInt8(index & 0xFF), UInt8(index >> 8)]
            }
            let received: [[UInt8]]? = values?.map { (value: String) -> [UInt8] in hexBytes(value) }
            #expect(received == sent)
        }

        // Central 1 misbehaves, then leaves: ten Read Requests without waiting, a truncated
        // Read Request, an unknown command; then it drops its link.
        let read = hexString([0x0A, UInt8(readable & 0xFF), UInt8(readable >> 8)])
        let pdus: [String] = [String](repeating: read, count: 10) + ["0a01", "7f00"]
        try await central.send(["op": "send_att", "pdus": pdus, "central": 1])
        let both: [UInt8] = Array("both".utf8)
        let stillRead: [String: Any] = try await central.send(["op": "read", "handle": readable, "central": 0])
        #expect(hexBytes(stillRead["value"]) == both)
        try await central.send(["op": "disconnect", "reason": 0x13, "central": 1])
        while let event = await events.next(isolation: #isolation) {
            if case let .disconnected(handle, _) = event {
                #expect(handle == links[1])
                break
            }
        }
        let remaining: [ConnectionHandle] = manager.server.subscribers(of: stream).map(\.connection)
        #expect(remaining == [links[0]])
        let sentAfter: [[UInt8]] = (0..<count).map { (index: Int) -> [UInt8] in
            [0xA0, UInt8(index & 0xFF), UInt8(index >> 8)]
        }
        for value in sentAfter { try await manager.updateValue(value, for: Self.periphStream) }
        let after =
            try await central.send(["op": "values", "handle": Int(stream.rawValue), "count": count, "central": 0])[
                "values"] as? [String]
        let receivedAfter: [[UInt8]]? = after?.map { (value: String) -> [UInt8] in hexBytes(value) }
        #expect(receivedAfter == sentAfter)
        let readAfter: [String: Any] = try await central.send(["op": "read", "handle": readable, "central": 0])
        #expect(hexBytes(readAfter["value"]) == both)
        let connected: [ConnectionHandle] = manager.host.connections.connections.keys.map {
            (handle: ConnectionHandle) -> ConnectionHandle in handle
        }
        #expect(connected == [links[0]])
    }
}
