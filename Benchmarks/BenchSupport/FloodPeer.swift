// A peripheral that floods, for the app-facing receive paths (issue 33): the same
// notifications as ReceivePath's (handle 0x0040, attribute 0x002B, a u32 sequence number
// first), but behind a controller that a whole host can bring up, connect through and
// discover: the in-process LE controller of `mock:` (VirtualController) serving a
// peripheral with one notifying characteristic. The flood starts once the host has
// subscribed (its CCCD Write Request answered), so what is timed is the values alone, not
// the bring-up, the connection or the discovery before them.
//
// Two ways to the host:
// - `FloodPeer`, an HCITransport in the host's process: the flood is framed and handed
//   over as ReceivePath's reader thread does (64 KiB reads into H4Framer's buffer, packets
//   as views of it), so an app path and the GATT-layer figure are fed alike;
// - `FloodRelay`, the controller's end of a socket: what the host writes is read and
//   answered by the virtual controller, and the flood is written to the socket — one
//   packet per write on a SOCK_SEQPACKET socket, as the kernel's HCI user channel hands
//   packets to a host, or packet-aligned chunks on a stream socket (`unix:` for the
//   `bluejay listen` figure).
import Bluejay
import BluetoothCore
import Dispatch
import Foundation
import GATT
import HCI
import Synchronization
import VirtualController
#if canImport(Glibc)
    import Glibc
#endif

/// The flooding peripheral: its address, its one service and characteristic, and the
/// database the virtual controller serves for it. The value handle is ReceivePath's
/// attribute (0x002B, as on the Bumble peer), so the flood is the very same H4 bytes.
public enum FloodPeripheral {
    /// A static random address (two top bits set).
    public static let address = BluetoothAddress("F0:0D:B1:E7:00:07")!
    /// As the app names it.
    public static let identifier = try! PeripheralIdentifier("F0:0D:B1:E7:00:07/random")
    /// The Bumble peer's custom service and its flood characteristic, by UUID.
    public static let service = ServiceIdentifier(uuid: "B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A00")
    public static let characteristic = CharacteristicIdentifier(
        uuid: "B1E70007-9D3B-4C7A-8A5E-6F2D0C1B0A00", service: service)
    /// The flood characteristic's value handle (ReceivePath's attribute) and its CCCD.
    public static let valueHandle = benchAttribute
    public static let cccd: AttributeHandle = 0x002C

    /// The database: one primary service holding the flood characteristic (notify) and its
    /// CCCD; ATT_MTU 517 offered, so a 244-octet value fits one notification.
    public static var record: RecordedPeripheral {
        let serviceUUID = service.uuid
        let characteristicUUID = characteristic.uuid
        return RecordedPeripheral(
            address: address, addressType: .random, name: "Bluejay flood",
            attributes: [
                RecordedAttribute(
                    handle: 0x0029, type: .primaryService, value: serviceUUID.littleEndianBytes, groupEndHandle: cccd),
                RecordedAttribute(
                    handle: 0x002A, type: .characteristic,
                    value: CharacteristicDeclaration(
                        properties: .notify, valueHandle: valueHandle, uuid: characteristicUUID
                    ).value),
                RecordedAttribute(handle: valueHandle, type: characteristicUUID),
                RecordedAttribute(handle: cccd, type: .clientCharacteristicConfiguration),
            ],
            mtu: 517)
    }

    /// The H4 bytes of one notification of `payload` octets (they are all this long).
    public static func packetLength(payload: Int) -> Int { 1 + 4 + 4 + 3 + payload }
}

/// A one-shot event that any thread may fire and any task await (or a thread wait for):
/// "the host has subscribed", "the host let go of the socket".
public final class OneShot: Sendable {
    private struct State: ~Copyable {
        var fired = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())
    private let semaphore = DispatchSemaphore(value: 0)

    public init() {}

    /// Whether it has fired.
    public var hasFired: Bool { state.withLock { $0.fired } }

    /// Fires it (once; later calls do nothing).
    public func fire() {
        let waiters: [CheckedContinuation<Void, Never>]? = state.withLock { state in
            guard !state.fired else { return nil }
            state.fired = true
            defer { state.waiters = [] }
            return state.waiters
        }
        guard let waiters else { return }
        semaphore.signal()
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once it has fired.
    public func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.fired { return true }
                state.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Blocks the calling thread until it has fired (for a thread of its own, never a task).
    public func waitBlocking() {
        semaphore.wait()
        semaphore.signal()  // a second waiter passes too
    }
}

/// Watches the packets between a host and the virtual controller for the flood's cue: the
/// host's Write Request enabling the flood characteristic's CCCD, then the controller's
/// Write Response to it. The flood starts when that response has gone to the host and the
/// gate is released (at once, or when a benchmark has started its measurement); the host's
/// later Write Request turning the CCCD off marks when it has counted every value
/// (`bluejay listen --count N` turns it off as it stops).
public final class FloodGate: Sendable {
    private enum Phase {
        case idle, subscribing, subscribed, flooding, unsubscribed
    }

