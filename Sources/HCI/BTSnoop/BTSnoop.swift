import BluetoothCore
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Synchronization

/// btsnoop files (RFC 1761 style, as written by Android, BlueZ's btmon and Bumble):
/// a 16-byte header, then records of a 24-byte big-endian header and the packet.
public enum BTSnoop {
    /// The file magic, "btsnoop\0".
    public static let magic: [UInt8] = Array("btsnoop".utf8) + [0]
    /// Microseconds between 0000-01-01 (btsnoop's epoch) and 1970-01-01.
    public static let epochOffsetMicroseconds: Int64 = 0x00DC_DDB3_0F2F_8000

    /// The packet format of a file's records.
    public enum Datalink: UInt32, Sendable {
        /// HCI packets without the H4 indicator; flags bit 1 tells commands/events from data.
        case hciUnencapsulated = 1001
        /// HCI packets with the H4 indicator byte in front (what this stack writes).
        case hciUART = 1002
        /// The Linux monitor format of btmon: the opcode in the flags' low 16 bits.
        case linuxMonitor = 2001
    }

    /// Which way a packet went, from the host's point of view.
    public enum Direction: Sendable, Equatable {
        /// Host to controller (commands, outgoing ACL).
        case sent
        /// Controller to host (events, incoming ACL).
        case received
    }
}

/// Tees HCI packets into a btsnoop file (datalink 1002, H4), one `write(2)` per record
/// and no user-space buffering, so a killed process leaves every record it wrote readable.
///
/// With a redactor (`--capture-redacted`), each packet's secret fields are zeroed before
/// it is written, lengths and every other octet kept: a capture that can be shared.
public final class BTSnoopWriter: Sendable {
    /// The file, and the redactor following the packets written to it: one lock for both,
    /// so the redactor sees fragments in the order they are written.
    private struct State {
        var fd: Int32
        var redactor: (any PacketRedacting)?
    }

    private let state: Mutex<State>
    /// The file being written.
    public let path: String
    /// Whether secrets are zeroed before they are written.
    public let redacts: Bool

    /// Creates (or truncates) `path` and writes the file header; with `redactor`, every
    /// packet's secret fields (as it names them) are written as zeros.
    public init(path: String, redactor: (any PacketRedacting)? = nil) throws(TransportError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .captureFailed(path: path, errno: errno) }
        var header = ByteWriter(capacity: 16, prefix: BTSnoop.magic)
        header.writeBigEndian(UInt32(1))
        header.writeBigEndian(BTSnoop.Datalink.hciUART.rawValue)
        guard writeAll(fd, header.bytes[...]) else {
            let error = errno
            Glibc.close(fd)
            throw .captureFailed(path: path, errno: error)
        }
        state = Mutex(State(fd: fd, redactor: redactor))
        self.path = path
        redacts = redactor != nil
    }

    deinit { state.withLock { state in if state.fd >= 0 { Glibc.close(state.fd) } } }

    /// Appends one packet, stamped with the current wall-clock time.
    public func write(_ packet: HCIPacket, direction: BTSnoop.Direction) {
        write(h4: packet.encodeH4()[...], direction: direction)
    }

    /// Appends one H4 packet (indicator byte first).
    public func write(h4 bytes: ArraySlice<UInt8>, direction: BTSnoop.Direction, timestamp: Int64? = nil) {
        let type = bytes.first.flatMap(H4PacketType.init(rawValue:))
        var flags: UInt32 = direction == .received ? 1 : 0
        if type == .command || type == .event { flags |= 2 }
        let stamp = timestamp ?? Self.now()
        state.withLock { state in
            guard state.fd >= 0 else { return }
            var record = ByteWriter(capacity: 24 + bytes.count)
            record.writeBigEndian(UInt32(bytes.count))  // original length
            record.writeBigEndian(UInt32(bytes.count))  // included length
            record.writeBigEndian(flags)
            record.writeBigEndian(UInt32(0))  // cumulative drops
            record.writeBigEndian(UInt64(bitPattern: stamp))
            if state.redactor != nil, let type {
                var packet = Array(bytes)
                let fields = state.redactor!.secretFields(type: type, body: packet[1...], direction: direction)
                packet.zero(fields.map { $0.shifted(by: 1) })
                record.write(bytes: packet)
            } else {
                record.write(bytes: bytes)
            }
            _ = writeAll(state.fd, record.bytes[...])
        }
    }

    /// Closes the file; later writes are ignored.
    public func close() {
        state.withLock { state in
            if state.fd >= 0 { Glibc.close(state.fd) }
            state.fd = -1
        }
    }

    /// Now, in btsnoop's microseconds since year 0.
    static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1_000_000 + Int64(time.tv_nsec) / 1000 + BTSnoop.epochOffsetMicroseconds
    }
}

