import BluetoothCore
import HCI

// MARK: - Commands

extension VirtualController {
    /// The commands it answers (listed in Read Local Supported Commands).
    static let supportedCommands: [HCIOpcode] =
        [
            Reset.opcode, SetEventMask.opcode, ReadLocalVersionInformation.opcode, ReadLocalSupportedCommands.opcode,
            ReadLocalSupportedFeatures.opcode, ReadBufferSize.opcode, ReadBDADDR.opcode, Disconnect.opcode,
            ReadRSSI.opcode,
            LESetEventMask.opcode, LEReadBufferSize.opcode, LEReadBufferSizeV2.opcode,
            LEReadLocalSupportedFeatures.opcode,
            LEReadMaximumDataLength.opcode, LESetScanParameters.opcode, LESetScanEnable.opcode,
            LECreateConnection.opcode,
            LECreateConnectionCancel.opcode, LEConnectionUpdate.opcode, LEReadRemoteFeatures.opcode,
            LESetDataLength.opcode,
            LESetPHY.opcode, LEEnableEncryption.opcode, LERemoteConnectionParameterRequestReply.opcode,
            LERemoteConnectionParameterRequestNegativeReply.opcode,
        ]
        + [
            0x041D, 0x0C31, 0x0C33, 0x0C63, 0x0C6D, 0x2005, 0x200F, 0x2010, 0x2011, 0x2012, 0x2018, 0x2023, 0x2024,
            0x2030, 0x2031,
        ]
        .map { HCIOpcode(rawValue: $0) }

