import BluetoothCore
#if canImport(Glibc)
import Glibc
#endif
import CBluetooth

/// Takes many datagrams from a packet socket (the HCI user channel's SOCK_RAW, a
/// SOCK_SEQPACKET pair) in one system call, `recvmmsg`, into buffers allocated once.
///
/// A packet socket hands over one HCI packet per receive, so a flood read with `read`/`recv`
/// costs a system call a packet. `recvmmsg` takes up to ``capacity`` in one, each into a slot
/// of its own. The reader thread owns it; it is not shared.
///
/// Each slot is a small inline part, room for any event and the longest BR/EDR ACL packet,
/// followed (a second I/O vector) by a spill part that only a longer datagram reaches: a
/// packet socket drops what does not fit, so every datagram is offered room for the longest
/// packet the transport accepts, yet the memory touched stays about ``capacity`` small slots.
/// The spill parts are mapped but never written in practice, so they cost address space only.
final class DatagramBatchReader {
    /// The most datagrams one ``receive(from:)`` takes.
    let capacity: Int
    /// The longest datagram a slot holds whole.
    let longestDatagram: Int
    /// Room per slot before its spill part: an event (1 + 2 + 255) or a BR/EDR ACL packet
    /// of 1021 octets (1 + 4 + 1021), the largest controllers commonly send.
    static let inlineSize = 1 + 4 + 1021

    private let inlineSize: Int
    private let spillSize: Int
    private let region: UnsafeMutableRawPointer
    private let regionSize: Int
    private let messages: UnsafeMutablePointer<mmsghdr>
    private let vectors: UnsafeMutablePointer<iovec>
    /// Datagrams the last ``receive(from:)`` took.
    private(set) var count = 0

    /// Slots for `capacity` datagrams of up to `longestDatagram` octets each.
    init(capacity: Int = 64, longestDatagram: Int) throws(TransportError) {
        self.capacity = capacity
        self.longestDatagram = longestDatagram
        inlineSize = min(Self.inlineSize, longestDatagram)
        spillSize = longestDatagram - inlineSize
        // One anonymous mapping for all slots: its pages are only backed once written, so
        // spill parts no datagram reaches cost nothing but address space.
        regionSize = capacity * longestDatagram
        guard let mapped = mmap(nil, regionSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              mapped != MAP_FAILED else {
            throw .openFailed(what: "receive buffers (mmap)", errno: errno)
        }
        region = mapped
        messages = .allocate(capacity: capacity)
        vectors = .allocate(capacity: 2 * capacity)
        let spillStart = region + capacity * inlineSize
        for slot in 0..<capacity {
            vectors[2 * slot] = iovec(iov_base: region + slot * inlineSize, iov_len: inlineSize)
            vectors[2 * slot + 1] = iovec(iov_base: spillStart + slot * spillSize, iov_len: spillSize)
            messages[slot] = mmsghdr()
            messages[slot].msg_hdr.msg_iov = vectors + 2 * slot
            messages[slot].msg_hdr.msg_iovlen = spillSize > 0 ? 2 : 1
        }
    }

    deinit {
        munmap(region, regionSize)
        messages.deallocate()
        vectors.deallocate()
    }

    /// `MSG_WAITFORONE` (<bits/socket.h>, GNU only); named by value as Glibc's module hides it.
    private static let waitForOne: Int32 = 0x10000

    /// Takes the datagrams queued on `fd`, up to ``capacity``, without waiting: how many
    /// (a zero-length one is the end of the stream), or -1 with `errno` set (EAGAIN when
    /// none was queued).
    func receive(from fd: Int32) -> Int {
        let received = recvmmsg(fd, messages, UInt32(capacity), Int32(MSG_DONTWAIT) | Self.waitForOne, nil)
        count = max(0, Int(received))
        return Int(received)
    }

    /// The length of datagram `index` of the last receive.
    func length(_ index: Int) -> Int { Int(messages[index].msg_len) }

    /// The datagrams of the last receive before the first empty one (the end of the
    /// stream), and their total length.
    var whole: (datagrams: Int, octets: Int) {
        var octets = 0
        for index in 0..<count {
            let length = length(index)
            if length == 0 { return (index, octets) }
            octets += length
        }
        return (count, octets)
    }

    /// Copies the first `datagrams` datagrams end to end into `buffer` (which has room for
    /// them: see ``whole``), each in its order; returns the octets copied.
    ///
    /// The copy packs them into one buffer of exactly their size, which the packets become
    /// views of: slots are reused at once, and a packet an app holds on to keeps alive only
    /// its own batch's octets. It costs far less than the system calls the batch saved.
    func copy(_ datagrams: Int, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        var offset = 0
        for index in 0..<datagrams {
            let length = length(index)
            let inline = min(length, inlineSize)
            (buffer.baseAddress! + offset).copyMemory(from: vectors[2 * index].iov_base!, byteCount: inline)
            if length > inline {
                (buffer.baseAddress! + offset + inline).copyMemory(from: vectors[2 * index + 1].iov_base!, byteCount: length - inline)
            }
            offset += length
        }
        return offset
    }
}