extension ByteWriter {
    /// Appends a big-endian value (btsnoop's byte order).
    public mutating func writeBigEndian<T: FixedWidthInteger>(_ value: T) {
        let big = value.bigEndian
        withUnsafeBytes(of: big) { write(bytes: $0) }
    }
}

extension ByteReader {
    /// Reads a big-endian value (btsnoop's byte order).
    public mutating func readBigEndian<T: FixedWidthInteger>(_: T.Type = T.self) throws(DecodingError) -> T {
        let bytes = try readBytes(MemoryLayout<T>.size)
        return bytes.reduce(T.zero) { ($0 << 8) | T($1) }
    }
}

/// One record of a btsnoop file.
public struct BTSnoopRecord: Sendable {
    /// Position of the record in the file, from 1 (as Wireshark numbers frames).
    public var number: Int
    /// Microseconds since 0000-01-01.
    public var timestamp: Int64
    /// Host→controller or controller→host.
    public var direction: BTSnoop.Direction
    /// The record's raw flags field.
    public var flags: UInt32
    /// Length of the packet as captured; may exceed `data.count` in a truncated capture.
    public var originalLength: Int
    /// What the record holds.
    public var content: Content

    /// What a record holds once its datalink is taken into account.
    public enum Content: Sendable {
        /// An HCI packet: its type and its bytes without the indicator.
        case packet(H4PacketType, ArraySlice<UInt8>)
        /// A datalink-1002 record whose first byte is no packet type.
        case unknownType(UInt8, ArraySlice<UInt8>)
        /// A btmon (2001) record that is no packet: index added/removed, system note, …
        case monitor(opcode: UInt16, index: UInt16, ArraySlice<UInt8>)
    }

    /// A record as read from a file, or built to feed a formatter or a summary.
    public init(
        number: Int, timestamp: Int64, direction: BTSnoop.Direction, flags: UInt32, originalLength: Int,
        content: Content
    ) {
        (self.number, self.timestamp, self.direction, self.flags, self.originalLength, self.content) =
            (number, timestamp, direction, flags, originalLength, content)
    }

    /// Microseconds since 1970-01-01. A corrupt timestamp too far in the past to shift
    /// (its top bit set) gives `Int64.min` rather than trapping.
    public var unixMicroseconds: Int64 {
        let (value, overflow) = timestamp.subtractingReportingOverflow(BTSnoop.epochOffsetMicroseconds)
        return overflow ? .min : value
    }
}

/// Reads a whole btsnoop file of datalink 1001, 1002 or 2001.
public struct BTSnoopFile: Sendable {
    /// The datalink of the file.
    public let datalink: BTSnoop.Datalink
    /// Every complete record, in order.
    public let records: [BTSnoopRecord]
    /// Set when the file ends inside a record (a capture cut off by a crash): what was
    /// left over. The records before it are all there.
    public let truncatedTail: String?

    /// Reads and parses `path`.
    public init(path: String) throws(BTSnoopError) {
        let bytes: [UInt8]
        do { bytes = try readWholeFile(path) } catch { throw .unreadable(path: path, errno: error.errno) }
        try self.init(bytes: bytes)
    }

