// bluejay-bench: the host's receive and send paths in memory, for `make bench`.
//
//   bluejay-bench receive --payload 244 --count 200000 [--runs 5] [--write-stream FILE]
//   bluejay-bench send --payload 244 --count 100000 [--runs 5]
//
// Receive: H4 bytes (an LE Connection Complete, then N ATT Handle Value Notifications on
// handle 0x0040, attribute 0x002B, each with a u32 sequence number first) are framed as a
// transport would (H4Framer, 64 KiB reads), handed to the controller, and go HCI → L2CAP →
// ATT bearer → GATT client value listener → a Receivable decoded. Measured: notifications
// per wall second and per CPU second of the process, and heap allocations per
// notification (the malloc family is counted for this executable only).
//
// Send: N Write Commands of `payload` bytes through GATT → ATT → L2CAP → the ACL queue; the
// scripted controller returns buffers (Number Of Completed Packets) as they fill. Measured:
// host CPU µs per packet, and whether a controller buffer ever sat free while packets were
// queued (the queue must refill at once).
//
// L2CAP: against the Bumble peer (`--transport T --addresses A`), one link carries the same
// `--count` octets out and back both ways, interleaved `--runs` times: through an L2CAP LE
// credit based channel to the peer's echo PSM 0x0080 (SDUs of the peer's MTU, K-frames of
// 247 octets), and as GATT Write Commands of 244 octets to the peer's echo characteristic,
// which notifies each one back. Both payloads fit one 251-octet LL packet. Measured: octets
// per second each way, and their ratio.
//
// Output: one JSON object per run mode on stdout.
import ATT
import Bluejay
import BluetoothCore
import CMallocCounter
import Dispatch
import Foundation
import GATT
import HCI
import HCITestSupport
import L2CAP
#if canImport(Glibc)
import Glibc
#endif

/// What a notification carries for the benchmark: a sequence number, then padding. It
/// decodes from the view of the received bytes, as a Receivable written for speed does.
struct Sample: Receivable {
    let sequence: UInt32
    init(bluetoothData: Data) throws { sequence = try bluetoothData.extract(start: 0, length: 4) }
    init(bluetoothBytes: ArraySlice<UInt8>) throws { sequence = try bluetoothBytes.extract(start: 0, length: 4) }
}

let handle: ConnectionHandle = 0x0040
let attributeHandle: AttributeHandle = 0x002B

/// The H4 bytes of the LE Connection Complete that opens the link.
func connectionComplete() -> [UInt8] {
    let parameters: [UInt8] = [0x01, 0x00, UInt8(handle.rawValue & 0xFF), UInt8(handle.rawValue >> 8), 0x00, 0x01, 0x01, 0x00, 0xE7, 0xB1, 0x0D, 0xF0,
                               0x18, 0x00, 0x00, 0x00, 0xF4, 0x01, 0x00]
    return [0x04, 0x3E, UInt8(parameters.count)] + parameters
}

/// The H4 bytes of `count` notifications of `payload` bytes.
func notifications(count: Int, payload: Int) -> [UInt8] {
    var bytes: [UInt8] = []
    let l2capLength = 3 + payload
    let aclLength = 4 + l2capLength
    bytes.reserveCapacity(count * (5 + aclLength))
    let flagged = handle.rawValue | 0x2000  // packet boundary 0b10: first, flushable
    for sequence in 0..<UInt32(count) {
        bytes += [0x02, UInt8(flagged & 0xFF), UInt8(flagged >> 8), UInt8(aclLength & 0xFF), UInt8(aclLength >> 8)]
        bytes += [UInt8(l2capLength & 0xFF), UInt8(l2capLength >> 8), 0x04, 0x00]
        bytes += [0x1B, UInt8(attributeHandle.rawValue & 0xFF), UInt8(attributeHandle.rawValue >> 8)]
        bytes += withUnsafeBytes(of: sequence.littleEndian) { Array($0) }
        bytes += [UInt8](repeating: 0, count: payload - 4)
    }
    return bytes
}

/// CPU seconds the process has used.
func processCPUSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

/// A controller with one connection and the layers up to a GATT client on it.
@BluetoothActor
struct Stack {
    let fake: FakeController
    let controller: HCIController
    let connections: ConnectionManager
    let channels: L2CAPChannels
    let bearers: ATTBearers
    let client: GATTClient

    init(aclBuffers: UInt8) async throws {
        var script = FakeController.Script()
        script.leBuffer = (251, aclBuffers)
        script.keepsACL = false
        fake = FakeController(script)
        controller = HCIController(transport: fake, configuration: .init(logger: .silent))
        try await controller.start()
        connections = ConnectionManager(controller: controller, logger: .silent)
        channels = L2CAPChannels(controller: controller, connections: connections, logger: .silent)
        bearers = ATTBearers(controller: controller, channels: channels, connections: connections, logger: .silent)
        fake.deliver(.packets(try Self.frame(connectionComplete())))
        _ = try await controller.send(ReadBDADDR())  // the event above is handled by now
        client = GATTClient(bearer: try bearers.bearer(for: handle))
        // ATT_MTU 517, as a real peer would answer: the peer's Exchange MTU Response.
        let client = client
        let exchange = Task { @BluetoothActor in try await client.exchangeMTU() }
        fake.deliver(.packets(try Self.frame([0x02, UInt8(handle.rawValue & 0xFF), UInt8((handle.rawValue | 0x2000) >> 8), 0x07, 0x00, 0x03, 0x00, 0x04, 0x00, 0x03, 0x05, 0x02])))
        _ = try await exchange.value
    }

