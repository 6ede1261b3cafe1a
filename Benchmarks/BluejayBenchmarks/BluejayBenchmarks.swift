// The in-memory paths on package-benchmark (ordo-one/benchmark): heap allocations (the
// malloc interposer of its MallocInterposer trait), instructions where the machine counts
// them, and wall time. Allocation counts do not depend on the machine, so they are what
// `make bench-check` holds against Benchmarks/Thresholds (CI); the times are for reading.
//
//   swift package benchmark --target BluejayBenchmarks                  (everything)
//   make bench-check                                                    (allocations against the thresholds)
//   make bench-thresholds                                               (records new thresholds, after a deliberate change)
import ATT
import Benchmark
import BenchSupport
import BluetoothCore
import HCI
import L2CAP

/// Per run of each path: enough to cross many 64 KiB reads and ACL buffer refills.
let notificationsPerRun = 10_000
let writesPerRun = 10_000

let benchmarks: @Sendable () -> Void = {
    /// An allocation count may move by this much (of the recorded p90) before the check
    /// fails: a few are the concurrency runtime's, whose job and continuation allocations
    /// vary a little with how the threads meet.
    let allocationTolerance = BenchmarkThresholds(relative: [.p90: 5.0], absolute: [.p90: 8])
    Benchmark.defaultConfiguration = .init(
        metrics: [.mallocCountTotal, .instructions, .wallClock],
        warmupIterations: 1,
        maxDuration: .seconds(2),
        maxIterations: 20,
        thresholds: [.mallocCountTotal: allocationTolerance])

    // Names (the thresholds' file names): receive-N, 10,000 notifications of N bytes up the
    // stack; bluejay-listen-244 and central-values-244, the same 10,000 to the app's API;
    // send-244, 10,000 Write Commands of 244 bytes down it; then the codecs alone.
    for payload in [244, 20] {
        Benchmark("receive-\(payload)") { benchmark in
            let path = try await ReceivePath(count: notificationsPerRun, payload: payload)
            benchmark.startMeasurement()
            await path.run()
            benchmark.stopMeasurement()
            await path.close()
        }
    }

    // The app's path (issue 33): the same notifications delivered to a Bluejay listen as
    // Data on the main actor, and to Central's values(of:) stream. Bring-up, connection,
    // discovery and subscription happen before the measurement; what is counted is the
    // flood alone, from its release to the last value in the app's hands (the reader
    // thread's reads included, as in receive-N). `make bench` reports their counts;
    // `make bench-check` skips them (the Makefile says why: they vary with thread timing).
    Benchmark("bluejay-listen-244") { benchmark in
        let path = try await BluejayListenPath(count: notificationsPerRun, payload: 244)
        benchmark.startMeasurement()
        _ = await path.run()
        benchmark.stopMeasurement()
        await path.close()
    }
    Benchmark("central-values-244") { benchmark in
        let path = try await CentralValuesPath(count: notificationsPerRun, payload: 244)
        benchmark.startMeasurement()
        _ = try await path.run()
        benchmark.stopMeasurement()
        await path.close()
    }

    Benchmark("send-244") { benchmark in
        let path = try await SendPath(count: writesPerRun, payload: 244)
        benchmark.startMeasurement()
        let idle = try await path.run()
        benchmark.stopMeasurement()
        precondition(idle == 0, "a controller buffer sat free while packets were queued (\(idle) times)")
        await path.close()
    }

    // The codecs alone: one PDU each way, 1000 times per iteration.
    let notification: [UInt8] = [0x1B, 0x2B, 0x00] + [UInt8](repeating: 0x5A, count: 244)
    Benchmark("decode-notification-244", configuration: .init(scalingFactor: .kilo)) { benchmark in
        let pdu = notification[...]
        for _ in benchmark.scaledIterations {
            blackHole(try HandleValueNotification(decoding: pdu))
        }
    }
    let value = [UInt8](repeating: 0xA5, count: 244)[...]
    Benchmark("encode-write-command-244", configuration: .init(scalingFactor: .kilo)) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(WriteCommand(handle: 0x0026, value: value).frame(capacity: 247))
        }
    }
    let stream = connectionComplete() + notifications(count: 100, payload: 244)
    Benchmark("frame-h4-100-notifications", configuration: .init(scalingFactor: .kilo)) { benchmark in
        for _ in benchmark.scaledIterations {
            var framer = H4Framer()
            blackHole(try framer.append(stream).count)
        }
    }
}
