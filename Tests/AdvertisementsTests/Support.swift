@testable import Advertisements
import BluetoothCore
import Testing

// Example payloads are typed as their sources print them: hex, spaces allowed.

/// The octets of a hex string, spaces ignored; traps on anything that is not hex.
func hex(_ text: String) -> [UInt8] {
    let digits = Array(text.filter { !$0.isWhitespace })
    precondition(digits.count.isMultiple(of: 2), "odd number of hex digits in \(text)")
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
}

/// An AD structure of service data for a 16-bit UUID.
func serviceData(_ uuid: UInt16, _ payload: String) -> String {
    let bytes = hex(payload)
    return Bytes.hex([UInt8(bytes.count + 3), 0x16, UInt8(uuid & 0xFF), UInt8(uuid >> 8)] + bytes)
}

/// An AD structure of manufacturer data.
func manufacturerData(_ company: UInt16, _ payload: String) -> String {
    let bytes = hex(payload)
    return Bytes.hex([UInt8(bytes.count + 3), 0xFF, UInt8(company & 0xFF), UInt8(company >> 8)] + bytes)
}

/// Decodes advertising data given as hex.
func decode(_ advertisement: String, address: String? = nil, key: String? = nil) throws(AdvertisementError)
    -> DecodedAdvertisement
{
    try AdvertisementDecoder.decode(
        bytes: hex(advertisement), address: address.flatMap { BluetoothAddress($0) },
        key: key.map(hex))
}

/// Each value's JSON text against the expected one (`"25.06"`, `"true"`, `"\"press\""`,
/// `"null"`); `extra.` in a name looks in `extra`.
func expect(
    _ decoded: DecodedAdvertisement, format: String, _ expected: KeyValuePairs<String, String>,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(decoded.format == format, sourceLocation: sourceLocation)
    for (name, text) in expected {
        let value = name.hasPrefix("extra.") ? decoded.extra[String(name.dropFirst(6))] : decoded.values[name]
        #expect(value?.description == text, "\(name) in \(decoded.values)", sourceLocation: sourceLocation)
    }
}

/// The error `body` throws, nil when it throws none.
func error(_ body: () throws -> DecodedAdvertisement) -> AdvertisementError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error as? AdvertisementError
    }
}
