// The host's receive and send paths in memory, shared by `bluejay-bench` (speed, side by
// side with Bumble in `make bench`) and the BluejayBenchmarks suite (package-benchmark:
// allocations and instructions, checked against thresholds by `make bench-check`).
//
// Receive: H4 bytes (an LE Connection Complete, then N ATT Handle Value Notifications on
// handle 0x0040, attribute 0x002B, each with a u32 sequence number first) are framed as a
// transport would (H4Framer, 64 KiB reads, on a thread of their own), handed to the
// controller, and go HCI → L2CAP → ATT bearer → GATT client value listener → a Receivable
// decoded.
//
// Send: N Write Commands of `payload` bytes through GATT → ATT → L2CAP → the ACL queue; the
// scripted controller returns buffers (Number Of Completed Packets) as they fill.
import ATT
import Bluejay
import BluetoothCore
import Foundation
import GAP
import GATT
import HCI
import HCITestSupport
import L2CAP

/// What a notification carries for the benchmark: a sequence number, then padding. It
/// decodes from the view of the received bytes, as a Receivable written for speed does.
public struct Sample: Receivable {
    public let sequence: UInt32
    public init(bluetoothData: Data) throws { sequence = try bluetoothData.extract(start: 0, length: 4) }
    public init(bluetoothBytes: ArraySlice<UInt8>) throws { sequence = try bluetoothBytes.extract(start: 0, length: 4) }
}

public let benchConnection: ConnectionHandle = 0x0040
public let benchAttribute: AttributeHandle = 0x002B

/// The H4 bytes of the LE Connection Complete that opens the link.
public func connectionComplete() -> [UInt8] {
    let handle = benchConnection
    let parameters: [UInt8] = [
        0x01, 0x00, UInt8(handle.rawValue & 0xFF), UInt8(handle.rawValue >> 8), 0x00, 0x01, 0x01, 0x00, 0xE7, 0xB1,
        0x0D, 0xF0,
        0x18, 0x00, 0x00, 0x00, 0xF4, 0x01, 0x00,
    ]
    return [0x04, 0x3E, UInt8(parameters.count)] + parameters
}

/// The H4 bytes of `count` notifications of `payload` bytes (4…244).
public func notifications(count: Int, payload: Int, from first: UInt32 = 0) -> [UInt8] {
    var bytes: [UInt8] = []
    let l2capLength = 3 + payload
    let aclLength = 4 + l2capLength
    bytes.reserveCapacity(count * (5 + aclLength))
    let flagged = benchConnection.rawValue | 0x2000  // packet boundary 0b10: first, flushable
    for sequence in first..<(first + UInt32(count)) {
        bytes += [0x02, UInt8(flagged & 0xFF), UInt8(flagged >> 8), UInt8(aclLength & 0xFF), UInt8(aclLength >> 8)]
        bytes += [UInt8(l2capLength & 0xFF), UInt8(l2capLength >> 8), 0x04, 0x00]
        bytes += [0x1B, UInt8(benchAttribute.rawValue & 0xFF), UInt8(benchAttribute.rawValue >> 8)]
        bytes += withUnsafeBytes(of: sequence.littleEndian) { Array($0) }
        bytes += [UInt8](repeating: 0, count: payload - 4)
    }
    return bytes
}

/// A controller with one connection and the layers up to a GATT client on it.
@BluetoothActor
public struct InMemoryStack {
    package let fake: FakeController
    public let controller: HCIController
    public let connections: ConnectionManager
    public let channels: L2CAPChannels
    public let bearers: ATTBearers
    public let client: GATTClient

