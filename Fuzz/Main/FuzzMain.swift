// The libFuzzer entry point: `make fuzz` builds this with -sanitize=fuzzer,address and runs
// it once per target, naming the target in BLUEJAY_FUZZ_TARGET. libFuzzer supplies main().
import BluetoothCore
import FuzzTargets
import HCI

#if canImport(Glibc)
    import Glibc
#endif

/// The target this run drives, chosen once from the environment.
private let target: FuzzTarget = {
    let names = FuzzTarget.all.map(\.name).joined(separator: ", ")
    guard let name = getenv("BLUEJAY_FUZZ_TARGET").map({ String(cString: $0) }) else {
        printToStandardError("bluejay-fuzz: set BLUEJAY_FUZZ_TARGET to one of: \(names)")
        exit(2)
    }
    guard let target = FuzzTarget.named(name) else {
        printToStandardError("bluejay-fuzz: no target \(name); the targets are: \(names)")
        exit(2)
    }
    return target
}()

/// Runs one input. A broken invariant traps, so libFuzzer saves the input as a crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    do { _ = try target.run(bytes) } catch { fatalError("\(target.name): \(error)") }
    return 0
}
