import ATT
import BluetoothCore
import HCI
import L2CAP
import SMP

/// Turns btsnoop records into readable lines, one packet per line (like `btmon -r`):
/// number, time, direction, the packet by its specification name, and the L2CAP channel
/// and ATT/SMP/signaling code of each whole PDU. Nothing is hidden: undecodable packets
/// are printed as hex with the reason.
///
/// Events print their fields: LE connection events, and the main BR/EDR events
/// (`BREDREventDescription`). Signaling commands print decoded, every command of a
/// BR/EDR C-frame. Dynamic channels are followed as ``TraceSummary`` follows them: a frame
/// prints with its channel's PSM, `L2CAP CID 0x0041 (PSM 0x001f ATT) len 3: ATT 0x0a
/// Read_Req [0a 03 00]`, K-, I- and S-frames with their fields and the SDU they complete.
///
/// Secrets are the one thing not shown as they are: keys, nonces, confirm and check values
/// and passkeys (`HCISecretFields`, `SMPSecretFields`) print as `<redacted 16 octets>`
/// unless ``showsSecrets`` is set. A capture redacted with `BTSnoopRedaction` holds zeros
/// there, so the same marks show where it was redacted.
public struct TraceFormatter: Sendable {
    /// Whether secret fields print in clear (`--log-secrets`). Off by default.
    public var showsSecrets = false
    /// How many secret fields were printed in clear so far (only with ``showsSecrets``): the
    /// caller warns when this first moves.
    public private(set) var secretsShown = 0
    /// The walk through the records (``TraceWalk``). ACL on a handle no live link was
    /// announced on is marked, because it is often vendor debug data (Qualcomm uses 0x0EDC).
    private var walk: TraceWalk

    /// A formatter with no reassembly state and no announced handles. It follows signaling
    /// and channels on the handles connection events announce as it goes; ACL on any other
    /// handle is framed as L2CAP and its fixed channels named, no more.
    public init() {
        walk = TraceWalk(followedHandles: [])
    }

    /// A formatter for the records of `file`, which follows signaling and channels where
    /// ``TraceSummary`` does: on the handles the file's connection events announce, or on
    /// every handle of a file that announces none (a capture started mid-connection). So
    /// vendor data on a never-announced handle (Qualcomm's 0x0EDC) is not taken for
    /// signaling, even before the first connection event.
    public init(file: BTSnoopFile) {
        walk = TraceWalk(file: file)
    }

    /// Formats one record.
    public mutating func format(_ record: BTSnoopRecord) -> String {
        let arrow = record.direction == .sent ? "<" : ">"
        let prefix = "#\(record.number) \(Self.timestamp(record.unixMicroseconds)) \(arrow)"
        switch record.content {
        case let .monitor(opcode, index, data):
            return "\(prefix) monitor opcode \(opcode) index \(index) (\(data.count) bytes)"
        case let .unknownType(byte, data):
            return "\(prefix) unknown packet type \(hex(byte, digits: 2)): \(data.hexDump)"
        case .packet:
            switch walk.step(record) {
            case let .malformed(type, body, error):
                return
                    "\(prefix) malformed \(type) packet (\(error)): \(render(body, secrets: HCISecretFields.packet(type: type, body: body)))"
            case let .packet(packet, acl):
                return "\(prefix) \(describe(packet, acl))"
            case .monitor, .unknownType:
                return prefix
            }
        }
    }

    /// One packet described as ``format(_:)`` would, without number and time: for a report
    /// that shows a packet on its own (a replay mismatch). An ACL fragment is described as
    /// far as it goes by itself.
    public static func describe(h4 bytes: [UInt8], direction: BTSnoop.Direction) -> String {
        guard let packet = try? HCIPacket(h4: bytes[...]) else { return "undecodable packet (\(bytes.count) bytes)" }
        var formatter = TraceFormatter()
        // A lone packet cannot show its connection event; do not flag its handle for that.
        if case let .acl(acl) = packet { formatter.walk.assumeAnnounced(acl.handle) }
        guard case let .packet(packet, acl) = formatter.walk.step(packet, received: direction == .received) else {
            return ""
        }
        return formatter.describe(packet, acl)
    }

