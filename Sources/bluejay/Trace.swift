import ArgumentParser
import BluetoothCore
import HCI
import SMP
import TraceDecoding
#if canImport(Glibc)
    import Glibc
#endif

/// `bluejay trace FILE…`: decode btsnoop files packet by packet, or count what they hold.
struct Trace: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trace",
        abstract: "Decode btsnoop files (datalinks 1001, 1002 and btmon's 2001).",
        discussion: """
            Without --summary, prints one line per packet. With --check, prints one line per file: \
            every packet decodes, or the first record that does not (then the exit code is 1); records the stack accepts \
            although they bend the specification (an event with octets past its format) are listed as warnings and \
            the check still passes, unless --strict makes them failures. With --summary --json, prints an object \
            keyed by file name whose values have the keys records, packet_types, commands, events, \
            le_subevents, att, smp, le_signaling, att_mtu and malformed (the schema of the shared \
            traces' expected-counts.json), and, only when the file has any, l2cap (SDUs on dynamic \
            channels other than ATT and EATT, by PSM) and signaling (BR/EDR signaling commands). \
            Keys, nonces, confirm and check values and passkeys print as <redacted N octets> unless --log-secrets. \
            With --redact IN OUT, writes a copy of IN with those octets zeroed in place (every other octet, the \
            length, record count and timestamps unchanged), a capture that can be shared.
            """)

    @OptionGroup var common: CommonOptions

    @Flag(name: .long, help: "Print counts instead of packets.")
    var summary = false

    @Flag(name: .long, help: "With --summary: print JSON.")
    var json = false

    @Flag(
        name: .long,
        help: "Check that every packet decodes (HCI, L2CAP, ATT, SMP, signaling); name the first that does not.")
    var check = false

    @Flag(
        name: .long,
        help:
            "With --check: a record accepted only under the tolerance rule (e.g. an event with extra octets) fails the check."
    )
    var strict = false

    @Flag(
        name: .long,
        help: "Give two files, IN OUT: write a copy of IN with keys, nonces and passkeys zeroed in place, to share.")
    var redact = false

    @Argument(help: "btsnoop files.")
    var files: [String]

    func validate() throws {
        if files.isEmpty { throw ValidationError("give at least one btsnoop file") }
        if json && !summary { throw ValidationError("--json goes with --summary") }
        if check && summary { throw ValidationError("--check and --summary are separate: give one") }
        if strict && !check { throw ValidationError("--strict goes with --check") }
        if redact {
            if summary || check { throw ValidationError("--redact writes a copy: give it alone, with IN and OUT") }
            if files.count != 2 { throw ValidationError("--redact takes two files: IN OUT") }
            if files[0] == files[1] { throw ValidationError("--redact writes a copy: OUT must not be IN") }
        }
    }

    func run() async throws {
        if redact { return try redactCopy(from: files[0], to: files[1]) }
        var summaries: [String: JSONValue] = [:]
        var failures: [String] = []
        for path in files {
            let file: BTSnoopFile
            do { file = try BTSnoopFile(path: path) } catch { throw CLIError("\(path): \(error)") }
            if check {
                let result = TraceCheck(file: file, strict: strict)
                for warning in result.warnings.prefix(Self.warningsShown) { print("\(path): warning: \(warning)") }
                if result.warnings.count > Self.warningsShown {
                    print(
                        "\(path): warning: \(result.warnings.count - Self.warningsShown) more record(s) accepted under the tolerance rule"
                    )
                }
                if var failure = result.failure {
                    if common.logSecrets, !failure.secrets.isEmpty {
                        common.logger.noteSecretsShown()
                        failure.secrets = []
                    }
                    failures.append("\(path): \(failure)")
                    print("\(path): FAILED at \(failure)")
                } else {
                    print(
                        "\(path): \(result.records) records, every packet decodes (\(result.packets) HCI packets; "
                            + "\(result.attPDUs) ATT, \(result.smpPDUs) SMP, \(result.signalingPDUs) LE signaling"
                            + (result.bredrSignalingPDUs > 0 ? ", \(result.bredrSignalingPDUs) BR/EDR signaling" : "")
                            + " and \(result.otherPDUs) other L2CAP PDUs"
                            + (result.skipped > 0 ? "; \(result.skipped) non-packet records skipped" : "")
                            + (result.vendorACLPackets > 0
                                ? "; \(result.vendorACLPackets) ACL packets on handles no connection announced, checked as HCI only"
                                : "")
                            + (result.warnings.isEmpty ? "" : "; \(result.warnings.count) warning(s)") + ")")
                }
            } else if summary {
                let counts = TraceSummary(file: file)
                if json {
                    summaries[String(path.split(separator: "/").last ?? Substring(path))] = counts.json
                } else {
                    print(Self.text(counts, path: path))
                }
            } else {
                var formatter = TraceFormatter(file: file)
                formatter.showsSecrets = common.logSecrets
                var warned = false
                for record in file.records {
                    let line = formatter.format(record)
                    if formatter.secretsShown > 0, !warned {
                        // The warning goes to standard error: ahead of this line, not inside an earlier one.
                        flushStandardOutput()
                        common.logger.noteSecretsShown()
                        warned = true
                    }
                    print(line)
                }
            }
            if let tail = file.truncatedTail {
                printToStandardError("bluejay: warning: \(path): file ends inside a record (\(tail))")
            }
        }
        if summary && json { print(JSONValue.object(summaries).rendered()) }
        if !failures.isEmpty {
            throw CLIError("\(failures.count) of \(files.count) file(s) do not decode; first: \(failures[0])")
        }
    }

    /// `--redact IN OUT`: the copy, and one line saying what was zeroed.
    private func redactCopy(from input: String, to output: String) throws {
        let original: [UInt8]
        do { original = try readWholeFile(input) } catch {
            throw CLIError("cannot read \(input): \(errorName(error.errno))")
        }
        let redaction: BTSnoopRedaction
        do { redaction = try BTSnoopRedaction(original: original, redactor: PacketSecrets()) } catch {
            throw CLIError("\(input): \(error)")
        }
        let fd = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw CLIError("cannot write \(output): \(errorName(errno))") }
        defer { close(fd) }
        var offset = 0
        while offset < redaction.bytes.count {
            let written = redaction.bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                throw CLIError("cannot write \(output): \(errorName(errno))")
            }
            offset += written
        }
        let records = Set(redaction.zeroed.map(\.recordNumber)).count
        let octets = redaction.zeroed.reduce(0) { $0 + $1.field.length }
        print(
            "\(output): \(redaction.zeroed.count) secret field(s), \(octets) octets, zeroed in \(records) record(s) of \(input)"
        )
    }

    /// Warnings printed per file before the rest are only counted.
    static let warningsShown = 20

    static func text(_ counts: TraceSummary, path: String) -> String {
        var lines = ["\(path): \(counts.records) records"]
        func section(_ title: String, _ table: [String: Int]) {
            guard !table.isEmpty else { return }
            lines.append("  \(title):")
            for key in table.keys.sorted() { lines.append("    \(table[key]!)\t\(key)") }
        }
        section("packet types", counts.packetTypes)
        section("commands", counts.commands)
        section("events", counts.events)
        section("LE subevents", counts.leSubevents)
        section("ATT", counts.att)
        section("SMP", counts.smp)
        section("LE signaling", counts.leSignaling)
        section("BR/EDR signaling", counts.signaling)
        section("other L2CAP", counts.l2cap)
        if !counts.attMTU.isEmpty { lines.append("  ATT MTU: \(counts.attMTU.joined(separator: ", "))") }
        section("malformed", counts.malformed)
        return lines.joined(separator: "\n")
    }
}
