import BluetoothCore
import HCI
import Testing
import TraceDecoding

// The walk's one record per link: what names a link to the walk's users (the reconstruction
// behind `mock:` keeps its state by it), and when the record goes.

@Suite("The trace walk's links")
struct TraceWalkTests {
    /// Walks `capture` record by record, noting after each one the serial of `handle`.
    private func serials(_ capture: CaptureBuilder, of handle: ConnectionHandle) throws -> [Int?] {
        let file = try capture.file()
        var walk = TraceWalk(followedHandles: nil)
        return file.records.map { record in
            _ = walk.step(record)
            return walk.serial(handle)
        }
    }

    @Test("A link's serial lasts from its first packet to its disconnection; a new link on the handle gets another")
    func serialPerLink() throws {
        var capture = CaptureBuilder()
        capture.leConnectionComplete(handle: 0x0040)
        capture.l2cap(handle: 0x0040, cid: 0x0004, [0x0A, 0x03, 0x00], received: false)  // Read Request
        capture.event(0x05, [0x00, 0x40, 0x00, 0x13])  // Disconnection Complete
        capture.leConnectionComplete(handle: 0x0040)
        let serials = try serials(capture, of: ConnectionHandle(rawValue: 0x0040))
        #expect(serials[0] != nil)
        #expect(serials[1] == serials[0])
        #expect(serials[2] == nil)
        #expect(serials[3] != nil && serials[3] != serials[0])
    }

    @Test("A handle no event announced gets a record with its first packet, or when a user asks for its serial")
    func unannouncedHandle() throws {
        var capture = CaptureBuilder()
        capture.l2cap(handle: 0x0041, cid: 0x0004, [0x0A, 0x03, 0x00], received: false)
        let file = try capture.file()
        var walk = TraceWalk(followedHandles: nil)
        let other = ConnectionHandle(rawValue: 0x0042)
        #expect(walk.serial(other) == nil)
        let made = walk.makeSerial(other)
        #expect(walk.serial(other) == made)
        _ = walk.step(file.records[0])
        let first = try #require(walk.serial(ConnectionHandle(rawValue: 0x0041)))
        #expect(first != made)
        #expect(walk.makeSerial(ConnectionHandle(rawValue: 0x0041)) == first)
    }

    @Test("A failed disconnection leaves the link and its serial")
    func failedDisconnection() throws {
        var capture = CaptureBuilder()
        capture.leConnectionComplete(handle: 0x0040)
        capture.event(0x05, [0x0C, 0x40, 0x00, 0x13])  // Command Disallowed
        let serials = try serials(capture, of: ConnectionHandle(rawValue: 0x0040))
        #expect(serials[0] != nil)
        #expect(serials[1] == serials[0])
    }
}
