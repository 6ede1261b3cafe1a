import BluetoothCore
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import CBluetooth

/// H4 over a file descriptor: a UART, a TCP or Unix stream socket, or the HCI user
/// channel socket (which returns one whole H4 packet per read, a special case of a stream).
///
/// A reader thread waits in `poll` on the descriptor and on an eventfd that `close()`
/// signals, so closing wakes it at once; the thread is joined and both descriptors are
/// closed before `close()` returns.
///
/// ACL packets the controller's returned credits release together go out in one system
/// call: `sendmmsg` on a packet socket (a datagram each), `writev` on a stream.
public final class FileDescriptorTransport: HCITransport {
    private enum State {
        case ready
        case running(ReaderThread)
        case closed
    }

    let fd: Int32
    let wakeFd: Int32
    private let name: String
    private let capture: BTSnoopWriter?
    private let framerLimit: Int
    /// A socket that hands over one packet per read (the HCI user channel, SOCK_RAW; a
    /// SOCK_SEQPACKET pair): the reader takes every packet already queued in one go, and
    /// batched ACL packets go out a datagram each.
    private let isPacketSocket: Bool
    /// The reader thread's name (``ReaderThread/threadName`` unless a test names it apart).
    private let readerThreadName: String
    private let state = Mutex(State.ready)
    private let writeLock = Mutex(())

    /// Wraps an open descriptor; the transport owns it from now on (and closes it if this
    /// initializer fails).
    public convenience init(descriptor: Int32, name: String, capture: BTSnoopWriter? = nil, framerLimit: Int = 4096) throws(TransportError) {
        try self.init(descriptor: descriptor, name: name, capture: capture, framerLimit: framerLimit, readerThreadName: ReaderThread.threadName)
    }

    /// As ``init(descriptor:name:capture:framerLimit:)``, its reader thread named
    /// `readerThreadName`: unit tests name theirs apart, so the integration tests, which
    /// run beside them and count the stack's reader threads by name, count only their own.
    package init(descriptor: Int32, name: String, capture: BTSnoopWriter? = nil, framerLimit: Int = 4096,
                 readerThreadName: String) throws(TransportError) {
        // Without the eventfd, close() could not wake the reader thread.
        let wake = eventfd(0, Int32(EFD_CLOEXEC))
        guard wake >= 0 else {
            let code = errno
            Glibc.close(descriptor)
            throw .openFailed(what: "\(name) (eventfd)", errno: code)
        }
        fd = descriptor
        wakeFd = wake
        self.name = name
        self.capture = capture
        self.framerLimit = framerLimit
        isPacketSocket = Self.isPacketSocket(descriptor)
        self.readerThreadName = readerThreadName
    }

