import BluetoothCore
import CBluetooth
import CSystem
#if canImport(Glibc)
import Glibc
#endif
import HCI
import L2CAP
import Synchronization

/// An LE controller in this process, with virtual peripherals on the far side of its radio:
/// a transport like the others (`mock:FILE[,peer=ADDRESS]`), needing no radio, no Python
/// and no sockets.
///
/// The controller side answers what a host sends to an LE controller (Core Vol 4, Part E,
/// 7): the bring-up commands; scanning, reporting each peripheral not connected with its
/// recorded advertising data (and scan response, when scanning actively) right away and
/// then every 100 ms (once per scan when duplicates are filtered); connection (a Create
/// Connection to an address no peripheral has waits, as on air, until it is cancelled);
/// ACL in both directions with flow control (every packet from the host is completed at
/// once by Number Of Completed Packets; the host's buffers are 8 of 251 octets); Disconnect;
/// connection update, data length, PHY, remote features and version, RSSI; encryption
/// (LE Enable Encryption succeeds with any key: the link counts as encrypted, with no
/// pairing). Any other command gets Command Complete with Unknown HCI Command, as a real
/// controller answers it. The peripherals' side is ``VirtualPeripheral``.
///
/// Everything runs under one lock: the host's packets are handled as ``send(_:)`` is
/// called, and what the controller sends back is delivered in order on its own thread.
public final class VirtualController: HCITransport {
    private struct Scan {
        var active: Bool
        var filterDuplicates: Bool
        /// Peripherals reported during this scan (duplicates filtered).
        var reported: Set<Int> = []
    }

    private struct PendingConnection {
        var opcode: HCIOpcode
        var peerAddress: BluetoothAddress
        var useAcceptList: Bool
        var parameters: LEConnectionRequest
    }

    private struct State {
        var peripherals: [VirtualPeripheral]
        var deliver: (@Sendable (TransportDelivery) -> Void)?
        var outbox: [HCIPacket] = []
        var stopped = false
        var started = false
        var scanActive = false
        var scan: Scan?
        var pending: PendingConnection?
        /// Each link: which peripheral, and what that peripheral keeps for it.
        var links: [ConnectionHandle: VirtualLink] = [:]
        var nextHandle: UInt16 = 0x0040
        var acceptList: [BluetoothAddress] = []
        /// LE event mask; the default of Core Vol 4, Part E, 7.8.1.
        var leEventMask: UInt64 = 0x1F

        /// Whether peripheral `index` has a link up.
        func isConnected(_ index: Int) -> Bool { links.values.contains { $0.peripheral == index } }
    }

    private final class Shared: Sendable {
        let state: Mutex<State>
        init(_ state: sending State) { self.state = Mutex(state) }
    }

    private let shared: Shared
    private let wakeFd: Int32
    private let thread = Mutex<ReaderThread?>(nil)
    private let capture: BTSnoopWriter?
    /// The controller's own public address.
    public let address: BluetoothAddress
    private let name: String

    /// The LE ACL buffers the controller offers the host: 8 of 251 octets.
    public static let aclBuffer = (length: UInt16(251), count: UInt8(8))
    /// The address the controller reports when given none.
    public static let defaultAddress = BluetoothAddress("00:1B:DC:F0:00:01")!
    /// How often a scan reports each peripheral again, when duplicates are not filtered.
    static let advertisingIntervalMilliseconds: Int32 = 100

    /// A controller with `peripherals` in range; `name` is its transport string. With
    /// `capture`, every packet in both directions is also written to that btsnoop file.
    public init(peripherals: [RecordedPeripheral], address: BluetoothAddress = defaultAddress, name: String = "virtual",
                capture: BTSnoopWriter? = nil) throws(TransportError) {
        shared = Shared(State(peripherals: peripherals.map(VirtualPeripheral.init)))
        wakeFd = eventfd(0, Int32(EFD_CLOEXEC))
        guard wakeFd >= 0 else { throw .openFailed(what: "\(name) (eventfd)", errno: errno) }
        self.capture = capture
        self.address = address
        self.name = name
    }

    deinit { close() }

    /// The transport string it was opened by.
    public var description: String { name }

    // MARK: - HCITransport

