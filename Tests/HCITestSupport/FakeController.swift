import BluetoothCore
import HCI
import Synchronization

/// A scripted controller behind an in-memory transport, for unit tests of the HCI layer
/// alone. It answers the bring-up commands like a small LE controller and records every
/// packet the host sends. Integration tests use a real emulated controller instead.
package final class FakeController: HCITransport {
    package struct Script: Sendable {
        /// The defaults: a small LE controller with 4 × 27-byte buffers.
        package init() {}
        package var address = BluetoothAddress("C0:FF:EE:00:00:01")!
        package var supported: [HCIOpcode] = [
            Reset.opcode, ReadLocalVersionInformation.opcode, ReadLocalSupportedFeatures.opcode, ReadBufferSize.opcode,
            ReadBDADDR.opcode, SetEventMask.opcode, LESetEventMask.opcode, LEReadBufferSize.opcode,
            LEReadLocalSupportedFeatures.opcode, LEReadMaximumDataLength.opcode, Disconnect.opcode,
            LESetScanParameters.opcode, LESetScanEnable.opcode, LEConnectionUpdate.opcode,
            LERemoteConnectionParameterRequestReply.opcode, LERemoteConnectionParameterRequestNegativeReply.opcode,
        ]
        package var leFeatures: LEFeatures = [.encryption, .dataPacketLengthExtension, .extendedAdvertising]
        package var leBuffer = (length: UInt16(27), count: UInt8(4))
        package var leBufferV2: (length: UInt16, count: UInt8, isoLength: UInt16, isoCount: UInt8)?
        package var sharedBuffer = (length: UInt16(1021), count: UInt16(8))
        /// Opcodes never answered (to test the command timeout).
        package var mute: Set<UInt16> = []
        /// Opcodes answered with this status instead of success.
        package var failures: [UInt16: HCIStatus] = [:]
        /// Num_HCI_Command_Packets in answers.
        package var credits: UInt8 = 1
        /// Whether ACL packets are kept in ``sent``; when false they are only counted
        /// (``sentACLCount``), so a benchmark sending millions holds no memory for them.
        package var keepsACL = true
    }

    private struct State {
        package var script: Script
        package var deliver: (@Sendable (TransportDelivery) -> Void)?
        package var sent: [HCIPacket] = []
        package var sentACLCount = 0
        package var closed = false
    }

    private let state: Mutex<State>

    package init(_ script: Script = Script()) { state = Mutex(State(script: script)) }

    package var description: String { "fake" }

    /// Every packet the host sent, in order.
    package var sent: [HCIPacket] { state.withLock { $0.sent } }
    package var sentCommands: [HCIOpcode] {
        sent.compactMap { if case let .command(command) = $0 { command.opcode } else { nil } }
    }
    package var sentACL: [ACLDataPacket] { sent.compactMap { if case let .acl(acl) = $0 { acl } else { nil } } }
    /// How many ACL packets the host sent, kept or not.
    package var sentACLCount: Int { state.withLock { $0.sentACLCount } }
    package var isClosed: Bool { state.withLock { $0.closed } }

    package func update(_ change: (inout Script) -> Void) { state.withLock { change(&$0.script) } }

    package func start(_ deliver: @escaping @Sendable (TransportDelivery) -> Void) throws(TransportError) {
        state.withLock { $0.deliver = deliver }
    }

    package func send(_ packet: HCIPacket) throws(TransportError) {
        let (script, closed) = state.withLock { state in
            if case .acl = packet {
                state.sentACLCount += 1
                if state.script.keepsACL { state.sent.append(packet) }
            } else {
                state.sent.append(packet)
            }
            return (state.script, state.closed)
        }
        guard !closed else { throw .closed }
        guard case let .command(command) = packet, !script.mute.contains(command.opcode.rawValue) else { return }
        deliver(.packets([.event(answer(command, script).packet)]))
    }

    package func close() { state.withLock { $0.closed = true } }

    /// Sends packets to the host as if the controller had.
    package func deliver(_ delivery: TransportDelivery) {
        let deliver = state.withLock { $0.deliver }
        deliver?(delivery)
    }

    package func deliverEvent(_ event: HCIEvent) { deliver(.packets([.event(event.packet)])) }

    /// Sends an LE Meta connection subevent (e.g. a Remote Connection Parameter Request).
    package func deliverEvent(_ event: LEConnectionEvent) { deliverEvent(.leMeta(event.encoded())) }

    private func answer(_ command: HCICommandPacket, _ script: Script) -> HCIEvent {
        let opcode = command.opcode
        func complete(_ parameters: some HCIParameters) -> HCIEvent {
            .commandComplete(
                CommandComplete(
                    numHCICommandPackets: script.credits, opcode: opcode,
                    returnParameters: ([0] + parameters.encoded())[...]))
        }
        if let status = script.failures[opcode.rawValue] {
            return .commandComplete(
                CommandComplete(
                    numHCICommandPackets: script.credits, opcode: opcode, returnParameters: [status.rawValue]))
        }
        let knows = script.supported.contains(opcode) || opcode == ReadLocalSupportedCommands.opcode
        guard knows else {
            return .commandComplete(
                CommandComplete(
                    numHCICommandPackets: script.credits, opcode: opcode,
                    returnParameters: [HCIStatus.unknownHCICommand.rawValue]))
        }
        switch opcode {
        case ReadLocalVersionInformation.opcode:
            return complete(
                ReadLocalVersionInformation.ReturnParameters(
                    hciVersion: 13, hciSubversion: 1, lmpVersion: 13,
                    companyIdentifier: 0x05F1, lmpSubversion: 2))
        case ReadLocalSupportedCommands.opcode:
            return complete(ReadLocalSupportedCommands.ReturnParameters(commands: .with(script.supported)))
        case ReadLocalSupportedFeatures.opcode:
            return complete(
                ReadLocalSupportedFeatures.ReturnParameters(features: [.leSupportedController, .brEdrNotSupported]))
        case LEReadLocalSupportedFeatures.opcode:
            return complete(LEReadLocalSupportedFeatures.ReturnParameters(features: script.leFeatures))
        case ReadBDADDR.opcode:
            return complete(ReadBDADDR.ReturnParameters(address: script.address))
        case LEReadBufferSize.opcode:
            return complete(
                LEReadBufferSize.ReturnParameters(
                    leACLDataPacketLength: script.leBuffer.length,
                    totalNumLEACLDataPackets: script.leBuffer.count))
        case LEReadBufferSizeV2.opcode:
            let v2 = script.leBufferV2 ?? (script.leBuffer.length, script.leBuffer.count, 0, 0)
            return complete(
                LEReadBufferSizeV2.ReturnParameters(
                    leACLDataPacketLength: v2.length, totalNumLEACLDataPackets: v2.count,
                    isoDataPacketLength: v2.isoLength, totalNumISODataPackets: v2.isoCount))
        case ReadBufferSize.opcode:
            return complete(
                ReadBufferSize.ReturnParameters(
                    aclDataPacketLength: script.sharedBuffer.length, synchronousDataPacketLength: 64,
                    totalNumACLDataPackets: script.sharedBuffer.count, totalNumSynchronousDataPackets: 0))
        case LEReadMaximumDataLength.opcode:
            return complete(
                LEReadMaximumDataLength.ReturnParameters(
                    supportedMaxTxOctets: 251, supportedMaxTxTime: 2120,
                    supportedMaxRxOctets: 251, supportedMaxRxTime: 2120))
        case LERemoteConnectionParameterRequestReply.opcode, LERemoteConnectionParameterRequestNegativeReply.opcode:
            // Status and the connection handle (the command's first two bytes).
            let handle =
                (try? LERemoteConnectionParameterRequestNegativeReply.ReturnParameters(
                    decoding: command.parameters.prefix(2)))?.handle ?? 0
            return complete(LERemoteConnectionParameterRequestReply.ReturnParameters(handle: handle))
        case LESetExtendedAdvertisingParameters.opcode:
            return complete(LESetExtendedAdvertisingParameters.ReturnParameters(selectedTxPower: 0))
        case LEReadMaximumAdvertisingDataLength.opcode:
            return complete(LEReadMaximumAdvertisingDataLength.ReturnParameters(maximumLength: 1650))
        case Disconnect.opcode, LECreateConnection.opcode:
            return .commandStatus(CommandStatus(status: .success, numHCICommandPackets: script.credits, opcode: opcode))
        default:
            return complete(NoParameters())
        }
    }
}
