import BluetoothCore
import HCI

/// Why an ATT transaction, or the whole bearer, failed.
public enum ATTError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The server answered the request with an Error Response (its code by name).
    case errorResponse(ErrorResponse)
    /// No response within the 30 s transaction timeout. The bearer is closed and the link
    /// disconnected, as Core Vol 3, Part F, 3.3.3 requires.
    case timeout
    /// The peer broke the protocol (a response that does not answer the pending request, a
    /// malformed response). The bearer is closed and the link disconnected.
    case protocolError(String)
    /// The PDU does not fit the bearer's ATT_MTU.
    case pduTooLong(length: Int, mtu: Int)
    /// The link went down; the Disconnection Complete reason.
    case disconnected(HCIStatus)
    /// No LE link has this connection handle.
    case notConnected(ConnectionHandle)
    /// The controller could not take the PDU.
    case transport(HCIError)
    /// The bearer had already closed for this reason; no PDU was sent.
    indirect case closed(ATTError)

    /// The ATT error code when the server answered with an Error Response.
    public var code: ATTErrorCode? {
        switch self {
        case let .errorResponse(response): response.error
        case let .closed(reason): reason.code
        default: nil
        }
    }

    /// Readable, with ATT codes and HCI reasons by name.
    public var description: String {
        switch self {
        case let .errorResponse(response):
            "\(response.error) (\(response.requestOpcode.name) on handle \(hex(response.handle, digits: 4)))"
        case .timeout: "timeout: no ATT response in 30 s; the bearer is closed and the link dropped"
        case let .protocolError(what): "ATT protocol error: \(what); the bearer is closed and the link dropped"
        case let .pduTooLong(length, mtu): "a \(length)-byte ATT PDU does not fit the ATT_MTU of \(mtu)"
        case let .disconnected(reason): "disconnected: \(reason)"
        case let .notConnected(handle): "no connection with handle \(hex(handle, digits: 4))"
        case let .transport(error): error.description
        case let .closed(reason): "the ATT bearer is closed (\(reason))"
        }
    }
}
