import Foundation  // FileManager; test support only.
import HCI
import SMP

/// Where the real-world traces are, from this file's place in the repository (never the
/// working directory):
///
/// - ``shipped``: `Fixtures/real-traces`, the four whose licence lets the repository carry
///   them. `make test` runs these, so it passes on a fresh clone with nothing beside it.
/// - ``corpus``: `../shared/traces` beside the clone, all seven; `make test-corpus`
///   (`Tests/CorpusTests`) runs these, and CI runs that too.
///
/// Each directory has its `expected-counts.json`.
package enum RealTraces {
    /// The repository root: this file is `<root>/Tests/TraceTestSupport/RealTraces.swift`.
    package static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().standardizedFileURL.path

    /// `Fixtures/real-traces`, in the repository.
    package static let shipped = root + "/Fixtures/real-traces"

    /// `../shared/traces`, beside the clone, spelled without the `..`.
    package static let corpus = URL(fileURLWithPath: root).deletingLastPathComponent()
        .appendingPathComponent("shared/traces").standardizedFileURL.path

    /// The renamings the comparison accepts over the real traces, as `table expected-key →
    /// our name`: the BR/EDR commands expected-counts.json leaves Unknown and our tables
    /// name from Core 6.0. The four shipped traces and the whole corpus give the same six.
    package static let acceptedRenamings: Set<String> = [
        "commands 0x0c1c (ogf 0x03 ocf 0x01c) Unknown → Write_Page_Scan_Activity",
        "commands 0x0c3a (ogf 0x03 ocf 0x03a) Unknown → Write_Current_IAC_LAP",
        "commands 0x0c5a (ogf 0x03 ocf 0x05a) Unknown → Read_Default_Erroneous_Data_Reporting",
        "commands 0x0c5b (ogf 0x03 ocf 0x05b) Unknown → Write_Default_Erroneous_Data_Reporting",
        "commands 0x0c83 (ogf 0x03 ocf 0x083) Unknown → Configure_Data_Path",
        "commands 0x0c84 (ogf 0x03 ocf 0x084) Unknown → Set_Min_Encryption_Key_Size",
    ]

    /// The `.btsnoop` files of `directory`, by name, sorted; none when it does not exist.
    package static func names(in directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".btsnoop") }
            .sorted()
    }
}

/// Redacts `original` as `trace --redact` does and lists every way the copy breaks that
/// command's promise (the same length; every octet outside the zeroed fields unchanged,
/// those all zero; the same records, timestamps and flags): empty when it holds.
package func redactionProblems(_ original: [UInt8]) throws -> (redaction: BTSnoopRedaction, problems: [String]) {
    let redaction = try BTSnoopRedaction(original: original, redactor: PacketSecrets())
    var problems: [String] = []
    if redaction.bytes.count != original.count {
        problems.append("the copy has \(redaction.bytes.count) octets, the original \(original.count)")
    }
    var zeroed = Set<Int>()
    for entry in redaction.zeroed { zeroed.formUnion(entry.field.range) }
    var changedOutside = 0, nonZeroInside = 0
    for index in original.indices where index < redaction.bytes.count {
        if zeroed.contains(index) {
            if redaction.bytes[index] != 0 { nonZeroInside += 1 }
        } else if redaction.bytes[index] != original[index] {
            changedOutside += 1
        }
    }
    if changedOutside > 0 { problems.append("\(changedOutside) octets changed outside the secret fields") }
    if nonZeroInside > 0 { problems.append("\(nonZeroInside) octets of secret fields not zeroed") }
    let before = try BTSnoopFile(bytes: original), after = try BTSnoopFile(bytes: redaction.bytes)
    if after.records.count != before.records.count {
        problems.append("\(after.records.count) records, the original \(before.records.count)")
    }
    if after.records.map(\.timestamp) != before.records.map(\.timestamp) { problems.append("timestamps differ") }
    if after.records.map(\.flags) != before.records.map(\.flags) { problems.append("flags differ") }
    return (redaction, problems)
}
