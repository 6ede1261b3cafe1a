import BluetoothCore
#if canImport(Glibc)
    import Glibc
#endif

/// A descriptor transport's reading side, run by the event loop each time the descriptor is
/// readable: one read (on a packet socket, every packet already queued), framed as H4 and
/// delivered as one batch. Only the loop thread touches it, one turn at a time.
final class DescriptorReader: @unchecked Sendable {
    private let fd: Int32
    private let name: String
    private let capture: BTSnoopWriter?
    private let packetSocket: Bool
    private let deliver: @Sendable (TransportDelivery) -> Void
    /// The longest packet the framer accepts, with its indicator and header: a packet
    /// socket's read is only ever offered at least this much room (a shorter buffer would
    /// cut the packet, and a packet socket drops the rest).
    private let longestPacket: Int
    /// On a packet socket, room for a 64 KiB burst and then the longest packet, so a read
    /// can take a burst and never cut a packet (the framer doubles this for its buffer).
    private let readSize: Int
    /// From a controller: ACL, SCO, events and ISO; a command byte means lost framing.
    private var framer: H4Framer

    init(
        fd: Int32, name: String, capture: BTSnoopWriter?, framerLimit: Int, packetSocket: Bool,
        deliver: @escaping @Sendable (TransportDelivery) -> Void
    ) {
        self.fd = fd
        self.name = name
        self.capture = capture
        self.packetSocket = packetSocket
        self.deliver = deliver
        longestPacket = 1 + 4 + max(framerLimit, 255)
        readSize = packetSocket ? 65536 + longestPacket : 65536
        framer = H4Framer(acceptedTypes: [.acl, .sco, .event, .iso], maximumACLDataLength: framerLimit)
    }

    /// Reads what is there and delivers it; on the end of the stream or an error, delivers
    /// the failure and cancels `watch` (nothing follows a failure).
    func readOnce(_ watch: EventLoop.Watch) {
        if let failure = readAndDeliver() {
            watch.cancel()
            deliver(.failed(failure))
        }
    }

    private func readAndDeliver() -> TransportError? {
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
            return .framing(error)
        }
        if count < 0 {
            // Readiness can be spurious; the loop asks again.
            if readError == EINTR || readError == EAGAIN { return nil }
            return .ioFailed(what: "reading from \(name)", errno: readError)
        }
        if count == 0 { return .closedByPeer(what: name) }
        var packets: [HCIPacket] = []
        packets.reserveCapacity(framed.count)
        for (type, body) in framed {
            capture?.write(h4: [type.rawValue] + body, direction: .received)
            do {
                packets.append(try HCIPacket(type: type, body: body))
            } catch {
                // The framer guarantees the lengths; this is defence in depth.
                return .malformedPacket("\(type) packet: \(error)")
            }
        }
        if !packets.isEmpty { deliver(.packets(packets)) }
        return nil
    }
}