    private mutating func describe(_ packet: HCIPacket, _ step: TraceWalk.ACLStep?) -> String {
        switch packet {
        case .command(let command):
            return
                "HCI Command: \(command.opcode.name) (\(hex(command.opcode.rawValue, digits: 4))) plen \(command.parameters.count)"
                + bytes(
                    command.parameters, secrets: HCISecretFields.command(command.opcode, parameters: command.parameters)
                )
        case .event(let event):
            return "HCI Event: \(describeEvent(event))"
        case .acl(let acl):
            let received = step?.received ?? false
            var line =
                "ACL \(received ? "RX" : "TX"): handle \(hex(acl.handle, digits: 4)) flags \(hex(acl.boundary.rawValue, digits: 2)) dlen \(acl.data.count)"
            if !walk.liveHandles.contains(acl.handle) { line += " (handle never announced)" }
            let problem = step?.problem
            if let problem { line += " [\(problem)]" }
            if let frame = step?.frame {
                line += " | " + describe(frame, handle: acl.handle, content: step?.content)
            } else if problem == nil {
                line += " (fragment)"
            }
            return line
        case .sco(let sco):
            return "SCO: handle \(hex(sco.handle, digits: 4)) dlen \(sco.data.count)"
        case .iso(let iso):
            return "ISO: handle \(hex(iso.handle, digits: 4)) dlen \(iso.data.count)"
        }
    }

    private mutating func describeEvent(_ packet: HCIEventPacket) -> String {
        let head = "\(HCINames.event(packet.code)) (\(hex(packet.code, digits: 2))) plen \(packet.parameters.count)"
        let secrets = HCISecretFields.event(code: packet.code, parameters: packet.parameters)
        guard let event = try? HCIEvent(packet) else {
            return head + " (malformed)" + bytes(packet.parameters, secrets: secrets)
        }
        switch event {
        case .commandComplete(let complete):
            let status = complete.returnParameters.first.map { " status \(HCIStatus(rawValue: $0))" } ?? ""
            return head
                + ": \(complete.opcode.name) (\(hex(complete.opcode.rawValue, digits: 4))) ncmd \(complete.numHCICommandPackets)\(status)"
        case .commandStatus(let status):
            return head
                + ": \(status.opcode.name) (\(hex(status.opcode.rawValue, digits: 4))) ncmd \(status.numHCICommandPackets) status \(status.status)"
        case .disconnectionComplete(let disconnection):
            return head
                + ": handle \(hex(disconnection.handle, digits: 4)) status \(disconnection.status) reason \(disconnection.reason)"
        case .numberOfCompletedPackets(let completed):
            return head + ": "
                + completed.completions.map { "handle \(hex($0.handle, digits: 4)) count \($0.count)" }.joined(
                    separator: ", ")
        case .encryptionChange(let change):
            return head
                + ": handle \(hex(change.handle, digits: 4)) status \(change.status) encryption \(change.encryptionEnabled)"
                + (change.keySize.map { " key size \($0)" } ?? "")
        case .encryptionKeyRefreshComplete(let refresh):
            return head + ": handle \(hex(refresh.handle, digits: 4)) status \(refresh.status)"
        case .hardwareError(let error):
            return head + ": hardware code \(hex(error.hardwareCode, digits: 2))"
        case .leMeta(let meta):
            // LE Connection Complete, LE Enhanced Connection Complete v1 and v2.
            if case let .connectionComplete(status, handle, _, _, peer, parameters)? = try? LEConnectionEvent.decode(
                meta)
            {
                return head
                    + ": \(meta.name) (\(hex(meta.subeventCode, digits: 2))) status \(status) handle \(hex(handle, digits: 4))"
                    + " peer \(peer) \(parameters.description)"
            }
            return head + ": \(meta.name) (\(hex(meta.subeventCode, digits: 2)))"
                + bytes(meta.parameters, secrets: HCISecretFields.leSubevent(meta.subeventCode))
        case .other(let other):
            do {
                guard
                    let fields = try BREDREventDescription.describe(
                        code: other.code, parameters: other.parameters,
                        showingSecrets: showsSecrets, shown: &secretsShown)
                else {
                    return head + bytes(packet.parameters, secrets: secrets)
                }
                return head + ": " + fields
            } catch {
                return head + " (malformed: \(error))" + bytes(packet.parameters, secrets: secrets)
            }
        case .vendorSpecific, .dataBufferOverflow:
            return head + bytes(packet.parameters, secrets: secrets)
        }
    }

