import BluetoothCore

/// A field of a host→controller packet that may legitimately differ from the recording:
/// a value the host makes up (a random address, an SMP nonce or key, a key handed to the
/// controller) or computes from one. Everything outside such fields is compared exactly.
///
/// How each kind is matched (nothing is ignored wholesale):
///
/// - ``Kind/random``: the host may pick another value than the recording, but
///   consistently. The first time a recorded value is met, the host's value is bound to
///   it; from then on that recorded value, wherever a rule meets it again, must be the
///   same host value, and no other recorded value may map to it (a one-to-one
///   substitution). A host that reuses a nonce, or forgets a key it handed out, fails.
/// - ``Kind/randomAddress``: as ``Kind/random``, and the address's two most significant
///   bits (static random, resolvable or non-resolvable private, Core Vol 6, Part B,
///   1.3.2) must be those of the recording.
/// - ``Kind/derived``: a value computed from random ones (SMP confirm and DHKey check
///   values, the input of LE Encrypt). Exact while every bound value so far equals its
///   recording (a host with a seeded random source must reproduce it bit for bit); once
///   a bound value has differed, only its length is checked, because checking it would
///   mean redoing the host's cryptography inside the test.
public struct ReplayField: Sendable, Equatable {
    /// How a field is matched.
    public enum Kind: String, Sendable, Equatable {
        /// Made up by the host: bound one-to-one to the recorded value.
        case random
        /// A random device address: bound, with its address sub-type kept.
        case randomAddress
        /// Computed from random values: exact until a bound value has differed.
        case derived
    }

    /// The field's name in the Core specification.
    public var name: String
    /// Offset of the field: in a command, from its first parameter; in an SMP PDU, from
    /// its Code octet.
    public var offset: Int
    /// Length of the field in octets.
    public var length: Int
    /// How it is matched.
    public var kind: Kind

    /// A field `length` octets long at `offset`.
    public init(_ name: String, offset: Int, length: Int, _ kind: Kind) {
        (self.name, self.offset, self.length, self.kind) = (name, offset, length, kind)
    }
}

/// The varying fields of one kind of host→controller packet.
public struct ReplayRule: Sendable, Equatable {
    /// Which packets a rule applies to.
    public enum Target: Sendable, Equatable, Hashable {
        /// HCI commands with this opcode.
        case command(HCIOpcode)
        /// SMP PDUs (L2CAP channel 0x0006 on an LE link) with this Code.
        case smp(code: UInt8)
    }

    /// The packets the rule applies to.
    public var target: Target
    /// The packet's name in the Core specification.
    public var name: String
    /// Its varying fields; the rest of the packet is exact.
    public var fields: [ReplayField]

    /// A rule for `target`.
    public init(_ target: Target, _ name: String, _ fields: [ReplayField]) {
        (self.target, self.name, self.fields) = (target, name, fields)
    }