    static func handle(_ command: HCICommandPacket, address: BluetoothAddress, state: inout State) {
        let opcode = command.opcode
        let parameters = command.parameters
        func emit(_ event: HCIEvent) { state.outbox.append(.event(event.packet)) }
        func complete(_ bytes: [UInt8]) {
            emit(
                .commandComplete(CommandComplete(numHCICommandPackets: 1, opcode: opcode, returnParameters: bytes[...]))
            )
        }
        func complete(_ returned: some HCIParameters) { complete([0] + returned.encoded()) }
        func status(_ status: HCIStatus) {
            emit(.commandStatus(CommandStatus(status: status, numHCICommandPackets: 1, opcode: opcode)))
        }
        func leEvent(_ event: LEConnectionEvent) { emit(.leMeta(event.encoded())) }
        func decode<C: HCICommand>(_: C.Type) -> C? {
            guard let decoded = try? C(decoding: parameters) else {
                // Strict in what it takes, as a controller is.
                if C.completion == .commandStatus {
                    status(.invalidHCICommandParameters)
                } else {
                    complete([HCIStatus.invalidHCICommandParameters.rawValue])
                }
                return nil
            }
            return decoded
        }
        /// A command on a connection handle: the link's peripheral index, or the error sent.
        func link(_ handle: ConnectionHandle, statusEvent: Bool) -> Int? {
            if let link = state.links[handle] { return link.peripheral }
            if statusEvent {
                status(.unknownConnectionIdentifier)
            } else {
                complete([HCIStatus.unknownConnectionIdentifier.rawValue] + handle.wireBytes())
            }
            return nil
        }

        switch opcode.rawValue {
        case Reset.opcode.rawValue:
            // Links end with no event, scanning and connecting stop.
            state.links = [:]
            state.scan = nil
            state.pending = nil
            state.acceptList = []
            state.leEventMask = 0x1F
            state.outbox = []
            complete(NoParameters())
        case ReadLocalVersionInformation.opcode.rawValue:
            // Core 6.0 (0x0E), the Linux Foundation's company identifier (0x05F1).
            complete(
                ReadLocalVersionInformation.ReturnParameters(
                    hciVersion: 0x0E, hciSubversion: 0x0001, lmpVersion: 0x0E,
                    companyIdentifier: 0x05F1, lmpSubversion: 0x0001))
        case ReadLocalSupportedCommands.opcode.rawValue:
            complete(ReadLocalSupportedCommands.ReturnParameters(commands: .with(supportedCommands)))
        case ReadLocalSupportedFeatures.opcode.rawValue:
            complete(
                ReadLocalSupportedFeatures.ReturnParameters(features: [.leSupportedController, .brEdrNotSupported]))
        case LEReadLocalSupportedFeatures.opcode.rawValue:
            complete(
                LEReadLocalSupportedFeatures.ReturnParameters(features: [
                    .encryption, .dataPacketLengthExtension, .twoMegabitPHY,
                ]))
        case ReadBDADDR.opcode.rawValue:
            complete(ReadBDADDR.ReturnParameters(address: address))
        case LEReadBufferSize.opcode.rawValue:
            complete(
                LEReadBufferSize.ReturnParameters(
                    leACLDataPacketLength: aclBuffer.length, totalNumLEACLDataPackets: aclBuffer.count))
        case LEReadBufferSizeV2.opcode.rawValue:
            complete(
                LEReadBufferSizeV2.ReturnParameters(
                    leACLDataPacketLength: aclBuffer.length, totalNumLEACLDataPackets: aclBuffer.count,
                    isoDataPacketLength: 0, totalNumISODataPackets: 0))
        case ReadBufferSize.opcode.rawValue:
            complete(
                ReadBufferSize.ReturnParameters(
                    aclDataPacketLength: 0, synchronousDataPacketLength: 0,
                    totalNumACLDataPackets: 0, totalNumSynchronousDataPackets: 0))
        case LEReadMaximumDataLength.opcode.rawValue:
            complete(
                LEReadMaximumDataLength.ReturnParameters(
                    supportedMaxTxOctets: 251, supportedMaxTxTime: 2120,
                    supportedMaxRxOctets: 251, supportedMaxRxTime: 2120))
        case LESetEventMask.opcode.rawValue:
            guard let command = decode(LESetEventMask.self) else { return }
            state.leEventMask = command.mask.rawValue
            complete(NoParameters())
        case LESetScanParameters.opcode.rawValue:
            guard let command = decode(LESetScanParameters.self) else { return }
            guard state.scan == nil else { return complete([HCIStatus.commandDisallowed.rawValue]) }
            state.scanActive = command.scanType == .active
            complete(NoParameters())
        case LESetScanEnable.opcode.rawValue:
            guard let command = decode(LESetScanEnable.self) else { return }
            complete(NoParameters())
            if command.enable {
                if state.scan == nil {
                    state.scan = Scan(active: state.scanActive, filterDuplicates: command.filterDuplicates)
                }
                state.scan?.filterDuplicates = command.filterDuplicates
                advertise(&state)
            } else {
                state.scan = nil
            }
        case LECreateConnection.opcode.rawValue:
            guard let command = decode(LECreateConnection.self) else { return }
            guard state.pending == nil else { return status(.commandDisallowed) }
            status(.success)
            state.pending = PendingConnection(
                opcode: opcode, peerAddress: command.peerAddress,
                useAcceptList: command.initiatorFilterPolicy != 0, parameters: command.parameters)
            connectIfInRange(&state)
        case LECreateConnectionCancel.opcode.rawValue:
            guard state.pending != nil else { return complete([HCIStatus.commandDisallowed.rawValue]) }
            state.pending = nil
            complete(NoParameters())
            leEvent(
                .connectionComplete(
                    status: .unknownConnectionIdentifier, handle: 0, role: 0, peerAddressType: 0,
                    peerAddress: BluetoothAddress(littleEndianBytes: [0, 0, 0, 0, 0, 0]),
                    parameters: LEConnectionParameters(interval: 0, latency: 0, supervisionTimeout: 0)))
        case Disconnect.opcode.rawValue:
            guard let command = decode(Disconnect.self), link(command.handle, statusEvent: true) != nil else { return }
            status(.success)
            state.links[command.handle] = nil
            emit(
                .disconnectionComplete(
                    DisconnectionComplete(
                        status: .success, handle: command.handle, reason: .connectionTerminatedByLocalHost)))
        case LEConnectionUpdate.opcode.rawValue:
            guard let command = decode(LEConnectionUpdate.self), link(command.handle, statusEvent: true) != nil else {
                return
            }
            status(.success)
            let request = command.parameters
            leEvent(
                .connectionUpdateComplete(
                    status: .success, handle: command.handle,
                    parameters: LEConnectionParameters(
                        interval: request.intervalMax, latency: request.latency,
                        supervisionTimeout: request.supervisionTimeout)))
        case LEReadRemoteFeatures.opcode.rawValue:
            guard let command = decode(LEReadRemoteFeatures.self), link(command.handle, statusEvent: true) != nil else {
                return
            }
            status(.success)
            leEvent(
                .remoteFeaturesComplete(
                    status: .success, handle: command.handle, features: [.encryption, .dataPacketLengthExtension]))
        case 0x041D:
            // Read Remote Version Information: Read Remote Version Information Complete
            // (0x0C): Status, Connection_Handle, Version, Company_Identifier, Subversion.
            guard parameters.count >= 2 else { return status(.invalidHCICommandParameters) }
            let handle = ConnectionHandle(
                rawValue: UInt16(parameters[parameters.startIndex]) | UInt16(parameters[parameters.startIndex + 1]) << 8
            )
            guard link(handle, statusEvent: true) != nil else { return }
            status(.success)
            state.outbox.append(
                .event(
                    HCIEventPacket(
                        code: 0x0C, parameters: ([0] + handle.wireBytes() + [0x0E, 0xF1, 0x05, 0x01, 0x00])[...])))
        case ReadRSSI.opcode.rawValue:
            guard let command = decode(ReadRSSI.self), link(command.handle, statusEvent: false) != nil else { return }
            complete(ReadRSSI.ReturnParameters(handle: command.handle, rssi: -50))
        case LESetDataLength.opcode.rawValue:
            guard let command = decode(LESetDataLength.self), link(command.handle, statusEvent: false) != nil else {
                return
            }
            complete(ConnectionHandleReturn(handle: command.handle))
            let octets = min(max(command.txOctets, 27), 251)
            leEvent(
                .dataLengthChange(
                    handle: command.handle, maxTxOctets: octets, maxTxTime: 2120, maxRxOctets: 251, maxRxTime: 2120))
        case LESetPHY.opcode.rawValue:
            guard let command = decode(LESetPHY.self), link(command.handle, statusEvent: true) != nil else { return }
            status(.success)
            // 2M when the host allows it either way (bit 1), else 1M.
            let tx: UInt8 = command.allPHYs & 0x01 == 0 && command.txPHYs & 0x02 != 0 ? 2 : 1
            let rx: UInt8 = command.allPHYs & 0x02 == 0 && command.rxPHYs & 0x02 != 0 ? 2 : 1
            leEvent(.phyUpdateComplete(status: .success, handle: command.handle, txPHY: tx, rxPHY: rx))
        case 0x2030:
            // LE Read PHY: Status, Connection_Handle, TX_PHY, RX_PHY.
            guard parameters.count >= 2 else { return complete([HCIStatus.invalidHCICommandParameters.rawValue]) }
            complete([0] + Array(parameters.prefix(2)) + [1, 1])
        case LEEnableEncryption.opcode.rawValue:
            guard let command = decode(LEEnableEncryption.self), link(command.handle, statusEvent: true) != nil else {
                return
            }
            status(.success)
            // Any key will do: there is no peer to hold one. On a link already encrypted the
            // key is refreshed (Core Vol 4, Part E, 7.8.24).
            if state.links[command.handle]?.peer.att.encrypted == false {
                state.links[command.handle]?.peer.att.encrypted = true
                emit(
                    .encryptionChange(
                        EncryptionChange(status: .success, handle: command.handle, encryptionEnabled: 0x01)))
            } else {
                emit(
                    .encryptionKeyRefreshComplete(
                        EncryptionKeyRefreshComplete(status: .success, handle: command.handle)))
            }
        case LERemoteConnectionParameterRequestReply.opcode.rawValue,
            LERemoteConnectionParameterRequestNegativeReply.opcode.rawValue:
            complete([0] + Array(parameters.prefix(2)))
        case 0x2018:
            // LE Rand: eight random octets.
            var random = SystemRandomNumberGenerator()
            complete([0] + (0..<8).map { _ in UInt8.random(in: 0...255, using: &random) })
        case 0x200F:
            // LE Read Filter Accept List Size.
            complete([0, 16])
        case 0x2010:
            state.acceptList = []
            complete(NoParameters())
        case 0x2011, 0x2012:
            // LE Add/Remove Device To/From Filter Accept List: Address_Type, Address.
            guard parameters.count == 7 else { return complete([HCIStatus.invalidHCICommandParameters.rawValue]) }
            let entry = BluetoothAddress(littleEndianBytes: parameters.dropFirst())
            if opcode.rawValue == 0x2011 {
                state.acceptList.append(entry)
            } else {
                state.acceptList.removeAll { $0 == entry }
            }
            complete(NoParameters())
        case 0x2023:
            // LE Read Suggested Default Data Length.
            complete([0, 27, 0, 0x48, 0x01])
        case SetEventMask.opcode.rawValue, 0x0C31, 0x0C33, 0x0C63, 0x0C6D, 0x2005, 0x2024, 0x2031:
            // Set Event Mask (and Page 2), controller-to-host flow control and the host's
            // buffers, LE Host Support, LE Set Random Address, suggested data length,
            // default PHY: taken as given.
            complete(NoParameters())
        case 0x0C35:
            // Host Number Of Completed Packets has no answer.
            break
        default:
            complete([HCIStatus.unknownHCICommand.rawValue])
        }
    }

