import BluetoothCore
import HCI
import HCITestSupport
import Testing

/// The one object per connection: made on LE Connection Complete, closed once on
/// Disconnection Complete (or when the controller fails or closes), its layers' state
/// closed the highest layer first, and gone from the controller after.
@Suite @BluetoothActor
struct LinkTests {
    let peer = BluetoothAddress("F0:0D:B1:E7:00:02")!

    /// Records the order its attachments are closed in.
    final class Recorder {
        var closed: [String] = []
    }

    final class Marker: LinkAttachment {
        let name: String
        let recorder: Recorder
        init(_ name: String, _ recorder: Recorder) {
            self.name = name
            self.recorder = recorder
        }
        func linkClosed(_ link: Link, _ reason: HCIStatus) {
            recorder.closed.append("\(name) \(link.handle) \(reason.rawValue)")
        }
    }

    /// A running controller and a link on `handle`.
    func connected(handle: ConnectionHandle = 0x40) async throws -> (FakeController, HCIController, Link) {
        let fake = FakeController()
        let controller = HCIController(transport: fake, configuration: .init(logger: .silent))
        try await controller.start()
        fake.deliverEvent(
            LEConnectionEvent.connectionComplete(
                status: .success, handle: handle, role: 1, peerAddressType: 0, peerAddress: peer,
                parameters: LEConnectionParameters(interval: 24, latency: 0, supervisionTimeout: 400)))
        try await controller.send(ReadBDADDR())
        return (fake, controller, try #require(controller.link(handle)))
    }

    func disconnect(
        _ fake: FakeController, _ controller: HCIController, _ handle: ConnectionHandle, _ reason: HCIStatus
    ) async throws {
        fake.deliverEvent(
            .disconnectionComplete(DisconnectionComplete(status: .success, handle: handle, reason: reason)))
        try await controller.send(ReadBDADDR())
    }

    @Test func aLinkCarriesWhatItsConnectionCompleteSaid() async throws {
        let (_, controller, link) = try await connected()
        #expect(link.isOpen && link.handle == 0x40)
        #expect(link.connection.peerAddress == peer && link.connection.role == 1)
        #expect(link.connection.parameters.interval == 24)
        #expect(controller.links.map(\.handle) == [0x40])
        controller.close()
    }

    @Test func closingClosesEveryLayerOnceTheHighestFirstThenForgetsTheLink() async throws {
        let (fake, controller, link) = try await connected()
        let recorder = Recorder()
        let owners = (0..<5).map { _ in Recorder() }
        // Attached out of order; two at one layer close the newer first.
        _ = link.attachment(for: owners[0], layer: .l2cap) { Marker("l2cap", recorder) }
        _ = link.attachment(for: owners[1], layer: .host) { Marker("host", recorder) }
        _ = link.attachment(for: owners[2], layer: .att) { Marker("att", recorder) }
        _ = link.attachment(for: owners[3], layer: .security) { Marker("security", recorder) }
        _ = link.attachment(for: owners[4], layer: .att) { Marker("att2", recorder) }
        // Asking again finds the one attached, not a new one.
        #expect(link.attachment(for: owners[0], layer: .l2cap) { Marker("again", recorder) }.name == "l2cap")
        #expect(link.attachmentCount == 5)
        let ended = BluetoothCore.Expectation<HCIStatus>()  // Testing has an Expectation too
        link.whenClosed(ended)

        try await disconnect(fake, controller, 0x40, .remoteUserTerminatedConnection)
        #expect(
            recorder.closed == [
                "host 0x0040 19", "att2 0x0040 19", "att 0x0040 19", "security 0x0040 19", "l2cap 0x0040 19",
            ])
        #expect(link.state == .closed(.remoteUserTerminatedConnection) && link.attachmentCount == 0)
        #expect(ended.delivered == .remoteUserTerminatedConnection)
        #expect(controller.link(0x40) == nil && controller.links.isEmpty)

        // A second Disconnection Complete for the handle closes nothing again.
        try await disconnect(fake, controller, 0x40, .connectionTimeout)
        #expect(recorder.closed.count == 5)
        controller.close()
    }

    @Test func stateAttachedToAClosedLinkIsClosedAtOnce() async throws {
        let (fake, controller, link) = try await connected()
        try await disconnect(fake, controller, 0x40, .connectionTimeout)
        let recorder = Recorder()
        _ = link.attachment(for: recorder, layer: .gatt) { Marker("late", recorder) }
        #expect(recorder.closed == ["late 0x0040 8"])
        #expect(link.attachmentCount == 0)
        let ended = BluetoothCore.Expectation<HCIStatus>()  // Testing has an Expectation too
        link.whenClosed(ended)
        #expect(ended.delivered == .connectionTimeout)
        controller.close()
    }

    @Test func aFailedControllerAndAClosedOneEndTheirLinks() async throws {
        let (fake, controller, link) = try await connected()
        let recorder = Recorder()
        _ = link.attachment(for: recorder, layer: .att) { Marker("att", recorder) }
        fake.deliverEvent(.hardwareError(HardwareError(hardwareCode: 1)))
        #expect(await eventually { !link.isOpen })
        #expect(controller.links.isEmpty && controller.failure != nil)
        #expect(recorder.closed == ["att 0x0040 31"], "ended as Unspecified Error, as a failed controller reports none")

        let (_, other, second) = try await connected(handle: 0x41)
        let secondRecorder = Recorder()
        _ = second.attachment(for: secondRecorder, layer: .gap) { Marker("gap", secondRecorder) }
        other.close()
        #expect(secondRecorder.closed == ["gap 0x0041 22"], "closed by the local host")
        #expect(other.links.isEmpty)
    }

    @Test func perLinkValuesLiveOnTheirLinkAndEndWithIt() async throws {
        let (fake, controller, _) = try await connected()
        let values = PerLink<[Int]>(controller: controller, layer: .l2cap)
        var closed: [(ConnectionHandle, [Int], HCIStatus)] = []
        values.onClose = { closed.append(($0, $1, $2)) }
        values[0x40, default: []].append(1)
        values.update(0x40) { $0.append(2) }
        values[0x99] = [3]  // no such link: dropped
        #expect(values[0x40] == [1, 2] && values[0x99] == nil && values.handles == [0x40] && values.count == 1)

        try await disconnect(fake, controller, 0x40, .remoteUserTerminatedConnection)
        #expect(
            closed.map(\.0) == [0x40] && closed.map(\.1) == [[1, 2]]
                && closed.map(\.2) == [.remoteUserTerminatedConnection])
        #expect(values.isEmpty && values[0x40] == nil)
        controller.close()
    }
}
