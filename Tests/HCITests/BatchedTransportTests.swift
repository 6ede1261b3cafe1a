import BluetoothCore
#if canImport(Glibc)
    import Glibc
#endif
import HCI
import HCITestSupport
import Synchronization
import Testing
import TestTraits

// The file-descriptor transport batches its work (issue 51): a packet socket's queued
// datagrams are taken in one go and handed over as one delivery, a stream is read in large
// chunks cut into packets, and ACL packets released together go out in one sendmmsg or
// writev. These tests run on real socket pairs and pipes, and wait on what the
// transport delivers (the suite's time limit is only a hang guard).

/// What a transport delivers, as a stream the test awaits: packets, then the end.
private final class Arrivals: Sendable {
    let stream: AsyncStream<TransportDelivery>
    let continuation: AsyncStream<TransportDelivery>.Continuation

    init() { (stream, continuation) = AsyncStream<TransportDelivery>.makeStream() }

    /// Every delivery up to and including the first failure (the end of the stream).
    func untilEnd() async -> (deliveries: [[HCIPacket]], end: TransportError?) {
        var deliveries: [[HCIPacket]] = []
        for await delivery in stream {
            switch delivery {
            case let .packets(packets): deliveries.append(packets)
            case let .failed(error): return (deliveries, error)
            }
        }
        return (deliveries, nil)
    }

    /// The next `count` packets, however many deliveries they come in.
    func next(_ count: Int) async -> [HCIPacket] {
        var packets: [HCIPacket] = []
        for await delivery in stream {
            guard case let .packets(more) = delivery else { break }
            packets += more
            if packets.count >= count { break }
        }
        return packets
    }
}

private func acl(_ index: Int, length: Int) -> HCIPacket {
    let data = (0..<length).map { UInt8(truncatingIfNeeded: $0 &+ index) }
    return .acl(
        ACLDataPacket(
            handle: ConnectionHandle(rawValue: UInt16(0x40 + index % 3)), boundary: .firstFlushable, data: data[...]))
}

private func event(_ index: Int) -> HCIPacket {
    .event(
        HCIEventPacket(
            code: 0xFF, parameters: [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: index % 256)[...]))
}

private func encoded(_ packets: [HCIPacket]) -> [[UInt8]] { packets.map { $0.encodeH4() } }