    /// The rules replay uses by default: every value a BLE host legitimately makes up.
    /// (Our host sets no random address and does not pair yet; the table is there so a
    /// recording made by a host that does — or by this one once SMP lands — replays
    /// under the same rules.) Fixtures/traces/README.md shows the same table.
    public static let standard: [ReplayRule] = [
        // Core Vol 4, Part E, 7.8.4: the address our host would make up.
        ReplayRule(
            .command(HCIOpcode(rawValue: 0x2005)), "LE_Set_Random_Address",
            [ReplayField("Random_Address", offset: 0, length: 6, .randomAddress)]),
        // 7.8.53: Advertising_Handle is exact.
        ReplayRule(
            .command(HCIOpcode(rawValue: 0x2035)), "LE_Set_Advertising_Set_Random_Address",
            [ReplayField("Random_Address", offset: 1, length: 6, .randomAddress)]),
        // 7.8.22: Key and Plaintext_Data of a host-side AES computation (legacy pairing, RPAs).
        ReplayRule(
            .command(HCIOpcode(rawValue: 0x2017)), "LE_Encrypt",
            [
                ReplayField("Key", offset: 0, length: 16, .derived),
                ReplayField("Plaintext_Data", offset: 16, length: 16, .derived),
            ]),
        // 7.8.24: Connection_Handle is exact; the key and its identifiers were agreed in pairing.
        ReplayRule(
            .command(HCIOpcode(rawValue: 0x2019)), "LE_Enable_Encryption",
            [
                ReplayField("Random_Number", offset: 2, length: 8, .random),
                ReplayField("Encrypted_Diversifier", offset: 10, length: 2, .random),
                ReplayField("Long_Term_Key", offset: 12, length: 16, .random),
            ]),
        // 7.8.25 (peripheral role): the LTK of the bond.
        ReplayRule(
            .command(HCIOpcode(rawValue: 0x201A)), "LE_Long_Term_Key_Request_Reply",
            [ReplayField("Long_Term_Key", offset: 2, length: 16, .random)]),
        // 7.8.38: Peer_IRK is the peer's (exact); Local_IRK is ours.
        ReplayRule(
            .command(HCIOpcode(rawValue: 0x2027)), "LE_Add_Device_To_Resolving_List",
            [ReplayField("Local_IRK", offset: 23, length: 16, .random)]),
        // Core Vol 3, Part H, 3.5 and 3.6: SMP values offsets from the Code octet.
        ReplayRule(
            .smp(code: 0x03), "Pairing_Confirm", [ReplayField("Confirm_Value", offset: 1, length: 16, .derived)]),
        ReplayRule(.smp(code: 0x04), "Pairing_Random", [ReplayField("Random_Value", offset: 1, length: 16, .random)]),
        ReplayRule(
            .smp(code: 0x06), "Encryption_Information", [ReplayField("Long_Term_Key", offset: 1, length: 16, .random)]),
        ReplayRule(
            .smp(code: 0x07), "Central_Identification",
            [ReplayField("EDIV", offset: 1, length: 2, .random), ReplayField("Rand", offset: 3, length: 8, .random)]),
        ReplayRule(
            .smp(code: 0x08), "Identity_Information",
            [ReplayField("Identity_Resolving_Key", offset: 1, length: 16, .random)]),
        ReplayRule(
            .smp(code: 0x0A), "Signing_Information", [ReplayField("Signature_Key", offset: 1, length: 16, .random)]),
        ReplayRule(
            .smp(code: 0x0C), "Pairing_Public_Key",
            [
                ReplayField("Public_Key_X", offset: 1, length: 32, .random),
                ReplayField("Public_Key_Y", offset: 33, length: 32, .random),
            ]),
        ReplayRule(
            .smp(code: 0x0D), "Pairing_DHKey_Check", [ReplayField("DHKey_Check", offset: 1, length: 16, .derived)]),
    ]
}

/// Compares the host's packets with a recording's host→controller packets under
/// ``ReplayRule``s, keeping the bindings of random values and the L2CAP position of each
/// ACL fragment (an SMP Pairing Public Key spans several 27-octet fragments).
public struct ReplayMatcher: Sendable {
    private let commandRules: [UInt16: ReplayRule]
    private let smpRules: [UInt8: ReplayRule]
    private var recordedToActual: [[UInt8]: [UInt8]] = [:]
    private var actualToRecorded: [[UInt8]: [UInt8]] = [:]
    /// Whether a bound value has differed from its recording (derived values may then differ too).
    public private(set) var boundValueDiffered = false
    /// Per ACL handle: the recorded L2CAP PDU being sent, for fields that span fragments.
    private var pdus: [UInt16: PDUState] = [:]

    private struct PDUState {
        var rule: ReplayRule?
        /// Octets of the PDU (L2CAP header included) seen so far.
        var offset: Int
        /// Field bytes collected so far, by field index: (recorded, actual).
        var partial: [Int: ([UInt8], [UInt8])] = [:]
    }

    /// A matcher with `rules` (``ReplayRule/standard`` unless told otherwise).
    public init(rules: [ReplayRule] = ReplayRule.standard) {
        var commands: [UInt16: ReplayRule] = [:]
        var smp: [UInt8: ReplayRule] = [:]
        for rule in rules {
            switch rule.target {
            case let .command(opcode): commands[opcode.rawValue] = rule
            case let .smp(code): smp[code] = rule
            }
        }
        commandRules = commands
        smpRules = smp
    }

