import BluetoothCore
import HCI
import L2CAP
import TraceDecoding

/// One fuzz target: a decoder that reads bytes from outside the process (a controller, a
/// peer, a file), driven with arbitrary input, plus the invariants its output must keep.
///
/// The same targets run three ways: under libFuzzer (`make fuzz`, the `bluejay-fuzz`
/// executable), over their seed corpora and every past crash in `make test`
/// (FuzzTargetTests), and from `bluejay-fuzz-seeds`, which writes the seed corpora.
/// A decoder rejecting input is fine; a trap, a sanitizer report or a broken invariant
/// (``FuzzFailure``) is a finding.
public struct FuzzTarget: Sendable {
    /// The name used on the command line, for corpus folders and in the table of docs/Testing.md.
    public let name: String
    /// What the target drives, for `--list` and docs/Testing.md.
    public let summary: String
    /// Runs one input and returns how many units (packets, frames, PDUs, records, files) got
    /// past the first decoder, so tests can tell inputs that reach the decoders under test
    /// from ones the outermost check turns away; throws when the decoders broke an invariant.
    public let run: @Sendable ([UInt8]) throws(FuzzFailure) -> Int
    /// Seed inputs cut from a recorded trace, given as bytes and as read (empty when the
    /// target's seeds are the files committed under Fuzz/Corpus).
    public let seeds: @Sendable (_ trace: [UInt8], _ file: BTSnoopFile) -> [[UInt8]]
    /// The longest input worth trying (libFuzzer's -max_len).
    public let maximumLength: Int

    /// Every target, in the order `make fuzz` runs them.
    public static let all: [FuzzTarget] = [
        .h4Framing, .hciEvent, .advertisingData, .advertisements, .l2cap, .att, .attServer, .smp, .btsnoop,
        .traceReconstruction,
        .cacheFile, .bondFile, .databaseFile,
    ]

    /// The target called `name`, if any.
    public static func named(_ name: String) -> FuzzTarget? { all.first { $0.name == name } }
}

/// A broken invariant: decoding, re-encoding and decoding again disagreed, or two ways of
/// feeding the same bytes gave different results.
public struct FuzzFailure: Error, Sendable, CustomStringConvertible {
    /// What went wrong, with the values involved.
    public let description: String

    /// A failure saying `description`.
    public init(_ description: String) { self.description = description }
}

/// Throws ``FuzzFailure`` unless `condition` holds.
func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws(FuzzFailure) {
    if !condition { throw FuzzFailure(message()) }
}

/// Checks that decoding what `value` encodes to gives `value` back.
func expectRoundTrip<Value: Equatable>(
    _ value: Value, _ what: String, encode: (Value) -> [UInt8], decode: ([UInt8]) throws -> Value
) throws(FuzzFailure) {
    let bytes = encode(value)
    let again: Value
    do { again = try decode(bytes) } catch {
        throw FuzzFailure("\(what) \(value) encodes to \(bytes.hexDump), which does not decode: \(error)")
    }
    try expect(again == value, "\(what) \(value) encodes to \(bytes.hexDump), which decodes to \(again)")
}

extension BTSnoopRecord {
    /// The record's HCI packet as H4 bytes (indicator first), if it holds one.
    var h4Bytes: [UInt8]? {
        guard case let .packet(type, body) = content else { return nil }
        return [type.rawValue] + body
    }

    /// The record's packet of `type`, without the indicator.
    func body(of type: H4PacketType) -> ArraySlice<UInt8>? {
        guard case let .packet(recordType, body) = content, recordType == type else { return nil }
        return body
    }
}

extension BTSnoopFile {
    /// Every L2CAP frame of the file, reassembled per handle and direction; ACL on handles
    /// no connection event announced is vendor data, not L2CAP (as ``TraceCheck`` treats it).
    var frames: [BasicFrame] {
        let announced = TraceCheck.announcedHandles(self)
        var reassemblers: [String: Reassembler] = [:]
        var frames: [BasicFrame] = []
        for record in records {
            guard let body = record.body(of: .acl) else { continue }
            var reader = ByteReader(body)
            guard let packet = try? ACLDataPacket(from: &reader), announced?.contains(packet.handle) ?? true else {
                continue
            }
            let key = "\(packet.handle)-\(record.direction == .received)"
            if let frame = reassemblers[key, default: Reassembler()].append(packet).frame { frames.append(frame) }
        }
        return frames
    }
}
