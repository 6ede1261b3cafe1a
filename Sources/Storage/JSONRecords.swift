import FoundationEssentials

/// The store's JSON records (bonds, the GATT server's bonded clients): one way to write and
/// read them, so each file is pretty-printed with sorted keys (readable and diffable by
/// hand) and written atomically with mode 0600 whatever it holds.
extension StoreDirectory {
    /// Writes `record` as JSON to `name`, replacing the file atomically (``writeAtomically(_:to:)``).
    /// A record that cannot encode is a bug in its type, not a store error.
    public func writeJSON(_ record: some Encodable, to name: String) throws(StoreError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data: Data
        do { data = try encoder.encode(record) } catch {
            preconditionFailure("a \(type(of: record)) always encodes: \(error)")
        }
        try writeAtomically(Array(data), to: name)
    }

    /// The `T` in the file `name`; nil when there is no such file or it does not decode as one.
    public func readJSON<T: Decodable>(_ type: T.Type, from name: String) -> T? {
        guard let bytes = try? read(name) else { return nil }
        return try? JSONDecoder().decode(type, from: Data(bytes))
    }
}
