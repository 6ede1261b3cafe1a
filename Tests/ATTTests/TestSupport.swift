import ATT
import BluetoothCore
import HCI
import Testing

/// `"0a 03 00"` as bytes.
func hexBytes(_ text: String) -> [UInt8] {
    text.split(separator: " ").map { UInt8($0, radix: 16)! }
}

/// `pdu` encodes to exactly `expected` (opcode first) and decodes back from it unchanged.
func expectWire<P: ATTPDU>(_ pdu: P, _ expected: String, sourceLocation: SourceLocation = #_sourceLocation) {
    let bytes = hexBytes(expected)
    #expect(pdu.encoded() == bytes, "\(P.self) encodes to \(pdu.encoded().hexDump)", sourceLocation: sourceLocation)
    do {
        #expect(try P(decoding: bytes[...]) == pdu, sourceLocation: sourceLocation)
    } catch {
        Issue.record("\(P.self) does not decode from \(expected): \(error)", sourceLocation: sourceLocation)
    }
}

/// Decoding `hex` as a `P` throws exactly `error`.
func expectDecodeError<P: ATTPDU>(
    _ type: P.Type, _ hex: String, _ error: DecodingError,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(throws: error, sourceLocation: sourceLocation) { try P(decoding: hexBytes(hex)[...]) }
}