    static func frame(_ bytes: [UInt8]) throws -> [HCIPacket] {
        var framer = H4Framer()
        return try framer.append(bytes).map { type, body in try HCIPacket(type: type, body: body) }
    }

    func close() {
        bearers.close()
        channels.close()
        connections.close()
        controller.close()
    }
}

struct RunFigures: Codable {
    var perWallSecond: Double
    var perCPUSecond: Double
    var allocationsPerItem: Double
}

/// One receive run: returns notifications per wall second, per CPU second, allocations each.
@BluetoothActor
func receiveRun(stream: [UInt8], count: Int) async throws -> RunFigures {
    let stack = try await Stack(aclBuffers: 8)
    defer { stack.close() }
    var received = 0
    var expected: UInt32 = 0
    var outOfOrder = 0
    let done = Expectation<Void>()
    stack.client.addValueListener(attributeHandle) { bytes in
        do {
            let sample = try Sample(bluetoothBytes: bytes)
            if sample.sequence != expected { outOfOrder += 1 }
            expected = sample.sequence &+ 1
        } catch {
            outOfOrder += 1
        }
        received += 1
        if received == count { done.fulfill(()) }
    }
    let fake = stack.fake
    let allocationsBefore = bench_allocation_count()
    let cpuBefore = processCPUSeconds()
    let start = ContinuousClock.now
    // The transport's side, on a thread of its own, as FileDescriptorTransport reads: reads
    // of up to 64 KiB into the framer's buffer (the copy out of the kernel is a memcpy out
    // of the stream here), framed into packets that are views of it.
    let chunks = UncheckedSendableBox(stream)
    Thread.detachNewThread {
        var framer = H4Framer()
        var offset = 0
        let bytes = chunks.value
        while offset < bytes.count {
            let framed = (try? framer.read(maximum: 65_536) { buffer in
                let count = min(buffer.count, bytes.count - offset)
                bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + count)])) }
                offset += count
                return count
            })?.packets ?? []
            fake.deliver(.packets(framed.compactMap { type, body in try? HCIPacket(type: type, body: body) }))
        }
    }
    await done.value()
    let elapsed = ContinuousClock.now - start
    let cpu = processCPUSeconds() - cpuBefore
    let allocations = bench_allocation_count() - allocationsBefore
    precondition(outOfOrder == 0, "\(outOfOrder) notifications out of order or undecodable")
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    return RunFigures(perWallSecond: Double(count) / seconds, perCPUSecond: Double(count) / cpu, allocationsPerItem: Double(allocations) / Double(count))
}

/// One send run: host CPU µs and heap allocations per Write Command, and whether a buffer
/// sat free while packets were queued.
///
/// Everything runs on the stack's actor, synchronously: the app's writes, and the
/// controller's Number Of Completed Packets handed to the controller object as the
/// transport's delivery would be (``HCIController/receiveNow(_:)``), so what is timed is the
/// host's work alone — GATT, ATT, L2CAP, the ACL queue and its credits — and not the
/// bench's own hops between threads.
@BluetoothActor
func sendRun(count: Int, payload: Int) async throws -> (microsecondsPerPacket: Double, allocationsPerPacket: Double, bufferIdleWhileQueued: Int) {
    let buffers: UInt8 = 8
    let stack = try await Stack(aclBuffers: buffers)
    defer { stack.close() }
    let value = [UInt8](repeating: 0xA5, count: payload)
    var idleWhileQueued = 0
    let completions = (0...Int(buffers)).map { count in
        TransportDelivery.packets([.event(HCIEvent.numberOfCompletedPackets(NumberOfCompletedPackets(completions: [(handle, UInt16(count))])).packet)])
    }
    let allocationsBefore = bench_allocation_count()
    let cpuBefore = processCPUSeconds()
    var sent = 0
    var completed = 0
    // The app writes in bursts larger than the controller's buffers; the controller
    // completes what it holds, and the host must refill every freed buffer at once.
    while sent < count {
        let burst = min(Int(buffers) * 4, count - sent)
        for _ in 0..<burst { try stack.client.writeWithoutResponse(0x0026, value) }
        sent += burst
        while completed < sent {
            let inFlight = sent - completed - (stack.controller.aclFlow?.queuedCount ?? 0)
            stack.controller.receiveNow(completions[inFlight])
            completed += inFlight
            if let flow = stack.controller.aclFlow, flow.available > 0, flow.queuedCount > 0 { idleWhileQueued += 1 }
        }
    }
    let cpu = processCPUSeconds() - cpuBefore
    let allocations = bench_allocation_count() - allocationsBefore
    precondition(stack.fake.sentACLCount >= count, "\(stack.fake.sentACLCount) of \(count) Write Commands reached the controller")
    return (cpu * 1e6 / Double(count), Double(allocations) / Double(count), idleWhileQueued)
}

