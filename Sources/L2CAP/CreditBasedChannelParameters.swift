import BluetoothCore
import HCI

/// What our end of a credit-based channel receives (Core Vol 3, Part A, 4.22 and 4.25):
/// the largest SDU (MTU), the largest K-frame payload (MPS), and the K-frames the peer may
/// send before it needs more credits. The same values serve a channel we open and one we
/// accept.
public struct CreditBasedChannelParameters: Sendable, Equatable {
    /// The largest SDU we accept: at least 23 (LE credit based) or 64 (enhanced).
    public var mtu: UInt16
    /// The largest K-frame payload we accept: 23 (LE) or 64 (enhanced) to 65533.
    public var mps: UInt16
    /// K-frames the peer may send at first (0–65535); we grant more as we read.
    public var initialCredits: UInt16

    /// The smallest MTU and MPS of an LE credit based channel.
    public static let minimumLE: UInt16 = 23
    /// The smallest MTU and MPS of an enhanced credit based channel.
    public static let minimumEnhanced: UInt16 = 64
    /// The largest MPS either mode allows.
    public static let maximumMPS: UInt16 = 65533

    /// Parameters from their values (checked when a channel is opened or served).
    public init(mtu: UInt16 = 2048, mps: UInt16 = 247, initialCredits: UInt16 = 64) {
        (self.mtu, self.mps, self.initialCredits) = (mtu, mps, initialCredits)
    }

    /// Whether these are within the limits of the mode: nil if so, else what is wrong.
    public func problem(enhanced: Bool) -> String? {
        let minimum = enhanced ? Self.minimumEnhanced : Self.minimumLE
        if mtu < minimum { return "MTU \(mtu) is below \(minimum)" }
        if mps < minimum || mps > Self.maximumMPS { return "MPS \(mps) is outside \(minimum)…\(Self.maximumMPS)" }
        return nil
    }
}
