import BluetoothCore
import Foundation
import GAP
@testable import HCI
import L2CAP
import Testing

extension IntegrationTests {
    /// The peripheral asks for new parameters over L2CAP (triggered through its control
    /// point); the host accepts, applies them with LE Connection Update, and the new
    /// interval is visible. The app can ask for an update itself, too.
    @Test func peripheralParameterRequestIsAnsweredAndApplied() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let controller = HCIController(
            transport: try TransportSpec(parsing: peer.transport).open(), configuration: quiet)
        try await controller.start()
        let connections = ConnectionManager(controller: controller, logger: .silent)
        let l2cap = L2CAPChannels(controller: controller, logger: .silent)
        var attReplies: [[UInt8]] = []
        l2cap.setHandler(for: .att) { _, payload in attReplies.append(Array(payload)) }
        let connection = try await connections.connect(to: BluetoothAddress(peer.address)!, type: .random, setUp: false)
        #expect(connection.parameters.interval != 80)

        let changed = BluetoothCore.Expectation<LEConnection>()
        connections.onParametersChanged = { changed.fulfill($0) }
        // No GATT client yet: an ATT Write Request to the control point (handle 0x0029 in
        // the peer's fixed database, see Fixtures/peer/README.md), command 0x03 asking for
        // interval 80 × 1.25 ms = 100 ms, latency 0, timeout 6 s.
        let write: [UInt8] = [0x12, 0x29, 0x00, 0x03, 0x50, 0x00, 0x50, 0x00, 0x00, 0x00, 0x58, 0x02]
        try l2cap.send(write, on: .att, handle: connection.handle)
        let updated = await changed.value()
        #expect(updated.parameters == LEConnectionParameters(interval: 80, latency: 0, supervisionTimeout: 600))
        #expect(connections.connections[connection.handle]?.parameters.interval == 80)
        #expect(attReplies.contains([0x13]), "the control point write was answered: \(attReplies)")

        // An update the app asks for.
        let applied = try await connections.updateParameters(
            connection.handle, .init(intervalMin: 40, intervalMax: 40, latency: 2, supervisionTimeout: 500))
        #expect(applied.interval == 40 && applied.latency == 2)
        try await connections.disconnect(connection.handle)
        l2cap.close()
        connections.close()
        controller.close()
    }
}
