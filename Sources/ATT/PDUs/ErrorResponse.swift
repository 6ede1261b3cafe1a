import BluetoothCore

/// ATT_ERROR_RSP (0x01, Core Vol 3, Part F, 3.4.1.1): a request failed.
public struct ErrorResponse: ATTPDU, CustomStringConvertible {
    /// 0x01.
    public static var opcode: ATTOpcode { .errorResponse }
    /// The opcode of the request that failed.
    public var requestOpcode: ATTOpcode
    /// The handle the error is about, or 0x0000 when none applies.
    public var handle: AttributeHandle
    /// Why the request failed.
    public var error: ATTErrorCode

    /// An error response to `requestOpcode` about `handle`.
    public init(requestOpcode: ATTOpcode, handle: AttributeHandle, error: ATTErrorCode) {
        (self.requestOpcode, self.handle, self.error) = (requestOpcode, handle, error)
    }

    /// Request_Opcode_In_Error, Attribute_Handle_In_Error, Error_Code.
    public static let layout = MessageLayout(
        "Error_Rsp", Self.init(requestOpcode:handle:error:),
        Field("Request_Opcode_In_Error", \.requestOpcode),
        Field("Attribute_Handle_In_Error", \.handle),
        Field("Error_Code", \.error))

    /// `0x0a Read_Req handle 0x0003: 0x02 readNotPermitted`.
    public var description: String { "\(requestOpcode) handle \(handle): \(error)" }
}
