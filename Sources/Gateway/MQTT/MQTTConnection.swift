import BluetoothCore
import COpenSSL
import Glibc

/// One connection to the broker: a TCP socket on the stack's event loop (``EventLoop/stack``),
/// TLS over it for `mqtts://` (``TLSSession``), and the MQTT packets in and out. It connects
/// to each of the broker's addresses in turn, reads what the broker sent in one `recv` per
/// turn, however many packets that is, and writes what a turn queued in one `send`.
///
/// It knows nothing of MQTT's session: its owner (``MQTTClient``) sends CONNECT once it is
/// ``Event/opened``, and reads CONNACK among the ``Event/packet(_:)``s. Everything runs on the
/// loop thread, as the stack's actor: values published by the stack go out with no thread
/// switch and no lock.
@BluetoothActor
final class MQTTConnection {
    /// What the connection tells its owner.
    enum Event {
        /// The bytes flow (TCP connected, and TLS's handshake done for `mqtts://`).
        case opened
        /// A packet from the broker.
        case packet(MQTTPacket)
        /// The connection ended (it is closed by then).
        case ended(Ending)
    }

    /// Why the connection ended.
    enum Ending: Error, CustomStringConvertible {
        /// No address took the TCP connection (the last one's errno).
        case unreachable(errno: Int32)
        /// The server closed its side; `securing` while TLS's handshake was under way.
        case closedByServer(securing: Bool)
        /// A read or write failed (ECONNRESET and the like).
        case failed(errno: Int32, securing: Bool)
        /// TLS failed (its handshake, or a record).
        case tls(TLSSession.Failure)
        /// The broker sent what MQTT 3.1.1 does not allow.
        case malformed(MQTTPacket.MalformedPacket)

        var description: String {
            switch self {
            case .unreachable(let code): errorName(code)
            case .closedByServer: "the broker closed the connection"
            case .failed(let code, _): errorName(code)
            case .tls(let failure): failure.description
            case .malformed(let problem): "the broker sent \(problem) (MQTT 3.1.1 does not allow it)"
            }
        }
    }

    private enum Phase {
        /// TCP's connection to `addresses[index]` is under way.
        case connecting(index: Int)
        /// TLS's handshake is under way.
        case securing
        case open
        case closed
    }

    private var phase: Phase
    private let addresses: [SocketAddress]
    private var socket: Int32 = -1
    private var watch: EventLoop.Watch?
    private let tls: TLSSession?
    private let report: @BluetoothActor (Event) -> Void
    /// Packets queued this turn, not yet written (plain bytes: TLS encrypts them on the flush).
    /// Not empty exactly while a flush is queued for the turn's end: the flush empties it.
    private var pending: [UInt8] = []
    /// Bytes for the socket that it did not take yet.
    private var wire: [UInt8] = []
    private var wireSent = 0
    /// What was received and not yet decoded (a packet's start waits for its end).
    private var input: [UInt8] = []
    private var scratch = [UInt8](repeating: 0, count: 65_536)
    /// Packets sent and received so far (the keepalive looks at them).
    private(set) var packetsSent = 0
    private(set) var packetsReceived = 0

    /// A connection to the first of `addresses` that takes it, TLS over it when `tls` is
    /// given; `report` hears what happens, on the loop thread.
    init(addresses: [SocketAddress], tls: TLSSession?, report: @escaping @BluetoothActor (Event) -> Void) {
        self.addresses = addresses
        self.tls = tls
        self.report = report
        phase = .connecting(index: 0)
        connect(from: 0)
    }

    /// Its owner closes it; dropped open (a client freed with it), it still lets go of the
    /// socket and its watch.
    deinit {
        watch?.cancel()
        if socket >= 0 { Glibc.close(socket) }
    }

    /// Queues `packet`; it leaves with the rest of this turn's, in one write.
    func send(_ packet: MQTTPacket) {
        guard case .open = phase else { return }
        let flushQueued = !pending.isEmpty
        packet.encode(into: &pending)
        packetsSent += 1
        guard !flushQueued else { return }
        EventLoop.stack.whenTurnEnds { [weak self] in BluetoothActor.assumeIsolated { self?.flush() } }
    }

    /// Ends the connection: with DISCONNECT first when `disconnect` (the broker then keeps the
    /// will to itself), written at once. No event follows.
    func close(disconnect: Bool) {
        if disconnect, case .open = phase {
            send(.disconnect)
            flush()
        }
        shut()
    }

    private func shut() {
        phase = .closed
        watch?.cancel()
        watch = nil
        if socket >= 0 { Glibc.close(socket) }
        socket = -1
    }

    private func end(_ ending: Ending) {
        guard !isClosed else { return }
        shut()
        report(.ended(ending))
    }

    private var isClosed: Bool { if case .closed = phase { true } else { false } }

    // MARK: Connecting