    private struct State {
        var phase = Phase.idle
        var released: Bool
        var startedAt: ContinuousClock.Instant?
        var unsubscribedAt: ContinuousClock.Instant?
    }

    private let state: Mutex<State>
    private let begin: @Sendable () -> Void
    /// Fired when the subscription's Write Response has gone to the host.
    public let subscribed = OneShot()

    /// A gate that calls `begin` (once) to start the flood; `released` false holds it until
    /// ``release()``.
    init(released: Bool, begin: @escaping @Sendable () -> Void) {
        state = Mutex(State(released: released))
        self.begin = begin
    }

    /// When the flood started, once it has.
    public var startedAt: ContinuousClock.Instant? { state.withLock { $0.startedAt } }
    /// When the host turned the notifications off after the flood began.
    public var unsubscribedAt: ContinuousClock.Instant? { state.withLock { $0.unsubscribedAt } }

    /// Lets the flood start as soon as the host has subscribed (now, if it has).
    public func release() {
        let start = state.withLock { state -> Bool in
            state.released = true
            return startIfReady(&state)
        }
        if start { begin() }
    }

    /// A packet the host sent to the controller.
    func hostSent(_ packet: HCIPacket) {
        guard let (handle, pdu) = Self.attPDU(packet), pdu.count == 5, pdu.first == 0x12,
            AttributeHandle(rawValue: UInt16(pdu[pdu.startIndex + 1]) | UInt16(pdu[pdu.startIndex + 2]) << 8)
                == FloodPeripheral.cccd
        else { return }
        let enable = pdu[pdu.startIndex + 3] & 0x01 != 0
        state.withLock { state in
            if enable, state.phase == .idle {
                // The flood's packets name link 0x0040: the virtual controller's first.
                require(handle == benchConnection, "the flood link is \(handle), not \(benchConnection)")
                state.phase = .subscribing
            } else if !enable, state.phase == .flooding {
                state.phase = .unsubscribed
                state.unsubscribedAt = .now
            }
        }
    }

    /// Packets the controller has just handed to the host.
    func controllerSent(_ packets: [HCIPacket]) {
        let start = state.withLock { state -> Bool? in
            guard state.phase == .subscribing,
                packets.contains(where: { Self.attPDU($0)?.pdu.first == 0x13 })
            else { return nil }  // Write Response
            state.phase = .subscribed
            return startIfReady(&state)
        }
        guard let start else { return }
        subscribed.fire()
        if start { begin() }
    }

    private func startIfReady(_ state: inout State) -> Bool {
        guard state.released, state.phase == .subscribed else { return false }
        state.phase = .flooding
        state.startedAt = .now
        return true
    }

    /// The ATT PDU an ACL packet carries whole (a first fragment on channel 0x0004), and its link.
    private static func attPDU(_ packet: HCIPacket) -> (handle: ConnectionHandle, pdu: ArraySlice<UInt8>)? {
        guard case let .acl(acl) = packet, acl.data.count >= 5 else { return nil }
        let data = acl.data
        let start = data.startIndex
        guard data[start + 2] == 0x04, data[start + 3] == 0x00 else { return nil }
        return (acl.handle, data[(start + 4)...])
    }
}

/// The flood peripheral behind the virtual controller, as a transport in the host's
/// process (``StartOptions/openTransport``, ``BluetoothHost/init(transport:…)``).
/// Everything the host sends goes to the virtual controller, which answers bring-up,
/// connection, MTU exchange, discovery and the CCCD write; the flood goes from a thread of
/// its own exactly as ReceivePath's reader thread sends it.
public final class FloodPeer: HCITransport {
    /// What the controller's thread and the flood's thread share.
    private final class Shared: Sendable {
        let deliver = Mutex<(@Sendable (TransportDelivery) -> Void)?>(nil)
        let feeder = Mutex<ReaderThread?>(nil)
        let closed = Atomic<Bool>(false)
    }

    private let controller: VirtualController
    private let shared: Shared
    /// When the flood may start, and when it did.
    public let gate: FloodGate

