import BluetoothCore
import HCI
import Testing

// A message declared once by its layout: decoding, encoding and the names come from it.

/// A message with a handle, an offset and a value running to the end.
private struct Sample: LaidOut, Equatable {
    var handle: ConnectionHandle
    var offset: UInt16
    var value: ArraySlice<UInt8>

    static let layout = MessageLayout(
        "Sample_Req", Sample.init(handle:offset:value:),
        Field("Attribute_Handle", \.handle),
        Field("Value_Offset", \.offset),
        .rest("Part_Attribute_Value", \.value))
}

/// A message with no fields.
private struct Empty: LaidOut, Equatable {
    static let layout = MessageLayout("Empty_Rsp", Empty.init)
}

@Suite("Message layouts")
struct MessageLayoutTests {
    @Test("Fields are read and written in their order, the value as a view of the bytes")
    func roundTrip() throws {
        let bytes: [UInt8] = [0x2B, 0x00, 0x10, 0x00, 0xAA, 0xBB, 0xCC]
        var reader = ByteReader(bytes)
        let sample = try Sample(from: &reader)
        #expect(sample == Sample(handle: 0x2B, offset: 0x10, value: [0xAA, 0xBB, 0xCC]))
        #expect(reader.isAtEnd)
        // A view, not a copy: the value's indices are those of the received bytes.
        #expect(sample.value.startIndex == 4)
        var writer = ByteWriter()
        sample.encode(to: &writer)
        #expect(writer.bytes == bytes)
        #expect(Sample.layout.name == "Sample_Req")
        #expect(Sample.layout.fieldNames == ["Attribute_Handle", "Value_Offset", "Part_Attribute_Value"])
    }

    @Test("Too few octets name what was missing; what follows the last field is left to the caller")
    func truncatedAndExtra() throws {
        var short = ByteReader([0x2B, 0x00, 0x10])
        #expect(throws: DecodingError.truncated(needed: 2, available: 1)) { try Sample(from: &short) }
        var reader = ByteReader([0x01, 0xEE])
        _ = try Empty(from: &reader)
        #expect(reader.count == 2)
        #expect(Empty.layout.fieldNames.isEmpty)
    }
}
