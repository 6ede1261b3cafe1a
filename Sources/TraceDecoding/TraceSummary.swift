import ATT
import BluetoothCore
import HCI
import L2CAP
import SMP

/// Counts what a btsnoop file holds, in the schema of `expected-counts.json` (the counts
/// Wireshark agrees with): records, packet types, command opcodes, event codes, LE
/// subevents, ATT/SMP/LE-signaling codes, the MTUs exchanged, and malformed packets; and,
/// only when the file has any, SDUs on dynamic L2CAP channels (`l2cap`) and BR/EDR
/// signaling commands (`signaling`).
///
/// Counting rules (they are Wireshark's): every packet counts whatever the controller
/// state, so events before Reset and traffic of connections opened before the capture
/// count too. Every ACL handle feeds L2CAP reassembly, kept per handle and direction, and
/// each whole L2CAP PDU counts once by its channel and first byte: CIDs 0x0004, 0x0005 and
/// 0x0006 as ATT, LE signaling and SMP on any link, as Wireshark reads them. Vendor debug
/// data sent as ACL (Qualcomm's handle 0x0EDC) is therefore counted as whatever its bytes
/// look like there, exactly as Wireshark does.
///
/// Dynamic channels are followed from the signaling of both sides (`ChannelTracker`): a
/// channel to PSM 0x001F (ATT over BR/EDR) or 0x0027 (EATT) counts each whole SDU in `att`
/// (and `att_mtu`) like ATT on CID 0x0004; any other channel counts each whole SDU in
/// `l2cap` under its PSM (`PSM 0x0019 AVDTP`, `PSM 0x1001`), a K-frame or I-frame SDU once
/// however many frames it took (Wireshark reassembles them too); frames on a dynamic CID
/// whose opening the capture did not show count one each under `CID 0x0041 (no PSM seen)`.
/// Every command of a C-frame on the BR/EDR signaling channel (CID 0x0001) counts in
/// `signaling` by its BR/EDR name. Both are followed only on handles a connection event of
/// the file announces, or on every handle of a file that announces none (it started
/// mid-connection): vendor data on a handle no connection announced is not taken for
/// channels or signaling.
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
    /// BR/EDR signaling commands (CID 0x0001, every command of each C-frame) by code,
    /// `0xNN Name` (`SignalingCode.bredrDescription`). In the JSON only when not empty.
    public var signaling: [String: Int] = [:]
    /// Whole SDUs on dynamic channels other than ATT and EATT, by `PSM 0xNNNN Name` (or
    /// `PSM 0xNNNN` for one with no name), and frames on dynamic CIDs no signaling of the
    /// capture opened, by `CID 0xNNNN (no PSM seen)`. In the JSON only when not empty.
    public var l2cap: [String: Int] = [:]
    /// `req 517` / `rsp 247`, in file order.
    public var attMTU: [String] = []
    /// Packets whose bytes contradict their own length fields, by kind.
    public var malformed: [String: Int] = [:]

    /// An empty summary.
    public init() {}

    /// Summarises a parsed file.
    public init(file: BTSnoopFile) {
        var counter = Counter(followedHandles: TraceCheck.announcedHandles(file))
        for record in file.records { counter.add(record) }
        self = counter.summary
        if file.truncatedTail != nil { malformed["file truncated", default: 0] += 1 }
    }

    /// The summary as a JSON object with the keys of `expected-counts.json`, and `l2cap` and
    /// `signaling` when they are not empty (so a file without dynamic channels or BR/EDR
    /// signaling gives exactly the schema of `expected-counts.json`).
    public var json: JSONValue {
        func counts(_ table: [String: Int]) -> JSONValue { .object(table.mapValues { .number($0) }) }
        var object: [String: JSONValue] = [
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
        ]
        if !l2cap.isEmpty { object["l2cap"] = counts(l2cap) }
        if !signaling.isEmpty { object["signaling"] = counts(signaling) }
        return .object(object)
    }
}

/// Counts what the trace walk (``TraceWalk``) makes of each record.
struct Counter {
    var summary = TraceSummary()
    private var walk: TraceWalk

    /// A counter following channels on `followedHandles` (all handles when nil).
    init(followedHandles: Set<ConnectionHandle>?) {
        walk = TraceWalk(followedHandles: followedHandles)
    }

    mutating func add(_ record: BTSnoopRecord) {
        summary.records += 1
        switch walk.step(record) {
        case .monitor:
            summary.packetTypes["monitor", default: 0] += 1
        case let .unknownType(byte, _):
            summary.packetTypes["unknown \(hex(byte, digits: 2))", default: 0] += 1
        case let .malformed(type, body, error):
            summary.packetTypes[type.description, default: 0] += 1
            summary.malformed["\(type) \(Self.kind(of: error))", default: 0] += 1
            countHeaderOnly(type: type, body: body)
        case let .packet(packet, acl):
            summary.packetTypes[packet.type.description, default: 0] += 1
            count(packet, acl)
        }
    }