    private static func isPacketSocket(_ descriptor: Int32) -> Bool {
        var type: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_TYPE, &type, &length) == 0 else { return false }  // not a socket: a UART
        // SOCK_RAW and SOCK_SEQPACKET (<bits/socket_type.h>); named by value, since naming
        // Glibc's enum here hides SOCK_STREAM from StreamSocket in an optimised build.
        return type == 3 || type == 5
    }

    deinit { close() }

    /// The name given at creation (the transport spec string).
    public var description: String { name }

    /// Starts the reader thread; throws ``TransportError/closed`` if already started or closed.
    public func start(_ deliver: @escaping @Sendable (TransportDelivery) -> Void) throws(TransportError) {
        try state.withLock { (state: inout State) throws(TransportError) in
            guard case .ready = state else { throw TransportError.closed }
            let fd = fd, wakeFd = wakeFd, name = name, capture = capture, limit = framerLimit, packets = isPacketSocket
            state = .running(try ReaderThread(name: readerThreadName) {
                Self.readLoop(fd: fd, wakeFd: wakeFd, name: name, capture: capture, framerLimit: limit, packetSocket: packets, deliver: deliver)
            })
        }
    }

    /// Writes the packet as H4, after capturing it; throws once closed or if the write fails.
    ///
    /// An ACL packet's data (a view of the frame L2CAP built) is not copied: its five
    /// header octets (H4 indicator, handle and flags, length) are gathered in front of it by
    /// `writev`. Other packets are encoded whole; they are few and small.
    public func send(_ packet: HCIPacket) throws(TransportError) {
        try writing { fd in
            if let capture { capture.write(packet, direction: .sent) }
            if case let .acl(acl) = packet {
                return withUnsafeBytes(of: acl.h4Header) { writeAll(fd, header: $0, body: acl.data) }
            }
            return writeAll(fd, packet.encodeH4()[...])
        }
    }

    /// Writes the packets in order, in one system call where it can: `sendmmsg` on a packet
    /// socket (still one datagram a packet, as the user channel requires), `writev` on a
    /// stream. Their data is gathered behind their headers, not copied.
    public func send(acl packets: [ACLDataPacket]) throws(TransportError) {
        guard packets.count > 1 else {
            if let packet = packets.first { try send(.acl(packet)) }
            return
        }
        try writing { fd in
            if let capture { for packet in packets { capture.write(.acl(packet), direction: .sent) } }
            return isPacketSocket ? BatchedWrites.sendDatagrams(fd, packets) : BatchedWrites.writeStream(fd, packets)
        }
    }

    /// Runs `write` on the open descriptor under the write lock; throws ``TransportError/closed``
    /// once closed, or the write's errno when it returns false.
    private func writing(_ write: (Int32) -> Bool) throws(TransportError) {
        // The state is checked under the write lock, which close() also takes before it
        // closes the descriptor: a write never lands on a closed or reused descriptor.
        let outcome: Result<Void, TransportError> = writeLock.withLock { _ in
            let isOpen = state.withLock { state in
                if case .closed = state { return false }
                return true
            }
            guard isOpen else { return .failure(.closed) }
            guard write(fd) else { return .failure(.ioFailed(what: "writing to \(name)", errno: errno)) }
            return .success(())
        }
        try outcome.get()
    }

    /// Wakes and joins the reader thread, then closes both descriptors. Idempotent.
    public func close() {
        let previous = state.withLock { state in
            let previous = state
            state = .closed
            return previous
        }
        switch previous {
        case .closed: return
        case .ready: break
        case .running(let thread):
            var one: UInt64 = 1
            _ = Glibc.write(wakeFd, &one, 8)
            thread.join()
        }
        writeLock.withLock { _ in
            Glibc.close(fd)
            Glibc.close(wakeFd)
        }
    }

    private static func readLoop(fd: Int32, wakeFd: Int32, name: String, capture: BTSnoopWriter?, framerLimit: Int, packetSocket: Bool,
                                 deliver: @Sendable (TransportDelivery) -> Void) {
        // The longest packet the framer accepts, with its indicator and header: a packet
        // socket's read is only ever offered at least this much room (a shorter buffer would
        // cut the packet, and a packet socket drops the rest).
        let longestPacket = 1 + 4 + max(framerLimit, 255)
        // On a packet socket, room for a 64 KiB burst and then the longest packet, so a read
        // can take a burst and never cut a packet (the framer doubles this for its buffer).
        let readSize = packetSocket ? 65536 + longestPacket : 65536
        // From a controller: ACL, SCO, events and ISO; a command byte means lost framing.
        var framer = H4Framer(acceptedTypes: [.acl, .sco, .event, .iso], maximumACLDataLength: framerLimit)
        var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeFd, events: Int16(POLLIN), revents: 0)]
        while true {
            let ready = poll(&fds, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                deliver(.failed(.ioFailed(what: "waiting for \(name)", errno: errno)))
                return
            }
            if fds[1].revents != 0 { return }  // close() asked us to stop
            guard fds[0].revents != 0 else { continue }
            // Read into the framer's buffer: the packets are views of the bytes as read.
            var readError: Int32 = 0
            let (count, framed): (Int, [(H4PacketType, ArraySlice<UInt8>)])
            do {
                (count, framed) = try framer.read(maximum: readSize) { buffer in
                    let count = Glibc.read(fd, buffer.baseAddress, buffer.count)
                    if count < 0 { readError = errno }
                    guard packetSocket, count > 0 else { return count }
                    // One packet per read: take those queued behind it as well, without
                    // waiting, so the stack gets them as one delivery rather than one each.
                    var total = count
                    while buffer.count - total >= longestPacket {
                        let more = recv(fd, buffer.baseAddress! + total, buffer.count - total, Int32(MSG_DONTWAIT))
                        guard more > 0 else { break }  // EAGAIN: nothing queued (an error shows at the next read)
                        total += more
                    }
                    return total
                }
            } catch {
                deliver(.failed(.framing(error)))
                return
            }
            if count < 0 {
                if readError == EINTR || readError == EAGAIN { continue }
                deliver(.failed(.ioFailed(what: "reading from \(name)", errno: readError)))
                return
            }
            if count == 0 {
                deliver(.failed(.closedByPeer(what: name)))
                return
            }
            var packets: [HCIPacket] = []
            packets.reserveCapacity(framed.count)
            for (type, body) in framed {
                capture?.write(h4: [type.rawValue] + body, direction: .received)
                do {
                    packets.append(try HCIPacket(type: type, body: body))
                } catch {
                    // The framer guarantees the lengths; this is defence in depth.
                    deliver(.failed(.malformedPacket("\(type) packet: \(error)")))
                    return
                }
            }
            if !packets.isEmpty { deliver(.packets(packets)) }
        }
    }
}
