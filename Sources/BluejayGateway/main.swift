import Bluejay
import BluetoothCore
import Dispatch
import Foundation
import Gateway
import Logging
import VirtualController

// `bluejay-gateway CONFIG.yaml` (also `bluejay gateway CONFIG.yaml`): the gateway service.
// docs/Gateway.md has the file's keys, the topics and a systemd unit.

let usage = """
    usage: bluejay-gateway CONFIG.yaml [--check] [--verbose]

    Bridges the Bluetooth LE peripherals CONFIG.yaml names to an MQTT broker: values, decoded
    JSON, advertisements, availability, /set writes, Home Assistant discovery (docs/Gateway.md).
      --check     read and check the configuration, print it in short, and exit
      --verbose   debug logs (log_level: debug, whatever the file says)
    Runs until SIGTERM or SIGINT, which mark everything offline and disconnect.
    Under systemd (Type=notify) it says READY=1 once started, and pets the watchdog.
    """

var arguments = Array(CommandLine.arguments.dropFirst())
let check = arguments.contains("--check")
let verbose = arguments.contains("--verbose")
arguments.removeAll { $0 == "--check" || $0 == "--verbose" }
if arguments.contains("--help") || arguments.contains("-h") {
    print(usage)
    exit(0)
}
guard arguments.count == 1, let path = arguments.first, !path.hasPrefix("-") else {
    FileHandle.standardError.write(Data((usage + "\n").utf8))
    exit(64)
}

let configuration: GatewayConfiguration
do { configuration = try GatewayConfiguration(contentsOf: path) } catch {
    FileHandle.standardError.write(Data("bluejay-gateway: \(path): \(error)\n".utf8))
    exit(78)  // EX_CONFIG
}
if check {
    print(configuration)
    exit(0)
}

LoggingSystem.bootstrap { label in
    var handler = StreamLogHandler.standardError(label: label)
    handler.logLevel = configuration.logLevel(verbose: verbose)
    return handler
}
let logger = Logger(label: "bluejay-gateway")
// `transport: mock:FILE` runs the gateway against a recording, without hci0.
VirtualController.enableMockTransport()
let notifier = SystemdNotifier()

// SIGTERM and SIGINT end the service cleanly: offline, disconnect, exit 0. Caught before the
// service starts, so before READY=1: systemd's stop is never lost.
let stopRequests = AsyncStream<Void>.makeStream()
let sources = catchStopSignals([SIGTERM, SIGINT]) {
    notifier.notify("STOPPING=1")
    stopRequests.continuation.yield()
}

let service = Task { @BluetoothActor in
    let gateway = GatewayService(configuration: configuration, logger: logger)
    do {
        try await gateway.run { notifier.notify("READY=1\nSTATUS=serving") }
    } catch {
        logger.critical("cannot open the controller \(configuration.transport): \(error)")
        exit(1)
    }
}
let watchdog = notifier.startWatchdog { @BluetoothActor in true }
Task {
    for await _ in stopRequests.stream {
        service.cancel()
        break
    }
}
Task {
    await service.value
    watchdog?.cancel()
    exit(0)
}
dispatchMain()
