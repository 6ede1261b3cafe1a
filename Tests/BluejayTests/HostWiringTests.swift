import Bluejay
import BluetoothCore
import GAP
import HCI
import HCITestSupport
import L2CAP
import Testing

/// `BluetoothHost`'s wiring of the layers, over the scripted controller: what only the
/// wiring decides, and no layer's own tests can see.
@Suite @BluetoothActor
struct HostWiringTests {
    /// A Connection Parameter Update Request over L2CAP is answered by GAP's one parameter
    /// policy (`ConnectionManager.acceptParameters`), as the link layer's request is: the
    /// host hands it to L2CAP, whose own default would accept these parameters.
    @Test func l2capParameterRequestsAskGAPsPolicy() async throws {
        let fake = FakeController()
        let controller = HCIController(transport: fake, configuration: .init(logger: .silent))
        let info = try await controller.start()
        let store = StoreDirectory(path: "/tmp/bluejay-host-wiring-\(UInt64.random(in: 0...UInt64.max))")
        let host = BluetoothHost(controller: controller, info: info, store: store, cacheEnabled: false, logger: .silent)
        defer { host.close() }
        var asked: [(ConnectionHandle, LEConnectionRequest)] = []
        host.connections.acceptParameters = { handle, request in
            asked.append((handle, request))
            return false
        }
        // We are the central: a peripheral asks its central for parameters.
        fake.deliverEvent(
            LEConnectionEvent.connectionComplete(
                status: .success, handle: 0x40, role: 0, peerAddressType: 0,
                peerAddress: BluetoothAddress("F0:0D:B1:E7:00:01")!,
                parameters: LEConnectionParameters(interval: 24, latency: 0, supervisionTimeout: 400)))
        let parameters = LEConnectionRequest(intervalMin: 80, intervalMax: 80, latency: 0, supervisionTimeout: 600)
        #expect(parameters.isValid)
        let request = SignalingCommand(
            code: .connectionParameterUpdateRequest, identifier: 9,
            data: ConnectionParameterUpdateRequest(parameters: parameters).encoded())
        let frame = BasicFrame(channel: .leSignaling, payload: request.encoded()[...])
        fake.deliver(.packets(frame.fragments(handle: 0x40, bufferLength: 27).map { .acl($0) }))
        try await controller.send(ReadBDADDR())

        #expect(asked.map(\.0) == [0x40])
        #expect(asked.first?.1 == parameters)
        var reassembler = Reassembler()
        let replies = fake.sentACL.compactMap { reassembler.append($0).frame }.map {
            try? SignalingCommand(decoding: $0.payload)
        }
        // Result 0x0001: rejected.
        #expect(
            replies == [SignalingCommand(code: .connectionParameterUpdateResponse, identifier: 9, data: [0x01, 0x00])])
        #expect(!fake.sentCommands.contains(LEConnectionUpdate.opcode))
    }
}
