import ATT
import BluetoothCore
import GAP
import GATT
import HCI
import HCITestSupport
import L2CAP
import Testing

/// The layers hold one another strongly: the controller its ACL and event handlers, the
/// channels theirs, a bearer its client's notification handlers. (A weakly referenced object
/// carries a side table that makes every retain on the receive path slow.) So the cycles
/// must end when the parts close, and nothing outlives them.
@Suite @BluetoothActor
struct OwnershipTests {
    /// Weak references to the layers of a stack with one open link and a GATT client on it.
    final class Layers {
        weak var channels: L2CAPChannels?
        weak var bearers: ATTBearers?
        weak var bearer: ATTBearer?
        weak var client: GATTClient?
    }

    /// A running stack with a bearer and a client on handle 0x0040; only the layers' weak
    /// references leave this function.
    func stack(_ layers: Layers) async throws -> (FakeController, HCIController, ConnectionManager) {
        let fake = FakeController()
        let controller = HCIController(transport: fake, configuration: .init(logger: .silent))
        try await controller.start()
        let connections = ConnectionManager(controller: controller, logger: .silent)
        let channels = L2CAPChannels(controller: controller, logger: .silent)
        let bearers = ATTBearers(controller: controller, channels: channels, logger: .silent)
        fake.deliverEvent(
            LEConnectionEvent.connectionComplete(
                status: .success, handle: 0x40, role: 0, peerAddressType: 1,
                peerAddress: BluetoothAddress("F0:0D:B1:E7:00:01")!,
                parameters: LEConnectionParameters(interval: 24, latency: 0, supervisionTimeout: 400)))
        try await controller.send(ReadBDADDR())
        let bearer = try bearers.bearer(for: 0x40)
        let client = GATTClient(bearer: bearer)
        client.addValueListener(0x002B) { _ in }
        (layers.channels, layers.bearers, layers.bearer, layers.client) = (channels, bearers, bearer, client)
        return (fake, controller, connections)
    }

    @Test func closingTheControllerLetsGoOfEveryLayerRegisteredWithIt() async throws {
        let layers = Layers()
        let (_, controller, connections) = try await stack(layers)
        #expect(
            layers.channels != nil && layers.bearers != nil && layers.client != nil, "the controller keeps its layers")
        controller.close()
        connections.close()
        #expect(layers.channels == nil, "L2CAP let go")
        #expect(layers.bearers == nil, "the bearers let go")
        #expect(layers.bearer == nil && layers.client == nil, "the link's bearer and client let go")
    }

    @Test func aLinkThatEndsLetsGoOfItsClientWhileTheStackRuns() async throws {
        let layers = Layers()
        let (fake, controller, connections) = try await stack(layers)
        #expect(layers.client != nil, "an open bearer keeps its client")
        fake.deliverEvent(
            .disconnectionComplete(
                DisconnectionComplete(status: .success, handle: 0x40, reason: .remoteUserTerminatedConnection)))
        try await controller.send(ReadBDADDR())
        #expect(layers.bearer == nil && layers.client == nil, "the ended link's bearer and client are gone")
        #expect(layers.channels != nil && layers.bearers != nil, "the stack itself runs on")
        layers.bearers?.close()
        layers.channels?.close()
        connections.close()
        controller.close()
    }
}