    private mutating func count(_ packet: HCIPacket, _ step: TraceWalk.ACLStep?) {
        switch packet {
        case .command(let command):
            summary.commands[HCINames.commandKey(command.opcode), default: 0] += 1
        case .event(let event):
            countEvent(code: event.code, parameters: event.parameters)
        case .acl:
            guard let step else { return }
            if let problem = step.problem, let kind = Self.malformedKind(problem) {
                summary.malformed[kind, default: 0] += 1
            }
            if let frame = step.frame { countFrame(frame, step.content) }
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
            if let opcode = try? reader.readUInt16() {
                summary.commands[HCINames.commandKey(HCIOpcode(rawValue: opcode)), default: 0] += 1
            }
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

    /// A whole PDU: by its channel when its handle is followed, else by its fixed CID.
    private mutating func countFrame(_ frame: BasicFrame, _ content: ChannelTracker.Content?) {
        switch content {
        case nil, .fixed?:
            countFixed(frame)
        case .signaling(let control)?:
            if frame.payload.isEmpty { summary.malformed["l2cap empty payload", default: 0] += 1 }
            for command in control.commands { summary.signaling[command.code.bredrDescription, default: 0] += 1 }
            if let damaged = control.damaged {
                // Named, as Wireshark names it, before it is flagged.
                if let code = damaged.code { summary.signaling[code.bredrDescription, default: 0] += 1 }
                summary.malformed["l2cap signaling \(Self.kind(of: damaged.error))", default: 0] += 1
            }
        case .dynamic(let dynamic)?:
            countDynamic(dynamic)
        }
    }

    private mutating func countDynamic(_ frame: ChannelTracker.DynamicFrame) {
        // Data in transit when the channel's disconnection was asked for is discarded;
        // Wireshark does not read it as the channel's protocol either.
        if frame.closing { return }
        if let problem = frame.problem, let kind = Self.malformedKind(problem) {
            summary.malformed[kind, default: 0] += 1
        }
        guard let sdu = frame.sdu else { return }
        guard let psm = frame.psm else {
            summary.l2cap["CID \(hex(frame.cid, digits: 4)) (no PSM seen)", default: 0] += 1
            return
        }
        if psm.carriesATT {
            countATT(sdu)
        } else {
            summary.l2cap[psm.description, default: 0] += 1
        }
    }

    private mutating func countFixed(_ frame: BasicFrame) {
        guard let code = frame.payload.first else {
            if [.att, .smp, .leSignaling].contains(frame.channel) {
                summary.malformed["l2cap empty payload", default: 0] += 1
            }
            return
        }
        switch frame.channel {
        case .att:
            countATT(frame.payload)
        case .smp:
            summary.smp[SMPCode(rawValue: code).description, default: 0] += 1
        case .leSignaling:
            summary.leSignaling[SignalingCode(rawValue: code).description, default: 0] += 1
        default:
            break
        }
    }

    /// One ATT PDU, from the fixed channel or an ATT or EATT channel.
    private mutating func countATT(_ pdu: ArraySlice<UInt8>) {
        guard let code = pdu.first else {
            summary.malformed["l2cap empty payload", default: 0] += 1
            return
        }
        let opcode = ATTOpcode(rawValue: code)
        summary.att[opcode.description, default: 0] += 1
        if opcode == .exchangeMTURequest || opcode == .exchangeMTUResponse {
            var reader = ByteReader(pdu.dropFirst())
            if let mtu = try? reader.readUInt16() {
                summary.attMTU.append("\(opcode == .exchangeMTURequest ? "req" : "rsp") \(mtu)")
            } else {
                summary.malformed["att truncated", default: 0] += 1
            }
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

    /// The same rule one layer up, for the frames of a segmenting mode: frames too short for
    /// their fields, and SDUs whose segments contradict their SDU length, are malformed; an
    /// SDU cut off by the capture's start, or abandoned, is not.
    private static func malformedKind(_ problem: ChannelTracker.Problem) -> String? {
        switch problem {
        case .frame: "l2cap frame truncated"
        case .sdu(.missingSDULength): "l2cap sdu truncated"
        case .sdu(.overflow), .sdu(.endedShort), .sdu(.endMissing): "l2cap sdu length_mismatch"
        case .sdu(.abandoned), .sdu(.continuationWithoutStart): nil
        }
    }
}
