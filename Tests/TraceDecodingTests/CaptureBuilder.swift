import BluetoothCore
import HCI
import Testing

/// `<package root>/Fixtures/traces/l2cap`, from this file's path (never the working
/// directory): the captures of dynamic channels `make-fixtures.py` writes there.
let l2capFixtures: String = {
    // #filePath is <root>/Tests/TraceDecodingTests/CaptureBuilder.swift.
    var components = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
    components.removeLast(3)
    return components.joined(separator: "/") + "/Fixtures/traces/l2cap"
}()

/// Reads one capture of `Fixtures/traces/l2cap`; a missing one fails the test.
func readFixture(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> BTSnoopFile {
    do {
        return try BTSnoopFile(path: l2capFixtures + "/" + name)
    } catch {
        Issue.record("cannot read \(l2capFixtures)/\(name): \(error)", sourceLocation: sourceLocation)
        throw error
    }
}

/// Builds a datalink-1002 btsnoop capture record by record, for the cases the fixtures do
/// not hold (broken frames, vendor handles). Directions are the host's.
struct CaptureBuilder {
    private var records: [(flags: UInt32, data: [UInt8])] = []

    /// An HCI event from the controller.
    mutating func event(_ code: UInt8, _ parameters: [UInt8]) {
        records.append((3, [0x04, code, UInt8(parameters.count)] + parameters))
    }

    /// One ACL packet, a start fragment unless `start` is false.
    mutating func acl(handle: UInt16, _ data: [UInt8], received: Bool, start: Bool = true) {
        let header = handle | (start ? 0x2000 : 0x1000)
        records.append(
            (
                received ? 1 : 0,
                [0x02, UInt8(header & 0xFF), UInt8(header >> 8), UInt8(data.count & 0xFF), UInt8(data.count >> 8)]
                    + data
            ))
    }

    /// A whole L2CAP PDU in one ACL packet.
    mutating func l2cap(handle: UInt16, cid: UInt16, _ payload: [UInt8], received: Bool) {
        acl(
            handle: handle,
            [UInt8(payload.count & 0xFF), UInt8(payload.count >> 8), UInt8(cid & 0xFF), UInt8(cid >> 8)] + payload,
            received: received)
    }

    /// A successful BR/EDR Connection Complete for an ACL link to 11:22:33:44:55:66.
    mutating func connectionComplete(handle: UInt16) {
        event(0x03, [0x00, UInt8(handle & 0xFF), UInt8(handle >> 8), 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x01, 0x00])
    }

    /// A successful LE Connection Complete.
    mutating func leConnectionComplete(handle: UInt16) {
        event(
            0x3E,
            [
                0x01, 0x00, UInt8(handle & 0xFF), UInt8(handle >> 8), 0x00, 0x01, 1, 0, 0xE7, 0xB1, 0x0D, 0xF0,
                24, 0, 0, 0, 0x90, 0x01, 0x00,
            ])
    }

    /// The capture as a parsed file.
    func file() throws -> BTSnoopFile {
        var writer = ByteWriter(prefix: Array("btsnoop".utf8) + [0])
        writer.writeBigEndian(UInt32(1))
        writer.writeBigEndian(UInt32(1002))
        for (index, record) in records.enumerated() {
            writer.writeBigEndian(UInt32(record.data.count))
            writer.writeBigEndian(UInt32(record.data.count))
            writer.writeBigEndian(record.flags)
            writer.writeBigEndian(UInt32(0))
            writer.writeBigEndian(BTSnoop.epochOffsetMicroseconds + 1_704_067_200_000_000 + Int64(index) * 1000)
            writer.write(bytes: record.data)
        }
        return try BTSnoopFile(bytes: writer.bytes)
    }
}
