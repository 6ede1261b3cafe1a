// bluejay-bench: the host's receive and send paths in memory timed, for `make bench`'s side
// by side with Bumble's host; and a gateway on Central against the Bumble peer.
//
//   bluejay-bench receive --payload 244 --count 200000 [--runs 5] [--write-stream FILE]
//   bluejay-bench send --payload 244 --count 100000 [--runs 5]
//   bluejay-bench central --transport T --addresses A[,B…] [--count N] [--payload N]
//   bluejay-bench seqpacket|bluejay-listen|central-values --payload 244 --count 200000 [--runs 5]
//                 [--listen-buffer-limit N: bluejay-listen's backlog, the count by default]
//   bluejay-bench flood-peer --socket PATH --payload 244 --count 200000
//   bluejay-bench stalled-consumer [--stall SECONDS] [--rate N] [--capacity N] [--payload 244]
//
// The paths themselves are BenchSupport's (Benchmarks/BenchSupport), which the
// package-benchmark suite (Benchmarks/BluejayBenchmarks) also runs for its allocation and
// instruction counts. Receive measures notifications per wall second and per CPU second of
// the process; send, host CPU µs per packet, and whether a controller buffer ever sat free
// while packets were queued (the queue must refill at once).
//
// L2CAP: against the Bumble peer (`--transport T --addresses A`), one link carries the same
// `--count` octets out and back both ways, interleaved `--runs` times: through an L2CAP LE
// credit based channel to the peer's echo PSM 0x0080 (SDUs of the peer's MTU, K-frames of
// 247 octets), and as GATT Write Commands of 244 octets to the peer's echo characteristic,
// which notifies each one back. Both payloads fit one 251-octet LL packet. Measured: octets
// per second each way, and their ratio.
//
// The app's path (issue 33): the same notifications as `receive`, behind a virtual LE
// controller serving a flooding peripheral (BenchSupport's FloodPeer.swift), so that a whole
// host brings the controller up, connects, discovers and subscribes before the flood is let
// go and timed: `seqpacket`, ReceivePath's layers fed one packet per read through a
// SOCK_SEQPACKET socket pair, as the kernel's HCI user channel feeds a host; `bluejay-listen`,
// a Bluejay's `listen(to:)` delivering Data on the main actor; `central-values`, Central's
// `values(of:)` read on the stack's actor. `flood-peer` serves the same peripheral on a Unix
// socket for `bluejay listen --transport unix:PATH`, one host after another, and prints per
// host the values per second from the flood's start to the host's CCCD write turning it
// off (what `listen --count N` does once it has printed the Nth value).
//
// A slow app (issue 53): `stalled-consumer`, Central's `values(of:)` at its default capacity
// (4096) while a flood comes at `--rate` values a second (100,000) for `--stall` seconds (30)
// and two more; its consumer takes one value, stops for the stall, then reads on until
// every value was delivered or dropped. Measured: the process's RSS before the flood and
// its peak (VmHWM), values delivered and dropped.
//
// Output: one JSON object per run mode on stdout (flood-peer: READY, then one per host).
import ATT
import Bluejay
import BluetoothCore
import BenchSupport
import CBluetooth
import Dispatch
import Foundation
import GATT
import HCI
import L2CAP
#if canImport(Glibc)
    import Glibc
#endif

/// One receive run: returns notifications per wall second and per CPU second.
@BluetoothActor
func receiveRun(count: Int, payload: Int) async throws -> RunFigures {
    let path = try await ReceivePath(count: count, payload: payload)
    defer { path.close() }
    return await timed(count: count) { await path.run() }
}

/// `count` values handled by `body`, per wall and per CPU second of the process.
@BluetoothActor
func timed(count: Int, _ body: @BluetoothActor () async throws -> Void) async rethrows -> RunFigures {
    let cpuBefore = processCPUSeconds()
    let start = ContinuousClock.now
    try await body()
    let elapsed = ContinuousClock.now - start
    return RunFigures(count: count, elapsed: elapsed, cpu: processCPUSeconds() - cpuBefore)
}

