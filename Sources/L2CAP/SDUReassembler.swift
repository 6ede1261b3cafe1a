import BluetoothCore
import HCI

/// Rebuilds the SDUs of one connection-oriented channel in one direction from the frames of
/// a segmenting mode (Core Vol 3, Part A, 3.3 and 3.4.3):
/// - K-frames (LE and enhanced credit based): the first frame of an SDU starts with the
///   2-octet SDU length, the frames that follow carry the rest;
/// - I-frames (Enhanced Retransmission and Streaming): the SAR field marks a whole SDU, or
///   its start (with the SDU length), continuation and end.
///
/// As with ``Reassembler``, whatever goes wrong is reported and costs only the SDU it
/// happened to; the next SDU is rebuilt as if nothing had happened.
public struct SDUReassembler: Sendable {
    /// The SDU under way: its octets so far and the length announced.
    private var collecting: (bytes: [UInt8], length: Int)?

    /// A reassembler with no SDU under way.
    public init() {}

    /// Whether an SDU is partly received.
    public var isCollecting: Bool { collecting != nil }

    /// What one frame did.
    public enum Progress: Sendable, Equatable {
        /// This frame completes an SDU (a single-frame one included).
        case complete(ArraySlice<UInt8>)
        /// The SDU has `received` of its `length` octets.
        case partial(received: Int, length: Int)
        /// The frame carried nothing usable (see the problem).
        case none
    }

    /// Feeds one K-frame's payload. With no SDU under way it is a first K-frame, whose SDU
    /// length field it must hold (a capture that starts mid-SDU reads the middle as a start,
    /// as every analyser must).
    public mutating func appendKFrame(_ payload: ArraySlice<UInt8>) -> (progress: Progress, problem: SDUProblem?) {
        guard collecting != nil else {
            guard payload.count >= 2 else { return (.none, .missingSDULength(payload.count)) }
            let length = Int(payload[payload.startIndex]) | Int(payload[payload.startIndex + 1]) << 8
            return start(length: length, data: payload.dropFirst(2), problem: nil)
        }
        return append(payload, isEnd: nil)
    }

    /// Feeds one I-frame's segment.
    public mutating func appendSegment(
        _ sar: ControlFieldFrame.SegmentationAndReassembly, sduLength: UInt16?,
        information: ArraySlice<UInt8>
    ) -> (progress: Progress, problem: SDUProblem?) {
        switch sar {
        case .unsegmented:
            let abandoned = abandon()
            return (.complete(information), abandoned)
        case .start:
            let abandoned = abandon()
            return start(length: Int(sduLength ?? 0), data: information, problem: abandoned)
        case .continuation, .end:
            guard collecting != nil else { return (.none, .continuationWithoutStart(information.count)) }
            return append(information, isEnd: sar == .end)
        }
    }

    /// Forgets the SDU under way, returning the problem that is when there was one.
    private mutating func abandon() -> SDUProblem? {
        defer { collecting = nil }
        return collecting.map { .abandoned(received: $0.bytes.count, length: $0.length) }
    }

    private mutating func start(length: Int, data: ArraySlice<UInt8>, problem: SDUProblem?) -> (
        progress: Progress, problem: SDUProblem?
    ) {
        if data.count == length { return (.complete(data), problem) }
        if data.count > length { return (.none, problem ?? .overflow(length: length, wouldHave: data.count)) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(length)
        bytes.append(contentsOf: data)
        collecting = (bytes, length)
        return (.partial(received: data.count, length: length), problem)
    }

    /// Appends a later segment; `isEnd` says whether it must be the last (I-frames mark it,
    /// K-frames do not).
    private mutating func append(_ data: ArraySlice<UInt8>, isEnd: Bool?) -> (progress: Progress, problem: SDUProblem?)
    {
        guard let length = collecting?.length, var bytes = collecting?.bytes else { return (.none, nil) }
        collecting = nil  // release the storage before appending: no copy-on-write
        if bytes.count + data.count > length {
            // The SDU cannot be right any more; drop it rather than guess.
            return (.none, .overflow(length: length, wouldHave: bytes.count + data.count))
        }
        bytes.append(contentsOf: data)
        if bytes.count == length {
            if isEnd == false { return (.none, .endMissing(length: length)) }
            return (.complete(bytes[...]), nil)
        }
        if isEnd == true { return (.none, .endedShort(received: bytes.count, length: length)) }
        collecting = (bytes, length)
        return (.partial(received: bytes.count, length: length), nil)
    }
}

/// How the frames of a segmenting mode broke the rules; each costs one SDU.
public enum SDUProblem: Sendable, Equatable, CustomStringConvertible {
    /// A first K-frame too short to hold the SDU length (it has this many octets).
    case missingSDULength(Int)
    /// A new SDU began before the one under way was whole; that one is lost.
    case abandoned(received: Int, length: Int)
    /// The segments add up to more than the SDU length; the SDU is dropped.
    case overflow(length: Int, wouldHave: Int)
    /// An I-frame marked continuation or end with no SDU under way.
    case continuationWithoutStart(Int)
    /// An I-frame marked end before the SDU was whole.
    case endedShort(received: Int, length: Int)
    /// The SDU was whole on a segment marked continuation, not end.
    case endMissing(length: Int)

    /// A one-line account with its octet counts.
    public var description: String {
        switch self {
        case let .missingSDULength(count): "first K-frame of \(count) octet(s) lacks the 2-octet SDU length"
        case let .abandoned(received, length): "incomplete SDU abandoned after \(received) of \(length) octets"
        case let .overflow(length, wouldHave): "segments overflow the SDU: \(wouldHave) of \(length) octets"
        case let .continuationWithoutStart(count): "SDU segment of \(count) octet(s) with no SDU under way"
        case let .endedShort(received, length): "SDU ended after \(received) of \(length) octets"
        case let .endMissing(length): "SDU of \(length) octets completed by a segment not marked end"
        }
    }
}
