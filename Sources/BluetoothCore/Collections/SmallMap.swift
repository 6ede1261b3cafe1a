/// A map for the few keys a host holds at once — its links, its fixed channels, the
/// attribute handles it listens to — kept in two arrays and searched in order.
///
/// For a handful of keys a linear search is several times faster than hashing (SipHash
/// runs for every lookup of a `Dictionary`), and these lookups run for every packet
/// received: the receive path's budget is a few hundred nanoseconds a notification.
/// Entries stay in insertion order. Everything is inlinable, so each layer gets it
/// specialised to its own keys and values.
public struct SmallMap<Key: Equatable, Value> {
    @usableFromInline var storedKeys: [Key] = []
    @usableFromInline var storedValues: [Value] = []

    /// An empty map.
    @inlinable
    public init() {}

    /// The keys, in insertion order.
    @inlinable
    public var keys: [Key] { storedKeys }

    /// The values, in the order of ``keys``.
    @inlinable
    public var values: [Value] { storedValues }

    /// How many entries there are.
    @inlinable
    public var count: Int { storedKeys.count }

    /// Whether there are no entries.
    @inlinable
    public var isEmpty: Bool { storedKeys.isEmpty }

    /// Where `key`'s entry is, if there is one.
    @inlinable
    public func index(forKey key: Key) -> Int? { storedKeys.firstIndex(of: key) }

    /// The value for `key`; assigning nil removes the entry.
    @inlinable
    public subscript(key: Key) -> Value? {
        get { index(forKey: key).map { storedValues[$0] } }
        set {
            if let newValue { updateValue(newValue, forKey: key) } else { removeValue(forKey: key) }
        }
    }

    /// Sets the value for `key`, adding an entry at the end if there was none.
    @inlinable
    public mutating func updateValue(_ value: Value, forKey key: Key) {
        if let index = index(forKey: key) {
            storedValues[index] = value
        } else {
            storedKeys.append(key)
            storedValues.append(value)
        }
    }

    /// Runs `body` on the value for `key` in place, so a value holding a buffer is never
    /// copied to be changed; nil (and `body` not run) when there is no such entry.
    @inlinable
    public mutating func update<Result>(_ key: Key, _ body: (inout Value) throws -> Result) rethrows -> Result? {
        guard let index = index(forKey: key) else { return nil }
        return try body(&storedValues[index])
    }

    /// Removes `key`'s entry and returns its value, if there was one.
    @inlinable
    @discardableResult
    public mutating func removeValue(forKey key: Key) -> Value? {
        guard let index = index(forKey: key) else { return nil }
        storedKeys.remove(at: index)
        return storedValues.remove(at: index)
    }

    /// Removes every entry.
    @inlinable
    public mutating func removeAll() {
        storedKeys.removeAll()
        storedValues.removeAll()
    }

    /// Removes the entries whose value satisfies `shouldBeRemoved`.
    @inlinable
    public mutating func removeAll(where shouldBeRemoved: (Value) throws -> Bool) rethrows {
        var index = 0
        while index < storedValues.count {
            if try shouldBeRemoved(storedValues[index]) {
                storedKeys.remove(at: index)
                storedValues.remove(at: index)
            } else {
                index += 1
            }
        }
    }
}

extension SmallMap: Sendable where Key: Sendable, Value: Sendable {}

extension SmallMap: Sequence {
    /// The entries as `(key, value)` pairs, in insertion order.
    @inlinable
    public func makeIterator() -> Zip2Sequence<[Key], [Value]>.Iterator { zip(storedKeys, storedValues).makeIterator() }
}
