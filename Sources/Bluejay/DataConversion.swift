import FoundationEssentials

/// A value that can be made from the bytes of a characteristic (Bluejay's `Receivable`).
public protocol Receivable {
    /// Decodes the value; throws ``BluejayError/notEnoughData(expected:actual:)`` (or your own
    /// error) when the bytes do not hold one.
    init(bluetoothData: Data) throws
}

/// A value that can be written to a characteristic: Bluejay's `Sendable`, renamed because
/// Swift's own `Sendable` (concurrency) took the name. Code written against Bluejay's README
/// changes `: Sendable` to `: BluejaySendable` and nothing else.
public protocol BluejaySendable {
    /// The bytes to write.
    func toBluetoothData() -> Data
}

extension Data {
    /// `length` bytes from `start`, read as `T` in little-endian order (Bluetooth's). Throws
    /// ``BluejayError/notEnoughData(expected:actual:)`` when the data is too short, rather
    /// than reading past its end.
    public func extract<T: FixedWidthInteger>(start: Int, length: Int) throws -> T {
        guard start >= 0, length >= 0, length <= MemoryLayout<T>.size else {
            throw BluejayError.invalidExtraction(start: start, length: length, type: String(describing: T.self))
        }
        guard start + length <= count else { throw BluejayError.notEnoughData(expected: start + length, actual: count) }
        var value: T = 0
        for (shift, byte) in self[(startIndex + start)..<(startIndex + start + length)].enumerated() {
            value |= T(truncatingIfNeeded: byte) << (8 * shift)
        }
        return value
    }

    /// `length` bytes from `start` as `Data`; throws when the data is too short.
    public func extract(start: Int, length: Int) throws -> Data {
        guard start >= 0, length >= 0 else { throw BluejayError.invalidExtraction(start: start, length: length, type: "Data") }
        guard start + length <= count else { throw BluejayError.notEnoughData(expected: start + length, actual: count) }
        return Data(self[(startIndex + start)..<(startIndex + start + length)])
    }
}

/// Fixed-width integers travel little-endian at exactly their width. `Int` and `UInt` are
/// deliberately not conformed: their width on the air would be a guess.
public protocol BluetoothInteger: FixedWidthInteger, Receivable, BluejaySendable {}

extension BluetoothInteger {
    /// Exactly `MemoryLayout<Self>.size` bytes, least significant first.
    public init(bluetoothData: Data) throws {
        self = try bluetoothData.extract(start: 0, length: MemoryLayout<Self>.size)
    }

    /// The value's bytes, least significant first.
    public func toBluetoothData() -> Data {
        Data((0..<MemoryLayout<Self>.size).map { UInt8(truncatingIfNeeded: self >> (8 * $0)) })
    }
}

extension Int8: BluetoothInteger {}
extension Int16: BluetoothInteger {}
extension Int32: BluetoothInteger {}
extension Int64: BluetoothInteger {}
extension UInt8: BluetoothInteger {}
extension UInt16: BluetoothInteger {}
extension UInt32: BluetoothInteger {}
extension UInt64: BluetoothInteger {}

extension Data: Receivable, BluejaySendable {
    /// The bytes as they came.
    public init(bluetoothData: Data) { self = bluetoothData }
    /// The bytes as they are.
    public func toBluetoothData() -> Data { self }
}

extension String: Receivable, BluejaySendable {
    /// UTF-8 text (invalid sequences replaced, as Bluejay's `String(data:encoding:)` would fail; here they show).
    public init(bluetoothData: Data) { self = String(decoding: bluetoothData, as: UTF8.self) }
    /// The text as UTF-8.
    public func toBluetoothData() -> Data { Data(utf8) }
}

extension Bluejay {
    /// The bytes of several values one after the other.
    public nonisolated static func combine(sendables: [any BluejaySendable]) -> Data {
        sendables.reduce(into: Data()) { $0.append($1.toBluetoothData()) }
    }
}