    /// Compares one packet the host sent (`actual`, H4 bytes) with the recorded one
    /// (`expected`). Returns nil when they match, else why not.
    public mutating func match(expected: [UInt8], actual: [UInt8]) -> String? {
        guard expected.first == actual.first else {
            return
                "the host sent \(Self.typeName(actual.first)) where the recording has \(Self.typeName(expected.first))"
        }
        guard expected.count == actual.count else {
            return "the host's packet is \(actual.count) octets long, the recording's \(expected.count)"
        }
        // (position in the packet, field) for each octet a rule covers.
        var covered: [(range: Range<Int>, field: ReplayField, index: Int, rule: ReplayRule)] = []
        var aclHandle: UInt16?
        var pduRange: Range<Int>?
        switch expected.first {
        case H4PacketType.command.rawValue where expected.count >= 4:
            let opcode = UInt16(expected[1]) | UInt16(expected[2]) << 8
            if let rule = commandRules[opcode] {
                for (index, field) in rule.fields.enumerated() where 4 + field.offset + field.length <= expected.count {
                    covered.append((4 + field.offset..<4 + field.offset + field.length, field, index, rule))
                }
            }
        case H4PacketType.acl.rawValue where expected.count >= 5:
            // The ACL header must match exactly before any payload rule applies.
            if let first = (1..<5).first(where: { expected[$0] != actual[$0] }) {
                return "ACL header octet \(first) differs (handle, flags or length)"
            }
            let handle = (UInt16(expected[1]) | UInt16(expected[2]) << 8) & 0x0FFF
            let boundary = (expected[2] >> 4) & 0x3
            aclHandle = handle
            var state =
                boundary == ACLPacketBoundary.continuing.rawValue
                ? (pdus[handle] ?? PDUState(rule: nil, offset: 0)) : PDUState(rule: nil, offset: 0)
            if boundary != ACLPacketBoundary.continuing.rawValue, expected.count >= 10 {
                let channel = UInt16(expected[7]) | UInt16(expected[8]) << 8
                if channel == 0x0006 { state.rule = smpRules[expected[9]] }
            }
            let start = state.offset
            pduRange = start..<start + expected.count - 5
            if let rule = state.rule {
                for (index, field) in rule.fields.enumerated() {
                    // The field's octets in PDU coordinates: 4 octets of L2CAP header, then the Code.
                    let fieldRange = 4 + field.offset..<4 + field.offset + field.length
                    let overlap = fieldRange.clamped(to: pduRange!)
                    if !overlap.isEmpty {
                        covered.append(
                            (overlap.lowerBound - start + 5..<overlap.upperBound - start + 5, field, index, rule))
                    }
                }
            }
            state.offset = pduRange!.upperBound
            pdus[handle] = state
        default:
            break
        }
        // Exact everywhere else.
        let coveredOctets = Set(covered.flatMap { Array($0.range) })
        if let first = expected.indices.first(where: { !coveredOctets.contains($0) && expected[$0] != actual[$0] }) {
            return
                "octet \(first) differs (counting the H4 packet type as octet 0): recorded \(hex(expected[first], digits: 2)), sent \(hex(actual[first], digits: 2))"
        }
        // Each field, once its octets are all in (a field may span ACL fragments).
        for piece in covered {
            var recorded = Array(expected[piece.range])
            var sent = Array(actual[piece.range])
            if let handle = aclHandle, let pduRange {
                let fieldEnd = 4 + piece.field.offset + piece.field.length
                var state = pdus[handle]!
                let (before, beforeSent) = state.partial[piece.index] ?? ([], [])
                recorded = before + recorded
                sent = beforeSent + sent
                if fieldEnd > pduRange.upperBound {
                    state.partial[piece.index] = (recorded, sent)
                    pdus[handle] = state
                    continue
                }
                state.partial[piece.index] = nil
                pdus[handle] = state
            }
            if let problem = check(piece.field, recorded: recorded, sent: sent) {
                return "\(piece.rule.name) \(piece.field.name) (\(piece.field.kind.rawValue)): \(problem)"
            }
        }
        return nil
    }

