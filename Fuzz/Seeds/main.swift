// bluejay-fuzz-seeds OUTPUT TRACE...: writes each fuzz target's seed corpus, cut from
// btsnoop traces, to OUTPUT/<target>/ (one file per distinct input). `make fuzz` runs it
// over Fixtures/traces and ../shared/traces before fuzzing.
import BluetoothCore
import Foundation
import FuzzTargets
import HCI

let arguments = CommandLine.arguments.dropFirst()
guard let output = arguments.first, arguments.count >= 2 else {
    printToStandardError("usage: bluejay-fuzz-seeds OUTPUT-DIRECTORY TRACE.btsnoop...")
    exit(2)
}

var traces: [(bytes: [UInt8], file: BTSnoopFile)] = []
for path in arguments.dropFirst() {
    do {
        let bytes = try readWholeFile(path)
        traces.append((bytes, try BTSnoopFile(bytes: bytes)))
    } catch {
        printToStandardError("bluejay-fuzz-seeds: \(path): \(error)")
        exit(1)
    }
}

for target in FuzzTarget.all {
    let directory = output + "/" + target.name
    do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
        printToStandardError("bluejay-fuzz-seeds: \(directory): \(error)")
        exit(1)
    }
    var written = Set<[UInt8]>()
    for trace in traces {
        for seed in target.seeds(trace.bytes, trace.file) where seed.count <= target.maximumLength {
            guard written.insert(seed).inserted else { continue }
            let path = directory + "/seed-\(written.count)"
            do { try Data(seed).write(to: URL(fileURLWithPath: path)) } catch {
                printToStandardError("bluejay-fuzz-seeds: \(path): \(error)")
                exit(1)
            }
        }
    }
    // Read by Fuzz/run.sh: name, longest input, seeds written.
    print("\(target.name) \(target.maximumLength) \(written.count)")
}
