import BluetoothCore

/// Why an HCI operation failed. Each case carries the protocol's code and says it by name.
public enum HCIError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The controller answered the command with an error status.
    case commandFailed(HCIOpcode, HCIStatus)
    /// No Command Complete or Command Status arrived in time.
    case commandTimeout(HCIOpcode, seconds: Double)
    /// The controller's answer to a command could not be decoded.
    case malformedResponse(HCIOpcode, DecodingError)
    /// The controller reported a Hardware Error; it needs a reset.
    case hardwareError(code: UInt8)
    /// The transport failed or closed.
    case transport(TransportError)
    /// The controller lacks something the stack needs.
    case unsupported(String)
    /// An ACL packet is larger than the controller's buffers.
    case aclPacketTooLong(length: Int, bufferLength: Int)
    /// The controller is not running (not started, closed, or failed before).
    case notRunning
    /// ACL data for a connection handle no open link has (it ended, or never was).
    case noSuchConnection(ConnectionHandle)

    /// A one-line message naming the command or code involved.
    public var description: String {
        switch self {
        case let .commandFailed(opcode, status): "\(opcode.name) (\(hex(opcode.rawValue, digits: 4))) failed: \(status)"
        case let .commandTimeout(opcode, seconds):
            "\(opcode.name) (\(hex(opcode.rawValue, digits: 4))) timed out: no answer from the controller in \(seconds) s"
        case let .malformedResponse(opcode, error): "malformed answer to \(opcode.name): \(error)"
        case let .hardwareError(code):
            "the controller reported Hardware Error \(hex(code, digits: 2)); it must be reset"
        case let .transport(error): error.description
        case let .unsupported(what): "the controller does not support \(what)"
        case let .aclPacketTooLong(length, bufferLength):
            "ACL packet of \(length) bytes exceeds the controller's \(bufferLength)-byte buffers"
        case .notRunning: "the controller is not running"
        case let .noSuchConnection(handle): "no open link has connection handle \(hex(handle, digits: 4))"
        }
    }
}