    private mutating func check(_ field: ReplayField, recorded: [UInt8], sent: [UInt8]) -> String? {
        switch field.kind {
        case .derived:
            guard boundValueDiffered || recorded == sent else {
                return
                    "differs although every random value so far equals its recording: recorded \(recorded.hexString()), sent \(sent.hexString())"
            }
            return nil
        case .randomAddress:
            // Little-endian on the wire: the sub-type bits are in the last octet.
            if let last = recorded.last, let sentLast = sent.last, last & 0xC0 != sentLast & 0xC0 {
                return
                    "the address sub-type (top two bits) changed: recorded \(hex(last >> 6, digits: 1)), sent \(hex(sentLast >> 6, digits: 1))"
            }
            fallthrough
        case .random:
            if let bound = recordedToActual[recorded] {
                guard bound == sent else {
                    return
                        "the recorded value \(recorded.hexString()) was sent as \(bound.hexString()) before, now as \(sent.hexString())"
                }
                return nil
            }
            if let other = actualToRecorded[sent] {
                return
                    "the host reused \(sent.hexString()), which stands for recorded \(other.hexString()), where the recording has a new value \(recorded.hexString())"
            }
            recordedToActual[recorded] = sent
            actualToRecorded[sent] = recorded
            if recorded != sent { boundValueDiffered = true }
            return nil
        }
    }

    private static func typeName(_ byte: UInt8?) -> String {
        guard let byte else { return "nothing" }
        return H4PacketType(rawValue: byte).map { "a \($0) packet" } ?? "packet type \(hex(byte, digits: 2))"
    }
}

/// Why a replay stopped: the host sent something the recording does not have, or did not
/// send what it has.
public struct ReplayMismatch: Error, Equatable, Sendable, CustomStringConvertible {
    /// The recording's record the host's packet was compared with (from 1, as Wireshark
    /// numbers frames); nil when the recording had no host packet left.
    public var recordNumber: Int?
    /// That record's H4 bytes; nil when the recording had ended.
    public var expected: [UInt8]?
    /// What the host sent (H4 bytes); nil when the host stopped before sending it.
    public var actual: [UInt8]?
    /// What differs, in words.
    public var reason: String

    /// A mismatch report.
    public init(recordNumber: Int?, expected: [UInt8]?, actual: [UInt8]?, reason: String) {
        (self.recordNumber, self.expected, self.actual, self.reason) = (recordNumber, expected, actual, reason)
    }

    /// The report's first line: where and what, without the packets.
    public var summary: String {
        "replay mismatch at record \(recordNumber.map(String.init) ?? "(none: the recording has ended)"): \(reason)"
    }

    /// The whole report on one line (for logs and errors that travel as one line):
    /// the summary, then the expected and the sent bytes, each decoded at the HCI level.
    public var oneLine: String {
        func packet(_ bytes: [UInt8]?) -> String { bytes.map { "\($0.hexDump) (\(describeH4($0)))" } ?? "nothing" }
        return "\(summary); expected \(packet(expected)), sent \(packet(actual))"
    }

    /// The report with each packet decoded by `decode` (H4 bytes to a line).
    public func report(decode: ([UInt8]) -> String) -> String {
        var lines = [summary]
        func add(_ label: String, _ bytes: [UInt8]?) {
            guard let bytes else { lines.append("  \(label): nothing"); return }
            lines.append("  \(label): \(bytes.hexDump)")
            lines.append("  \(String(repeating: " ", count: label.count))  \(decode(bytes))")
        }
        add("expected", expected)
        add("actual  ", actual)
        return lines.joined(separator: "\n")
    }

    /// The report, packets decoded at the HCI level (``describeH4(_:)``).
    public var description: String { report(decode: describeH4) }
}

/// One line naming an H4 packet: command by name, event by name, ACL by handle and L2CAP
/// channel. (TraceDecoding decodes ATT and SMP too; HCI cannot depend on it.)
public func describeH4(_ bytes: [UInt8]) -> String {
    guard let packet = try? HCIPacket(h4: bytes[...]) else { return "(undecodable)" }
    switch packet {
    case let .command(command):
        return
            "HCI Command \(command.opcode.name) (\(hex(command.opcode.rawValue, digits: 4))) plen \(command.parameters.count)"
    case let .event(event):
        return "HCI Event \(HCINames.event(event.code)) (\(hex(event.code, digits: 2))) plen \(event.parameters.count)"
    case let .acl(acl):
        var line =
            "ACL handle \(hex(acl.handle, digits: 4)) flags \(hex(acl.boundary.rawValue, digits: 2)) dlen \(acl.data.count)"
        if acl.boundary.startsPDU, acl.data.count >= 4 {
            let base = acl.data.startIndex
            let channel = UInt16(acl.data[base + 2]) | UInt16(acl.data[base + 3]) << 8
            line += " L2CAP channel \(hex(channel, digits: 4))"
        }
        return line
    case .sco: return "SCO data"
    case .iso: return "ISO data"
    }
}