    /// A whole PDU, as its channel reads (`content`: nil when its handle is not followed:
    /// ACL on a handle no connection announced may be vendor data, Qualcomm's 0x0EDC, whose
    /// bytes mean nothing as signaling or channels).
    private mutating func describe(_ frame: BasicFrame, handle: ConnectionHandle, content: ChannelTracker.Content?)
        -> String
    {
        guard let content else { return describeFixed(frame, linkType: nil, followed: false) }
        let linkType = walk.linkType(handle)
        switch content {
        case .fixed:
            return describeFixed(frame, linkType: linkType, followed: true)
        case .signaling(let control):
            var commands = control.commands.map { SignalingDescription.text($0, bredr: true) }
            if let damaged = control.damaged {
                commands.append("\(damaged.code?.bredrDescription ?? "command") (damaged: \(damaged.error))")
            }
            let reserved = linkType == .le ? " [reserved on LE]" : ""
            return "L2CAP \(frame.channel) len \(frame.payload.count)\(reserved): "
                + (commands.isEmpty ? "no command" : commands.joined(separator: "; "))
                + Self.bytes(frame.payload)
        case .dynamic(let dynamic):
            return Self.describe(dynamic, length: frame.payload.count, payload: frame.payload)
        }
    }

    /// A frame on a fixed channel, by its CID; LE signaling commands decoded only on a
    /// `followed` handle (on vendor data their fields would mean nothing).
    private mutating func describeFixed(_ frame: BasicFrame, linkType: LinkType?, followed: Bool) -> String {
        let code = frame.payload.first
        let detail: String =
            switch (frame.channel, code) {
            case (.att, let code?): "ATT \(ATTOpcode(rawValue: code))"
            case (.smp, let code?): "SMP \(SMPCode(rawValue: code))"
            case (.leSignaling, _?):
                if followed, let command = try? SignalingCommand(decoding: frame.payload) {
                    "LE signaling " + SignalingDescription.text(command, bredr: false)
                } else {
                    "LE signaling \(SignalingCode(rawValue: code ?? 0))"
                }
            case (ChannelIdentifier(rawValue: 0x0007), let code?): "SMP \(SMPCode(rawValue: code))"
            default: "\(frame.channel)"
            }
        // Wireshark reads 0x0004–0x0006 as ATT, LE signaling and SMP on any link, and so does
        // the summary; the line says when the link makes that CID a reserved one.
        let leOnly = [ChannelIdentifier.att, .leSignaling, .smp].contains(frame.channel)
        let reserved = linkType == .bredr && leOnly ? " [reserved on BR/EDR]" : ""
        let secrets =
            SMPSecretFields.carriesSMP(channel: frame.channel.rawValue)
            ? SMPSecretFields.fields(pdu: frame.payload) : []
        return "L2CAP \(frame.channel) len \(frame.payload.count)\(reserved): \(detail)"
            + bytes(frame.payload, secrets: secrets)
    }