struct UncheckedSendableBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

func summary(_ values: [Double]) -> String {
    "{\"median\": \(median(values)), \"min\": \(values.min() ?? 0), \"max\": \(values.max() ?? 0), \"runs\": [\(values.map { String($0) }.joined(separator: ", "))]}"
}

// MARK: Command line

let arguments = Array(CommandLine.arguments.dropFirst())
@MainActor func option(_ name: String, _ fallback: Int) -> Int {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count, let value = Int(arguments[index + 1]) else { return fallback }
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
guard (4...244).contains(payload), count > 0, runs > 0, ["receive", "send", "central", "l2cap"].contains(mode) else {
    FileHandle.standardError.write(Data(("usage: bluejay-bench receive|send [--payload 4…244] [--count N] [--runs K] [--write-stream FILE]\n"
        + "       bluejay-bench central --transport T --addresses A[,B…] [--count N per peripheral] [--payload N]\n"
        + "       bluejay-bench l2cap --transport T --addresses A [--count OCTETS] [--runs K]\n").utf8))
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
    var streams: [AsyncThrowingStream<[UInt8], any Error>] = []
    for peripheral in peripherals { streams.append(try await peripheral.values(of: flood)) }
    let command: [UInt8] = [0x01] + withUnsafeBytes(of: UInt32(count).littleEndian, Array.init) + withUnsafeBytes(of: UInt16(payload).littleEndian, Array.init)
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
    let seconds = Double((clock.now - floodStart).components.attoseconds) / 1e18 + Double((clock.now - floodStart).components.seconds)
    let connectMilliseconds = Double(connectAll.components.seconds) * 1000 + Double(connectAll.components.attoseconds) / 1e15
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
    let notified = try await peripheral.values(of: echo)
    let channel = try await peripheral.openL2CAPChannel(psm: 0x0080)
    let data = (0..<octets).map { UInt8(truncatingIfNeeded: $0 &* 31) }
    let clock = ContinuousClock()
    func seconds(_ duration: Duration) -> Double { Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18 }

    func overL2CAP() async throws -> Double {
        let start = clock.now
        let mtu = Int(channel.remoteMTU)
        let sender = Task { @BluetoothActor in
            for offset in stride(from: 0, to: data.count, by: mtu) { try await channel.send(Array(data[offset..<min(offset + mtu, data.count)])) }
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
                try await peripheral.write(to: echo, bytes: Array(data[offset..<min(offset + 244, data.count)]), type: .withoutResponse)
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
    return "{\"mode\": \"l2cap\", \"octets\": \(octets), \"l2cap_octets_per_s\": \(summary(l2cap)), \"gatt_octets_per_s\": \(summary(gatt)), "
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

if mode == "central" {
    guard let transport = stringOption("--transport"), let addresses = stringOption("--addresses")?.split(separator: ",").map(String.init) else {
        FileHandle.standardError.write(Data("central needs --transport and --addresses\n".utf8))
        exit(64)
    }
    print(try await centralRun(transport: transport, addresses: addresses, count: count, payload: payload))
    exit(0)
}

if mode == "receive" {
    let stream = connectionComplete() + notifications(count: count, payload: payload)
    if let path = stringOption("--write-stream") {
        guard FileManager.default.createFile(atPath: path, contents: Data(stream)) else {
            FileHandle.standardError.write(Data("cannot write \(path)\n".utf8))
            exit(1)
        }
    }
    let acl = Array(stream.dropFirst(connectionComplete().count))
    var figures: [RunFigures] = []
    for _ in 0..<runs { figures.append(try await receiveRun(stream: acl, count: count)) }
    print("{\"mode\": \"receive\", \"payload\": \(payload), \"notifications\": \(count), \"notifications_per_s\": \(summary(figures.map(\.perWallSecond))), "
        + "\"notifications_per_cpu_s\": \(summary(figures.map(\.perCPUSecond))), \"allocations_per_notification\": \(summary(figures.map(\.allocationsPerItem)))}")
} else {
    var micros: [Double] = [], allocations: [Double] = [], idle = 0
    for _ in 0..<runs {
        let run = try await sendRun(count: count, payload: payload)
        micros.append(run.microsecondsPerPacket)
        allocations.append(run.allocationsPerPacket)
        idle += run.bufferIdleWhileQueued
    }
    print("{\"mode\": \"send\", \"payload\": \(payload), \"packets\": \(count), \"host_us_per_packet\": \(summary(micros)), "
        + "\"allocations_per_packet\": \(summary(allocations)), \"buffer_idle_while_queued\": \(idle)}")
}