    /// Parses a btsnoop file held in memory.
    public init(bytes: [UInt8]) throws(BTSnoopError) {
        var reader = ByteReader(bytes)
        guard bytes.count >= 16 else { throw .notBTSnoop("only \(bytes.count) bytes, a header has 16") }
        let magic = try! reader.readBytes(8)
        guard Array(magic) == BTSnoop.magic else { throw .notBTSnoop("bad magic \(magic.hexDump)") }
        let version = try! reader.readBigEndian(UInt32.self)
        guard version == 1 else { throw .unsupportedVersion(version) }
        let datalinkValue = try! reader.readBigEndian(UInt32.self)
        guard let datalink = BTSnoop.Datalink(rawValue: datalinkValue) else {
            throw .unsupportedDatalink(datalinkValue)
        }
        self.datalink = datalink
        var records: [BTSnoopRecord] = []
        var tail: String?
        while !reader.isAtEnd {
            let number = records.count + 1
            guard reader.count >= 24 else {
                tail = "record \(number): \(reader.count) byte(s) left, a record header has 24"
                break
            }
            let originalLength = Int(try! reader.readBigEndian(UInt32.self))
            let includedLength = Int(try! reader.readBigEndian(UInt32.self))
            let flags = try! reader.readBigEndian(UInt32.self)
            _ = try! reader.readBigEndian(UInt32.self)  // cumulative drops
            let timestamp = try! reader.readBigEndian(Int64.self)
            guard reader.count >= includedLength else {
                tail = "record \(number): \(includedLength) byte(s) announced, \(reader.count) left"
                break
            }
            let data = try! reader.readBytes(includedLength)
            let (direction, content) = Self.interpret(data, flags: flags, datalink: datalink)
            records.append(
                BTSnoopRecord(
                    number: number, timestamp: timestamp, direction: direction, flags: flags,
                    originalLength: originalLength, content: content))
        }
        self.records = records
        truncatedTail = tail
    }

    /// A record's direction and content from its data, flags and the file's datalink; the
    /// content's bytes are a slice of `data` (same indices).
    static func interpret(_ data: ArraySlice<UInt8>, flags: UInt32, datalink: BTSnoop.Datalink) -> (
        BTSnoop.Direction, BTSnoopRecord.Content
    ) {
        switch datalink {
        case .hciUART:
            let direction: BTSnoop.Direction = flags & 1 == 0 ? .sent : .received
            guard let first = data.first else { return (direction, .unknownType(0, data)) }
            guard let type = H4PacketType(rawValue: first) else {
                return (direction, .unknownType(first, data.dropFirst()))
            }
            return (direction, .packet(type, data.dropFirst()))
        case .hciUnencapsulated:
            let direction: BTSnoop.Direction = flags & 1 == 0 ? .sent : .received
            let isCommandOrEvent = flags & 2 != 0
            let type: H4PacketType = isCommandOrEvent ? (direction == .sent ? .command : .event) : .acl
            return (direction, .packet(type, data))
        case .linuxMonitor:
            let opcode = UInt16(flags & 0xFFFF)
            let index = UInt16(flags >> 16)
            switch opcode {
            case 2: return (.sent, .packet(.command, data))
            case 3: return (.received, .packet(.event, data))
            case 4: return (.sent, .packet(.acl, data))
            case 5: return (.received, .packet(.acl, data))
            case 6: return (.sent, .packet(.sco, data))
            case 7: return (.received, .packet(.sco, data))
            case 18: return (.sent, .packet(.iso, data))
            case 19: return (.received, .packet(.iso, data))
            default: return (.received, .monitor(opcode: opcode, index: index, data))
            }
        }
    }
}

/// Why a btsnoop file could not be read.
public enum BTSnoopError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file could not be opened or read.
    case unreadable(path: String, errno: Int32)
    /// Shorter than a header, or the magic is not `btsnoop\0`.
    case notBTSnoop(String)
    /// A header version other than 1.
    case unsupportedVersion(UInt32)
    /// A datalink other than 1001, 1002 or 2001.
    case unsupportedDatalink(UInt32)

    /// A one-line message naming the file and what is wrong with it.
    public var description: String {
        switch self {
        case let .unreadable(path, code): "cannot read \(path): \(errorName(code))"
        case let .notBTSnoop(why): "not a btsnoop file: \(why)"
        case let .unsupportedVersion(version): "btsnoop version \(version) is not supported (only version 1 exists)"
        case let .unsupportedDatalink(value):
            "btsnoop datalink \(value) is not supported (1001 HCI, 1002 H4 and 2001 btmon are)"
        }
    }
}