    /// `count` notifications of `payload` octets (4…244), held until ``FloodGate/release()``
    /// when `held`: all at once, or, with a `rate`, that many per second (made a chunk at a
    /// time, so a long flood does not hold all of its bytes at once).
    public init(count: Int, payload: Int, held: Bool = true, rate: Int? = nil) throws(TransportError) {
        controller = try VirtualController(peripherals: [FloodPeripheral.record], name: "flood")
        let stream = rate == nil ? notifications(count: count, payload: payload) : []
        let shared = Shared()
        self.shared = shared
        gate = FloodGate(released: !held) {
            let thread = try? ReaderThread(name: "bench-flood") {
                if let rate {
                    Self.feed(count: count, payload: payload, rate: rate, shared)
                } else {
                    Self.feed(stream, shared)
                }
            }
            require(thread != nil, "cannot start the flood's thread")
            shared.feeder.withLock { $0 = thread }
        }
    }

    public var description: String { "flood" }

    public func start(_ deliver: @escaping @Sendable (TransportDelivery) -> Void) throws(TransportError) {
        shared.deliver.withLock { $0 = deliver }
        let gate = gate
        try controller.start { delivery in
            deliver(delivery)
            if case let .packets(packets) = delivery { gate.controllerSent(packets) }
        }
    }

    public func send(_ packet: HCIPacket) throws(TransportError) {
        gate.hostSent(packet)
        try controller.send(packet)
    }

    public func close() {
        shared.closed.store(true, ordering: .relaxed)
        controller.close()
        shared.feeder.withLock { $0 }?.join()
    }

    /// ReceivePath's reader (``feedAsStreamReads(_:until:_:)``), until the transport closes.
    private static func feed(_ bytes: [UInt8], _ shared: Shared) {
        guard let deliver = shared.deliver.withLock({ $0 }) else { return }
        feedAsStreamReads(bytes, until: { shared.closed.load(ordering: .relaxed) }) { deliver($0) }
    }

    /// The same, `rate` notifications a second: chunks of 1,024 made as they are due.
    private static func feed(count: Int, payload: Int, rate: Int, _ shared: Shared) {
        guard let deliver = shared.deliver.withLock({ $0 }) else { return }
        let start = ContinuousClock.now
        var sent = 0
        while sent < count, !shared.closed.load(ordering: .relaxed) {
            let chunk = min(1024, count - sent)
            feedAsStreamReads(
                notifications(count: chunk, payload: payload, from: UInt32(sent)),
                until: { shared.closed.load(ordering: .relaxed) }
            ) { deliver($0) }
            sent += chunk
            let due = start + .seconds(Double(sent) / Double(rate))
            let early = due - ContinuousClock.now
            if early > .zero { Thread.sleep(forTimeInterval: seconds(early)) }
        }
    }
}

/// The controller's end of a socket whose other end a host has open (a `socketpair` in
/// this process, or a `unix:` socket `bluejay listen` connected to): host packets read from
/// it go to the virtual controller, its answers are written back, and the flood is written
/// after them.
public final class FloodRelay: Sendable {
    /// How packets go onto the socket.
    public enum Framing: Sendable {
        /// One packet per write (SOCK_SEQPACKET): the HCI user channel's way, one H4
        /// packet (type octet first) per read on the host's side.
        case packetPerWrite
        /// A byte stream: the flood in packet-aligned writes of about 64 KiB.
        case stream
    }

    /// What the relay's threads share.
    private final class Shared: Sendable {
        let descriptor: Int32
        let framing: Framing
        /// Held for each write, so the controller's answers and the flood never interleave
        /// inside a packet.
        let writeLock = Mutex(())
        let threads = Mutex<[ReaderThread]>([])
        let closed = Atomic<Bool>(false)
        /// The flood writer's own CPU time, so a figure can leave it out (under a real user
        /// channel the kernel, not the host, does this work).
        let writerCPU = Mutex<Double>(0)

        init(descriptor: Int32, framing: Framing) {
            self.descriptor = descriptor
            self.framing = framing
        }

        /// Writes all of the bytes as one message (a packet) or into the stream, under the
        /// write lock; false once the host has gone.
        func write(_ raw: UnsafeRawBufferPointer) -> Bool {
            writeLock.withLock { _ in
                var offset = 0
                while offset < raw.count {
                    let written = send(descriptor, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                    if written < 0, errno == EINTR { continue }
                    guard written > 0 else { return false }
                    offset += written
                }
                return true
            }
        }
    }

