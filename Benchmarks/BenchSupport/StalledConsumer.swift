// What a slow app costs (issue 53, item 4): Central's `values(of:)` at its default capacity,
// over a FloodPeer that floods at a steady rate for the whole run. The consumer takes the
// first value, stops for a while (30 s in `make bench`), then resumes and reads until every
// value of the flood is accounted for, delivered or dropped. The stream holds at most its
// capacity meanwhile; the process's peak RSS (the kernel's VmHWM) says what that costs.
import Bluejay
import BluetoothCore
import Foundation
import HCI

/// A stalled consumer's figures.
public struct StalledConsumerFigures: Sendable {
    /// Values the flood sent.
    public var count: Int
    /// Values the consumer read.
    public var delivered: Int
    /// Values the stream dropped (the oldest, past its capacity): its `droppedCount`.
    public var dropped: Int
    /// The process's RSS once connected and subscribed, before the flood.
    public var rssBeforeBytes: Int
    /// The process's peak RSS over the whole run (VmHWM).
    public var peakRSSBytes: Int
}

/// A host's ``Central`` over a paced ``FloodPeer``, its consumer stalled for a while.
@BluetoothActor
public final class StalledConsumerPath {
    private let peer: FloodPeer
    private let store: StoreDirectory
    private let host: BluetoothHost
    private let values: PeripheralValues
    private let count: Int

    /// Connects and subscribes with a stream of `capacity`; the flood, `count` values at
    /// `rate` a second, waits for ``run(stall:)``.
    public init(count: Int, payload: Int, rate: Int, capacity: Int) async throws {
        self.count = count
        store = StoreDirectory(path: NSTemporaryDirectory() + "bluejay-bench-stalled-\(UUID().uuidString)")
        peer = try FloodPeer(count: count, payload: payload, rate: rate)
        host = try await BluetoothHost(transport: peer, store: store, cacheEnabled: false, logger: .silent)
        let peripheral = host.central.peripheral(FloodPeripheral.identifier)
        try await peripheral.connect()
        values = try await peripheral.values(of: FloodPeripheral.characteristic, capacity: capacity)
        await peer.gate.subscribed.wait()
    }

    /// Lets the flood go, takes one value, stops for `stall`, then reads until the flood's
    /// every value was delivered or dropped; the values read must be in order.
    public func run(stall: Duration) async throws -> StalledConsumerFigures {
        let before = Self.status("VmRSS") ?? 0
        peer.gate.release()
        var iterator = values.makeAsyncIterator()
        var delivered = 0
        var last: UInt32?
        func take(_ value: [UInt8]) {
            delivered += 1
            let sequence =
                value.count >= 4
                ? UInt32(value[0]) | UInt32(value[1]) << 8 | UInt32(value[2]) << 16 | UInt32(value[3]) << 24 : 0
            require(last.map { sequence > $0 } ?? true, "value \(sequence) came after \(last ?? 0)")
            last = sequence
        }
        guard let first = try await iterator.next() else { fatalError("the stream ended before its first value") }
        take(first)
        try await Task.sleep(for: stall)
        while delivered + values.droppedCount < count, let value = try await iterator.next() { take(value) }
        let figures = StalledConsumerFigures(
            count: count, delivered: delivered, dropped: values.droppedCount,
            rssBeforeBytes: before, peakRSSBytes: Self.status("VmHWM") ?? 0)
        require(
            figures.delivered + figures.dropped == count,
            "\(figures.delivered) delivered and \(figures.dropped) dropped of \(count)")
        return figures
    }

    public func close() {
        host.close()
        try? FileManager.default.removeItem(atPath: store.path)
    }

    /// A size from /proc/self/status (`VmRSS`, `VmHWM`), in bytes.
    static func status(_ key: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("\(key):") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2, let kilobytes = Int(fields[1]) else { return nil }
            return kilobytes * 1024
        }
        return nil
    }
}