    /// Starts the delivery thread.
    public func start(_ deliver: @escaping @Sendable (TransportDelivery) -> Void) throws(TransportError) {
        let startable = shared.state.withLock { state -> Bool in
            guard !state.started, !state.stopped else { return false }
            state.started = true
            state.deliver = deliver
            return true
        }
        guard startable else { throw .closed }
        let wakeFd = wakeFd
        let capture = capture
        let reader = try ReaderThread(name: ReaderThread.virtualControllerThreadName) { [shared] in
            var fds = [pollfd(fd: wakeFd, events: Int16(POLLIN), revents: 0)]
            var timeout: Int32 = -1
            // When the peripherals advertise next; kept across wake-ups, so a host that
            // sends often does not hold the reports back.
            let clock = ContinuousClock()
            var nextAdvertising: ContinuousClock.Instant?
            while true {
                let ready = poll(&fds, 1, timeout)
                if ready > 0 {
                    var counter: UInt64 = 0
                    _ = read(wakeFd, &counter, 8)
                }
                let now = clock.now
                let due = nextAdvertising.map { now >= $0 } ?? false
                let (batch, stopped, deliver, scanning) = shared.state.withLock { state in
                    if due { Self.advertise(&state) }
                    defer { state.outbox.removeAll() }
                    return (state.outbox, state.stopped, state.deliver, state.scan != nil)
                }
                if stopped { return }
                if !scanning {
                    nextAdvertising = nil
                } else if due || nextAdvertising == nil {
                    nextAdvertising = now + .milliseconds(Int(Self.advertisingIntervalMilliseconds))
                }
                if let next = nextAdvertising {
                    let left = now.duration(to: next)
                    timeout = Int32(max(0, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
                } else {
                    timeout = -1
                }
                guard !batch.isEmpty, let deliver else { continue }
                for packet in batch { capture?.write(packet, direction: .received) }
                deliver(.packets(batch))
            }
        }
        thread.withLock { $0 = reader }
    }

    /// Handles one packet from the host at once; what the controller answers is delivered
    /// on its thread.
    public func send(_ packet: HCIPacket) throws(TransportError) {
        capture?.write(packet, direction: .sent)
        let address = address
        let wakeFd = wakeFd
        let accepted = shared.state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            switch packet {
            case .command(let command): Self.handle(command, address: address, state: &state)
            case .acl(let acl): Self.handle(acl, state: &state)
            case .sco, .iso, .event: break
            }
            // Under the lock, so close() cannot have closed the descriptor in between.
            Self.wake(wakeFd)
            return true
        }
        guard accepted else { throw .closed }
    }

    /// Stops and joins the delivery thread. Idempotent.
    public func close() {
        let first = shared.state.withLock { state in
            defer { state.stopped = true }
            return !state.stopped
        }
        guard first else { return }
        Self.wake(wakeFd)
        let reader = thread.withLock { reader in
            defer { reader = nil }
            return reader
        }
        reader?.join()
        Glibc.close(wakeFd)
    }

    /// Every link ends as if the peers had gone out of range or hung up (Disconnection
    /// Complete with `reason`, Supervision Timeout by default): what a test of reconnection
    /// needs from a peer. The peers go on advertising, so a host can connect again.
    public func dropLinks(reason: HCIStatus = .connectionTimeout) {
        let wakeFd = wakeFd
        shared.state.withLock { state in
            guard !state.stopped else { return }
            for handle in state.links.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
                state.outbox.append(.event(HCIEvent.disconnectionComplete(DisconnectionComplete(status: .success, handle: handle, reason: reason)).packet))
            }
            state.links = [:]
            Self.wake(wakeFd)
        }
    }

    private static func wake(_ descriptor: Int32) {
        var one: UInt64 = 1
        _ = write(descriptor, &one, 8)
    }

    // MARK: - Commands

    /// The commands it answers (listed in Read Local Supported Commands).
    static let supportedCommands: [HCIOpcode] = [
        Reset.opcode, SetEventMask.opcode, ReadLocalVersionInformation.opcode, ReadLocalSupportedCommands.opcode,
        ReadLocalSupportedFeatures.opcode, ReadBufferSize.opcode, ReadBDADDR.opcode, Disconnect.opcode, ReadRSSI.opcode,
        LESetEventMask.opcode, LEReadBufferSize.opcode, LEReadBufferSizeV2.opcode, LEReadLocalSupportedFeatures.opcode,
        LEReadMaximumDataLength.opcode, LESetScanParameters.opcode, LESetScanEnable.opcode, LECreateConnection.opcode,
        LECreateConnectionCancel.opcode, LEConnectionUpdate.opcode, LEReadRemoteFeatures.opcode, LESetDataLength.opcode,
        LESetPHY.opcode, LEEnableEncryption.opcode, LERemoteConnectionParameterRequestReply.opcode,
        LERemoteConnectionParameterRequestNegativeReply.opcode,
    ] + [0x041D, 0x0C31, 0x0C33, 0x0C63, 0x0C6D, 0x2005, 0x200F, 0x2010, 0x2011, 0x2012, 0x2018, 0x2023, 0x2024, 0x2030, 0x2031]
        .map { HCIOpcode(rawValue: $0) }

