import BluetoothCore
#if canImport(Glibc)
    import Glibc
#endif
import CBluetooth

/// Several ACL packets written in one system call: what the controller's returned credits
/// released together. Each packet's five header octets (H4 indicator, handle and flags,
/// length) are gathered in front of its data, which is not copied.
package enum BatchedWrites {
    /// Packets per system call at most: two I/O vectors a packet, within Linux's IOV_MAX
    /// (1024) for `writev`, and a bound on what is gathered on the stack at once.
    package static let maximumBatch = 64

    /// Writes each packet as one datagram (`sendmmsg`), on a packet socket: the HCI user
    /// channel takes one HCI packet per datagram. False with `errno` set on failure.
    package static func sendDatagrams(
        _ fd: Int32, _ packets: [ACLDataPacket],
        sendmmsg: (Int32, UnsafeMutablePointer<mmsghdr>, UInt32, Int32) -> Int32 = {
            CBluetooth.sendmmsg($0, $1, $2, $3)
        }
    ) -> Bool {
        var start = 0
        while start < packets.count {
            let chunk = packets[start..<min(start + maximumBatch, packets.count)]
            let ok = withGathered(chunk) { vectors in
                let messages = UnsafeMutablePointer<mmsghdr>.allocate(capacity: chunk.count)
                defer { messages.deallocate() }
                for index in 0..<chunk.count {
                    messages[index] = mmsghdr()
                    messages[index].msg_hdr.msg_iov = vectors + 2 * index
                    messages[index].msg_hdr.msg_iovlen = 2
                }
                // A datagram goes whole or not at all; sendmmsg may stop after some (a
                // signal, a full buffer): go on from the first one not sent.
                var sent = 0
                while sent < chunk.count {
                    let count = sendmmsg(fd, messages + sent, UInt32(chunk.count - sent), Int32(MSG_NOSIGNAL))
                    if count < 0 {
                        if errno == EINTR { continue }
                        return false
                    }
                    sent += Int(count)
                }
                return true
            }
            guard ok else { return false }
            start += chunk.count
        }
        return true
    }

    /// Writes the packets end to end into a byte stream (`writev`): a UART, a TCP or Unix
    /// socket. Short writes and EINTR resume where they stopped. False with `errno` set on
    /// failure.
    package static func writeStream(
        _ fd: Int32, _ packets: [ACLDataPacket],
        writev: (Int32, UnsafePointer<iovec>, Int32) -> Int = Glibc.writev
    ) -> Bool {
        var start = 0
        while start < packets.count {
            let chunk = packets[start..<min(start + maximumBatch, packets.count)]
            let ok = withGathered(chunk) { vectors in
                writeAll(fd, vectors: vectors, count: 2 * chunk.count, writev: writev)
            }
            guard ok else { return false }
            start += chunk.count
        }
        return true
    }

    /// Calls `body` with two I/O vectors per packet, its header then its data, all valid
    /// for the call.
    private static func withGathered(
        _ packets: ArraySlice<ACLDataPacket>, _ body: (UnsafeMutablePointer<iovec>) -> Bool
    ) -> Bool {
        let headerSize = 5
        let headers = UnsafeMutableRawPointer.allocate(byteCount: headerSize * packets.count, alignment: 1)
        let vectors = UnsafeMutablePointer<iovec>.allocate(capacity: 2 * packets.count)
        defer {
            headers.deallocate()
            vectors.deallocate()
        }
        for (index, packet) in packets.enumerated() {
            withUnsafeBytes(of: packet.h4Header) {
                (headers + headerSize * index).copyMemory(from: $0.baseAddress!, byteCount: headerSize)
            }
            vectors[2 * index] = iovec(iov_base: headers + headerSize * index, iov_len: headerSize)
        }
        return withData(packets, vectors + 1, body: { body(vectors) })
    }

    /// Fills every other vector from `vectors` with the packets' data, each pointer valid
    /// while the calls nest (at most ``maximumBatch`` deep), then calls `body`.
    private static func withData(
        _ packets: ArraySlice<ACLDataPacket>, _ vectors: UnsafeMutablePointer<iovec>, body: () -> Bool
    ) -> Bool {
        guard let packet = packets.first else { return body() }
        return packet.data.withUnsafeBytes { data in
            vectors.pointee = iovec(iov_base: UnsafeMutableRawPointer(mutating: data.baseAddress), iov_len: data.count)
            return withData(packets.dropFirst(), vectors + 2, body: body)
        }
    }
}
