import BluetoothCore
#if canImport(Glibc)
    import Glibc
#endif
import Synchronization
import CBluejaySystem
import CBluetooth

/// Plays the controller's side of a btsnoop recording and checks that the host sends
/// what the recording says it sent: a conformance test with no controller, no Python and
/// no network.
///
/// Controller→host records are delivered until the next host→controller record; then
/// the transport waits for the host to send a packet and compares it with that record
/// under ``ReplayRule``s: exact octets, except the fields a rule names (random values the
/// host makes up, and values computed from them), which are matched by the rule's kind.
/// Timestamps are never compared, so a replay runs as fast as the host does.
/// A difference ends the replay with ``TransportError/replayMismatch(_:)`` (also kept in
/// ``mismatch``), naming the record, the expected and the actual bytes.
public final class ReplayTransport: HCITransport {
    private struct Script {
        var records: [BTSnoopRecord]
        var next = 0
        var outbox: [TransportDelivery] = []
        var stopped = false
        var matcher: ReplayMatcher
        var mismatch: ReplayMismatch?
    }

    /// Shared with the delivery thread, which must not keep the transport itself alive.
    private final class Shared: Sendable {
        let script: Mutex<Script>
        init(_ script: Script) { self.script = Mutex(script) }
    }

    private let shared: Shared
    private let wakeFd: Int32
    private let thread = Mutex<ReaderThread?>(nil)
    private let capture: BTSnoopWriter?
    private let path: String

    /// Loads the recording at `path`; the host's packets are matched under `rules`.
    public init(path: String, capture: BTSnoopWriter? = nil, rules: [ReplayRule] = ReplayRule.standard)
        throws(TransportError)
    {
        let file: BTSnoopFile
        do { file = try BTSnoopFile(path: path) } catch {
            throw .openFailed(what: "replay:\(path) (\(error))", errno: 0)
        }
        let packets = file.records.filter { if case .packet = $0.content { true } else { false } }
        shared = Shared(Script(records: packets, matcher: ReplayMatcher(rules: rules)))
        wakeFd = eventfd(0, Int32(EFD_CLOEXEC))
        guard wakeFd >= 0 else { throw .openFailed(what: "replay:\(path) (eventfd)", errno: errno) }
        self.capture = capture
        self.path = path
    }

    deinit { close() }

    /// `replay:PATH`.
    public var description: String { "replay:\(path)" }

    /// Whether every record of the recording has been played and matched.
    public var isFinished: Bool { shared.script.withLock { $0.next == $0.records.count && $0.mismatch == nil } }

    /// The first difference between the host and the recording, if there was one.
    public var mismatch: ReplayMismatch? { shared.script.withLock { $0.mismatch } }

    /// How the replay went, once the host is done: nil when every record was played and
    /// matched; else the mismatch, or — when the host stopped early — the first
    /// host→controller record it never sent.
    public var verdict: ReplayMismatch? {
        shared.script.withLock { script in
            if let mismatch = script.mismatch { return mismatch }
            guard let record = script.records[script.next...].first(where: { $0.direction == .sent }) else {
                return nil
            }
            let remaining = script.records[script.next...].filter { $0.direction == .sent }.count
            return ReplayMismatch(
                recordNumber: record.number, expected: Self.h4(record), actual: nil,
                reason: "the host stopped, but the recording has \(remaining) more host→controller packet(s)")
        }
    }

    /// Starts the delivery thread and queues the controller's packets up to the host's first.
    public func start(_ deliver: @escaping @Sendable (TransportDelivery) -> Void) throws(TransportError) {
        let startable = thread.withLock { $0 == nil } && !shared.script.withLock { $0.stopped }
        guard startable else { throw .closed }
        let wakeFd = wakeFd
        let reader = try ReaderThread(name: ReaderThread.replayThreadName) { [shared] in
            var fds = [pollfd(fd: wakeFd, events: Int16(POLLIN), revents: 0)]
            while true {
                _ = poll(&fds, 1, -1)
                var counter: UInt64 = 0
                _ = read(wakeFd, &counter, 8)
                let (batch, stopped) = shared.script.withLock { script in
                    defer { script.outbox.removeAll() }
                    return (script.outbox, script.stopped)
                }
                if stopped { return }
                for delivery in batch { deliver(delivery) }
            }
        }
        thread.withLock { $0 = reader }
        advance()
    }

    /// Checks `packet` against the next host→controller record; a mismatch ends the replay.
    public func send(_ packet: HCIPacket) throws(TransportError) {
        let bytes = packet.encodeH4()
        capture?.write(h4: bytes[...], direction: .sent)
        let (mismatch, isNew): (ReplayMismatch?, Bool) = shared.script.withLock { script in
            if let earlier = script.mismatch { return (earlier, false) }
            guard script.next < script.records.count else {
                script.mismatch = ReplayMismatch(
                    recordNumber: nil, expected: nil, actual: bytes,
                    reason: "the recording has ended but the host sent another packet")
                return (script.mismatch, true)
            }
            let record = script.records[script.next]
            let expected = Self.h4(record)
            let reason: String? =
                if record.direction != .sent {
                    "the recording expects the controller's packet here, not one from the host"
                } else if let expected {
                    script.matcher.match(expected: expected, actual: bytes)
                } else {
                    "the record is no HCI packet"
                }
            if let reason {
                script.mismatch = ReplayMismatch(
                    recordNumber: record.number, expected: expected, actual: bytes, reason: reason)
                return (script.mismatch, true)
            }
            script.next += 1
            return (nil, false)
        }
        if let mismatch {
            // The stack hears of it once; later sends just fail.
            if isNew { enqueue(.failed(.replayMismatch(mismatch))) }
            throw .replayMismatch(mismatch)
        }
        advance()
    }

    /// Stops and joins the delivery thread. Idempotent.
    public func close() {
        let first = shared.script.withLock { script in
            defer { script.stopped = true }
            return !script.stopped
        }
        guard first else { return }
        var one: UInt64 = 1
        _ = write(wakeFd, &one, 8)
        let reader = thread.withLock { reader in
            defer { reader = nil }
            return reader
        }
        reader?.join()
        Glibc.close(wakeFd)
    }

    /// Queues the controller's packets up to the next one the host must send.
    private func advance() {
        let packets: [HCIPacket] = shared.script.withLock { script in
            var packets: [HCIPacket] = []
            while script.next < script.records.count, script.records[script.next].direction == .received {
                if case let .packet(type, body) = script.records[script.next].content,
                    let packet = try? HCIPacket(type: type, body: body)
                {
                    packets.append(packet)
                }
                script.next += 1
            }
            return packets
        }
        for packet in packets { capture?.write(packet, direction: .received) }
        if !packets.isEmpty { enqueue(.packets(packets)) }
    }

    private func enqueue(_ delivery: TransportDelivery) {
        // The eventfd is written under the lock so close() cannot free it in between.
        shared.script.withLock { script in
            guard !script.stopped else { return }
            script.outbox.append(delivery)
            var one: UInt64 = 1
            _ = write(wakeFd, &one, 8)
        }
    }

    private static func h4(_ record: BTSnoopRecord) -> [UInt8]? {
        guard case let .packet(type, body) = record.content else { return nil }
        return [type.rawValue] + body
    }
}
