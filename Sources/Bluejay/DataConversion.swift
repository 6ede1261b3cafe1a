import FoundationEssentials

/// A value that can be made from the bytes of a characteristic (Bluejay's `Receivable`).
///
/// Bluejay hands a value to ``init(bluetoothBytes:)``: a view of the bytes as they were read
/// from the controller, with no copy made on the way. By default it copies them into a
/// `Data` for ``init(bluetoothData:)``, the initializer Bluejay's iOS API defines; a type
/// that decodes straight from the view (the integers here do) saves that copy, which is
/// what matters for a characteristic that notifies thousands of times a second.
public protocol Receivable {
    /// Decodes the value; throws `BluejayError.notEnoughData(expected:actual:)` (or your own
    /// error) when the bytes do not hold one.
    init(bluetoothData: Data) throws
    /// Decodes the value from a view of the received bytes (indices as in the buffer they
    /// were read into: use `startIndex`, or ``Swift/ArraySlice/extract(start:length:)``).
    init(bluetoothBytes: ArraySlice<UInt8>) throws
}

extension Receivable {
    /// Copies the bytes into a `Data` and decodes with ``init(bluetoothData:)``. (Copied
    /// from the raw bytes: `Data`'s initializer from a sequence costs one allocation more.)
    public init(bluetoothBytes: ArraySlice<UInt8>) throws {
        let data =
            bluetoothBytes.isEmpty
            ? Data() : bluetoothBytes.withUnsafeBytes { Data(bytes: $0.baseAddress!, count: $0.count) }
        try self.init(bluetoothData: data)
    }
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
    /// `BluejayError.notEnoughData(expected:actual:)` when the data is too short, rather
    /// than reading past its end.
    @inlinable
    public func extract<T: FixedWidthInteger>(start: Int, length: Int) throws -> T {
        try checkExtraction(start: start, length: length, of: T.self, count: count)
        return withUnsafeBytes { littleEndian(from: $0, start: start, length: length) }
    }

    /// `length` bytes from `start` as `Data`; throws when the data is too short.
    public func extract(start: Int, length: Int) throws -> Data {
        guard start >= 0, length >= 0 else {
            throw BluejayError.invalidExtraction(start: start, length: length, type: "Data")
        }
        guard start + length <= count else { throw BluejayError.notEnoughData(expected: start + length, actual: count) }
        return Data(self[(startIndex + start)..<(startIndex + start + length)])
    }
}

extension ArraySlice where Element == UInt8 {
    /// `length` bytes from `start` (counted from the view's first byte), read as `T` in
    /// little-endian order, as `Data.extract(start:length:)` reads them.
    /// Inlinable, so an app's decoder gets it specialised to its integer type: this runs
    /// once per notification.
    @inlinable
    public func extract<T: FixedWidthInteger>(start: Int, length: Int) throws -> T {
        try checkExtraction(start: start, length: length, of: T.self, count: count)
        return withUnsafeBytes { littleEndian(from: $0, start: start, length: length) }
    }
}

/// Refuses an extraction that does not fit `T` or runs past `count` bytes.
@usableFromInline
func checkExtraction<T>(start: Int, length: Int, of _: T.Type, count: Int) throws {
    guard start >= 0, length >= 0, length <= MemoryLayout<T>.size else {
        throw BluejayError.invalidExtraction(start: start, length: length, type: String(describing: T.self))
    }
    guard start + length <= count else { throw BluejayError.notEnoughData(expected: start + length, actual: count) }
}

/// `length` little-endian bytes from `start`, already checked to be in `bytes`.
@inlinable
func littleEndian<T: FixedWidthInteger>(from bytes: UnsafeRawBufferPointer, start: Int, length: Int) -> T {
    var value: T = 0
    for index in 0..<length { value |= T(truncatingIfNeeded: bytes[start + index]) << (8 * index) }
    return value
}

/// Fixed-width integers travel little-endian at exactly their width. `Int` and `UInt` are
/// deliberately not conformed: their width on the air would be a guess.
public protocol BluetoothInteger: FixedWidthInteger, Receivable, BluejaySendable {}

extension BluetoothInteger {
    /// Exactly `MemoryLayout<Self>.size` bytes, least significant first.
    public init(bluetoothData: Data) throws {
        self = try bluetoothData.extract(start: 0, length: MemoryLayout<Self>.size)
    }

    /// Exactly `MemoryLayout<Self>.size` bytes, least significant first, from the view.
    public init(bluetoothBytes: ArraySlice<UInt8>) throws {
        self = try bluetoothBytes.extract(start: 0, length: MemoryLayout<Self>.size)
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
    /// UTF-8 text from the view, as ``init(bluetoothData:)`` decodes it.
    public init(bluetoothBytes: ArraySlice<UInt8>) { self = String(decoding: bluetoothBytes, as: UTF8.self) }
    /// The text as UTF-8.
    public func toBluetoothData() -> Data { Data(utf8) }
}

extension Bluejay {
    /// The bytes of several values one after the other.
    public nonisolated static func combine(sendables: [any BluejaySendable]) -> Data {
        sendables.reduce(into: Data()) { $0.append($1.toBluetoothData()) }
    }
}
