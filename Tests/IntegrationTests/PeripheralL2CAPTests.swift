import Bluejay
import BluetoothCore
import Foundation
import HCI
import HCITestSupport
import L2CAP
import Testing

extension IntegrationTests {
    /// Our peripheral publishes an L2CAP PSM and a Bumble central opens an LE credit based
    /// channel to it: the channel comes out of the published sequence, and SDUs flow both
    /// ways (one longer than an MPS, so segmented and reassembled on each side). A PSM
    /// published twice is refused; once unpublished, the sequence ends and the central's
    /// next request is refused (SPSM not supported) while the open channel still works.
    @Test(.hangGuard) func aBumbleCentralOpensAChannelToOurPeripheral() async throws {
        let rig = try await PeripheralRig(name: "Bluejay L2CAP")
        defer { rig.close() }
        let central = rig.central, manager = rig.manager
        var events = manager.events().makeAsyncIterator()
        let published = try manager.publishL2CAPChannel()
        #expect(published.psm == PSM(rawValue: 0x0080), "the lowest dynamic LE PSM")
        #expect(throws: L2CAPPublishingError.psmInUse(published.psm)) { try manager.publishL2CAPChannel(psm: 0x0080) }
        try await manager.startAdvertising("Bluejay L2CAP")

        try await central.connect(toAdvertised: "Bluejay L2CAP")
        guard case let .connected(link, _)? = await events.next() else { Issue.record("no connection event"); return }
        let opened = try await central.send(["op": "l2cap_open", "psm": Int(published.psm.rawValue)])
        var accepted = published.makeAsyncIterator()
        let channel = try #require(await accepted.next())
        #expect(channel.handle == link && channel.psm == published.psm)
        #expect(opened["peer_mtu"] as? Int == Int(channel.local.mtu))

        // Central to us: a short SDU and one of 1000 octets.
        let long = (0..<1000).map { UInt8($0 % 251) }
        try await central.send(["op": "l2cap_send", "sdus": [hexString(Array("hello".utf8)), hexString(long)]])
        #expect(try await channel.receive() == Array("hello".utf8))
        #expect(try await channel.receive() == long)
        // Us to the central.
        try await channel.send(Array("world".utf8))
        try await channel.send(long.reversed())
        let back = try await central.send(["op": "l2cap_receive", "count": 2])["sdus"] as? [String]
        #expect(back?.map { hexBytes($0) } == [Array("world".utf8), long.reversed()])

        // Unpublished: the sequence ends, new requests are refused, the open channel stays.
        manager.unpublishL2CAPChannel(published.psm)
        #expect(await accepted.next() == nil)
        do {
            try await central.send(["op": "l2cap_open", "psm": Int(published.psm.rawValue)])
            Issue.record("an unpublished PSM must be refused")
        } catch is CentralError {}
        try await channel.send([0x01])
        #expect((try await central.send(["op": "l2cap_receive", "count": 1])["sdus"] as? [String]) == ["01"])
        try await central.send(["op": "l2cap_close"])
        #expect(try await channel.receive() == nil, "the central closed it")
    }
}