@Suite("FileDescriptorTransport batches its system calls", .hangGuard)
struct BatchedTransportTests {
    @Test("A burst larger than one delivery's 64 KiB arrives complete, in order, in few deliveries")
    func burstLargerThanOneBatch() async throws {
        var fds: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0)
        var room: Int32 = 4 << 20  // the whole burst is queued before the transport reads
        _ = setsockopt(fds[1], SOL_SOCKET, SO_SNDBUF, &room, socklen_t(MemoryLayout<Int32>.size))
        // Events and ACL packets mixed, some of 1.5 KiB, about 160 KiB in all.
        let sent: [HCIPacket] = (0..<600).map { index in
            index % 5 == 0 ? event(index) : acl(index, length: index % 37 == 1 ? 1500 + index : 200 + index % 60)
        }
        let writeEnd = fds[1]
        let writer = Task.detached {
            for bytes in encoded(sent) {
                #expect(bytes.withUnsafeBytes { write(writeEnd, $0.baseAddress, $0.count) } == bytes.count)
            }
            close(writeEnd)  // the end of the stream follows the burst
        }
        await writer.value  // all queued before the transport reads: deliveries come full
        let transport = FileDescriptorTransport(
            descriptor: fds[0], name: "seqpacket", framerLimit: 65535, watchName: unitReaderName)
        defer { transport.close() }
        let arrivals = Arrivals()
        try transport.start { arrivals.continuation.yield($0) }
        let (deliveries, end) = await arrivals.untilEnd()
        #expect(end == .closedByPeer(what: "seqpacket"))
        #expect(encoded(deliveries.flatMap { $0 }) == encoded(sent))
        // About 64 KiB a delivery: more than one, far fewer than one a packet.
        #expect((3...4).contains(deliveries.count), "\(deliveries.map(\.count))")
    }

    @Test("Datagrams written while the transport reads arrive whole and in order, the end after them")
    func concurrentBurst() async throws {
        var fds: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0)
        let sent: [HCIPacket] = (0..<5000).map { acl($0, length: 1 + $0 % 251) }
        let transport = FileDescriptorTransport(
            descriptor: fds[0], name: "seqpacket", framerLimit: 65535, watchName: unitReaderName)
        defer { transport.close() }
        let arrivals = Arrivals()
        try transport.start { arrivals.continuation.yield($0) }
        let writeEnd = fds[1]
        let writer = Task.detached {
            for bytes in encoded(sent) { _ = bytes.withUnsafeBytes { write(writeEnd, $0.baseAddress, $0.count) } }
            close(writeEnd)
        }
        let (deliveries, end) = await arrivals.untilEnd()
        await writer.value
        #expect(end == .closedByPeer(what: "seqpacket"))
        #expect(encoded(deliveries.flatMap { $0 }) == encoded(sent))
    }

    @Test("A stream read cut mid-packet loses nothing: the cut packet is completed by the next read")
    func streamCutMidPacket() async throws {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        let transport = FileDescriptorTransport(descriptor: fds[0], name: "pipe", watchName: unitReaderName)
        defer { transport.close() }
        let arrivals = Arrivals()
        try transport.start { arrivals.continuation.yield($0) }
        let first: [HCIPacket] = [acl(0, length: 100), event(7), acl(1, length: 200)]
        let firstBytes = first.flatMap { $0.encodeH4() }
        // Two packets and the head of the third (its indicator and half its header): the
        // read ends there, and the transport must hold on to the part.
        let cut = first[0].encodeH4().count + first[1].encodeH4().count + 3
        #expect(firstBytes.withUnsafeBytes { write(fds[1], $0.baseAddress, cut) } == cut)
        #expect(encoded(await arrivals.next(2)) == encoded(Array(first[..<2])))
        // The rest of it, then a burst longer than one read (64 KiB) written in pieces that
        // cut packets anywhere.
        let burst: [HCIPacket] = (2..<1200).map { $0 % 7 == 0 ? event($0) : acl($0, length: 40 + $0 % 200) }
        let rest = Array(firstBytes[cut...]) + burst.flatMap { $0.encodeH4() }
        let writeEnd = fds[1]
        let writer = Task.detached {
            rest.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let length = min(997, raw.count - offset)
                    let written = write(writeEnd, raw.baseAddress! + offset, length)
                    guard written > 0 else { return }
                    offset += written
                }
            }
            close(writeEnd)
        }
        let (deliveries, end) = await arrivals.untilEnd()
        await writer.value
        #expect(end == .closedByPeer(what: "pipe"))
        #expect(encoded(deliveries.flatMap { $0 }) == encoded(Array(first[2...]) + burst))
    }

    @Test(
        "Batched stream writes resume short writes across packets and their parts", arguments: [1, 3, 5, 6, 64, 1000])
    func batchedWritesResume(step: Int) {
        let packets: [ACLDataPacket] = (0..<70).map { index in
            ACLDataPacket(handle: 0x40, boundary: .continuing, data: Array(0..<UInt8(index % 60))[...])
        }
        var stream: [UInt8] = []
        var calls = 0
        let ok = BatchedWrites.writeStream(-1, packets) { _, vectors, count in
            calls += 1
            if calls % 3 == 0 {
                errno = EINTR
                return -1
            }
            // Take at most `step` octets, as a UART or a full socket might.
            var taken = 0
            for index in 0..<Int(count) where taken < step {
                let part = min(vectors[index].iov_len, step - taken)
                if part > 0 { stream += UnsafeRawBufferPointer(start: vectors[index].iov_base, count: part) }
                taken += part
            }
            return taken
        }
        #expect(ok)
        #expect(stream == packets.flatMap { HCIPacket.acl($0).encodeH4() })
    }

    @Test(
        "Batched datagrams resume after a sendmmsg that sent only some, one packet a datagram",
        arguments: [1, 2, 7, 64])
    func batchedDatagramsResume(step: Int) {
        let packets: [ACLDataPacket] = (0..<150).map { index in
            ACLDataPacket(handle: 0x40, boundary: .firstFlushable, data: Array(0..<UInt8(index % 100))[...])
        }
        var datagrams: [[UInt8]] = []
        var calls = 0
        let ok = BatchedWrites.sendDatagrams(-1, packets) { _, messages, count, _ in
            calls += 1
            if calls % 4 == 0 {
                errno = EINTR
                return -1
            }
            // Send at most `step` messages, as a signal or a full buffer might stop it.
            let sent = min(Int(count), step)
            for index in 0..<sent {
                let message = messages[index].msg_hdr
                var datagram: [UInt8] = []
                for part in 0..<Int(message.msg_iovlen) {
                    datagram += UnsafeRawBufferPointer(
                        start: message.msg_iov[part].iov_base, count: message.msg_iov[part].iov_len)
                }
                datagrams.append(datagram)
            }
            return Int32(sent)
        }
        #expect(ok)
        #expect(datagrams == packets.map { HCIPacket.acl($0).encodeH4() })
    }

    @Test("ACL packets beyond the controller's credits wait, and go when Number Of Completed Packets frees buffers")
    @BluetoothActor
    func creditsExhaustedMidBatch() async throws {
        var fds: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0)
        let relay = try SocketController(descriptor: fds[1])
        defer { relay.close() }
        let transport = FileDescriptorTransport(
            descriptor: fds[0], name: "seqpacket", framerLimit: 65535, watchName: unitReaderName)
        let controller = HCIController(transport: transport, configuration: .init(logger: .silent))
        defer { controller.close() }
        try await controller.start()
        let buffers = try #require(controller.aclFlow?.bufferCount)  // the fake's 4
        // ACL data needs its link, which counts its packets in the controller.
        let connected = LEConnectionEvent.connectionComplete(
            status: .success, handle: 0x40, role: 0, peerAddressType: 1,
            peerAddress: BluetoothAddress("F0:0D:B1:E7:00:01")!,
            parameters: LEConnectionParameters(interval: 24, latency: 0, supervisionTimeout: 400))
        relay.send(.event(HCIEvent.leMeta(connected.encoded()).packet))
        try await controller.send(ReadBDADDR())  // a round trip: the link is up
        let packets: [ACLDataPacket] = (0..<(3 * buffers + 1)).map { index in
            ACLDataPacket(
                handle: 0x40, boundary: .firstNonFlushable, data: [UInt8](repeating: UInt8(index), count: 27)[...])
        }
        for packet in packets { try controller.sendACL(packet) }
        // Only as many as the controller has buffers went out; the rest wait, in order.
        #expect(controller.aclFlow?.inFlight == buffers)
        #expect(controller.aclFlow?.queuedCount == packets.count - buffers)
        #expect(await relay.acl.next(buffers) == packets[..<buffers].map { HCIPacket.acl($0) })
        // Credits for all but one: that many go out together (one sendmmsg), the rest wait.
        relay.send(
            .event(
                HCIEvent.numberOfCompletedPackets(NumberOfCompletedPackets(completions: [(0x40, UInt16(buffers - 1))]))
                    .packet))
        #expect(await relay.acl.next(buffers - 1) == packets[buffers..<(2 * buffers - 1)].map { HCIPacket.acl($0) })
        relay.send(
            .event(
                HCIEvent.numberOfCompletedPackets(NumberOfCompletedPackets(completions: [(0x40, UInt16(buffers))]))
                    .packet))
        #expect(
            await relay.acl.next(buffers) == packets[(2 * buffers - 1)..<(3 * buffers - 1)].map { HCIPacket.acl($0) })
        #expect(controller.aclFlow?.queuedCount == 2)
        relay.send(
            .event(
                HCIEvent.numberOfCompletedPackets(NumberOfCompletedPackets(completions: [(0x40, UInt16(buffers))]))
                    .packet))
        #expect(await relay.acl.next(2) == packets[(3 * buffers - 1)...].map { HCIPacket.acl($0) })
        #expect(controller.aclFlow?.queuedCount == 0)
    }
}