    /// Starts TCP's connection to `addresses[index]`, or the next that can be tried.
    private func connect(from index: Int) {
        var lastError = EHOSTUNREACH
        for current in index..<addresses.count {
            let address = addresses[current]
            let fd = Glibc.socket(
                address.family,
                Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else {
                lastError = errno
                continue
            }
            var on: Int32 = 1
            // Each turn's packets are one write already; Nagle would only hold the last back.
            setsockopt(fd, Int32(IPPROTO_TCP), 1 /* TCP_NODELAY */, &on, socklen_t(MemoryLayout<Int32>.size))
            let result = address.withPointer { Glibc.connect(fd, $0, $1) }
            guard result == 0 || errno == EINPROGRESS else {
                lastError = errno
                Glibc.close(fd)
                continue
            }
            do {
                watch = try EventLoop.stack.watch(fd, name: "mqtt") { [weak self] watch in
                    let readiness = watch.readiness
                    BluetoothActor.assumeIsolated { self?.ready(readiness) }
                }
            } catch {
                lastError = error.errno
                Glibc.close(fd)
                continue
            }
            socket = fd
            phase = .connecting(index: current)
            watch?.wantsWritable(true)
            return
        }
        // Reported from the loop, as every other event is, after the owner has this object.
        phase = .closed
        EventLoop.stack.execute { [weak self] in
            BluetoothActor.assumeIsolated { self?.report(.ended(.unreachable(errno: lastError))) }
        }
    }

    /// The socket is ready for what `readiness` says.
    private func ready(_ readiness: EventLoop.Readiness) {
        switch phase {
        case .connecting(let index):
            var code: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(socket, SOL_SOCKET, SO_ERROR, &code, &length)
            if code == EINPROGRESS || (code == 0 && readiness.isEmpty) { return }
            guard code == 0 else {
                watch?.cancel()
                watch = nil
                Glibc.close(socket)
                socket = -1
                if index + 1 < addresses.count {
                    connect(from: index + 1)
                } else {
                    phase = .closed
                    report(.ended(.unreachable(errno: code)))
                }
                return
            }
            watch?.wantsWritable(false)
            if tls != nil {
                phase = .securing
                secure()
            } else {
                phase = .open
                report(.opened)
            }
        case .securing, .open:
            if readiness.contains(.readable) { receive() }
            if readiness.contains(.writable), !isClosed { writeWire() }
        case .closed: return
        }
    }

    /// TLS's handshake, a step further.
    private func secure() {
        guard let tls else { return }
        do throws(TLSSession.Failure) {
            let step = try tls.handshake()
            tls.drain(into: &wire)
            writeWire()
            guard case .done = step, !isClosed else { return }
            phase = .open
            report(.opened)
            // Application data that came with the handshake's last flight.
            if !isClosed { try decrypt() }
        } catch {
            end(.tls(error))
        }
    }

    // MARK: Reading

    /// One `recv`: what the broker sent since the last turn, every packet in it handed over.
    private func receive() {
        let securing = if case .securing = phase { true } else { false }
        let count = scratch.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        if count == 0 { return end(.closedByServer(securing: securing)) }
        if count < 0 {
            if errno == EAGAIN || errno == EINTR { return }
            return end(.failed(errno: errno, securing: securing))
        }
        if let tls {
            scratch.withUnsafeBytes { tls.received(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
            if securing { return secure() }
            do throws(TLSSession.Failure) { try decrypt() } catch { return end(.tls(error)) }
        } else {
            input += scratch[..<count]
            decodePackets()
        }
    }

    private func decrypt() throws(TLSSession.Failure) {
        guard let tls else { return }
        try tls.read(into: &input)
        // A TLS 1.3 session ticket or key update may want an answer.
        tls.drain(into: &wire)
        writeWire()
        decodePackets()
    }

    private func decodePackets() {
        var offset = 0
        defer { if !isClosed { input.removeFirst(offset) } }
        while !isClosed {
            do throws(MQTTPacket.MalformedPacket) {
                guard let (packet, size) = try MQTTPacket.decode(input[offset...]) else { return }
                offset += size
                packetsReceived += 1
                report(.packet(packet))
            } catch {
                return end(.malformed(error))
            }
        }
    }

    // MARK: Writing

    /// Writes what this turn queued (encrypted first for TLS).
    private func flush() {
        guard case .open = phase, !pending.isEmpty else { return }
        if let tls {
            do throws(TLSSession.Failure) { try tls.write(pending[...]) } catch { return end(.tls(error)) }
            pending.removeAll(keepingCapacity: true)
            tls.drain(into: &wire)
        } else if wire.isEmpty {
            swap(&wire, &pending)
        } else {
            wire += pending
            pending.removeAll(keepingCapacity: true)
        }
        writeWire()
    }

    /// Sends what the socket has not taken yet; waits for it to be writable when it is full.
    private func writeWire() {
        while wireSent < wire.count {
            let count = wire.withUnsafeBytes { bytes in
                Glibc.send(socket, bytes.baseAddress! + wireSent, bytes.count - wireSent, Int32(MSG_NOSIGNAL))
            }
            if count < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN { break }
                let securing = if case .securing = phase { true } else { false }
                return end(.failed(errno: errno, securing: securing))
            }
            wireSent += count
        }
        let drained = wireSent == wire.count
        if drained {
            wire.removeAll(keepingCapacity: true)
            wireSent = 0
        }
        watch?.wantsWritable(!drained)
    }
}
