import ATT
import BluetoothCore
import HCI
import L2CAP
import SMP

/// Checks that every packet of a btsnoop file decodes with this stack's own decoders, and
/// names the first that does not (`bluejay trace FILE --check`).
///
/// What "decodes" means, layer by layer:
/// - every record is an HCI packet (btmon's non-packet records — index added, notes — are
///   skipped and counted) whose length fields agree with its bytes;
/// - every event decodes as its event (Command Complete, Disconnection Complete, …), and
///   LE connection and advertising-report subevents decode as theirs;
/// - ACL fragments reassemble per handle and direction into L2CAP PDUs that never
///   contradict their length (a capture starting mid-PDU is not an error, as in Wireshark);
///   in a capture that announces connections, ACL on a handle none of them announced is
///   vendor data, not L2CAP (Qualcomm's debug stream on 0x0EDC), and only its HCI framing
///   is checked; a capture that announces none started mid-connection, so all its ACL is
///   taken as L2CAP;
/// - every whole ATT PDU decodes as the PDU its opcode names (an opcode the ATT
///   specification does not define fails), every SMP PDU has its code's length (Core Vol 3,
///   Part H, 3.3), every LE signaling command decodes;
/// - every command of every BR/EDR signaling C-frame (CID 0x0001) decodes, the frame
///   holding whole commands only;
/// - on dynamic channels, followed from the signaling as ``TraceSummary`` follows them,
///   every K-frame and I-frame holds its fields and every SDU adds up to its SDU length
///   (one cut off by the capture's start is not an error), every FCS matches, and every SDU
///   of an ATT or EATT channel decodes as ATT does on CID 0x0004.
///
/// What the stack accepts under its tolerance rule but a strict reading of the
/// specification would not is a ``Warning``, not a failure: an event, LE subevent or
/// Command Complete return parameters, an ATT PDU or a signaling command's data with octets
/// past their format (the stack ignores them). With `strict`, the first warning fails the
/// check instead.
public struct TraceCheck: Sendable, Equatable {
    /// A record the stack accepts although it bends the specification.
    public struct Warning: Sendable, Equatable, CustomStringConvertible {
        /// Its number in the file, from 1.
        public var recordNumber: Int
        /// What is odd about it.
        public var reason: String

        /// `record 12: Command_Status event (0x0f) carries 1 octet past its format (ignored)`.
        public var description: String { "record \(recordNumber): \(reason)" }
    }

    /// The first record that does not decode.
    public struct Failure: Sendable, Equatable, CustomStringConvertible {
        /// Its number in the file, from 1.
        public var recordNumber: Int
        /// What did not decode, and why.
        public var reason: String
        /// The record's bytes (H4 indicator first, when it has one).
        public var bytes: [UInt8]
        /// The secret fields among them (offsets from the first of ``bytes``), printed as
        /// `<redacted N octets>`.
        public var secrets: [SecretField]

        /// A failure at `recordNumber`, for `reason`, of a record holding `bytes` with
        /// `secrets` among them.
        public init(recordNumber: Int, reason: String, bytes: [UInt8], secrets: [SecretField] = []) {
            (self.recordNumber, self.reason, self.bytes, self.secrets) = (recordNumber, reason, bytes, secrets)
        }

        /// `record 12: …: 04 0e …`.
        public var description: String {
            "record \(recordNumber): \(reason): \(bytes.hexDump(redacting: secrets, limit: 64))"
        }
    }

    /// Records in the file.
    public var records = 0
    /// HCI packets decoded.
    public var packets = 0
    /// Records that are no packet (btmon index and note records), skipped.
    public var skipped = 0
    /// Whole ATT PDUs decoded.
    public var attPDUs = 0
    /// Whole SMP PDUs checked.
    public var smpPDUs = 0
    /// Whole LE signaling PDUs decoded.
    public var signalingPDUs = 0
    /// Whole BR/EDR signaling C-frames decoded (each may hold several commands).
    public var bredrSignalingPDUs = 0
    /// Whole L2CAP PDUs on other channels (framing checked only).
    public var otherPDUs = 0
    /// ACL packets on a handle no connection event announced, checked as HCI only.
    public var vendorACLPackets = 0
    /// The first record that did not decode; nil when all did.
    public var failure: Failure?
    /// Every record accepted under the tolerance rule, in file order (in a strict check,
    /// the first of them is the failure instead).
    public var warnings: [Warning] = []
    /// Handles some connection event of the file announces; nil when none does.
    private var announced: Set<ConnectionHandle>?
    /// What the record being checked bends that the stack accepts (an ATT PDU or a signaling
    /// command with extra octets), found while decoding it.
    private var recordOddity: String?

