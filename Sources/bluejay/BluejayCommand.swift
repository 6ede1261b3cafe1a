import ArgumentParser
import Bluejay
import BluetoothCore
import HCI
import SMP
import TraceDecoding
import VirtualController

#if canImport(Glibc)
    import Glibc
#endif

/// `bluejay`: a Bluetooth LE host on the command line.
@main
struct BluejayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bluejay",
        abstract: "A Bluetooth Low Energy host that drives a controller directly over HCI.",
        discussion: """
            Transports (--transport or BLUEJAY_TRANSPORT): hci0 or hci:N (kernel user channel), \
            serial:/dev/ttyACM0[,baud=1000000][,flow=rtscts], tcp:HOST:PORT, unix:PATH, replay:FILE, \
            mock:FILE[,peer=ADDRESS] (a virtual controller serving the peers a recording shows: see 'bluejay mock').
            """,
        subcommands: [
            Info.self, Scan.self, Connect.self, Gatt.self, Discover.self, Read.self, Write.self, Listen.self,
            Cache.self, Pair.self, Bonds.self, Unpair.self, Demo.self, Trace.self, Mock.self, Monitor.self,
            L2CAPCommand.self, Advertise.self, Serve.self,
            GatewayCommand.self, Adv.self,
        ])

    /// ArgumentParser's own entry point, after opting in to `mock:` transports, which every
    /// command takes.
    static func main() async {
        VirtualController.enableMockTransport()
        do {
            var command = try parseAsRoot()
            if var command = command as? AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}

/// Options every command takes.
struct CommonOptions: ParsableArguments {
    @Option(
        name: .long,
        help:
            "The controller: hci0, hci:N, serial:PATH[,baud=N][,flow=rtscts], tcp:HOST:PORT, unix:PATH, replay:FILE, mock:FILE[,peer=ADDRESS] (default: $BLUEJAY_TRANSPORT)."
    )
    var transport: String?

    @Option(name: .long, help: "Write every HCI packet to this btsnoop file (default: $BLUEJAY_BTSNOOP).")
    var capture: String?

    @Option(
        name: .long,
        help:
            "Write every HCI packet to this btsnoop file with keys, nonces and passkeys zeroed in place: a capture to share."
    )
    var captureRedacted: String?

    @Flag(name: .long, help: "Log HCI traffic and diagnostics to standard error.")
    var verbose = false

    @Flag(
        name: .long,
        help: "Print keys, nonces and passkeys in clear in logs and traces (for debugging; never share such output).")
    var logSecrets = false

    /// Each layer's level from `BLUEJAY_LOG` (`hci=debug,att=info`; docs/CommandLine.md, "Logging"),
    /// over `debug` with `--verbose`, else `warning`.
    static func levels(verbose: Bool) throws(LogLevelsError) -> LogLevels {
        try LogLevels(
            parsing: getenv("BLUEJAY_LOG").map { String(cString: $0) } ?? "", default: verbose ? .debug : .warning)
    }

    /// One logger per process for each of `--verbose`'s settings, so its warning about
    /// secrets in clear comes once however many layers are handed a copy. `BLUEJAY_LOG`
    /// was checked by ``validate()``.
    private static let loggers = [false, true].map { verbose in
        HCILogger(
            levels: (try? levels(verbose: verbose)) ?? LogLevels(default: verbose ? .debug : .warning),
            sink: HCILogger.standardErrorLine)
    }

    var logger: HCILogger {
        var logger = Self.loggers[verbose ? 1 : 0]
        logger.showsSecrets = logSecrets
        return logger
    }

    func validate() throws {
        do { _ = try Self.levels(verbose: verbose) } catch { throw ValidationError("BLUEJAY_LOG: \(error)") }
        if capture != nil && captureRedacted != nil {
            throw ValidationError("--capture and --capture-redacted each record every packet: give one")
        }
    }

    /// The capture file the options (or $BLUEJAY_BTSNOOP) name, opened; nil for none.
    func openCapture() throws -> BTSnoopWriter? {
        do {
            if let path = captureRedacted { return try BTSnoopWriter(path: path, redactor: PacketSecrets()) }
            if let path = capture ?? environment("BLUEJAY_BTSNOOP"), !path.isEmpty {
                return try BTSnoopWriter(path: path)
            }
        } catch { throw CLIError(error.description) }
        return nil
    }

    /// The transport spec from the option or the environment.
    func transportSpec() throws -> TransportSpec {
        guard let text = transport ?? environment("BLUEJAY_TRANSPORT"), !text.isEmpty else {
            throw CLIError(
                "no transport: pass --transport (e.g. hci0, serial:/dev/ttyACM0, tcp:127.0.0.1:9000) or set BLUEJAY_TRANSPORT"
            )
        }
        do { return try TransportSpec(parsing: text) } catch { throw CLIError("--transport: \(error)") }
    }

    /// Opens the transport (with the capture file, if any) and brings the controller up.
    @BluetoothActor
    func withController<T: Sendable>(_ body: @BluetoothActor (HCIController, ControllerInfo) async throws -> T)
        async throws -> T
    {
        let spec = try transportSpec()
        let writer = try openCapture()
        defer { writer?.close() }
        let transport: any HCITransport
        // Awaited: a user channel still busy is retried without holding up the stack's actor.
        do { transport = try await spec.open(capture: writer, clock: ContinuousClock()) } catch {
            throw CLIError(error.description)
        }
        let controller = HCIController(transport: transport, configuration: .init(logger: logger))
        defer { controller.close() }
        // A replay's verdict outranks whatever error the stack made of it: the report names
        // the record, the expected and the actual packet.
        let replay = transport as? ReplayTransport
        let info: ControllerInfo
        do { info = try await controller.start() } catch {
            if let mismatch = replay?.mismatch { throw CLIError(mismatch.decodedReport) }
            throw CLIError("\(spec): \(error)")
        }
        let result: T
        do { result = try await body(controller, info) } catch {
            if let mismatch = replay?.mismatch { throw CLIError(mismatch.decodedReport) }
            if let verdict = replay?.verdict { throw CLIError("\(error)\n\(verdict.decodedReport)") }
            throw error
        }
        if let verdict = replay?.verdict { throw CLIError(verdict.decodedReport) }
        return result
    }
}

extension CommonOptions {
    /// As ``withController(_:)``, with the whole stack attached the way the library attaches
    /// it (``BluetoothHost/init(controller:info:store:cacheEnabled:deviceName:logger:)``: one
    /// wiring for both), closed when `body` returns.
    @BluetoothActor
    func withHost<T: Sendable>(cacheEnabled: Bool = true, _ body: @BluetoothActor (BluetoothHost) async throws -> T)
        async throws -> T
    {
        let logger = logger
        return try await withController { controller, info in
            let host = BluetoothHost(
                controller: controller, info: info, store: .standard, cacheEnabled: cacheEnabled, logger: logger)
            defer { host.close() }
            return try await body(host)
        }
    }
}

/// A user-facing error: printed as one line (a replay mismatch report adds the two packets
/// on lines of their own), no stack trace, exit code 1.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

func environment(_ name: String) -> String? {
    getenv(name).map { String(cString: $0) }
}
