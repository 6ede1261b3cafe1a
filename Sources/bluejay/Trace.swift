import ArgumentParser
import HCI
import TraceDecoding

/// `bluejay trace FILE…`: decode btsnoop files packet by packet, or count what they hold.
struct Trace: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Decode btsnoop files (datalinks 1001, 1002 and btmon's 2001).",
        discussion: """
            Without --summary, prints one line per packet. With --check, prints one line per file: \
            every packet decodes, or the first record that does not (then the exit code is 1); records the stack accepts \
            although they bend the specification (an event with octets past its format) are listed as warnings and \
            the check still passes, unless --strict makes them failures. With --summary --json, prints an object \
            keyed by file name whose values have the keys records, packet_types, commands, events, \
            le_subevents, att, smp, le_signaling, att_mtu and malformed (the schema of the shared \
            traces' expected-counts.json), and, only when the file has any, l2cap (SDUs on dynamic \
            channels other than ATT and EATT, by PSM) and signaling (BR/EDR signaling commands).
            """)

    @OptionGroup var common: CommonOptions

    @Flag(name: .long, help: "Print counts instead of packets.")
    var summary = false

    @Flag(name: .long, help: "With --summary: print JSON.")
    var json = false

    @Flag(name: .long, help: "Check that every packet decodes (HCI, L2CAP, ATT, SMP, signaling); name the first that does not.")
    var check = false

    @Flag(name: .long, help: "With --check: a record accepted only under the tolerance rule (e.g. an event with extra octets) fails the check.")
    var strict = false

    @Argument(help: "btsnoop files.")
    var files: [String]

    func validate() throws {
        if files.isEmpty { throw ValidationError("give at least one btsnoop file") }
        if json && !summary { throw ValidationError("--json goes with --summary") }
        if check && summary { throw ValidationError("--check and --summary are separate: give one") }
        if strict && !check { throw ValidationError("--strict goes with --check") }
    }

    func run() async throws {
        var summaries: [String: JSONValue] = [:]
        var failures: [String] = []
        for path in files {
            let file: BTSnoopFile
            do { file = try BTSnoopFile(path: path) } catch { throw CLIError("\(path): \(error)") }
            if check {
                let result = TraceCheck(file: file, strict: strict)
                for warning in result.warnings.prefix(Self.warningsShown) { print("\(path): warning: \(warning)") }
                if result.warnings.count > Self.warningsShown {
                    print("\(path): warning: \(result.warnings.count - Self.warningsShown) more record(s) accepted under the tolerance rule")
                }
                if let failure = result.failure {
                    failures.append("\(path): \(failure)")
                    print("\(path): FAILED at \(failure)")
                } else {
                    print("\(path): \(result.records) records, every packet decodes (\(result.packets) HCI packets; "
                          + "\(result.attPDUs) ATT, \(result.smpPDUs) SMP, \(result.signalingPDUs) LE signaling"
                          + (result.bredrSignalingPDUs > 0 ? ", \(result.bredrSignalingPDUs) BR/EDR signaling" : "")
                          + " and \(result.otherPDUs) other L2CAP PDUs"
                          + (result.skipped > 0 ? "; \(result.skipped) non-packet records skipped" : "")
                          + (result.vendorACLPackets > 0 ? "; \(result.vendorACLPackets) ACL packets on handles no connection announced, checked as HCI only" : "")
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
                for record in file.records { print(formatter.format(record)) }
            }
            if let tail = file.truncatedTail { printToStandardError("bluejay: warning: \(path): file ends inside a record (\(tail))") }
        }
        if summary && json { print(JSONValue.object(summaries).rendered()) }
        if !failures.isEmpty {
            throw CLIError("\(failures.count) of \(files.count) file(s) do not decode; first: \(failures[0])")
        }
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
