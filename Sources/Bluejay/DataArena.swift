import FoundationEssentials

/// Where the `Data` values of one batch off the route (``ArrivalInbox``) keep their octets.
///
/// A `Data` made by copying costs two heap allocations: its storage object and its octets.
/// Values that reach the main actor together (a burst of notifications) share chunks
/// instead: each `Data` refers to its own octets in a chunk and keeps the chunk alive, so it
/// costs its storage object and a share of the chunk. A chunk holds at most
/// ``maximumValues`` values and ``maximumBytes`` octets, so a value the app keeps holds at
/// most that much memory, never a read buffer. A value alone in its batch (the usual case
/// when the peer is not flooding) is copied on its own: an arena would cost it more.
///
/// Each `Data` is the only user of its octets: writing to it in place writes its own range
/// of the chunk, and growing it copies it out (its deallocator is custom).
@MainActor
struct DataArena {
    /// Values per chunk, at most.
    static let maximumValues = 16
    /// Octets per chunk, at most; a longer value is copied on its own.
    static let maximumBytes = 4096

    /// The room a value of `count` octets takes: each value starts on an 8-octet boundary,
    /// so two values never share a machine word (one may be read on the app's queue while
    /// the next is written on the main actor).
    static func slot(_ count: Int) -> Int { (count + 7) & ~7 }

    /// The batch being delivered, looked ahead into to size each chunk.
    private let batch: [ValueArrival]
    /// The first arrival of `batch` not yet given room in a chunk.
    private var scanned = 0
    /// The open chunk, and how much of it is handed out.
    private var chunk: Chunk?
    private var used = 0

    /// An arena for the `Data` values of `batch`, delivered in its order.
    init(_ batch: [ValueArrival]) { self.batch = batch }

    /// No batch to share with: every value is copied on its own.
    init() { batch = [] }

    /// `bytes` as a `Data`: in the open chunk when it has room, else in a new chunk sized for
    /// the values that follow in the batch, else (alone, or too long) a copy of its own.
    mutating func data(_ bytes: ArraySlice<UInt8>) -> Data {
        let count = bytes.count
        if count == 0 { return Data() }
        if chunk.map({ used + count > $0.capacity }) ?? true { openChunk() }
        guard let chunk, used + count <= chunk.capacity else {
            return bytes.withUnsafeBytes { Data(bytes: $0.baseAddress!, count: count) }
        }
        let start = chunk.base + used
        bytes.withUnsafeBytes { start.copyMemory(from: $0.baseAddress!, byteCount: count) }
        used += Self.slot(count)
        return Self.data(start, count: count, in: chunk)
    }

    /// A `Data` of `count` octets at `start`, keeping `chunk` alive. Made outside the main
    /// actor so the deallocator is not isolated to it: the last `Data` may go on any thread
    /// (the app's queue). The one capture is the chunk, so the closure needs no context of
    /// its own (no allocation).
    private nonisolated static func data(_ start: UnsafeMutableRawPointer, count: Int, in chunk: Chunk) -> Data {
        Data(bytesNoCopy: start, count: count, deallocator: .custom { _, _ in withExtendedLifetime(chunk) {} })
    }

    /// Looks ahead from ``scanned`` for the values still to be delivered as `Data` and
    /// opens a chunk for as many as fit its limits, or none when fewer than two do (a value
    /// alone gains nothing from sharing).
    private mutating func openChunk() {
        chunk = nil
        used = 0
        var values = 0, bytes = 0
        while scanned < batch.count {
            if case let .value(listener, value) = batch[scanned], listener.makesData, !listener.isEnded {
                guard values < Self.maximumValues, bytes + Self.slot(value.count) <= Self.maximumBytes else {
                    // A value too long for any chunk is the one asking: it is copied alone.
                    if values == 0 { scanned += 1 }
                    break
                }
                values += 1
                bytes += Self.slot(value.count)
            }
            scanned += 1
        }
        if values >= 2 { chunk = Chunk(capacity: bytes) }
    }
}

/// Octets shared by the `Data` values of one ``DataArena`` chunk, freed when the last of them
/// goes, on whatever thread that is. (Unchecked: each range is written once, on the main
/// actor, before the `Data` that refers to it exists, and only through that `Data` after.)
private final class Chunk: @unchecked Sendable {
    let base: UnsafeMutableRawPointer
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        base = .allocate(byteCount: capacity, alignment: 8)
    }

    deinit { base.deallocate() }
}
