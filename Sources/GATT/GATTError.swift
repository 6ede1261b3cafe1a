import ATT
import BluetoothCore
import HCI

/// Why a GATT procedure failed.
public enum GATTError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The ATT transaction failed: an Error Response (its code by name), a timeout, the link.
    case att(ATTError)
    /// The peer has no primary service with this UUID.
    case serviceNotFound(BluetoothUUID)
    /// The service has no characteristic with this UUID.
    case characteristicNotFound(BluetoothUUID, service: BluetoothUUID)
    /// The characteristic has no descriptor of this type.
    case descriptorNotFound(BluetoothUUID, characteristic: BluetoothUUID)
    /// The characteristic's properties do not allow the operation.
    case notPermitted(String)
    /// The value is longer than the procedure can carry.
    case valueTooLong(length: Int, maximum: Int)
    /// A long read ran past the length the client accepts for one value
    /// (``GATTClient/maximumValueLength``), so a peer cannot grow memory without end.
    case valueLengthLimitExceeded(handle: AttributeHandle, limit: Int)
    /// A reliable write's Prepare Write Response did not echo what was sent; the queued
    /// writes were cancelled.
    case reliableWriteMismatch(handle: AttributeHandle, offset: UInt16)
    /// The server's answer breaks the procedure's rules (e.g. handles that go backwards).
    case invalidResponse(String)

    /// The ATT error code when the server refused with an Error Response.
    public var code: ATTErrorCode? { if case let .att(error) = self { error.code } else { nil } }

    /// The error's name, as `--json` outputs print it: the ATT error code's name (`insufficientEncryption`)
    /// when the peer answered with one, else the case's (`valueLengthLimitExceeded`).
    public var name: String {
        if let code { return code.name }
        switch self {
        case .att: return "att"
        case .serviceNotFound: return "serviceNotFound"
        case .characteristicNotFound: return "characteristicNotFound"
        case .descriptorNotFound: return "descriptorNotFound"
        case .notPermitted: return "notPermitted"
        case .valueTooLong: return "valueTooLong"
        case .valueLengthLimitExceeded: return "valueLengthLimitExceeded"
        case .reliableWriteMismatch: return "reliableWriteMismatch"
        case .invalidResponse: return "invalidResponse"
        }
    }

    /// Readable, with codes by name.
    public var description: String {
        switch self {
        case let .att(error): error.description
        case let .serviceNotFound(uuid): "the peer has no service \(uuid.nameAndValue)"
        case let .characteristicNotFound(uuid, service):
            "service \(service.nameAndValue) has no characteristic \(uuid.nameAndValue)"
        case let .descriptorNotFound(uuid, characteristic):
            "characteristic \(characteristic.nameAndValue) has no descriptor \(uuid.nameAndValue)"
        case let .notPermitted(what): what
        case let .valueTooLong(length, maximum):
            "a \(length)-byte value is longer than the \(maximum) bytes this procedure can carry"
        case let .valueLengthLimitExceeded(handle, limit):
            "the value at \(hex(handle, digits: 4)) is longer than the \(limit)-octet limit for one value; the read was abandoned"
        case let .reliableWriteMismatch(handle, offset):
            "reliable write: the server echoed different data for handle \(hex(handle, digits: 4)) at offset \(offset); the write was cancelled"
        case let .invalidResponse(what): "invalid GATT response: \(what)"
        }
    }
}
