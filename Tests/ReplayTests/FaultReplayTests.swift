import Bluejay
import BluetoothCore
import Foundation
import HCI
import HCITestSupport
import Synchronization
import TestTraits
import Testing

/// Turns auto-reconnect off: a replay has no peer to reconnect to (the Bumble fault tests
/// cover reconnection), so after a lost link the listens end instead.
@MainActor
final class NoReconnect: DisconnectHandler {
    func didDisconnect(
        from peripheral: PeripheralIdentifier, with error: (any Error)?, willReconnect autoReconnect: Bool
    ) -> AutoReconnectMode {
        .change(shouldAutoReconnect: false)
    }
}

extension BluejayReplayTests {
    /// The Bluejay demo's recording broken by each fault at every host packet in turn: the
    /// link lost (the peer disconnecting, a supervision timeout) from the first packet after
    /// the link came up, the transport's EOF and a Hardware Error from the very first. Each
    /// run ends (no hang), no completion fires twice (a checked continuation would trap), an
    /// interrupted demo fails, and the host it leaves holds nothing: no link, command, ACL
    /// credit, ATT request, SMP state or armed timer.
    @Test(
        .hangGuard, arguments: [InjectedFault.peerDisconnect, .supervisionTimeout, .transportEOF, .hardwareError(0x2A)])
    func faultAtEveryHostPacketOfTheDemo(_ fault: InjectedFault) async throws {
        let path = Repository.trace("bluejay-api-demo")
        let records = try BTSnoopFile(path: path).records
        let sent = records.filter { record in
            guard record.direction == .sent, case .packet = record.content else { return false }
            return true
        }
        let linkUp = try #require(
            records.firstIndex { record in
                guard case let .packet(type, body) = record.content, let packet = try? HCIPacket(type: type, body: body)
                else { return false }
                return FaultTrigger.openedHandle(packet) != nil
            })
        // The demo's own Disconnect: a fault from there on may find nothing left to break.
        let disconnect = try #require(
            sent.lastIndex { record in
                guard case let .packet(type, body) = record.content,
                    case let .command(command)? = try? HCIPacket(type: type, body: body)
                else { return false }
                return command.opcode == Disconnect.opcode
            })
        let handler = NoReconnect()
        var runs = 0
        for (index, record) in sent.enumerated() where !fault.needsLink || record.number > records[linkUp].number {
            let trigger = FaultTrigger.hostPacket(index + 1)
            let injectors = Injectors()
            let run = await demo(
                path,
                openTransport: { capture throws(TransportError) in
                    let injector = FaultInjectingTransport(
                        wrapping: try ReplayTransport(path: path, capture: capture), controller: .scripted)
                    injector.arm(fault, on: trigger)
                    injectors.add(injector)
                    return injector
                }, disconnectHandler: handler)
            runs += 1
            let what = "\(fault) at record \(record.number) (host packet \(index + 1))"
            #expect(
                injectors.all.count == 1 && injectors.all.allSatisfy(\.fired),
                "\(what): opened \(injectors.all.count), fired \(injectors.all.map(\.fired))")
            if index < disconnect, case .success = run.outcome { Issue.record("\(what): the demo succeeded") }
            if let held = run.heldAfterClose {
                #expect(held == .none, "\(what): the closed host holds \(held)")
            } else if record.number > records[linkUp].number {
                Issue.record("\(what): no host to check, though the link was up")
            }
        }
        #expect(runs >= 20, "\(fault): only \(runs) runs")
    }
}

/// The injectors a run opened.
final class Injectors: Sendable {
    private let list = Mutex<[FaultInjectingTransport]>([])
    func add(_ injector: FaultInjectingTransport) { list.withLock { $0.append(injector) } }
    var all: [FaultInjectingTransport] { list.withLock { $0 } }
}
