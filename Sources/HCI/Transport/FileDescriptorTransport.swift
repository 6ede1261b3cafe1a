import BluetoothCore
#if canImport(Glibc)
    import Glibc
#endif
import Synchronization
import CBluetooth

/// H4 over a file descriptor: a UART, a TCP or Unix stream socket, or the HCI user
/// channel socket (which returns one whole H4 packet per read, a special case of a stream).
///
/// The descriptor is watched by the stack's event loop (`EventLoop.stack`): each time it is
/// readable, one read (on a packet socket, every packet queued) is framed and delivered on
/// the loop thread, which is the stack's actor, so no thread switch stands between the
/// controller's bytes and the layers. Closing cancels the watch (waiting for a read under
/// way on another thread) before the descriptor is closed.
///
/// ACL packets the controller's returned credits release together go out in one system
/// call: `sendmmsg` on a packet socket (a datagram each), `writev` on a stream.
public final class FileDescriptorTransport: HCITransport {
    private enum State {
        case ready
        case running(EventLoop.Watch)
        case closed
    }

    let fd: Int32
    private let name: String
    private let capture: BTSnoopWriter?
    private let framerLimit: Int
    /// A socket that hands over one packet per read (the HCI user channel, SOCK_RAW; a
    /// SOCK_SEQPACKET pair): the reader takes every packet already queued in one go, and
    /// batched ACL packets go out a datagram each.
    private let isPacketSocket: Bool
    /// The name of the watch on the event loop (``watchName`` unless a test names it apart).
    private let watchName: String
    private let state = Mutex(State.ready)
    private let writeLock = Mutex(())

    /// The name a live transport's watch carries on the event loop: the integration tests
    /// count these to check that a closed transport leaves none.
    package static let watchName = "bluejay-hci-rx"

    /// Wraps an open descriptor; the transport owns it from now on.
    public convenience init(descriptor: Int32, name: String, capture: BTSnoopWriter? = nil, framerLimit: Int = 4096) {
        self.init(
            descriptor: descriptor, name: name, capture: capture, framerLimit: framerLimit, watchName: Self.watchName)
    }

    /// As ``init(descriptor:name:capture:framerLimit:)``, its watch named `watchName`: unit
    /// tests name theirs apart, so the integration tests, which run beside them and count
    /// the stack's watches by name, count only their own.
    package init(
        descriptor: Int32, name: String, capture: BTSnoopWriter? = nil, framerLimit: Int = 4096, watchName: String
    ) {
        fd = descriptor
        self.name = name
        self.capture = capture
        self.framerLimit = framerLimit
        isPacketSocket = Self.isPacketSocket(descriptor)
        self.watchName = watchName
    }

    private static func isPacketSocket(_ descriptor: Int32) -> Bool {
        var type: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        // Not a socket: a UART.
        guard getsockopt(descriptor, SOL_SOCKET, SO_TYPE, &type, &length) == 0 else { return false }
        // SOCK_RAW and SOCK_SEQPACKET (<bits/socket_type.h>); named by value, since naming
        // Glibc's enum here hides SOCK_STREAM from StreamSocket in an optimised build.
        return type == 3 || type == 5
    }

    deinit { close() }

    /// The name given at creation (the transport spec string).
    public var description: String { name }

    /// True: the event loop's watch reads the descriptor.
    public var deliversOnStackLoop: Bool { true }

    /// Starts watching the descriptor; `deliver` runs on the event loop's thread. Throws
    /// ``TransportError/closed`` if already started or closed.
    public func start(_ deliver: @escaping @Sendable (TransportDelivery) -> Void) throws(TransportError) {
        try state.withLock { (state: inout State) throws(TransportError) in
            guard case .ready = state else { throw TransportError.closed }
            let reader = DescriptorReader(
                fd: fd, name: name, capture: capture, framerLimit: framerLimit, packetSocket: isPacketSocket,
                deliver: deliver)
            let watching = Result { () throws(EventLoop.WatchError) in
                try EventLoop.stack.watch(fd, name: watchName) { watch in reader.readOnce(watch) }
            }
            switch watching {
            case .success(let watch): state = .running(watch)
            case .failure(let error):
                throw TransportError.openFailed(what: "\(name) (watching it for reading)", errno: error.errno)
            }
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

    /// Cancels the watch (waiting for a read under way on another thread), then closes the
    /// descriptor. Idempotent.
    public func close() {
        let previous = state.withLock { state in
            let previous = state
            state = .closed
            return previous
        }
        switch previous {
        case .closed: return
        case .ready: break
        case .running(let watch): watch.cancel()
        }
        writeLock.withLock { _ in _ = Glibc.close(fd) }
    }
}