    public init(aclBuffers: UInt8) async throws {
        var script = FakeController.Script()
        script.leBuffer = (251, aclBuffers)
        script.keepsACL = false
        fake = FakeController(script)
        controller = HCIController(transport: fake, configuration: .init(logger: .silent))
        try await controller.start()
        connections = ConnectionManager(controller: controller, logger: .silent)
        channels = L2CAPChannels(controller: controller, logger: .silent)
        bearers = ATTBearers(controller: controller, channels: channels, logger: .silent)
        fake.deliver(.packets(try Self.frame(connectionComplete())))
        _ = try await controller.send(ReadBDADDR())  // the event above is handled by now
        client = GATTClient(bearer: try bearers.bearer(for: benchConnection))
        // ATT_MTU 517, as a real peer would answer: the peer's Exchange MTU Response.
        let client = client
        let exchange = Task { @BluetoothActor in try await client.exchangeMTU() }
        let handle = benchConnection.rawValue
        fake.deliver(
            .packets(
                try Self.frame([
                    0x02, UInt8(handle & 0xFF), UInt8((handle | 0x2000) >> 8), 0x07, 0x00, 0x03, 0x00, 0x04, 0x00, 0x03,
                    0x05, 0x02,
                ])))
        _ = try await exchange.value
    }

    public static func frame(_ bytes: [UInt8]) throws -> [HCIPacket] {
        var framer = H4Framer()
        return try framer.append(bytes).map { type, body in try HCIPacket(type: type, body: body) }
    }

    public func close() {
        bearers.close()
        channels.close()
        connections.close()
        controller.close()
    }
}

/// The receive path, ready to run: a stack with a listener on the benchmark's attribute.
/// ``run()`` feeds the notifications from a reader thread and returns when the listener has
/// had them all, in order.
@BluetoothActor
public final class ReceivePath {
    public let stack: InMemoryStack
    private let stream: UncheckedSendableBox<[UInt8]>
    private let count: Int
    private var received = 0
    private var expected: UInt32 = 0
    private var outOfOrder = 0
    private var done = Expectation<Void>()

    /// `count` notifications of `payload` octets (the ACL part of the stream, the connection
    /// being opened by the stack itself).
    public init(count: Int, payload: Int) async throws {
        self.count = count
        stream = UncheckedSendableBox(notifications(count: count, payload: payload))
        stack = try await InMemoryStack(aclBuffers: 8)
        stack.client.addValueListener(benchAttribute) { [unowned self] bytes in
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
    }

    /// Delivers every notification once (a second run sends the same sequence numbers again).
    public func run() async {
        received = 0
        expected = 0
        done = Expectation<Void>()
        let fake = stack.fake
        let chunks = stream
        // The transport's side, on a thread of its own.
        Thread.detachNewThread {
            feedAsStreamReads(chunks.value) { fake.deliver($0) }
        }
        await done.value()
        precondition(outOfOrder == 0, "\(outOfOrder) notifications out of order or undecodable")
    }

    public func close() { stack.close() }
}

/// The send path, ready to run: `count` Write Commands of `payload` octets per ``run()``.
///
/// Everything runs on the stack's actor, synchronously: the app's writes, and the
/// controller's Number Of Completed Packets handed to the controller object as the
/// transport's delivery would be (``HCIController/receiveNow(_:)``), so what is measured is
/// the host's work alone — GATT, ATT, L2CAP, the ACL queue and its credits — and not hops
/// between threads.
@BluetoothActor
public final class SendPath {
    public static let buffers: UInt8 = 8
    public let stack: InMemoryStack
    private let value: [UInt8]
    private let count: Int
    private let completions: [TransportDelivery]

    public init(count: Int, payload: Int) async throws {
        self.count = count
        value = [UInt8](repeating: 0xA5, count: payload)
        stack = try await InMemoryStack(aclBuffers: Self.buffers)
        completions = (0...Int(Self.buffers)).map { count in
            TransportDelivery.packets([
                .event(
                    HCIEvent.numberOfCompletedPackets(
                        NumberOfCompletedPackets(completions: [(benchConnection, UInt16(count))])
                    ).packet)
            ])
        }
    }

    /// Sends the Write Commands; returns how often a controller buffer sat free while
    /// packets were queued (the queue must refill at once: 0).
    public func run() throws -> Int {
        try run { [stack, value] in try stack.client.writeWithoutResponse(0x0026, value) }
    }

