import BluetoothCore
import HCI
import Testing
import TraceTestSupport

/// The real-world traces the repository carries (`Fixtures/real-traces`), so these tests
/// pass on a fresh clone; the other three of the shared corpus run in `Tests/CorpusTests`.
let tracesDirectory = RealTraces.shipped

/// The traces of `Fixtures/real-traces/expected-counts.json`, listed here so that a missing
/// file fails a test instead of shrinking the list.
let traceNames = [
    "android-lumentree-inverter-acl-only-mtu517.btsnoop",
    "android-mediatek-horizon-treadmill-write-notify.btsnoop",
    "android-pixel8-broadcom-pongbot-prepare-write.btsnoop",
    "android-qualcomm-vband-smartpen-reads-vendor-acl.btsnoop",
]

/// Reads one trace; a missing file fails the test (never skips it) and says where it was
/// looked for.
func readTrace(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> BTSnoopFile {
    do {
        return try BTSnoopFile(path: tracesDirectory + "/" + name)
    } catch {
        Issue.record(
            """
            cannot read \(tracesDirectory)/\(name): \(error). The repository carries these \
            traces in Fixtures/real-traces.
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
