import ArgumentParser
import Bluejay
import BluetoothCore
import Dispatch
import HCI
import TraceDecoding
#if canImport(Glibc)
    import Glibc
#endif

/// `bluejay monitor`: a gateway in one command, on ``Central``.
struct Monitor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monitor",
        abstract:
            "Connect to every ADDRESS, listen to one characteristic on each, print each value; reconnect dropped peers.",
        discussion: """
            One line per value: 'ADDRESS HANDLE HEX' (with --json: {"address", "handle", "value"}), in the order they \
            arrive from all peripherals. Link events (connected, disconnected, reconnecting, gave up, forced disconnect) go to standard \
            error (with --json, as {"address", "event", ...} lines on standard output). A dropped peer is reconnected \
            with backoff (1 s, doubling, at most 30 s) up to --retries times; the others keep streaming. Runs until \
            interrupted: Ctrl-C unsubscribes, disconnects and exits 0 (a second Ctrl-C exits at once). Exits 1 when no \
            peripheral is left to listen to (each gave up, dropped with no retries left, or lacks the characteristic).
            """)

    @OptionGroup var common: CommonOptions

    @Argument(help: "Peripherals: ADDRESS/random or ADDRESS/public (no type: public).")
    var addresses: [String]

    @Option(name: .long, help: "The service UUID (16-bit 180D or 128-bit).")
    var service: String

    @Option(name: .long, help: "The characteristic UUID.")
    var characteristic: String

    @Option(
        name: .long,
        help: "Connection attempts retried after a timeout, and reconnections after a drop, per peripheral.")
    var retries = 5

    @Option(name: .long, help: "Seconds a connection attempt may take.")
    var connectionTimeout: Double = 10

    @Flag(name: .long, help: "One JSON object per line.")
    var json = false

    func validate() throws {
        guard !addresses.isEmpty else { throw ValidationError("give at least one ADDRESS") }
        for text in addresses { _ = try identifier(text) }
        guard BluetoothUUID(service) != nil else { throw ValidationError("--service: '\(service)' is not a UUID") }
        guard BluetoothUUID(characteristic) != nil else {
            throw ValidationError("--characteristic: '\(characteristic)' is not a UUID")
        }
        guard (0...1000).contains(retries) else { throw ValidationError("--retries must be between 0 and 1000") }
        guard connectionTimeout > 0, connectionTimeout <= 3600 else {
            throw ValidationError("--connection-timeout must be between 0 and 3600 seconds")
        }
    }

    private func identifier(_ text: String) throws -> PeripheralIdentifier {
        do { return try PeripheralIdentifier(text) } catch { throw ValidationError("\(error)") }
    }

    func run() async throws {
        let identifiers = try addresses.map(identifier)
        let target = CharacteristicIdentifier(uuid: characteristic, service: ServiceIdentifier(uuid: service))
        let spec = try common.transportSpec().description
        let options = MonitorOptions(
            json: json, retries: retries, connectionTimeout: .milliseconds(Int(connectionTimeout * 1000)),
            capture: common.captureRedacted ?? common.capture ?? environment("BLUEJAY_BTSNOOP"))
        let logger = common.logger
        let outcome = await Task { @BluetoothActor in
            await MonitorSession.run(
                transport: spec, identifiers: identifiers, target: target, options: options, logger: logger)
        }.value
        if let failure = outcome { throw CLIError(failure) }
    }
}

struct MonitorOptions: Sendable {
    var json: Bool
    var retries: Int
    var connectionTimeout: Duration
    var capture: String?
}

