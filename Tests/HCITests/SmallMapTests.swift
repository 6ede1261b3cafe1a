import BluetoothCore
import TestTraits
import Testing

// SmallMap stands in for Dictionary on the receive path; it must behave like one.

@Suite("SmallMap")
struct SmallMapTests {
    @Test(
        "Inserts, replaces, removes and keeps insertion order, as a Dictionary would", arguments: [1, 2, 3] as [UInt64])
    func behavesLikeADictionary(seed: UInt64) {
        var map = SmallMap<ConnectionHandle, String>()
        var reference: [ConnectionHandle: String] = [:]
        var rng = SeededGenerator(seed: seed)  // a failure names its seed and reruns the same way
        for step in 0..<2_000 {
            let key = ConnectionHandle(rawValue: UInt16.random(in: 0...12, using: &rng))
            switch Int.random(in: 0...3, using: &rng) {
            case 0, 1:
                map[key] = "v\(step)"
                reference[key] = "v\(step)"
            case 2:
                #expect(map.removeValue(forKey: key) == reference.removeValue(forKey: key))
            default:
                _ = map.update(key) { $0 += "!" }
                reference[key]? += "!"
            }
            #expect(map[key] == reference[key])
            #expect(map.count == reference.count)
        }
        #expect(Dictionary(uniqueKeysWithValues: Array(map)) == reference)
        #expect(Set(map.keys) == Set(reference.keys))
    }

    @Test("update runs on the stored value in place and reports a missing key with nil")
    func updateInPlace() {
        var map = SmallMap<Int, [UInt8]>()
        map[7] = [1]
        #expect(
            map.update(7) { value -> Int in
                value.append(2); return value.count
            } == 2)
        #expect(map[7] == [1, 2])
        #expect(map.update(8) { _ in 1 } == nil)
        #expect(map[8] == nil)
        map.removeAll { $0.count == 2 }
        #expect(map.isEmpty)
    }

    @Test("Entries come back in insertion order; a replaced value keeps its place")
    func insertionOrder() {
        var map = SmallMap<String, Int>()
        for (index, key) in ["c", "a", "b"].enumerated() { map[key] = index }
        map["a"] = 9
        #expect(map.keys == ["c", "a", "b"])
        #expect(map.values == [0, 9, 2])
        map.removeAll()
        #expect(map.count == 0)
    }
}