/// A ``FakeController`` behind the far end of a SOCK_SEQPACKET pair, one H4 packet a
/// datagram as the user channel carries them: the host's commands are answered through the
/// socket; its ACL packets are handed to ``acl``, in order.
private final class SocketController: Sendable {
    private let fd: Int32
    private let fake = FakeController()
    private let reader: ReaderThread
    /// The host's ACL packets, as they arrive.
    let acl = Arrivals()

    init(descriptor: Int32) throws {
        fd = descriptor
        let fake = fake, acl = acl
        try fake.start { delivery in
            guard case let .packets(packets) = delivery else { return }
            for packet in packets {
                _ = packet.encodeH4().withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            }
        }
        reader = try ReaderThread(name: "test-controller") {
            var buffer = [UInt8](repeating: 0, count: 70_000)
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                if count < 0, errno == EINTR { continue }
                guard count > 0, let packet = try? HCIPacket(h4: buffer[..<count]) else { break }
                if case .acl = packet { acl.continuation.yield(.packets([packet])) } else { try? fake.send(packet) }
            }
            acl.continuation.finish()
        }
    }

    /// Writes `packet` to the host.
    func send(_ packet: HCIPacket) { fake.deliver(.packets([packet])) }

    /// Ends the socket (the reader sees the end) and joins the reader.
    func close() {
        shutdown(fd, Int32(SHUT_RDWR))
        reader.join()
        Glibc.close(fd)
    }
}
