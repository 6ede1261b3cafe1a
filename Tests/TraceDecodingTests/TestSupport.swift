import BluetoothCore
import HCI
import Testing

/// `<package root>/../shared/traces`, from this file's path (never the working directory),
/// so the tests work from a fresh clone anywhere as long as `shared/` is its sibling.
let tracesDirectory: String = {
    // #filePath is <root>/Tests/TraceDecodingTests/TestSupport.swift: drop four components
    // to reach the directory that holds the clone.
    var components = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
    components.removeLast(4)
    return components.joined(separator: "/") + "/shared/traces"
}()

/// The seven real-world traces of expected-counts.json.
let traceNames = [
    "android-lumentree-inverter-acl-only-mtu517.btsnoop",
    "android-mediatek-horizon-treadmill-write-notify.btsnoop",
    "android-pixel8-broadcom-pongbot-prepare-write.btsnoop",
    "android-qualcomm-blefun-multiconnection-bulk-writes.btsnoop",
    "android-qualcomm-pokemongoplus-smp-legacy-pairing.btsnoop",
    "android-qualcomm-vband-smartpen-reads-vendor-acl.btsnoop",
    "android-x86-vbox-csr8510-mc3000-charger-notifications.btsnoop",
]

/// Reads one trace; a missing file fails the test (never skips it) and says where it was
/// looked for.
func readTrace(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> BTSnoopFile {
    do {
        return try BTSnoopFile(path: tracesDirectory + "/" + name)
    } catch {
        Issue.record("""
            cannot read \(tracesDirectory)/\(name): \(error). The trace tests need the shared \
            traces as shared/traces, a sibling directory of the package root.
            """, sourceLocation: sourceLocation)
        throw error
    }
}


/// A datalink-1002 btsnoop file from (flags, timestamp, data) records.
func btsnoop(_ records: [(UInt32, Int64, [UInt8])], datalink: UInt32 = 1002) throws -> BTSnoopFile {
    var writer = ByteWriter(prefix: Array("btsnoop".utf8) + [0])
    writer.writeBigEndian(UInt32(1))
    writer.writeBigEndian(datalink)
    for (flags, timestamp, data) in records {
        writer.writeBigEndian(UInt32(data.count))
        writer.writeBigEndian(UInt32(data.count))
        writer.writeBigEndian(flags)
        writer.writeBigEndian(UInt32(0))
        writer.writeBigEndian(timestamp)
        writer.write(bytes: data)
    }
    return try BTSnoopFile(bytes: writer.bytes)
}

func hexBytes(_ text: String) -> [UInt8] { text.split(separator: " ").map { UInt8($0, radix: 16)! } }
