// The receive path as an app meets it, and as the kernel's user channel feeds it (issue 33,
// item 6), beside ReceivePath's GATT-layer figure:
//
// - SeqpacketReceivePath: ReceivePath's layers (controller, L2CAP, ATT, the GATT client's
//   value listener) on the transport the user channel uses (FileDescriptorTransport, 64 KiB
//   reads), fed one packet per read through a SOCK_SEQPACKET socket pair by a FloodRelay;
// - BluejayListenPath: a whole Bluejay on the main actor, `listen(to:)` delivering `Data`;
// - CentralValuesPath: a whole host's Central, `for try await value in values(of:)` on the
//   stack's actor, as the example of docs/Central.md reads it.
//
// Every one connects, discovers and subscribes for real (against FloodPeer's or FloodRelay's
// virtual controller), then times the flood alone: from its release to the last value
// counted where the app (or the GATT listener) gets it, each value's sequence number
// checked in order.
import ATT
import Bluejay
import BluetoothCore
import Foundation
import GAP
import GATT
import HCI
import L2CAP
#if canImport(Glibc)
    import Glibc
#endif

/// One timed run: values per wall second and per CPU second.
public struct RunFigures: Sendable {
    public var perWallSecond: Double
    public var perCPUSecond: Double
    /// The process's threads when the figures were taken (the flood's end, the stack still up).
    public var threads: Int

    /// `count` values in `elapsed`, using `cpu` seconds of CPU; the threads are counted now.
    public init(count: Int, elapsed: Duration, cpu: Double) {
        perWallSecond = Double(count) / seconds(elapsed)
        perCPUSecond = Double(count) / cpu
        threads = processThreads()
    }
}

/// How many threads the process has (/proc/self/task).
public func processThreads() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0
}

/// A duration in seconds.
public func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// CPU seconds the process has used (every thread).
public func processCPUSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

/// Values checked in order, as ReceivePath checks them: each one's sequence number (its
/// first four octets, little-endian) follows the last one's.
public struct SequenceCheck: Sendable {
    private var expected: UInt32 = 0
    /// Values out of order, or too short to hold a sequence number.
    public private(set) var faults = 0
    /// Values taken.
    public private(set) var count = 0

    public init() {}

    /// Takes a value's octets.
    public mutating func take(_ bytes: UnsafeRawBufferPointer) {
        count += 1
        guard bytes.count >= 4 else {
            faults += 1
            return
        }
        let sequence = UInt32(littleEndian: bytes.loadUnaligned(as: UInt32.self))
        if sequence != expected { faults += 1 }
        expected = sequence &+ 1
    }
}

/// A temporary store for a host of the benchmark's (no cache: every run discovers).
private func temporaryStore(_ label: String) -> StoreDirectory {
    StoreDirectory(path: NSTemporaryDirectory() + "bluejay-bench-\(label)-\(UUID().uuidString)")
}

// MARK: - The user channel's way: one packet per read

/// ReceivePath's layers over a SOCK_SEQPACKET socket pair, read through the transport the
/// HCI user channel uses (`FileDescriptorTransport` with the user channel's framer limit),
/// one H4 packet per read as the kernel delivers them. The controller's end is a
/// ``FloodRelay`` writing one packet per write from a thread of its own.
@BluetoothActor
public final class SeqpacketReceivePath {
    private let relay: FloodRelay
    private let controller: HCIController
    private let connections: ConnectionManager
    private let channels: L2CAPChannels
    private let bearers: ATTBearers
    private let client: GATTClient
    private let count: Int
    private var check = SequenceCheck()
    private let done = OneShot()

    /// Brings the stack up through the socket, connects, subscribes; the flood waits for ``run()``.
    public init(count: Int, payload: Int) async throws {
        self.count = count
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw TransportError.openFailed(what: "a SOCK_SEQPACKET socket pair", errno: errno)
        }
        relay = try FloodRelay(
            descriptor: pair[1], framing: .packetPerWrite, count: count, payload: payload, held: true)
        try relay.start()
        // As TransportSpec opens a user channel (its framer limit included).
        let transport = FileDescriptorTransport(descriptor: pair[0], name: "seqpacket", framerLimit: 65535)
        controller = HCIController(transport: transport, configuration: .init(logger: .silent))
        try await controller.start()
        connections = ConnectionManager(controller: controller, logger: .silent)
        channels = L2CAPChannels(controller: controller, logger: .silent)
        bearers = ATTBearers(controller: controller, channels: channels, logger: .silent)
        let link = try await connections.connect(to: FloodPeripheral.address, type: .random, timeout: .seconds(10))
        client = GATTClient(bearer: try bearers.bearer(for: link.handle))
        _ = try await client.exchangeMTU()
        // ReceivePath's listener: the sequence number decoded from the view.
        _ = client.addValueListener(FloodPeripheral.valueHandle) { [unowned self] bytes in
            bytes.withUnsafeBytes { check.take($0) }
            if check.count == self.count { done.fire() }
        }
        try await client.configure(FloodPeripheral.cccd, .notify)
        await relay.gate.subscribed.wait()
    }

    /// Lets the flood go and returns when the listener has had every value. The CPU figure
    /// leaves out the writer thread, which stands for the kernel.
    public func run() async -> RunFigures {
        let cpuBefore = processCPUSeconds()
        let start = ContinuousClock.now
        relay.gate.release()
        await done.wait()
        let elapsed = ContinuousClock.now - start
        await relay.floodWritten.wait()
        let cpu = processCPUSeconds() - cpuBefore - relay.writerCPUSeconds
        require(check.faults == 0, "\(check.faults) values out of order or undecodable")
        return RunFigures(count: count, elapsed: elapsed, cpu: cpu)
    }

    public func close() {
        bearers.close()
        channels.close()
        connections.close()
        controller.close()
        relay.close()
    }
}