    /// Sends `count` packets with `send` (one packet each) as ``run()`` sends Write Commands.
    public func run(_ send: () throws -> Void) throws -> Int {
        var idleWhileQueued = 0
        let before = stack.fake.sentACLCount
        var sent = 0
        var completed = 0
        // The app writes in bursts larger than the controller's buffers; the controller
        // completes what it holds, and the host must refill every freed buffer at once.
        while sent < count {
            let burst = min(Int(Self.buffers) * 4, count - sent)
            for _ in 0..<burst { try send() }
            sent += burst
            while completed < sent {
                let inFlight = sent - completed - (stack.controller.aclFlow?.queuedCount ?? 0)
                stack.controller.receiveNow(completions[inFlight])
                completed += inFlight
                if let flow = stack.controller.aclFlow, flow.available > 0, flow.queuedCount > 0 {
                    idleWhileQueued += 1
                }
            }
        }
        precondition(
            stack.fake.sentACLCount - before >= count,
            "\(stack.fake.sentACLCount - before) of \(count) packets reached the controller")
        return idleWhileQueued
    }

    public func close() { stack.close() }
}

/// Hands `bytes` to `deliver` as FileDescriptorTransport reads a stream: reads of up to
/// 64 KiB into the framer's buffer (the copy out of the kernel is a memcpy out of `bytes`
/// here), framed into packets that are views of it; stops early once `stop` says so.
public func feedAsStreamReads(
    _ bytes: [UInt8], until stop: () -> Bool = { false }, _ deliver: (TransportDelivery) -> Void
) {
    var framer = H4Framer()
    var offset = 0
    while offset < bytes.count, !stop() {
        let framed =
            (try? framer.read(maximum: 65_536) { buffer in
                let count = min(buffer.count, bytes.count - offset)
                bytes.withUnsafeBytes {
                    buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + count)]))
                }
                offset += count
                return count
            })?.packets ?? []
        // As FileDescriptorTransport does: the array made once, at its size.
        var packets: [HCIPacket] = []
        packets.reserveCapacity(framed.count)
        for (type, body) in framed { if let packet = try? HCIPacket(type: type, body: body) { packets.append(packet) } }
        deliver(.packets(packets))
    }
}

public struct UncheckedSendableBox<Value>: @unchecked Sendable {
    public let value: Value
    public init(_ value: Value) { self.value = value }
}

/// The peripheral's send path in memory: a GATT server with one notifying characteristic,
/// the client on the link subscribed; N notifications of `payload` bytes go GATT server →
/// ATT → L2CAP → the ACL queue, the controller returning buffers as ``SendPath`` does.
@BluetoothActor
public final class NotifyPath {
    public let path: SendPath
    public let server: GATTServer
    private let valueHandle: AttributeHandle
    private let value: [UInt8]

    public init(count: Int, payload: Int) async throws {
        path = try await SendPath(count: count, payload: payload)
        server = GATTServer(deviceName: "Bluejay bench")
        let served = try server.add(
            ServiceDefinition(
                uuid: BluetoothUUID(UInt16(0x181A)),
                characteristics: [
                    CharacteristicDefinition(uuid: BluetoothUUID(UInt16(0x2A6E)), properties: [.notify])
                ]))
        valueHandle = served.characteristics[0].valueHandle
        value = [UInt8](repeating: 0x5A, count: payload)
        let bearer = try path.stack.bearers.bearer(for: benchConnection)
        bearer.server = server
        // The client turns notifications on (a Write Request to the CCCD; its response is
        // the one packet in flight before the run).
        let cccd = served.characteristics[0].cccdHandle!.rawValue
        bearer.receive([0x12, UInt8(cccd & 0xFF), UInt8(cccd >> 8), 0x01, 0x00][...])
        precondition(server.subscribers(of: valueHandle).count == 1, "the bench client did not subscribe")
        path.stack.controller.receiveNow(
            .packets([
                .event(
                    HCIEvent.numberOfCompletedPackets(
                        NumberOfCompletedPackets(completions: [(benchConnection, 1)])
                    ).packet)
            ]))
    }

    /// Sends the notifications; returns how often a buffer sat free while packets were queued.
    public func run() throws -> Int {
        try path.run { [server, valueHandle, value] in
            guard server.notify(valueHandle, value: value) == [benchConnection] else { throw NotifyPathError.notSent }
        }
    }

    public func close() { path.close() }
}

/// A notification the server did not send.
public enum NotifyPathError: Error { case notSent }
