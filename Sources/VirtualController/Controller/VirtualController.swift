import BluetoothCore
import CBluetooth
import CBluejaySystem
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
    struct Scan {
        var active: Bool
        var filterDuplicates: Bool
        /// Peripherals reported during this scan (duplicates filtered).
        var reported: Set<Int> = []
    }

    struct PendingConnection {
        var opcode: HCIOpcode
        var peerAddress: BluetoothAddress
        var useAcceptList: Bool
        var parameters: LEConnectionRequest
    }

    struct State {
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
    public init(
        peripherals: [RecordedPeripheral], address: BluetoothAddress = defaultAddress, name: String = "virtual",
        capture: BTSnoopWriter? = nil
    ) throws(TransportError) {
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
                    timeout = Int32(
                        max(0, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
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
                state.outbox.append(
                    .event(
                        HCIEvent.disconnectionComplete(
                            DisconnectionComplete(status: .success, handle: handle, reason: reason)
                        ).packet))
            }
            state.links = [:]
            Self.wake(wakeFd)
        }
    }

    private static func wake(_ descriptor: Int32) {
        var one: UInt64 = 1
        _ = write(descriptor, &one, 8)
    }

    // MARK: - ACL

    private static func handle(_ acl: ACLDataPacket, state: inout State) {
        guard var link = state.links[acl.handle] else { return }
        // The packet has left the host's buffer the moment it arrives here.
        state.outbox.append(
            .event(HCIEvent.numberOfCompletedPackets(NumberOfCompletedPackets(completions: [(acl.handle, 1)])).packet))
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
    static func advertise(_ state: inout State) {
        guard var scan = state.scan else { return }
        var reports: [AdvertisingReport] = []
        for (index, peripheral) in state.peripherals.enumerated() where !state.isConnected(index) {
            if scan.filterDuplicates, scan.reported.contains(index) { continue }
            scan.reported.insert(index)
            let record = peripheral.record
            let type = advertisedType(record.addressType)
            reports.append(
                AdvertisingReport(
                    connectable: true, scannable: true, directed: false, isScanResponse: false, legacy: true,
                    addressType: type, address: record.address, rssi: -50,
                    data: legacyData(record.advertisingData ?? synthesizedData(record))))
            if scan.active {
                reports.append(
                    AdvertisingReport(
                        connectable: true, scannable: true, directed: false, isScanResponse: true, legacy: true,
                        addressType: type, address: record.address, rssi: -50,
                        data: legacyData(record.scanResponseData ?? [])))
            }
        }
        state.scan = scan
        // A report event holds what fits in its 255 octets; one per advertisement is simplest.
        for report in reports {
            state.outbox.append(.event(HCIEvent.leMeta(AdvertisingReport.encode([report], extended: false)).packet))
        }
    }

    /// The type a report or connection event gives: the identity types of the recording
    /// (resolved by the recording's controller) are plain public or random here.
    static func advertisedType(_ type: AddressType) -> AddressType {
        type == .public || type == .publicIdentity ? .public : .random
    }

    /// Advertising data for a peer the recording never saw advertising: Flags (LE General
    /// Discoverable, BR/EDR not supported) and its name, if the recording gives one.
    static func synthesizedData(_ record: RecordedPeripheral) -> [UInt8] {
        var data: [UInt8] = [0x02, 0x01, 0x06]
        if let name = record.name, !name.isEmpty {
            let bytes = Array(name.utf8)
            let room = 31 - data.count - 2
            data +=
                bytes.count <= room
                ? [UInt8(bytes.count + 1), 0x09] + bytes : [UInt8(room + 1), 0x08] + bytes.prefix(room)
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