    /// `L2CAP CID 0x0040 (PSM 0x0080) len 30: K-frame, SDU 28 of 60 octets [3c 00 …]`.
    private static func describe(_ frame: ChannelTracker.DynamicFrame, length: Int, payload: ArraySlice<UInt8>)
        -> String
    {
        let channel = "CID \(hex(frame.cid, digits: 4)) (\(frame.psm.map(\.description) ?? "no PSM seen"))"
        if frame.closing {
            return "L2CAP \(channel) len \(length): disconnecting, discarded" + bytes(payload)
        }
        var parts: [String] = []
        switch frame.layout {
        case .basic: break
        case .kFrame: parts.append("K-frame")
        case .information(let information):
            parts.append(
                "I-frame txseq \(information.txSeq) reqseq \(information.reqSeq)\(information.final ? " final" : "") \(information.sar)"
            )
        case .supervisory(let supervisory):
            parts.append(
                "S-frame \(supervisory.function) reqseq \(supervisory.reqSeq)"
                    + (supervisory.poll ? " poll" : "") + (supervisory.final ? " final" : ""))
        case .undecodable: parts.append("undecodable frame")
        }
        var shown = payload
        if let sdu = frame.sdu {
            shown = sdu
            if frame.psm?.carriesATT == true, let code = sdu.first {
                parts.append("ATT \(ATTOpcode(rawValue: code))")
            } else if let name = frame.psm?.name {
                parts.append(name + (frame.layout.isBasic ? "" : " SDU of \(sdu.count) octets"))
            } else if !frame.layout.isBasic {
                parts.append("SDU of \(sdu.count) octets")
            }
        } else if let (received, total) = frame.partial {
            parts.append("SDU \(received) of \(total) octets")
        }
        if case .supervisory = frame.layout { shown = [] }
        var line = "L2CAP \(channel) len \(length)" + (parts.isEmpty ? "" : ": " + parts.joined(separator: ", "))
        if let problem = frame.problem { line += " [\(problem)]" }
        if frame.fcsValid == false { line += " [FCS mismatch]" }
        return line + bytes(shown)
    }

    private static func bytes(_ data: ArraySlice<UInt8>) -> String {
        guard !data.isEmpty else { return "" }
        let shown = data.prefix(32)
        return " [" + shown.hexDump + (data.count > shown.count ? " …" : "") + "]"
    }

    /// ` [0a 01 00]`, the first 32 octets, each secret field redacted unless ``showsSecrets``.
    private mutating func bytes(_ data: ArraySlice<UInt8>, secrets: [SecretField]) -> String {
        guard !data.isEmpty else { return "" }
        return " [" + render(data, secrets: secrets, limit: 32) + "]"
    }

    /// `data` in hex, each secret field as `<redacted N octets>`, or in clear (and counted in
    /// ``secretsShown``) when ``showsSecrets`` is set.
    private mutating func render(_ data: ArraySlice<UInt8>, secrets: [SecretField], limit: Int? = nil) -> String {
        let present = secrets.compactMap { $0.clipped(to: min(data.count, limit ?? data.count)) }
        if showsSecrets {
            secretsShown += present.count
            return data.hexDump(redacting: [], limit: limit)
        }
        return data.hexDump(redacting: secrets, limit: limit)
    }

    /// `2017-12-13 12:34:56.123456`, UTC.
    static func timestamp(_ unixMicroseconds: Int64) -> String {
        // Floor division by remainders, which cannot overflow even at Int64.min (a corrupt
        // capture's timestamp must print, not trap).
        var (seconds, micros) = unixMicroseconds.quotientAndRemainder(dividingBy: 1_000_000)
        if micros < 0 { seconds -= 1; micros += 1_000_000 }
        var (days, secondOfDay) = seconds.quotientAndRemainder(dividingBy: 86400)
        if secondOfDay < 0 { days -= 1; secondOfDay += 86400 }
        // Howard Hinnant's civil-from-days.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let microText = String(micros)
        return
            "\(year)-\(two(month))-\(two(day)) \(two(secondOfDay / 3600)):\(two(secondOfDay % 3600 / 60)):\(two(secondOfDay % 60))."
            + String(repeating: "0", count: 6 - microText.count) + microText
    }
}

extension ChannelTracker.Layout {
    /// Whether the frame is a B-frame, whose payload is the SDU itself.
    fileprivate var isBasic: Bool { if case .basic = self { true } else { false } }
}
