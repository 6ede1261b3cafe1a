import BluetoothCore
import HCI

/// ATT_ERROR_RSP (0x01, Core Vol 3, Part F, 3.4.1.1): a request failed.
public struct ErrorResponse: ATTPDU, CustomStringConvertible {
    /// 0x01.
    public static var opcode: ATTOpcode { .errorResponse }
    /// The opcode of the request that failed.
    public var requestOpcode: ATTOpcode
    /// The handle the error is about, or 0x0000 when none applies.
    public var handle: UInt16
    /// Why the request failed.
    public var error: ATTErrorCode

    /// An error response to `requestOpcode` about `handle`.
    public init(requestOpcode: ATTOpcode, handle: UInt16, error: ATTErrorCode) {
        self.requestOpcode = requestOpcode
        self.handle = handle
        self.error = error
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        requestOpcode = ATTOpcode(rawValue: try reader.readUInt8())
        handle = try reader.readUInt16()
        error = ATTErrorCode(rawValue: try reader.readUInt8())
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(requestOpcode.rawValue)
        writer.write(handle)
        writer.write(error.rawValue)
    }

    /// `0x0a Read_Req handle 0x0003: 0x02 readNotPermitted`.
    public var description: String { "\(requestOpcode) handle \(hex(handle, digits: 4)): \(error)" }
}