    /// Checks `file`, stopping at the first record that does not decode; with `strict`, also
    /// at the first record that only the tolerance rule accepts (see ``Warning``).
    public init(file: BTSnoopFile, strict: Bool = false) {
        announced = Self.announcedHandles(file)
        var walk = TraceWalk(followedHandles: announced)
        var secrets = PacketSecrets()
        for record in file.records {
            records += 1
            recordOddity = nil
            // Followed for every record, so a failing fragment's share of an SMP key is known.
            var recordSecrets: [SecretField] = []
            if case let .packet(type, body) = record.content {
                // Failure.bytes has the H4 indicator in front of the body.
                recordSecrets = secrets.secretFields(type: type, body: body, direction: record.direction).map {
                    $0.shifted(by: 1)
                }
            }
            if let reason = check(walk.step(record)) {
                failure = Failure(
                    recordNumber: record.number, reason: reason, bytes: Self.bytes(record), secrets: recordSecrets)
                return
            }
            if let oddity = Self.tolerated(record) ?? recordOddity {
                if strict {
                    failure = Failure(
                        recordNumber: record.number, reason: oddity + " (strict check)", bytes: Self.bytes(record),
                        secrets: recordSecrets)
                    return
                }
                warnings.append(Warning(recordNumber: record.number, reason: oddity))
            }
        }
        if let tail = file.truncatedTail {
            failure = Failure(
                recordNumber: file.records.count + 1, reason: "the file ends inside a record (\(tail))", bytes: [])
        }
    }

    /// What is wrong with one step of the walk, if anything.
    private mutating func check(_ step: TraceWalk.Step) -> String? {
        let packet: HCIPacket, acl: TraceWalk.ACLStep?
        switch step {
        case .monitor:
            skipped += 1
            return nil
        case let .unknownType(byte, _):
            return "\(hex(byte, digits: 2)) is no HCI packet type"
        case let .malformed(type, _, error):
            return "\(type) packet: \(error)"
        case let .packet(decoded, aclStep):
            (packet, acl) = (decoded, aclStep)
        }
        packets += 1
        switch packet {
        case .command, .sco, .iso:
            return nil
        case let .event(event):
            return Self.check(event)
        case let .acl(data):
            guard let acl, acl.followed else {
                // ACL on a handle no connection event of the file announces: vendor data.
                vendorACLPackets += 1
                return nil
            }
            if let problem = acl.problem {
                switch problem {
                case .longerThanDeclared, .overflow: return "ACL handle \(hex(data.handle, digits: 4)): \(problem)"
                case .abandoned, .continuationWithoutStart: break
                }
            }
            guard let frame = acl.frame, let content = acl.content else { return nil }
            return check(content, frame)
        }
    }

    /// What the tolerance rule accepts in `record` that a strict reading would not: octets
    /// past an event's format (``HCIEventPacket/extraOctets``).
    private static func tolerated(_ record: BTSnoopRecord) -> String? {
        guard case let .packet(.event, body) = record.content,
            case let .event(packet)? = try? HCIPacket(type: .event, body: body),
            let extra = packet.extraOctets, extra > 0
        else { return nil }
        var what = "\(HCINames.event(packet.code)) event (\(hex(packet.code, digits: 2)))"
        if case let .leMeta(meta)? = try? HCIEvent(packet) {
            what = "LE Meta \(meta.name) event (\(hex(meta.subeventCode, digits: 2)))"
        } else if case let .commandComplete(complete)? = try? HCIEvent(packet) {
            what += " for \(complete.opcode.name)"
        }
        return "\(what) carries \(extra) octet\(extra == 1 ? "" : "s") past its format (ignored)"
    }

    private static func check(_ packet: HCIEventPacket) -> String? {
        let event: HCIEvent
        do { event = try HCIEvent(packet) } catch { return "\(HCINames.event(packet.code)) event: \(error)" }
        guard case let .leMeta(meta) = event else { return nil }
        do {
            _ = try LEConnectionEvent.decode(meta)
            _ = try AdvertisingReport.decode(meta)
        } catch {
            return "LE Meta \(meta.name) event: \(error)"
        }
        return nil
    }

    private mutating func check(_ content: ChannelTracker.Content, _ frame: BasicFrame) -> String? {
        switch content {
        case .fixed:
            return checkFixed(frame)
        case .signaling(let control):
            bredrSignalingPDUs += 1
            if control.commands.isEmpty && control.damaged == nil { return "empty BR/EDR signaling C-frame" }
            for command in control.commands {
                if let problem = SignalingDescription.problem(command, bredr: true) {
                    return "BR/EDR signaling \(command.code.bredrDescription): \(problem)"
                }
            }
            for command in control.commands { noteExtraOctets(command, bredr: true) }
            if let damaged = control.damaged {
                return
                    "BR/EDR signaling C-frame ends inside \(damaged.code?.bredrDescription ?? "a command"): \(damaged.error)"
            }
            return nil
        case .dynamic(let dynamic):
            return check(dynamic)
        }
    }

