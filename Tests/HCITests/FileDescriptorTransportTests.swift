import BluetoothCore
#if canImport(Glibc)
    import Glibc
#endif
import HCI
import HCITestSupport
import Synchronization
import Testing

// The file-descriptor transport writes an ACL packet as its header gathered in front of its
// data (writev), so L2CAP's frame is never copied. These tests hold the bytes on the other
// end of a real socket to what `encodeH4()` says they are, including when the kernel takes
// a write only in part.

/// The reader threads of the unit tests' transports: not the stack's name, which the
/// integration tests running beside these count to find a leaked thread.
let unitReaderName = "hci-rx-unit"

@Suite("FileDescriptorTransport writes")
struct FileDescriptorTransportTests {
    /// A connected stream socket pair: (ours, the controller's end).
    private static func socketPair(sendBuffer: Int32? = nil) throws -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0)
        if var size = sendBuffer {
            _ = setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        return (fds[0], fds[1])
    }

    /// Reads `count` bytes from `fd` on a thread of its own, so the writer may block.
    private static func reader(_ fd: Int32, count: Int) -> Task<[UInt8], Never> {
        // Blocking reads on a thread of their own: on the cooperative pool they could wait for
        // a pool thread the writer holds, as the large write below does.
        Task.detached {
            await blocking {
                var received: [UInt8] = []
                var chunk = [UInt8](repeating: 0, count: 4096)
                while received.count < count {
                    let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                    if n < 0, errno == EINTR { continue }
                    if n <= 0 { break }
                    received += chunk[0..<n]
                }
                return received
            }
        }
    }

    private static let packets: [HCIPacket] = [
        .command(HCICommandPacket(opcode: HCIOpcode(rawValue: 0x0C03))),
        // A slice that does not start at index 0, as L2CAP's fragments are.
        .acl(ACLDataPacket(handle: 0x0040, boundary: .firstNonFlushable, data: Array(0..<40)[7..<31])),
        .acl(ACLDataPacket(handle: 0x0EFF, boundary: .continuing, broadcast: 0b01, data: [])),
    ]

    @Test("ACL and command packets arrive as their H4 encoding, in order; the capture holds the same")
    func packetsArriveAsEncoded() async throws {
        let (ours, theirs) = try Self.socketPair()
        defer { close(theirs) }
        let directory = try TemporaryDirectory()
        defer { directory.remove(files: ["sent.btsnoop"]) }
        let capture = try BTSnoopWriter(path: directory.file("sent.btsnoop"))
        let transport = FileDescriptorTransport(
            descriptor: ours, name: "socketpair", capture: capture, watchName: unitReaderName)
        let expected = Self.packets.flatMap { $0.encodeH4() }
        let reading = Self.reader(theirs, count: expected.count)
        for packet in Self.packets { try transport.send(packet) }
        transport.close()
        capture.close()
        #expect(await reading.value == expected)
        let captured = try BTSnoopFile(path: directory.file("sent.btsnoop")).records.map { record -> [UInt8] in
            guard case let .packet(type, body) = record.content else { return [] }
            return [type.rawValue] + body
        }
        #expect(captured == Self.packets.map { $0.encodeH4() })
    }

    @Test("A packet larger than the socket's buffer is written whole")
    func largePacketWrittenWhole() async throws {
        // The smallest send buffer Linux allows: the writer waits for the reader several times.
        let (ours, theirs) = try Self.socketPair(sendBuffer: 1)
        defer { close(theirs) }
        let transport = FileDescriptorTransport(descriptor: ours, name: "socketpair", watchName: unitReaderName)
        let data = (0..<60_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let packet = HCIPacket.acl(ACLDataPacket(handle: 0x0041, boundary: .continuing, data: data[...]))
        let expected = packet.encodeH4()
        let reading = Self.reader(theirs, count: expected.count)
        // The write waits for the reader many times over: off the cooperative pool too.
        try await blocking { try transport.send(packet) }
        transport.close()
        #expect(await reading.value == expected)
    }

    @Test(
        "Short writes and EINTR resume where they stopped, across the header and the body",
        arguments: [1, 2, 3, 5, 7, 64])
    func shortWritesResume(step: Int) {
        // A kernel that takes at most `step` octets a call, and fails every third call with EINTR.
        var taken: [UInt8] = []
        var calls = 0
        let header: [UInt8] = [0x02, 0x40, 0x20, 0x09, 0x00]
        let body = [UInt8](0..<20)[3..<12]
        let ok = header.withUnsafeBytes { header in
            writeAll(99, header: header, body: body) { fd, vectors, count in
                #expect(fd == 99 && count == 2)
                calls += 1
                if calls % 3 == 0 {
                    errno = EINTR
                    return -1
                }
                var budget = step
                for vector in UnsafeBufferPointer(start: vectors, count: Int(count)) where budget > 0 {
                    let part = min(budget, vector.iov_len)
                    if part > 0 { taken += UnsafeRawBufferPointer(start: vector.iov_base, count: part) }
                    budget -= part
                }
                return step - budget
            }
        }
        #expect(ok)
        #expect(taken == header + body)
    }

    @Test("A failed write reports false with errno kept")
    func failedWrite() {
        let ok = [UInt8]([1, 2]).withUnsafeBytes { header in
            writeAll(99, header: header, body: [3]) { _, _, _ in
                errno = EPIPE
                return -1
            }
        }
        #expect(!ok)
        #expect(errno == EPIPE)
    }

    @Test("Sending after close fails with .closed and writes nothing")
    func sendAfterClose() throws {
        let (ours, theirs) = try Self.socketPair()
        defer { close(theirs) }
        let transport = FileDescriptorTransport(descriptor: ours, name: "socketpair", watchName: unitReaderName)
        transport.close()
        #expect(throws: TransportError.closed) { try transport.send(Self.packets[1]) }
    }
}