    /// Connects the pending Create Connection if its peer is advertising.
    private static func connectIfInRange(_ state: inout State) {
        guard let pending = state.pending else { return }
        let wanted = pending.useAcceptList ? state.acceptList : [pending.peerAddress]
        guard
            let index = state.peripherals.indices.first(where: {
                !state.isConnected($0) && wanted.contains(state.peripherals[$0].record.address)
            })
        else { return }
        state.pending = nil
        // Handles go round 0x0040–0x0EFF, skipping live ones.
        while state.links[ConnectionHandle(rawValue: state.nextHandle)] != nil {
            state.nextHandle = nextHandle(after: state.nextHandle)
        }
        let handle = ConnectionHandle(rawValue: state.nextHandle)
        state.nextHandle = nextHandle(after: state.nextHandle)
        state.links[handle] = VirtualLink(peripheral: index)
        let peripheral = state.peripherals[index]
        let parameters = LEConnectionParameters(
            interval: pending.parameters.intervalMax, latency: pending.parameters.latency,
            supervisionTimeout: pending.parameters.supervisionTimeout)
        let event = LEConnectionEvent.connectionComplete(
            status: .success, handle: handle, role: 0x00,
            peerAddressType: advertisedType(peripheral.record.addressType).rawValue,
            peerAddress: peripheral.record.address, parameters: parameters)
        state.outbox.append(.event(HCIEvent.leMeta(event.encoded()).packet))
    }

    private static func nextHandle(after handle: UInt16) -> UInt16 { handle >= 0x0EFF ? 0x0040 : handle + 1 }
}
