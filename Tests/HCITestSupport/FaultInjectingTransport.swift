import BluetoothCore
import Dispatch
import HCI
import Synchronization

/// A fault the host must survive, injected between it and a real (or replayed) controller.
package enum InjectedFault: Sendable, Equatable, CustomStringConvertible {
    /// The link ends from the far side: Disconnection Complete with this reason, e.g. 0x13
    /// Remote User Terminated Connection (the peer disconnected) or 0x08 Connection Timeout
    /// (a supervision timeout).
    case linkLost(HCIStatus)
    /// The transport's byte stream ends (EOF), as when a USB-serial adapter is unplugged or
    /// an emulator exits.
    case transportEOF
    /// The controller reports a Hardware Error (event 0x10) with this code.
    case hardwareError(UInt8)

    /// The peer disconnected (0x13).
    package static let peerDisconnect = InjectedFault.linkLost(.remoteUserTerminatedConnection)
    /// The supervision timeout expired (0x08).
    package static let supervisionTimeout = InjectedFault.linkLost(HCIStatus(rawValue: 0x08))

    /// `peer disconnect`, `supervision timeout`, `transport EOF`, `Hardware Error 0x2a`.
    package var description: String {
        switch self {
        case .linkLost(.remoteUserTerminatedConnection): "peer disconnect"
        case .linkLost(HCIStatus(rawValue: 0x08)): "supervision timeout"
        case let .linkLost(reason): "link lost (\(reason))"
        case .transportEOF: "transport EOF"
        case let .hardwareError(code): "Hardware Error \(hex(code, digits: 2))"
        }
    }

    /// Whether the fault needs a link to act on.
    package var needsLink: Bool { if case .linkLost = self { true } else { false } }
}

/// Which packet sets a fault off: the first one crossing in `direction` that `matches`.
package struct FaultTrigger: Sendable, CustomStringConvertible {
    /// What the trigger waits for, for failure messages.
    package let description: String
    /// `.sent` for a packet of the host's, `.received` for one of the controller's.
    package let direction: BTSnoop.Direction
    /// Whether `packet` is the one.
    package let matches: @Sendable (HCIPacket) -> Bool

    /// A trigger on the first packet in `direction` that `matches`.
    package init(
        _ description: String, _ direction: BTSnoop.Direction, matches: @escaping @Sendable (HCIPacket) -> Bool
    ) {
        self.description = description
        self.direction = direction
        self.matches = matches
    }

    /// The host sends a command with `opcode` (and parameters `where` accepts).
    package static func command(
        _ name: String, _ opcode: HCIOpcode,
        where accepts: @escaping @Sendable (ArraySlice<UInt8>) -> Bool = { _ in true }
    ) -> FaultTrigger {
        FaultTrigger(name, .sent) { packet in
            guard case let .command(command) = packet else { return false }
            return command.opcode == opcode && accepts(command.parameters)
        }
    }

    /// The host sends an ATT PDU with `opcode` (and a PDU `where` accepts).
    package static func att(
        _ name: String, _ opcode: UInt8, where accepts: @escaping @Sendable (ArraySlice<UInt8>) -> Bool = { _ in true }
    ) -> FaultTrigger {
        FaultTrigger(name, .sent) { packet in
            guard let pdu = firstFragmentPayload(packet, channel: 0x0004) else { return false }
            return pdu.first == opcode && accepts(pdu)
        }
    }

    /// The host sends an SMP command with `code`.
    package static func smp(_ name: String, _ code: UInt8) -> FaultTrigger {
        FaultTrigger(name, .sent) { packet in firstFragmentPayload(packet, channel: 0x0006)?.first == code }
    }

    /// The host's `number`-th packet, counting from 1 (for breaking a replay at each one).
    package static func hostPacket(_ number: Int) -> FaultTrigger {
        let seen = Counter()
        return FaultTrigger("host packet \(number)", .sent) { _ in seen.next() == number }
    }

    /// Counts the packets a trigger has looked at.
    /// The controller's `number`-th packet that `matches`, counting from 1 (a fault in the
    /// middle of a flood).
    package static func received(_ number: Int, _ what: String, matches: @escaping @Sendable (HCIPacket) -> Bool)
        -> FaultTrigger
    {
        let seen = Counter()
        return FaultTrigger("\(what) received: number \(number)", .received) { packet in
            matches(packet) && seen.next() == number
        }
    }

    private final class Counter: Sendable {
        private let count = Atomic<Int>(0)
        func next() -> Int { count.add(1, ordering: .relaxed).newValue }
    }

    /// The controller reports an LE connection (LE Connection Complete, legacy or enhanced).
    package static let linkUp = FaultTrigger("LE Connection Complete", .received) { openedHandle($0) != nil }

    /// The L2CAP payload of a host ACL packet that starts a frame on `channel`.
    package static func firstFragmentPayload(_ packet: HCIPacket, channel: UInt16) -> ArraySlice<UInt8>? {
        guard case let .acl(acl) = packet, acl.boundary.startsPDU else { return nil }
        var header = ByteReader(acl.data)
        guard (try? header.readUInt16()) != nil, (try? header.readUInt16()) == channel else { return nil }
        return header.remaining
    }

    /// The handle of a successful LE Connection Complete, if `packet` is one.
    package static func openedHandle(_ packet: HCIPacket) -> ConnectionHandle? {
        guard case let .event(event) = packet, case let .leMeta(meta)? = try? HCIEvent(event),
            case let .connectionComplete(status, handle, _, _, _, _)? = try? LEConnectionEvent.decode(meta),
            status.isSuccess
        else { return nil }
        return handle
    }
}

