import BluetoothCore
import HCI

/// Why opening, sending on or receiving from a credit-based channel failed (Core Vol 3,
/// Part A, 4.22–4.26 and 10.1). Protocol codes are carried by name.
public enum CreditBasedChannelError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The peer refused the connection: `SPSM not supported (0x0002)` and the rest of
    /// Table 4.16 (LE) or Table 4.19 (enhanced).
    case refused(CreditBasedConnectionResult)
    /// The peer answered the request with Command Reject.
    case rejected(CommandRejectReason)
    /// No response to a signaling request within the RTX (or ERTX) time.
    case timeout(SignalingCode, seconds: Double)
    /// The link to the peer ended (the controller's reason).
    case linkLost(HCIStatus)
    /// The peer closed the channel (it sent a Disconnection Request).
    case closedByPeer
    /// We closed the channel (``CreditBasedChannel/disconnect()``).
    case closed
    /// An SDU longer than the peer's MTU cannot be sent.
    case sduTooLong(length: Int, mtu: Int)
    /// The peer broke the channel's rules (a K-frame without a credit, a K-frame longer
    /// than our MPS, an SDU longer than our MTU or than its length field, credits past
    /// 65535): the channel was disconnected, as the specification requires.
    case protocolViolation(String)
    /// The parameters asked for break the specification's limits (MTU, MPS, credits, the
    /// number of channels).
    case invalidParameters(String)
    /// Every CID 0x0040–0x007F of the link is in use.
    case noFreeCID
    /// The link is not known (never connected, or already gone).
    case notConnected
    /// The controller refused or lost a frame.
    case transport(HCIError)

    /// One line, the protocol's code and name included.
    public var description: String {
        switch self {
        case let .refused(result): "connection refused: \(Self.named(result.rawValue, result.name))"
        case let .rejected(reason): "request rejected: \(Self.named(reason.rawValue, reason.name))"
        case let .timeout(code, seconds): "no response to \(code) in \(seconds) s"
        case let .linkLost(reason): "link lost: \(reason)"
        case .closedByPeer: "the peer closed the channel"
        case .closed: "the channel is closed"
        case let .sduTooLong(length, mtu): "an SDU of \(length) octets is longer than the peer's MTU of \(mtu)"
        case let .protocolViolation(what): "protocol violation, channel disconnected: \(what)"
        case let .invalidParameters(what): "invalid parameters: \(what)"
        case .noFreeCID: "no free CID on the link (0x0040–0x007F all in use)"
        case .notConnected: "not connected"
        case let .transport(error): error.description
        }
    }

    /// `SPSM not supported (0x0002)`: the name first, the way the issue reports results.
    static func named(_ raw: UInt16, _ name: String?) -> String {
        guard let name else { return "unknown (\(hex(raw, digits: 4)))" }
        let trimmed = name.hasPrefix("refused, ") ? String(name.dropFirst("refused, ".count)) : name
        return "\(trimmed) (\(hex(raw, digits: 4)))"
    }
}