// MARK: - Bluejay.listen

/// A whole ``Bluejay`` over a ``FloodPeer``: started, connected, and listening to the flood
/// characteristic with `listen(to:)`, its values as `Data` on the main actor, where they
/// are counted and checked.
///
/// The listen's backlog limit is the run's count: the stack may run ahead of the main
/// actor, and with the default 4096 a flood this fast could end the listen with
/// `listenOverflow` (which the app would see) instead of measuring it.
@MainActor
public final class BluejayListenPath {
    private let bluejay = Bluejay()
    private let peer: FloodPeer
    private let store = temporaryStore("listen")
    private let count: Int
    private var check = SequenceCheck()
    private var ended: String?
    private let done = OneShot()

    /// Starts Bluejay on the flood peer, connects, listens; the flood waits for ``run()``.
    public init(count: Int, payload: Int, listenBufferLimit: Int? = nil) async throws {
        self.count = count
        let peer = try FloodPeer(count: count, payload: payload)
        self.peer = peer
        let options = StartOptions(
            transport: "flood", store: store, cacheEnabled: false, logger: .silent,
            openTransport: { _ in peer }, controllerRecovery: .disabled,
            listenBufferLimit: listenBufferLimit ?? count)
        bluejay.start(mode: .new(options))
        _ = try await bluejay.connect(FloodPeripheral.identifier, timeout: .seconds(10))
        bluejay.listen(to: FloodPeripheral.characteristic) { [unowned self] (result: ReadResult<Data>) in
            switch result {
            case let .success(value):
                value.withUnsafeBytes { check.take($0) }
                if check.count == count { done.fire() }
            case .cancelled:
                ended = ended ?? "cancelled"
                done.fire()
            case let .failure(error):
                ended = ended ?? "\(error)"
                done.fire()
            }
        }
        await peer.gate.subscribed.wait()
    }

    /// Lets the flood go and returns when the callback has had every value.
    public func run() async -> RunFigures {
        let cpuBefore = processCPUSeconds()
        let start = ContinuousClock.now
        peer.gate.release()
        await done.wait()
        let elapsed = ContinuousClock.now - start
        let cpu = processCPUSeconds() - cpuBefore
        require(ended == nil, "the listen ended after \(check.count) values: \(ended ?? "")")
        require(check.faults == 0, "\(check.faults) values out of order or undecodable")
        return RunFigures(count: count, elapsed: elapsed, cpu: cpu)
    }

    public func close() async {
        let (host, _) = bluejay.stopAndExtractBluetoothState()
        if let host { await host.close() }
        try? FileManager.default.removeItem(atPath: store.path)
    }
}

// MARK: - Central's values(of:)

/// A whole host's ``Central`` over a ``FloodPeer``: connected, and the flood
/// characteristic's values read with `for try await value in peripheral.values(of:)` on the
/// stack's actor (the example of docs/Central.md), counted and checked there.
@BluetoothActor
public final class CentralValuesPath {
    private let peer: FloodPeer
    private let store = temporaryStore("central")
    private let host: BluetoothHost
    private let values: PeripheralValues
    private let count: Int

    /// Brings a host up on the flood peer, connects, subscribes; the flood waits for ``run()``.
    public init(count: Int, payload: Int) async throws {
        self.count = count
        peer = try FloodPeer(count: count, payload: payload)
        host = try await BluetoothHost(transport: peer, store: store, cacheEnabled: false, logger: .silent)
        let peripheral = host.central.peripheral(FloodPeripheral.identifier)
        try await peripheral.connect()
        values = try await peripheral.values(of: FloodPeripheral.characteristic, capacity: .max)
        await peer.gate.subscribed.wait()
    }

    /// Lets the flood go and reads the stream until it has had every value.
    public func run() async throws -> RunFigures {
        let cpuBefore = processCPUSeconds()
        let start = ContinuousClock.now
        peer.gate.release()
        var check = SequenceCheck()
        for try await value in values {
            value.withUnsafeBytes { check.take($0) }
            if check.count == count { break }
        }
        let elapsed = ContinuousClock.now - start
        let cpu = processCPUSeconds() - cpuBefore
        require(check.count == count, "the stream ended after \(check.count) values")
        require(check.faults == 0, "\(check.faults) values out of order or undecodable")
        return RunFigures(count: count, elapsed: elapsed, cpu: cpu)
    }

    public func close() {
        host.close()
        try? FileManager.default.removeItem(atPath: store.path)
    }
}