    private let shared: Shared
    private let controller: VirtualController
    /// When the flood may start, when it did, and when the host unsubscribed.
    public let gate: FloodGate
    /// Fired when the host has closed its end (or the relay stopped).
    public let hostClosed = OneShot()
    /// Fired when the flood's writer is done (all written, or the host went away).
    public let floodWritten: OneShot

    /// Serves the socket `descriptor` (the relay owns it from now on): `count` notifications
    /// of `payload` octets, released at once unless `held`.
    public convenience init(descriptor: Int32, framing: Framing, count: Int, payload: Int, held: Bool)
        throws(TransportError)
    {
        try self.init(
            descriptor: descriptor, framing: framing, flood: notifications(count: count, payload: payload),
            payload: payload, held: held)
    }

    /// Serves the socket `descriptor` with `flood`, the H4 bytes ``notifications(count:payload:)``
    /// made (made once for a server that serves many hosts).
    public init(descriptor: Int32, framing: Framing, flood stream: [UInt8], payload: Int, held: Bool)
        throws(TransportError)
    {
        let shared = Shared(descriptor: descriptor, framing: framing)
        self.shared = shared
        do { controller = try VirtualController(peripherals: [FloodPeripheral.record], name: "flood relay") } catch {
            Glibc.close(descriptor)
            throw error
        }
        let packetLength = FloodPeripheral.packetLength(payload: payload)
        let written = OneShot()
        floodWritten = written
        gate = FloodGate(released: !held) {
            let thread = try? ReaderThread(name: "bench-flood") {
                Self.flood(stream, packetLength: packetLength, shared)
                written.fire()
            }
            require(thread != nil, "cannot start the flood's thread")
            if let thread { shared.threads.withLock { $0.append(thread) } }
        }
    }

    /// The flood writer's CPU seconds.
    public var writerCPUSeconds: Double { shared.writerCPU.withLock { $0 } }

    /// Starts reading the host's packets and answering them.
    public func start() throws(TransportError) {
        let shared = shared, gate = gate
        try controller.start { delivery in
            guard case let .packets(packets) = delivery, !shared.closed.load(ordering: .relaxed) else { return }
            switch shared.framing {
            case .packetPerWrite:
                for packet in packets { _ = packet.encodeH4().withUnsafeBytes { shared.write($0) } }
            case .stream:
                _ = packets.flatMap { $0.encodeH4() }.withUnsafeBytes { shared.write($0) }
            }
            gate.controllerSent(packets)
        }
        let controller = controller, hostClosed = hostClosed
        let reader = try ReaderThread(name: "bench-relay") {
            var framer = H4Framer(acceptedTypes: [.command, .acl], maximumACLDataLength: 65_535)
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while !shared.closed.load(ordering: .relaxed) {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(shared.descriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0, let framed = try? framer.append(buffer[..<count]) else { break }
                for (type, body) in framed {
                    guard let packet = try? HCIPacket(type: type, body: body) else { continue }
                    gate.hostSent(packet)
                    try? controller.send(packet)
                }
            }
            hostClosed.fire()
        }
        shared.threads.withLock { $0.append(reader) }
    }

    /// Stops: the socket is shut down (a blocked read or write returns), the threads joined,
    /// the descriptor closed.
    public func close() {
        guard !shared.closed.exchange(true, ordering: .relaxed) else { return }
        shutdown(shared.descriptor, Int32(SHUT_RDWR))
        controller.close()
        for thread in shared.threads.withLock({ $0 }) { thread.join() }
        Glibc.close(shared.descriptor)
        hostClosed.fire()
        floodWritten.fire()
    }

    /// The flood onto the socket: one packet a write, or packet-aligned chunks of about 64 KiB.
    private static func flood(_ bytes: [UInt8], packetLength: Int, _ shared: Shared) {
        let cpuBefore = threadCPUSeconds()
        defer { shared.writerCPU.withLock { $0 = threadCPUSeconds() - cpuBefore } }
        let chunk = shared.framing == .packetPerWrite ? packetLength : (65_536 / packetLength) * packetLength
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count, !shared.closed.load(ordering: .relaxed) {
                let length = min(chunk, raw.count - offset)
                guard shared.write(UnsafeRawBufferPointer(rebasing: raw[offset..<(offset + length)])) else { return }
                offset += length
            }
        }
    }
}

/// CPU seconds the calling thread has used.
public func threadCPUSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

/// Stops the benchmark with `message` unless `condition` holds: unlike `precondition`, it
/// says why in a release build too.
public func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}
