import BluetoothCore
import FoundationEssentials
import Testing
@testable import Bluejay

// The Data values of one batch share chunks (one allocation per value instead of two):
// each value's octets are its own, a chunk keeps to its limits, a value the app keeps
// outlives its batch intact, and a value alone is copied as before.

/// Values handed to another task, leaving no reference behind.
private final class Handed: @unchecked Sendable {
    private var data: [Data]
    init(_ data: [Data]) { self.data = data }
    /// The values; the box keeps none (called once, by the task they are handed to).
    func take() -> [Data] {
        defer { data = [] }
        return data
    }
}

@MainActor
@Suite("DataArena")
struct DataArenaTests {
    /// A listen's stand-in: `makesData` as the listen's type would set it.
    private func listener(makesData: Bool) -> Bluejay.Listener {
        Bluejay.Listener(
            characteristic: CharacteristicIdentifier(uuid: "2A37", service: ServiceIdentifier(uuid: "180D")),
            option: .trap, tag: nil,
            backlog: ListenBacklog(limit: 100), makesData: makesData, deliver: { _, _ in }, end: { _ in })
    }

    /// `count` octets numbered from `first` (so every value differs from its neighbours).
    private func value(_ first: Int, count: Int) -> ArraySlice<UInt8> {
        ArraySlice((0..<count).map { UInt8(truncatingIfNeeded: first &+ $0) })
    }

    /// Delivers `values` to Data through one arena, as `Bluejay.arrived` does a batch.
    private func deliver(_ values: [ArraySlice<UInt8>], besides other: [ValueArrival] = []) -> [Data] {
        let listen = listener(makesData: true)
        let batch = values.map { ValueArrival.value(listen, $0) } + other
        var arena = DataArena(batch)
        return values.map { arena.data($0) }
    }

    /// Where a value's octets start.
    private func address(_ data: Data) -> UInt {
        data.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
    }

    @Test("A burst's values hold their own octets, 16 to a chunk, side by side on 8-octet boundaries")
    func burstSharesChunks() {
        let values = (0..<40).map { value($0 * 7, count: 244) }
        let data = deliver(values)
        #expect(data.map { Array($0) } == values.map { Array($0) })
        #expect(data.allSatisfy { address($0) % 8 == 0 })
        // Within a chunk each value follows the last, on the next 8-octet boundary; a chunk
        // holds 16 (4096 octets hold 16 slots of 248).
        let adjacent = (1..<data.count).map { address(data[$0]) == address(data[$0 - 1]) + UInt(DataArena.slot(244)) }
        let expected = (1..<data.count).map { $0 % DataArena.maximumValues != 0 }
        #expect(adjacent == expected)
    }

    @Test("A chunk keeps to 4096 octets; a longer value is copied alone and the values after it share again")
    func longValuesAreCopiedAlone() {
        let values = [
            value(1, count: 2000), value(2, count: 2000), value(3, count: 200), value(4, count: 5000),
            value(5, count: 100), value(6, count: 100),
        ]
        let data = deliver(values)
        #expect(data.map { Array($0) } == values.map { Array($0) })
        #expect(address(data[1]) == address(data[0]) + 2000)
        #expect(address(data[2]) != address(data[1]) + 2000)  // 4200 octets would pass the limit
        #expect(address(data[5]) == address(data[4]) + UInt(DataArena.slot(100)))
    }

    @Test("A value alone in its batch, one delivered outside a batch, and an empty one come out whole")
    func aloneIsCopied() {
        let single = value(9, count: 244)
        let data = deliver([single])
        #expect(Array(data[0]) == Array(single))
        var alone = DataArena()
        #expect(Array(alone.data(single)) == Array(single))
        #expect(alone.data([]).isEmpty)
    }

    @Test("Values of other types in the batch get no room; the Data values around them still share")
    func otherTypesAreSkipped() {
        let bytes = listener(makesData: false)
        let other = (0..<10).map { ValueArrival.value(bytes, value($0, count: 244)) }
        let listen = listener(makesData: true)
        let values = [value(100, count: 244), value(200, count: 244)]
        let batch = [ValueArrival.value(listen, values[0])] + other + [ValueArrival.value(listen, values[1])]
        var arena = DataArena(batch)
        let data = values.map { arena.data($0) }
        #expect(address(data[1]) == address(data[0]) + UInt(DataArena.slot(244)))
    }

    @Test("Writing to one value, in place or by growing it, changes no other; kept values outlive the rest")
    func valuesAreIndependent() {
        let values = (0..<16).map { value($0 * 3, count: 244) }
        var data = deliver(values)
        // The only reference to its storage: written in place, in its own octets.
        var first = data.removeFirst()
        first[first.startIndex] = 0xFF
        first.append(contentsOf: [1, 2, 3])
        #expect(first.count == 247 && first.first == 0xFF)
        #expect(data.map { Array($0) } == values.dropFirst().map { Array($0) })
        // One kept: the chunk outlives its other values. Blocks of the chunk's size, filled,
        // would take its memory had it been freed with them.
        let kept = data[7]
        data.removeAll()
        let churn = (0..<64).map { _ in [UInt8](repeating: 0xEE, count: 16 * DataArena.slot(244)) }
        withExtendedLifetime(churn) { #expect(Array(kept) == Array(values[8])) }
    }

    @Test("Values go on any thread: the last one released off the main actor frees its chunk there")
    func releasedOffTheMainActor() async {
        let values = (0..<32).map { value($0, count: 100) }
        // Handed over whole: the detached task holds the last reference (a deallocator tied
        // to the main actor traps there, as it did on the app's queue).
        let handed = Handed(deliver(values))
        let sums = await Task.detached { () -> [Int] in
            let data = handed.take()
            return data.map { $0.reduce(0) { $0 &+ Int($1) } }
        }.value
        #expect(sums == values.map { $0.reduce(0) { $0 &+ Int($1) } })
    }
}