/// One send run: host CPU µs per Write Command, and whether a buffer sat free while packets
/// were queued.
@BluetoothActor
func sendRun(count: Int, payload: Int) async throws -> (microsecondsPerPacket: Double, bufferIdleWhileQueued: Int) {
    let path = try await SendPath(count: count, payload: payload)
    defer { path.close() }
    let cpuBefore = processCPUSeconds()
    let idle = try path.run()
    let cpu = processCPUSeconds() - cpuBefore
    return (cpu * 1e6 / Double(count), idle)
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1
        ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

func summary(_ values: [Double]) -> String {
    "{\"median\": \(median(values)), \"min\": \(values.min() ?? 0), \"max\": \(values.max() ?? 0), \"runs\": [\(values.map { String($0) }.joined(separator: ", "))]}"
}

// MARK: Command line

let arguments = Array(CommandLine.arguments.dropFirst())
@MainActor func option(_ name: String, _ fallback: Int) -> Int {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count, let value = Int(arguments[index + 1])
    else { return fallback }
    return value
}
@MainActor func stringOption(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}
let mode = arguments.first ?? ""
let payload = option("--payload", 244)
let count = option("--count", 200_000)
let runs = option("--runs", 5)
let appModes = ["seqpacket", "bluejay-listen", "central-values"]
guard (4...244).contains(payload), count > 0, runs > 0,
    (["receive", "send", "central", "l2cap", "flood-peer", "peripheral-notify", "peripheral-peer", "stalled-consumer"]
        + appModes).contains(mode)
else {
    FileHandle.standardError.write(
        Data(
            ("usage: bluejay-bench receive|send [--payload 4…244] [--count N] [--runs K] [--write-stream FILE]\n"
                + "       bluejay-bench central --transport T --addresses A[,B…] [--count N per peripheral] [--payload N]\n"
                + "       bluejay-bench l2cap --transport T --addresses A [--count OCTETS] [--runs K]\n"
                + "       bluejay-bench seqpacket|bluejay-listen|central-values [--payload 4…244] [--count N] [--runs K] [--listen-buffer-limit N]\n"
                + "       bluejay-bench flood-peer --socket PATH [--payload 4…244] [--count N]\n"
                + "       bluejay-bench peripheral-notify [--payload 4…244] [--count N] [--runs K]\n"
                + "       bluejay-bench peripheral-peer --transport T [--payload 4…244] [--count N]\n"
                + "       bluejay-bench stalled-consumer [--stall SECONDS] [--rate N per second] [--capacity N] [--payload 4…244]\n")
                .utf8))
    exit(64)
}

/// A gateway against the peer's peripherals (`--peripherals N`): how long connecting all of
/// them takes (one after another: the controller has one initiator), and how many flood
/// notifications per second arrive from all of them at once.
@BluetoothActor
func centralRun(transport: String, addresses: [String], count: Int, payload: Int) async throws -> String {
    let store = StoreDirectory(path: NSTemporaryDirectory() + "bluejay-bench-central-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(atPath: store.path) }
    let central = try await Central(transport: transport, store: store, logger: .silent)
    defer { central.close() }
    let peripherals = try addresses.map { central.peripheral(try PeripheralIdentifier("\($0)/random")) }
    let custom = ServiceIdentifier(uuid: "B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A00")
    let flood = CharacteristicIdentifier(uuid: "B1E70007-9D3B-4C7A-8A5E-6F2D0C1B0A00", service: custom)
    let controlPoint = CharacteristicIdentifier(uuid: "B1E70006-9D3B-4C7A-8A5E-6F2D0C1B0A00", service: custom)
    let clock = ContinuousClock()
    let connectStart = clock.now
    for peripheral in peripherals { try await peripheral.connect() }
    let connectAll = clock.now - connectStart
    var streams: [PeripheralValues] = []
    // Unbounded: the bench takes every value of the flood it asked for, and counts them.
    for peripheral in peripherals { streams.append(try await peripheral.values(of: flood, capacity: .max)) }
    let countBytes: [UInt8] = withUnsafeBytes(of: UInt32(count).littleEndian) {
        (bytes: UnsafeRawBufferPointer) -> [UInt8] in Array(bytes)
    }
    let payloadBytes: [UInt8] = withUnsafeBytes(of: UInt16(payload).littleEndian) {
        (bytes: UnsafeRawBufferPointer) -> [UInt8] in Array(bytes)
    }
    let command: [UInt8] = [0x01] + countBytes + payloadBytes
    let floodStart = clock.now
    for peripheral in peripherals { try await peripheral.write(to: controlPoint, bytes: command) }
    var total = 0
    for stream in streams {
        var received = 0
        for try await _ in stream {
            received += 1
            if received == count { break }
        }
        total += received
    }
    let seconds =
        Double((clock.now - floodStart).components.attoseconds) / 1e18
        + Double((clock.now - floodStart).components.seconds)
    let connectMilliseconds =
        Double(connectAll.components.seconds) * 1000 + Double(connectAll.components.attoseconds) / 1e15
    return "{\"mode\": \"central\", \"peripherals\": \(addresses.count), \"connect_all_ms\": \(connectMilliseconds), "
        + "\"notifications\": \(total), \"notifications_per_s\": \(Double(total) / seconds)}"
}

/// The same octets echoed over an L2CAP channel and over GATT Write Command + notification,
/// on one link, interleaved; octets per second of the round trip.
@BluetoothActor
func l2capRun(transport: String, address: String, octets: Int, runs: Int) async throws -> String {
    let store = StoreDirectory(path: NSTemporaryDirectory() + "bluejay-bench-l2cap-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(atPath: store.path) }
    let central = try await Central(transport: transport, store: store, logger: .silent)
    defer { central.close() }
    let peripheral = central.peripheral(try PeripheralIdentifier("\(address)/random"))
    try await peripheral.connect()
    let custom = ServiceIdentifier(uuid: "B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A00")
    let echo = CharacteristicIdentifier(uuid: "B1E70005-9D3B-4C7A-8A5E-6F2D0C1B0A00", service: custom)
    let notified = try await peripheral.values(of: echo, capacity: .max)
    let channel = try await peripheral.openL2CAPChannel(psm: 0x0080)
    let data = (0..<octets).map { UInt8(truncatingIfNeeded: $0 &* 31) }
    let clock = ContinuousClock()
    func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    func overL2CAP() async throws -> Double {
        let start = clock.now
        let mtu = Int(channel.remoteMTU)
        let sender = Task { @BluetoothActor in
            for offset in stride(from: 0, to: data.count, by: mtu) {
                try await channel.send(Array(data[offset..<min(offset + mtu, data.count)]))
            }
        }
        var received = 0
        for try await sdu in channel.sdus {
            received += sdu.count
            if received >= octets { break }
        }
        try await sender.value
        return Double(octets) / seconds(clock.now - start)
    }

    func overGATT() async throws -> Double {
        let start = clock.now
        let sender = Task { @BluetoothActor in
            for offset in stride(from: 0, to: data.count, by: 244) {
                try await peripheral.write(
                    to: echo, bytes: Array(data[offset..<min(offset + 244, data.count)]), type: .withoutResponse)
            }
        }
        var received = 0
        for try await value in notified {
            received += value.count
            if received >= octets { break }
        }
        try await sender.value
        return Double(octets) / seconds(clock.now - start)
    }

    var l2cap: [Double] = [], gatt: [Double] = []
    for _ in 0..<runs {
        l2cap.append(try await overL2CAP())
        gatt.append(try await overGATT())
    }
    let statistics = channel.statistics
    await channel.disconnect()
    await peripheral.disconnect()
    return
        "{\"mode\": \"l2cap\", \"octets\": \(octets), \"l2cap_octets_per_s\": \(summary(l2cap)), \"gatt_octets_per_s\": \(summary(gatt)), "
        + "\"ratio\": \(median(l2cap) / median(gatt)), \"k_frames_sent\": \(statistics.framesSent), \"credits_received\": \(statistics.creditsReceived)}"
}

if mode == "l2cap" {
    guard let transport = stringOption("--transport"), let address = stringOption("--addresses") else {
        FileHandle.standardError.write(Data("l2cap needs --transport and --addresses\n".utf8))
        exit(64)
    }
    print(try await l2capRun(transport: transport, address: address, octets: count, runs: runs))
    exit(0)
}

if mode == "peripheral-notify" {
    var figures: [RunFigures] = []
    for _ in 0..<runs { figures.append(try await peripheralNotifyRun(count: count, payload: payload)) }
    print(
        "{\"mode\": \"peripheral-notify\", \"payload\": \(payload), \"notifications\": \(count), "
            + "\"notifications_per_s\": \(summary(figures.map(\.perWallSecond))), \"notifications_per_cpu_s\": \(summary(figures.map(\.perCPUSecond)))}"
    )
    exit(0)
}

if mode == "peripheral-peer" {
    guard let transport = stringOption("--transport") else {
        FileHandle.standardError.write(Data("peripheral-peer needs --transport\n".utf8))
        exit(64)
    }
    print(try await peripheralPeerRun(transport: transport, count: count, payload: payload))
    exit(0)
}

if mode == "central" {
    guard let transport = stringOption("--transport"),
        let addresses = stringOption("--addresses")?.split(separator: ",").map(String.init)
    else {
        FileHandle.standardError.write(Data("central needs --transport and --addresses\n".utf8))
        exit(64)
    }
    print(try await centralRun(transport: transport, addresses: addresses, count: count, payload: payload))
    exit(0)
}

/// One run of an app-facing path: set up (bring-up, connection, discovery, subscription),
/// then the flood timed.
@MainActor
func appRun(_ mode: String, count: Int, payload: Int) async throws -> RunFigures {
    switch mode {
    case "seqpacket":
        let path = try await SeqpacketReceivePath(count: count, payload: payload)
        let figures = await path.run()
        await path.close()
        return figures
    case "bluejay-listen":
        // `--listen-buffer-limit N` (default: the count) to see whether a listen with that
        // backlog keeps up (4096 is StartOptions' default).
        let limit = arguments.contains("--listen-buffer-limit") ? option("--listen-buffer-limit", count) : nil
        let path = try await BluejayListenPath(count: count, payload: payload, listenBufferLimit: limit)
        let figures = await path.run()
        await path.close()
        return figures
    default:
        let path = try await CentralValuesPath(count: count, payload: payload)
        let figures = try await path.run()
        await path.close()
        return figures
    }
}

if mode == "stalled-consumer" {
    let stall = option("--stall", 30), rate = max(1, option("--rate", 100_000))
    let capacity = max(1, option("--capacity", PeripheralValues.defaultCapacity))
    let total = rate * (stall + 2)
    let figures = try await Task { @BluetoothActor in
        let path = try await StalledConsumerPath(count: total, payload: payload, rate: rate, capacity: capacity)
        defer { path.close() }
        return try await path.run(stall: .seconds(stall))
    }.value
    print(
        "{\"mode\": \"stalled-consumer\", \"payload\": \(payload), \"stall_s\": \(stall), \"rate_per_s\": \(rate), \"capacity\": \(capacity), "
            + "\"notifications\": \(figures.count), \"delivered\": \(figures.delivered), \"dropped\": \(figures.dropped), "
            + "\"rss_before_bytes\": \(figures.rssBeforeBytes), \"peak_rss_bytes\": \(figures.peakRSSBytes)}")
    exit(0)
}

if appModes.contains(mode) {
    var figures: [RunFigures] = []
    for _ in 0..<runs { figures.append(try await appRun(mode, count: count, payload: payload)) }
    print(
        "{\"mode\": \"\(mode)\", \"payload\": \(payload), \"notifications\": \(count), \"notifications_per_s\": \(summary(figures.map(\.perWallSecond))), "
            + "\"notifications_per_cpu_s\": \(summary(figures.map(\.perCPUSecond))), \"threads\": \(figures.map(\.threads).max() ?? 0)}"
    )
    exit(0)
}

/// The flood peripheral on a Unix stream socket at `path`, for `bluejay listen --transport
/// unix:PATH`: serves one host after another until killed; per host, a JSON line with the
/// values per second from the flood's start to the host's CCCD write turning it off.
func serveFloods(at path: String, count: Int, payload: Int) -> Never {
    func fail(_ what: String) -> Never {
        FileHandle.standardError.write(Data("flood-peer: \(what): \(String(cString: strerror(errno)))\n".utf8))
        exit(1)
    }
    let flood = notifications(count: count, payload: payload)
    let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard listener >= 0 else { fail("socket") }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let pathBytes = Array(path.utf8)
    guard pathBytes.count < MemoryLayout.size(ofValue: address.sun_path) else { fail("socket path too long") }
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: pathBytes + [0]) }
    unlink(path)
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    guard bound == 0, listen(listener, 4) == 0 else { fail("bind/listen \(path)") }
    print("READY socket=\(path)")
    bluejay_flush_stdout()  // bench.py reads each line as it comes
    while true {
        let descriptor = accept(listener, nil, nil)
        if descriptor < 0 {
            if errno == EINTR { continue }
            fail("accept")
        }
        do {
            let relay = try FloodRelay(
                descriptor: descriptor, framing: .stream, flood: flood, payload: payload, held: false)
            try relay.start()
            relay.hostClosed.waitBlocking()
            let (started, unsubscribed) = (relay.gate.startedAt, relay.gate.unsubscribedAt)
            relay.close()
            var line = "{\"mode\": \"flood-peer\", \"payload\": \(payload), \"notifications\": \(count)"
            if let started, let unsubscribed {
                let elapsed = seconds(unsubscribed - started)
                line += ", \"seconds\": \(elapsed), \"per_s\": \(Double(count) / elapsed)"
            }
            print(line + "}")
        } catch {
            print("{\"mode\": \"flood-peer\", \"error\": \"\(error)\"}")
        }
        bluejay_flush_stdout()  // bench.py reads each line as it comes
    }
}

if mode == "flood-peer" {
    guard let path = stringOption("--socket") else {
        FileHandle.standardError.write(Data("flood-peer needs --socket PATH\n".utf8))
        exit(64)
    }
    serveFloods(at: path, count: count, payload: payload)
}

if mode == "receive" {
    let stream = connectionComplete() + notifications(count: count, payload: payload)
    if let path = stringOption("--write-stream") {
        guard FileManager.default.createFile(atPath: path, contents: Data(stream)) else {
            FileHandle.standardError.write(Data("cannot write \(path)\n".utf8))
            exit(1)
        }
    }
    var figures: [RunFigures] = []
    for _ in 0..<runs { figures.append(try await receiveRun(count: count, payload: payload)) }
    print(
        "{\"mode\": \"receive\", \"payload\": \(payload), \"notifications\": \(count), \"notifications_per_s\": \(summary(figures.map(\.perWallSecond))), "
            + "\"notifications_per_cpu_s\": \(summary(figures.map(\.perCPUSecond)))}")
} else {
    var micros: [Double] = [], idle = 0
    for _ in 0..<runs {
        let run = try await sendRun(count: count, payload: payload)
        micros.append(run.microsecondsPerPacket)
        idle += run.bufferIdleWhileQueued
    }
    print(
        "{\"mode\": \"send\", \"payload\": \(payload), \"packets\": \(count), \"host_us_per_packet\": \(summary(micros)), "
            + "\"buffer_idle_while_queued\": \(idle)}")
}