    private mutating func check(_ frame: ChannelTracker.DynamicFrame) -> String? {
        let channel = "CID \(hex(frame.cid, digits: 4)) (\(frame.psm.map(\.description) ?? "no PSM seen"))"
        if frame.closing {
            // Discarded by the disconnection's requester, whatever it holds.
            otherPDUs += 1
            return nil
        }
        if frame.fcsValid == false { return "\(channel): FCS mismatch" }
        switch frame.problem {
        case .frame(let error)?: return "\(channel): \(error)"
        case .sdu(let problem)?:
            switch problem {
            case .abandoned, .continuationWithoutStart: break
            case .missingSDULength, .overflow, .endedShort, .endMissing: return "\(channel): \(problem)"
            }
        case nil: break
        }
        guard let sdu = frame.sdu else { return nil }
        guard frame.psm?.carriesATT == true else {
            otherPDUs += 1
            return nil
        }
        return checkATT(sdu).map { "\(channel): \($0)" }
    }

    private mutating func checkATT(_ pdu: ArraySlice<UInt8>) -> String? {
        attPDUs += 1
        guard let code = pdu.first else { return "empty ATT PDU" }
        guard let type = ATTOpcode(rawValue: code).pduType else {
            return "ATT opcode \(hex(code, digits: 2)) is not defined"
        }
        // Octets past a fixed format are what the stack accepts from a server (and a
        // server answers a request with them by Invalid PDU): a warning, not a failure.
        do {
            let (_, extra) = try type.decodeCountingExtraOctets(pdu)
            if extra > 0 {
                recordOddity =
                    "ATT \(ATTOpcode(rawValue: code)) carries \(extra) octet\(extra == 1 ? "" : "s") past its format"
            }
        } catch {
            return "ATT \(ATTOpcode(rawValue: code)): \(error)"
        }
        return nil
    }

    private mutating func checkFixed(_ frame: BasicFrame) -> String? {
        switch frame.channel {
        case .att:
            return checkATT(frame.payload)
        case .smp:
            smpPDUs += 1
            guard let code = frame.payload.first else { return "empty SMP PDU" }
            guard let command = SMPCode(rawValue: code).commandType else {
                return "SMP code \(hex(code, digits: 2)) is not defined"
            }
            guard frame.payload.count == command.length else {
                return
                    "SMP \(SMPCode(rawValue: code)) is \(frame.payload.count) octets, its length is \(command.length)"
            }
        case .leSignaling:
            signalingPDUs += 1
            let command: SignalingCommand
            do { command = try SignalingCommand(decoding: frame.payload) } catch {
                return "LE signaling command: \(error)"
            }
            if let problem = SignalingDescription.problem(command, bredr: false) {
                return "LE signaling \(command.code): \(problem)"
            }
            noteExtraOctets(command, bredr: false)
        default:
            otherPDUs += 1
        }
        return nil
    }

    /// Notes the first signaling command of the record whose data runs past its format: what
    /// the tolerance rule accepts from a peer, a warning like an ATT PDU's.
    private mutating func noteExtraOctets(_ command: SignalingCommand, bredr: Bool) {
        let extra = SignalingDescription.extraOctets(command, bredr: bredr)
        guard extra > 0, recordOddity == nil else { return }
        let name = bredr ? "BR/EDR signaling \(command.code.bredrDescription)" : "LE signaling \(command.code)"
        recordOddity = "\(name) carries \(extra) octet\(extra == 1 ? "" : "s") past its format"
    }

    /// Every handle a successful (LE) Connection Complete of the file announces; nil when
    /// none does (a capture started mid-connection). ACL on other handles is vendor data.
    public static func announcedHandles(_ file: BTSnoopFile) -> Set<ConnectionHandle>? {
        var handles: Set<ConnectionHandle> = []
        for record in file.records {
            // Only two event codes announce links; the rest need no decoding here.
            guard case let .packet(.event, body) = record.content, let code = body.first,
                code == 0x03 || code == LEMetaEvent.code,
                case let .event(packet)? = try? HCIPacket(type: .event, body: body),
                let announcement = LinkAnnouncement(packet)
            else { continue }
            handles.insert(announcement.handle)
        }
        return handles.isEmpty ? nil : handles
    }

    private static func bytes(_ record: BTSnoopRecord) -> [UInt8] {
        switch record.content {
        case let .packet(type, body): [type.rawValue] + body
        case let .unknownType(byte, body): [byte] + body
        case let .monitor(_, _, body): Array(body)
        }
    }
}

extension ReplayMismatch {
    /// The mismatch report with both packets decoded down to ATT, SMP and L2CAP
    /// signaling (the report HCI alone gives stops at the L2CAP channel).
    public var decodedReport: String {
        report { TraceFormatter.describe(h4: $0, direction: .sent) }
    }
}