/// The monitor's run on the stack's actor: connect all, stream all, stop on Ctrl-C.
@BluetoothActor
enum MonitorSession {
    /// Runs until interrupted (nil: a clean exit) or until every peripheral gave up (the
    /// reason).
    static func run(
        transport: String, identifiers: [PeripheralIdentifier], target: CharacteristicIdentifier,
        options: MonitorOptions, logger: HCILogger
    ) async -> String? {
        let central: Central
        do { central = try await Central(transport: transport, capture: options.capture, logger: logger) } catch {
            return error.description
        }
        defer { central.close() }

        // The run ends on Ctrl-C (true) or when every peripheral gave up (false). The signal
        // handler runs on a dispatch queue and only says so.
        let (stops, stop) = AsyncStream<Bool>.makeStream()
        let sources = catchStopSignals([SIGINT]) { stop.yield(true) }
        defer { for source in sources { source.cancel() } }

        // A peripheral is done when its stream ends: it gave up, dropped with no retries
        // left, or could not be listened to. When all are done, so is the run.
        var done = 0
        var streams: [Task<Void, Never>] = []
        for identifier in identifiers {
            let peripheral = central.peripheral(identifier)
            let address = identifier.address.description
            let events = peripheral.connectionEvents()
            streams.append(
                Task { @BluetoothActor in
                    for await event in events {
                        report(event, address: address, json: options.json)
                    }
                })
            streams.append(
                Task { @BluetoothActor in
                    do {
                        try await peripheral.connect(
                            timeoutRetries: options.retries, disconnectRetries: options.retries,
                            connectionTimeout: options.connectionTimeout)
                        let handle = try await peripheral.valueHandle(of: target)
                        // At most PeripheralValues.defaultCapacity values wait for a stalled stdout;
                        // past that the oldest go, and a `dropped` event says how many.
                        let values = try await peripheral.values(of: target)
                        var reported = 0
                        for try await value in values {
                            defer { flushStandardOutput() }  // a line per value as it comes, also into a pipe
                            if values.droppedCount > reported {
                                reportDropped(values.droppedCount - reported, address: address, json: options.json)
                                reported = values.droppedCount
                            }
                            if options.json {
                                print(
                                    JSONValue.object([
                                        "address": .string(address), "handle": .number(Int(handle.rawValue)),
                                        "value": .string(value.hexString()),
                                    ]).compact)
                            } else {
                                print("\(address) \(hex(handle, digits: 4)) \(value.hexString(separator: " "))")
                            }
                        }
                    } catch {
                        if !Task.isCancelled { printToStandardError("bluejay: \(address): \(error)") }
                    }
                    done += 1
                    if done == identifiers.count { stop.yield(false) }
                })
        }
        var interrupted = false
        for await byUser in stops {
            interrupted = byUser
            break
        }
        // Unsubscribe and disconnect each, as asked.
        for peripheral in central.retrieveConnectedPeripherals() {
            try? await peripheral.endListen(to: target)
            await peripheral.disconnect()
        }
        for stream in streams { stream.cancel() }
        return interrupted ? nil : "no peripheral is left to listen to"
    }

    /// `count` values dropped because the output fell behind: an event of its own, on stdout
    /// with `--json` (`{"address": …, "event": "dropped", "count": N}`), else on stderr.
    private static func reportDropped(_ count: Int, address: String, json: Bool) {
        if json {
            print(
                JSONValue.object(["address": .string(address), "event": .string("dropped"), "count": .number(count)])
                    .compact)
        } else {
            printToStandardError("bluejay: \(address): dropped count=\(count) (the output fell behind)")
        }
    }

    private static func report(_ event: PeripheralEvent, address: String, json: Bool) {
        let (name, detail): (String, [String: JSONValue]) =
            switch event {
            case .connected: ("connected", [:])
            case let .connectionTimedOut(attempt): ("connection_timed_out", ["attempt": .number(attempt)])
            case let .disconnected(reason): ("disconnected", ["reason": .string(reason.description)])
            case let .reconnecting(attempt, delay):
                (
                    "reconnecting",
                    [
                        "attempt": .number(attempt),
                        "delay_ms": .number(
                            Int(delay.components.seconds * 1000 + delay.components.attoseconds / 1_000_000_000_000_000)),
                    ]
                )
            case let .gaveUp(reason): ("gave_up", ["reason": .string(reason)])
            case .forcedDisconnect: ("forced_disconnect", [:])
            }
        if json {
            var object = detail
            object["address"] = .string(address)
            object["event"] = .string(name)
            print(JSONValue.object(object).compact)
        } else {
            printToStandardError(
                "bluejay: \(address): \(name)"
                    + detail.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value.compact)" }.joined())
        }
    }
}