// A packet socket (the user channel's SOCK_RAW, a SOCK_SEQPACKET pair) hands over one packet
// per read. The reader takes every packet already queued in one go, so the stack gets a
// burst as one delivery, and offers each read room for the longest packet, so none is cut.
@Suite("FileDescriptorTransport reads a packet socket")
struct PacketSocketReadTests {
    /// What the transport delivered, in order.
    final class Deliveries: Sendable {
        private let list = Mutex<[[HCIPacket]]>([])
        func add(_ delivery: TransportDelivery) {
            if case let .packets(packets) = delivery { list.withLock { $0.append(packets) } }
        }
        var all: [[HCIPacket]] { list.withLock { $0 } }
    }

    @Test("Packets queued before the read arrive as one delivery, each whole and in order")
    func queuedPacketsArriveTogether() async throws {
        var fds: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0)
        defer { close(fds[1]) }
        // Events of every length up to the longest (255 parameter octets), and long ACL packets.
        var sent: [HCIPacket] = (0..<40).map { (index: Int) -> HCIPacket in
            let parameters = [UInt8](repeating: UInt8(index), count: index * 6 + 15)
            return .event(HCIEventPacket(code: 0xFF, parameters: parameters[...]))
        }
        sent += (0..<8).map { (index: Int) -> HCIPacket in
            let data = [UInt8](repeating: UInt8(index), count: 1000)
            return .acl(ACLDataPacket(handle: 0x0040, boundary: .firstFlushable, data: data[...]))
        }
        for packet in sent {
            let bytes = packet.encodeH4()
            #expect(bytes.withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) } == bytes.count)
        }
        let transport = FileDescriptorTransport(
            descriptor: fds[0], name: "seqpacket", framerLimit: 65535, watchName: unitReaderName)
        defer { transport.close() }
        let deliveries = Deliveries()
        try transport.start { deliveries.add($0) }
        #expect(await eventually { deliveries.all.flatMap { $0 }.count == sent.count })
        let delivered: [[UInt8]] = deliveries.all.joined().map { (packet: HCIPacket) -> [UInt8] in packet.encodeH4() }
        let sentBytes: [[UInt8]] = sent.map { (packet: HCIPacket) -> [UInt8] in packet.encodeH4() }
        #expect(delivered == sentBytes)
        // One read and the burst behind it: one delivery, not one per packet.
        #expect(deliveries.all.count == 1)
    }
}
