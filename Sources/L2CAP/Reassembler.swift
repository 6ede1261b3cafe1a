import BluetoothCore
import HCI

/// Rebuilds L2CAP PDUs from the ACL fragments of one connection handle in one direction
/// (Core Vol 3, Part A, 7.2).
///
/// A start fragment opens a PDU whose size the L2CAP length field gives; continuations
/// append to it until it is whole. Whatever goes wrong is reported, never silently
/// dropped, and never costs the PDUs that follow.
public struct Reassembler: Sendable {
    private enum State: Sendable {
        case idle
        /// A PDU has `bytes` so far; `total` (header included) is known once the 2-byte
        /// length field has arrived, which may take more than one fragment.
        case collecting(bytes: [UInt8], total: Int?)
    }

    private var state: State = .idle

    /// A reassembler with no PDU in progress.
    public init() {}

    /// Whether a PDU is partly received.
    public var isCollecting: Bool { if case .collecting = state { true } else { false } }

    /// Feeds one ACL packet. Returns a whole frame when this packet completes one, and a
    /// problem when the stream broke the rules (the frame, if any, is still good).
    public mutating func append(_ packet: ACLDataPacket) -> (frame: BasicFrame?, problem: ReassemblyProblem?) {
        let data = packet.data
        if packet.boundary.startsPDU {
            let abandoned: ReassemblyProblem? =
                if case let .collecting(bytes, total) = state {
                    .abandoned(received: bytes.count, expected: total)
                } else { nil }
            state = .idle
            guard let frameLength = Self.frameLength(data) else {
                // Nothing forbids a start fragment shorter than the length field (a host
                // with 1-byte buffers sends one); the length arrives with the continuation.
                state = .collecting(bytes: Array(data), total: nil)
                return (nil, abandoned)
            }
            if data.count == frameLength {
                return (decode(data), abandoned)
            }
            if data.count > frameLength {
                return (nil, abandoned ?? .longerThanDeclared(declared: frameLength, actual: data.count))
            }
            var bytes = [UInt8]()
            bytes.reserveCapacity(frameLength)
            bytes.append(contentsOf: data)
            state = .collecting(bytes: bytes, total: frameLength)
            return (nil, abandoned)
        }
        guard case .collecting(var bytes, let knownTotal) = state else {
            if data.isEmpty { return (nil, nil) }
            return (nil, .continuationWithoutStart(data.count))
        }
        state = .idle  // release the buffer's storage before appending: no copy-on-write
        let previousCount = bytes.count
        bytes.append(contentsOf: data)
        guard let total = knownTotal ?? Self.frameLength(bytes[...]) else {
            state = .collecting(bytes: bytes, total: nil)
            return (nil, nil)
        }
        guard bytes.count <= total else {
            // Drop the offending fragment; the PDU stays as it was.
            bytes.removeSubrange(previousCount...)
            state = .collecting(bytes: bytes, total: knownTotal)
            return (nil, .overflow(expected: total, wouldHave: previousCount + data.count))
        }
        if bytes.count == total {
            return (decode(bytes[...]), nil)
        }
        state = .collecting(bytes: bytes, total: total)
        return (nil, nil)
    }

    /// The whole PDU's length (header included) from the first bytes of a PDU, or nil while
    /// the 2-byte length field is incomplete.
    private static func frameLength(_ bytes: ArraySlice<UInt8>) -> Int? {
        guard bytes.count >= 2 else { return nil }
        return (Int(bytes[bytes.startIndex]) | Int(bytes[bytes.startIndex + 1]) << 8) + 4
    }

    private func decode(_ bytes: ArraySlice<UInt8>) -> BasicFrame? {
        var reader = ByteReader(bytes)
        return try? BasicFrame(from: &reader)
    }
}

/// How an ACL stream broke L2CAP's fragmentation rules.
public enum ReassemblyProblem: Sendable, Equatable, CustomStringConvertible {
    /// A new start arrived while a PDU was incomplete; the incomplete one is lost.
    /// `expected` is nil when not even its length field had arrived.
    case abandoned(received: Int, expected: Int?)
    /// A start fragment carries more than its length field declares.
    case longerThanDeclared(declared: Int, actual: Int)
    /// A continuation with no PDU in progress (a capture that starts mid-PDU).
    case continuationWithoutStart(Int)
    /// A continuation would make the PDU longer than declared; the fragment is dropped.
    case overflow(expected: Int, wouldHave: Int)

    /// A one-line account of the problem, with its byte counts.
    public var description: String {
        switch self {
        case let .abandoned(received, expected?):
            "incomplete L2CAP PDU abandoned after \(received) of \(expected) bytes"
        case let .abandoned(received, nil):
            "incomplete L2CAP PDU abandoned after \(received) byte(s), before its length field"
        case let .longerThanDeclared(declared, actual):
            "L2CAP PDU declares \(declared) bytes but the fragment has \(actual)"
        case let .continuationWithoutStart(count): "continuation fragment of \(count) byte(s) with no PDU in progress"
        case let .overflow(expected, wouldHave):
            "continuation overflows the L2CAP PDU: \(wouldHave) of \(expected) bytes"
        }
    }
}
