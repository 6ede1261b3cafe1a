import ATT
import HCI
import L2CAP
import SMP

/// Counts what a btsnoop file holds, in the schema of `expected-counts.json` (the counts
/// Wireshark agrees with): records, packet types, command opcodes, event codes, LE
/// subevents, ATT/SMP/LE-signaling codes, the MTUs exchanged, and malformed packets.
///
/// Counting rules (they are Wireshark's): every packet counts whatever the controller
/// state, so events before Reset and traffic of connections opened before the capture
/// count too. Every ACL handle feeds L2CAP reassembly, kept per handle and direction, and
/// each whole L2CAP PDU counts once by its channel and first byte. Vendor debug data sent
/// as ACL (Qualcomm's handle 0x0EDC) is therefore counted as whatever its bytes look like,
/// exactly as Wireshark does.
public struct TraceSummary: Sendable, Equatable {
    /// Records in the file, packets or not.
    public var records = 0
    /// Records by packet type (`command`, `acl`, …), `monitor` or `unknown 0xNN`.
    public var packetTypes: [String: Int] = [:]
    /// Command packets by `HCINames.commandKey(_:)`.
    public var commands: [String: Int] = [:]
    /// Event packets by `0xNN Name`.
    public var events: [String: Int] = [:]
    /// LE Meta events by subevent, `0xNN Name`.
    public var leSubevents: [String: Int] = [:]
    /// Whole ATT PDUs by opcode, `0xNN Name`.
    public var att: [String: Int] = [:]
    /// Whole SMP PDUs by code, `0xNN Name`.
    public var smp: [String: Int] = [:]
    /// Whole LE signaling PDUs by code, `0xNN Name`.
    public var leSignaling: [String: Int] = [:]
    /// `req 517` / `rsp 247`, in file order.
    public var attMTU: [String] = []
    /// Packets whose bytes contradict their own length fields, by kind.
    public var malformed: [String: Int] = [:]

    /// An empty summary.
    public init() {}

    /// Summarises a parsed file.
    public init(file: BTSnoopFile) {
        var counter = Counter()
        for record in file.records { counter.add(record) }
        self = counter.summary
        if file.truncatedTail != nil { malformed["file truncated", default: 0] += 1 }
    }

    /// The summary as a JSON object with the keys of `expected-counts.json`.
    public var json: JSONValue {
        func counts(_ table: [String: Int]) -> JSONValue { .object(table.mapValues { .number($0) }) }
        return .object([
            "records": .number(records),
            "packet_types": counts(packetTypes),
            "commands": counts(commands),
            "events": counts(events),
            "le_subevents": counts(leSubevents),
            "att": counts(att),
            "smp": counts(smp),
            "le_signaling": counts(leSignaling),
            "att_mtu": .array(attMTU.map { .string($0) }),
            "malformed": counts(malformed),
        ])
    }
}

/// Walks records and keeps the reassembly state the counts need.
struct Counter {
    var summary = TraceSummary()
    private var reassemblers: [ReassemblyKey: Reassembler] = [:]

    struct ReassemblyKey: Hashable {
        var handle: UInt16
        var received: Bool
    }

    mutating func add(_ record: BTSnoopRecord) {
        summary.records += 1
        switch record.content {
        case .monitor:
            summary.packetTypes["monitor", default: 0] += 1
        case let .unknownType(byte, _):
            summary.packetTypes["unknown \(hex(byte, digits: 2))", default: 0] += 1
        case let .packet(type, body):
            summary.packetTypes[type.description, default: 0] += 1
            add(type: type, body: body, received: record.direction == .received)
        }
    }

    private mutating func add(type: H4PacketType, body: ArraySlice<UInt8>, received: Bool) {
        let packet: HCIPacket
        do {
            packet = try HCIPacket(type: type, body: body)
        } catch {
            summary.malformed["\(type) \(Self.kind(of: error))", default: 0] += 1
            countHeaderOnly(type: type, body: body)
            return
        }
        switch packet {
        case .command(let command):
            summary.commands[HCINames.commandKey(command.opcode), default: 0] += 1
        case .event(let event):
            countEvent(code: event.code, parameters: event.parameters)
        case .acl(let acl):
            let key = ReassemblyKey(handle: acl.handle, received: received)
            let (frame, problem) = reassemblers[key, default: Reassembler()].append(acl)
            if let problem, let kind = Self.malformedKind(problem) { summary.malformed[kind, default: 0] += 1 }
            if let frame { countFrame(frame) }
        case .sco, .iso:
            break
        }
    }

    /// A packet whose length field is wrong still names its opcode or event code, as
    /// Wireshark reports it before flagging it malformed.
    private mutating func countHeaderOnly(type: H4PacketType, body: ArraySlice<UInt8>) {
        var reader = ByteReader(body)
        switch type {
        case .command:
            if let opcode = try? reader.readUInt16() { summary.commands[HCINames.commandKey(HCIOpcode(rawValue: opcode)), default: 0] += 1 }
        case .event:
            if let code = try? reader.readUInt8(), (try? reader.readUInt8()) != nil {
                countEvent(code: code, parameters: reader.remaining)
            }
        case .acl, .sco, .iso:
            break
        }
    }

    private mutating func countEvent(code: UInt8, parameters: ArraySlice<UInt8>) {
        summary.events["\(hex(code, digits: 2)) \(HCINames.event(code))", default: 0] += 1
        if code == LEMetaEvent.code, let subevent = parameters.first {
            summary.leSubevents["\(hex(subevent, digits: 2)) \(HCINames.leSubevent(subevent))", default: 0] += 1
        }
    }

    private mutating func countFrame(_ frame: BasicFrame) {
        guard let code = frame.payload.first else {
            if [.att, .smp, .leSignaling].contains(frame.channel) { summary.malformed["l2cap empty payload", default: 0] += 1 }
            return
        }
        switch frame.channel {
        case .att:
            let opcode = ATTOpcode(rawValue: code)
            summary.att[opcode.description, default: 0] += 1
            if opcode == .exchangeMTURequest || opcode == .exchangeMTUResponse {
                var reader = ByteReader(frame.payload.dropFirst())
                if let mtu = try? reader.readUInt16() {
                    summary.attMTU.append("\(opcode == .exchangeMTURequest ? "req" : "rsp") \(mtu)")
                } else {
                    summary.malformed["att truncated", default: 0] += 1
                }
            }
        case .smp:
            summary.smp[SMPCode(rawValue: code).description, default: 0] += 1
        case .leSignaling:
            summary.leSignaling[SignalingCode(rawValue: code).description, default: 0] += 1
        default:
            break
        }
    }

    private static func kind(of error: DecodingError) -> String {
        switch error {
        case .truncated: "truncated"
        case .lengthMismatch: "length_mismatch"
        case .trailingBytes: "trailing_bytes"
        case .invalidValue: "invalid_value"
        }
    }

    /// Which reassembly problems Wireshark flags as malformed: a fragment that contradicts
    /// the PDU's length. A capture starting mid-PDU, or an abandoned PDU, is not malformed.
    private static func malformedKind(_ problem: ReassemblyProblem) -> String? {
        switch problem {
        case .longerThanDeclared, .overflow: "l2cap length_mismatch"
        case .abandoned, .continuationWithoutStart: nil
        }
    }
}
