import BluetoothCore
import HCI

/// Cuts one SDU into the K-frames of a credit-based channel (Core Vol 3, Part A, 3.4.3 and
/// 7.3): the first carries the 2-octet SDU length and as much of the SDU as the peer's MPS
/// leaves room for, the rest carry up to MPS octets each. An empty SDU is one K-frame
/// holding only its length. Each frame is written once into an ``OutgoingFrame``; the
/// receiving side's counterpart is ``SDUReassembler/appendKFrame(_:)``.
public struct KFrameSegmenter: Sendable {
    /// The SDU being cut.
    public let sdu: [UInt8]
    /// The largest K-frame payload the peer accepts (its MPS).
    public let mps: Int
    /// How much of the SDU the frames so far carried.
    public private(set) var offset = 0
    private var started = false

    /// A segmenter for `sdu` into K-frames of at most `mps` octets (at least 3: the length
    /// and one octet; the specification's minimum is 23).
    public init(sdu: [UInt8], mps: Int) {
        precondition(mps >= 3, "an MPS of \(mps) cannot carry an SDU")
        self.sdu = sdu
        self.mps = mps
    }

    /// Whether every frame has been made.
    public var isDone: Bool { started && offset == sdu.count }

    /// How many K-frames an SDU of `length` octets takes at `mps`.
    public static func frameCount(sduLength length: Int, mps: Int) -> Int {
        let first = mps - 2
        return length <= first ? 1 : 1 + (length - first + mps - 1) / mps
    }

    /// The next K-frame, or nil when the SDU is all sent.
    public mutating func next() -> OutgoingFrame? {
        if isDone { return nil }
        let room = started ? mps : mps - 2
        let end = min(sdu.count, offset + room)
        var frame = OutgoingFrame(capacity: end - offset + (started ? 0 : 2))
        if !started { frame.writer.write(UInt16(sdu.count)) }
        frame.writer.write(bytes: sdu[offset..<end])
        started = true
        offset = end
        return frame
    }
}