    private static func handle(_ command: HCICommandPacket, address: BluetoothAddress, state: inout State) {
        let opcode = command.opcode
        let parameters = command.parameters
        func emit(_ event: HCIEvent) { state.outbox.append(.event(event.packet)) }
        func complete(_ bytes: [UInt8]) {
            emit(.commandComplete(CommandComplete(numHCICommandPackets: 1, opcode: opcode, returnParameters: bytes[...])))
        }
        func complete(_ returned: some HCIParameters) { complete([0] + returned.encoded()) }
        func status(_ status: HCIStatus) { emit(.commandStatus(CommandStatus(status: status, numHCICommandPackets: 1, opcode: opcode))) }
        func leEvent(_ event: LEConnectionEvent) { emit(.leMeta(event.encoded())) }
        func decode<C: HCICommand>(_: C.Type) -> C? {
            guard let decoded = try? C(decoding: parameters) else {
                // Strict in what it takes, as a controller is.
                if C.completion == .commandStatus { status(.invalidHCICommandParameters) } else { complete([HCIStatus.invalidHCICommandParameters.rawValue]) }
                return nil
            }
            return decoded
        }
        /// A command on a connection handle: the link's peripheral index, or the error sent.
        func link(_ handle: ConnectionHandle, statusEvent: Bool) -> Int? {
            if let link = state.links[handle] { return link.peripheral }
            if statusEvent { status(.unknownConnectionIdentifier) } else { complete([HCIStatus.unknownConnectionIdentifier.rawValue] + handle.wireBytes()) }
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
            complete(ReadLocalVersionInformation.ReturnParameters(hciVersion: 0x0E, hciSubversion: 0x0001, lmpVersion: 0x0E,
                                                                  companyIdentifier: 0x05F1, lmpSubversion: 0x0001))
        case ReadLocalSupportedCommands.opcode.rawValue:
            complete(ReadLocalSupportedCommands.ReturnParameters(commands: .with(supportedCommands)))
        case ReadLocalSupportedFeatures.opcode.rawValue:
            complete(ReadLocalSupportedFeatures.ReturnParameters(features: [.leSupportedController, .brEdrNotSupported]))
        case LEReadLocalSupportedFeatures.opcode.rawValue:
            complete(LEReadLocalSupportedFeatures.ReturnParameters(features: [.encryption, .dataPacketLengthExtension, .twoMegabitPHY]))
        case ReadBDADDR.opcode.rawValue:
            complete(ReadBDADDR.ReturnParameters(address: address))
        case LEReadBufferSize.opcode.rawValue:
            complete(LEReadBufferSize.ReturnParameters(leACLDataPacketLength: aclBuffer.length, totalNumLEACLDataPackets: aclBuffer.count))
        case LEReadBufferSizeV2.opcode.rawValue:
            complete(LEReadBufferSizeV2.ReturnParameters(leACLDataPacketLength: aclBuffer.length, totalNumLEACLDataPackets: aclBuffer.count,
                                                         isoDataPacketLength: 0, totalNumISODataPackets: 0))
        case ReadBufferSize.opcode.rawValue:
            complete(ReadBufferSize.ReturnParameters(aclDataPacketLength: 0, synchronousDataPacketLength: 0,
                                                     totalNumACLDataPackets: 0, totalNumSynchronousDataPackets: 0))
        case LEReadMaximumDataLength.opcode.rawValue:
            complete(LEReadMaximumDataLength.ReturnParameters(supportedMaxTxOctets: 251, supportedMaxTxTime: 2120,
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
                if state.scan == nil { state.scan = Scan(active: state.scanActive, filterDuplicates: command.filterDuplicates) }
                state.scan?.filterDuplicates = command.filterDuplicates
                advertise(&state)
            } else {
                state.scan = nil
            }
        case LECreateConnection.opcode.rawValue:
            guard let command = decode(LECreateConnection.self) else { return }
            guard state.pending == nil else { return status(.commandDisallowed) }
            status(.success)
            state.pending = PendingConnection(opcode: opcode, peerAddress: command.peerAddress,
                                              useAcceptList: command.initiatorFilterPolicy != 0, parameters: command.parameters)
            connectIfInRange(&state)
        case LECreateConnectionCancel.opcode.rawValue:
            guard state.pending != nil else { return complete([HCIStatus.commandDisallowed.rawValue]) }
            state.pending = nil
            complete(NoParameters())
            leEvent(.connectionComplete(status: .unknownConnectionIdentifier, handle: 0, role: 0, peerAddressType: 0,
                                        peerAddress: BluetoothAddress(littleEndianBytes: [0, 0, 0, 0, 0, 0]),
                                        parameters: LEConnectionParameters(interval: 0, latency: 0, supervisionTimeout: 0)))
        case Disconnect.opcode.rawValue:
            guard let command = decode(Disconnect.self), link(command.handle, statusEvent: true) != nil else { return }
            status(.success)
            state.links[command.handle] = nil
            emit(.disconnectionComplete(DisconnectionComplete(status: .success, handle: command.handle, reason: .connectionTerminatedByLocalHost)))
        case LEConnectionUpdate.opcode.rawValue:
            guard let command = decode(LEConnectionUpdate.self), link(command.handle, statusEvent: true) != nil else { return }
            status(.success)
            let request = command.parameters
            leEvent(.connectionUpdateComplete(status: .success, handle: command.handle, parameters: LEConnectionParameters(
                interval: request.intervalMax, latency: request.latency, supervisionTimeout: request.supervisionTimeout)))
        case LEReadRemoteFeatures.opcode.rawValue:
            guard let command = decode(LEReadRemoteFeatures.self), link(command.handle, statusEvent: true) != nil else { return }
            status(.success)
            leEvent(.remoteFeaturesComplete(status: .success, handle: command.handle, features: [.encryption, .dataPacketLengthExtension]))
        case 0x041D:
            // Read Remote Version Information: Read Remote Version Information Complete
            // (0x0C): Status, Connection_Handle, Version, Company_Identifier, Subversion.
            guard parameters.count >= 2 else { return status(.invalidHCICommandParameters) }
            let handle = ConnectionHandle(rawValue: UInt16(parameters[parameters.startIndex]) | UInt16(parameters[parameters.startIndex + 1]) << 8)
            guard link(handle, statusEvent: true) != nil else { return }
            status(.success)
            state.outbox.append(.event(HCIEventPacket(code: 0x0C, parameters: ([0] + handle.wireBytes() + [0x0E, 0xF1, 0x05, 0x01, 0x00])[...])))
        case ReadRSSI.opcode.rawValue:
            guard let command = decode(ReadRSSI.self), link(command.handle, statusEvent: false) != nil else { return }
            complete(ReadRSSI.ReturnParameters(handle: command.handle, rssi: -50))
        case LESetDataLength.opcode.rawValue:
            guard let command = decode(LESetDataLength.self), link(command.handle, statusEvent: false) != nil else { return }
            complete(ConnectionHandleReturn(handle: command.handle))
            let octets = min(max(command.txOctets, 27), 251)
            leEvent(.dataLengthChange(handle: command.handle, maxTxOctets: octets, maxTxTime: 2120, maxRxOctets: 251, maxRxTime: 2120))
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
            guard let command = decode(LEEnableEncryption.self), link(command.handle, statusEvent: true) != nil else { return }
            status(.success)
            // Any key will do: there is no peer to hold one. On a link already encrypted the
            // key is refreshed (Core Vol 4, Part E, 7.8.24).
            if state.links[command.handle]?.peer.att.encrypted == false {
                state.links[command.handle]?.peer.att.encrypted = true
                emit(.encryptionChange(EncryptionChange(status: .success, handle: command.handle, encryptionEnabled: 0x01)))
            } else {
                emit(.encryptionKeyRefreshComplete(EncryptionKeyRefreshComplete(status: .success, handle: command.handle)))
            }
        case LERemoteConnectionParameterRequestReply.opcode.rawValue, LERemoteConnectionParameterRequestNegativeReply.opcode.rawValue:
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
            if opcode.rawValue == 0x2011 { state.acceptList.append(entry) } else { state.acceptList.removeAll { $0 == entry } }
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
        guard let index = state.peripherals.indices.first(where: {
            !state.isConnected($0) && wanted.contains(state.peripherals[$0].record.address)
        }) else { return }
        state.pending = nil
        // Handles go round 0x0040–0x0EFF, skipping live ones.
        while state.links[ConnectionHandle(rawValue: state.nextHandle)] != nil { state.nextHandle = nextHandle(after: state.nextHandle) }
        let handle = ConnectionHandle(rawValue: state.nextHandle)
        state.nextHandle = nextHandle(after: state.nextHandle)
        state.links[handle] = VirtualLink(peripheral: index)
        let peripheral = state.peripherals[index]
        let parameters = LEConnectionParameters(interval: pending.parameters.intervalMax, latency: pending.parameters.latency,
                                                supervisionTimeout: pending.parameters.supervisionTimeout)
        let event = LEConnectionEvent.connectionComplete(status: .success, handle: handle, role: 0x00,
                                                         peerAddressType: advertisedType(peripheral.record.addressType).rawValue,
                                                         peerAddress: peripheral.record.address, parameters: parameters)
        state.outbox.append(.event(HCIEvent.leMeta(event.encoded()).packet))
    }

    private static func nextHandle(after handle: UInt16) -> UInt16 { handle >= 0x0EFF ? 0x0040 : handle + 1 }

    // MARK: - ACL

    private static func handle(_ acl: ACLDataPacket, state: inout State) {
        guard var link = state.links[acl.handle] else { return }
        // The packet has left the host's buffer the moment it arrives here.
        state.outbox.append(.event(HCIEvent.numberOfCompletedPackets(NumberOfCompletedPackets(completions: [(acl.handle, 1)])).packet))
        let frames = state.peripherals[link.peripheral].receive(acl, on: &link.peer)
        state.links[acl.handle] = link
        for frame in frames {
            for fragment in frame.fragments(handle: acl.handle, bufferLength: Int(aclBuffer.length)) {
                state.outbox.append(.acl(fragment))
            }
        }
    }

    // MARK: - Advertising

    /// Reports every peripheral not connected to a scan, as it advertises.
    private static func advertise(_ state: inout State) {
        guard var scan = state.scan else { return }
        var reports: [AdvertisingReport] = []
        for (index, peripheral) in state.peripherals.enumerated() where !state.isConnected(index) {
            if scan.filterDuplicates, scan.reported.contains(index) { continue }
            scan.reported.insert(index)
            let record = peripheral.record
            let type = advertisedType(record.addressType)
            reports.append(AdvertisingReport(connectable: true, scannable: true, directed: false, isScanResponse: false, legacy: true,
                                             addressType: type, address: record.address, rssi: -50,
                                             data: legacyData(record.advertisingData ?? synthesizedData(record))))
            if scan.active {
                reports.append(AdvertisingReport(connectable: true, scannable: true, directed: false, isScanResponse: true, legacy: true,
                                                 addressType: type, address: record.address, rssi: -50,
                                                 data: legacyData(record.scanResponseData ?? [])))
            }
        }
        state.scan = scan
        // A report event holds what fits in its 255 octets; one per advertisement is simplest.
        for report in reports { state.outbox.append(.event(HCIEvent.leMeta(AdvertisingReport.encode([report], extended: false)).packet)) }
    }

    /// The type a report or connection event gives: the identity types of the recording
    /// (resolved by the recording's controller) are plain public or random here.
    private static func advertisedType(_ type: AddressType) -> AddressType {
        type == .public || type == .publicIdentity ? .public : .random
    }

    /// Advertising data for a peer the recording never saw advertising: Flags (LE General
    /// Discoverable, BR/EDR not supported) and its name, if the recording gives one.
    static func synthesizedData(_ record: RecordedPeripheral) -> [UInt8] {
        var data: [UInt8] = [0x02, 0x01, 0x06]
        if let name = record.name, !name.isEmpty {
            let bytes = Array(name.utf8)
            let room = 31 - data.count - 2
            data += bytes.count <= room ? [UInt8(bytes.count + 1), 0x09] + bytes : [UInt8(room + 1), 0x08] + bytes.prefix(room)
        }
        return data
    }

    /// The AD structures of `data` that fit a legacy advertisement's 31 octets, whole.
    static func legacyData(_ data: [UInt8]) -> [UInt8] {
        var kept: [UInt8] = []
        var index = 0
        while index < data.count {
            let length = Int(data[index])
            guard length > 0, index + 1 + length <= data.count else { break }
            if kept.count + 1 + length <= 31 { kept += data[index...(index + length)] }
            index += 1 + length
        }
        return kept
    }
}