/// Sits between the host and a controller's transport and, once armed, injects one
/// ``InjectedFault`` when its ``FaultTrigger`` fires: the fault-injection tests break a
/// session at each step this way, against the Bumble peer and against replayed recordings.
///
/// A command that fires the trigger reaches the controller (a live one answers it
/// whatever happens next); ACL data that fires it is lost with the fault, so the step it
/// belongs to is always the one interrupted. Then:
/// - ``InjectedFault/linkLost(_:)``: against a live controller, the injector sends HCI
///   Disconnect itself, hides its Command Status from the host and gives the host the
///   controller's Disconnection Complete with the fault's reason: both ends really lose
///   the link. Against a scripted controller (a replay) the event is made up, and the
///   host's packets from then on are kept in ``afterFault`` instead of being sent.
/// - ``InjectedFault/transportEOF``: the host is told the stream ended and the transport
///   underneath is closed (a live peer sees its socket close).
/// - ``InjectedFault/hardwareError(_:)``: the host gets Hardware Error; nothing more from
///   the controller reaches it.
package final class FaultInjectingTransport: HCITransport {
    /// How the controller underneath behaves.
    package enum Controller: Sendable {
        /// A real (emulated) controller: it is driven to produce the fault.
        case live
        /// A recording played back: the fault is made up, and what the host sends after it
        /// is not played against the recording.
        case scripted
    }

    private struct State {
        var armed: (fault: InjectedFault, trigger: FaultTrigger)?
        var fired = false
        /// EOF or Hardware Error: nothing more passes in either direction.
        var dead = false
        var openHandles: [ConnectionHandle] = []
        /// Disconnection Complete reasons to give the host, by handle.
        var reasons: [ConnectionHandle: HCIStatus] = [:]
        /// Command Status events of our own Disconnect still to hide.
        var hiddenStatuses = 0
        var afterFault: [HCIPacket] = []
        var deliver: (@Sendable (TransportDelivery) -> Void)?
    }

    private let inner: any HCITransport
    private let controller: Controller
    private let state = Mutex(State())
    /// Injected deliveries go out from here: never from the stack's own thread, which may be
    /// the one sending (a delivery can wait for the stack to catch up).
    private let injection = DispatchQueue(label: "bluejay.fault-injection")

    /// Wraps `inner`, passing everything through until ``arm(_:on:)``.
    package init(wrapping inner: any HCITransport, controller: Controller) {
        self.inner = inner
        self.controller = controller
    }

    /// The transport underneath.
    package var description: String { inner.description }

    /// `fault` happens when `trigger` next fires (once).
    package func arm(_ fault: InjectedFault, on trigger: FaultTrigger) {
        state.withLock { $0.armed = (fault, trigger) }
    }

    /// Whether the fault has happened.
    package var fired: Bool { state.withLock { $0.fired } }

    /// What the host sent after the fault that went nowhere (scripted controllers).
    package var afterFault: [HCIPacket] { state.withLock { $0.afterFault } }

    /// Starts the transport underneath, with the controller's packets passing through here.
    package func start(_ deliver: @escaping @Sendable (TransportDelivery) -> Void) throws(TransportError) {
        state.withLock { $0.deliver = deliver }
        try inner.start { [weak self] delivery in self?.fromController(delivery, deliver) }
    }

    /// Passes the host's packet on, unless it fires the trigger or comes after the fault.
    package func send(_ packet: HCIPacket) throws(TransportError) {
        enum Route { case pass, drop, fire, endOfStream }
        let route: Route = state.withLock { state in
            if state.dead { return state.armed?.fault == .transportEOF ? .endOfStream : .drop }
            if state.fired {
                guard controller == .scripted else { return .pass }
                state.afterFault.append(packet)
                return .drop
            }
            guard let trigger = state.armed?.trigger, trigger.direction == .sent, trigger.matches(packet) else {
                return .pass
            }
            // Dead before the command goes: its answer must not slip through to the host
            // between the send and the fault.
            Self.markFired(&state)
            return .fire
        }
        switch route {
        case .pass: try inner.send(packet)
        case .drop: break
        case .fire:
            if case .command = packet {
                try inner.send(packet)
            } else {
                state.withLock { $0.afterFault.append(packet) }
            }
            fire()
        // Writing into a stream that has ended fails, as on a closed socket.
        case .endOfStream: throw .closedByPeer(what: inner.description)
        }
    }

    /// Closes the transport underneath.
    package func close() { inner.close() }

    private func fromController(_ delivery: TransportDelivery, _ deliver: @Sendable (TransportDelivery) -> Void) {
        guard case let .packets(packets) = delivery else {
            if !state.withLock({ $0.dead }) { deliver(delivery) }
            return
        }
        var passed: [HCIPacket] = []
        for packet in packets {
            let (out, fire): (HCIPacket?, Bool) = state.withLock { state in
                if state.dead { return (nil, false) }
                let out = rewrite(packet, &state)
                let fire =
                    !state.fired
                    && state.armed.map { $0.trigger.direction == .received && $0.trigger.matches(packet) } ?? false
                return (out, fire)
            }
            if let out { passed.append(out) }
            if fire {
                if !passed.isEmpty { deliver(.packets(passed)) }
                passed = []
                self.fire()
            }
        }
        if !passed.isEmpty { deliver(.packets(passed)) }
    }

    /// Tracks links, hides our own Disconnect's status and gives its Disconnection Complete
    /// the fault's reason.
    private func rewrite(_ packet: HCIPacket, _ state: inout State) -> HCIPacket? {
        if let handle = FaultTrigger.openedHandle(packet) { state.openHandles.append(handle) }
        guard case let .event(eventPacket) = packet, let event = try? HCIEvent(eventPacket) else { return packet }
        switch event {
        case let .commandStatus(status) where status.opcode == Disconnect.opcode && state.hiddenStatuses > 0:
            state.hiddenStatuses -= 1
            return nil
        case let .disconnectionComplete(disconnection) where disconnection.status.isSuccess:
            state.openHandles.removeAll { $0 == disconnection.handle }
            guard let reason = state.reasons.removeValue(forKey: disconnection.handle) else { return packet }
            return .event(
                HCIEvent.disconnectionComplete(
                    DisconnectionComplete(status: .success, handle: disconnection.handle, reason: reason)
                ).packet)
        default:
            return packet
        }
    }

    /// From the fault on: a fault without a link (EOF, Hardware Error) lets nothing more pass.
    private static func markFired(_ state: inout State) {
        state.fired = true
        if state.armed?.fault.needsLink == false { state.dead = true }
    }

    private func fire() {
        let (fault, handle, deliver): (InjectedFault?, ConnectionHandle?, (@Sendable (TransportDelivery) -> Void)?) =
            state.withLock { state in
                Self.markFired(&state)
                return (state.armed?.fault, state.openHandles.last, state.deliver)
            }
        guard let fault, let deliver else { return }
        switch fault {
        case let .linkLost(reason):
            guard let handle else { return }
            switch controller {
            case .live:
                state.withLock { state in
                    state.hiddenStatuses += 1
                    state.reasons[handle] = reason
                }
                // The peer sees Remote User Terminated Connection; the host sees `reason`.
                do {
                    try inner.send(.command(Disconnect(handle: handle, reason: .remoteUserTerminatedConnection).packet))
                } catch {
                    injection.async { deliver(.failed(error)) }
                }
            case .scripted:
                let event = HCIEvent.disconnectionComplete(
                    DisconnectionComplete(status: .success, handle: handle, reason: reason))
                injection.async { deliver(.packets([.event(event.packet)])) }
            }
        case .transportEOF:
            let what = inner.description
            injection.async { deliver(.failed(.closedByPeer(what: what))) }
            // Closed off the reader thread: a trigger from the controller runs on it.
            injection.async { [inner] in inner.close() }
        case let .hardwareError(code):
            let event = HCIEvent.hardwareError(HardwareError(hardwareCode: code))
            injection.async { deliver(.packets([.event(event.packet)])) }
        }
    }
}
