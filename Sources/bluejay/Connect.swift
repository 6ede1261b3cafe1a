import ArgumentParser
import Bluejay
import BluetoothCore
import GAP
import HCI

/// `bluejay connect ADDRESS`: connect, show the link, disconnect.
struct Connect: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "connect",
        abstract: "Connect to a peripheral, print the connection's parameters, then disconnect.",
        discussion:
            "ADDRESS is AA:BB:CC:DD:EE:FF with an optional /random or /public (default: the type seen in a short scan, else public)."
    )

    @OptionGroup var common: CommonOptions

    @Argument(help: "The peripheral: AA:BB:CC:DD:EE:FF[/random|/public].")
    var address: String

    @Option(name: .long, help: "Give up (and cancel the attempt) after this many seconds.")
    var timeout: Double = 10

    func validate() throws {
        guard Self.parse(address) != nil else {
            throw ValidationError(
                "'\(address)' is not an address: expected AA:BB:CC:DD:EE:FF, optionally with /random or /public")
        }
        guard timeout > 0, timeout <= 3600 else {
            throw ValidationError("--timeout must be between 0 and 3600 seconds")
        }
    }

    /// ADDRESS[/random|/public]: the address, and the type when given (else nil: a short scan finds it).
    static func parse(_ text: String) -> (BluetoothAddress, AddressType?)? {
        guard let (address, type) = try? BluetoothAddress.parse(typed: text) else { return nil }
        return (address, type)
    }

    func run() async throws {
        let (address, givenType) = Self.parse(address)!
        let timeout = timeout
        let lines: [String] = try await common.withHost { host in
            let type: AddressType
            if let givenType {
                type = givenType
            } else {
                type = try await Self.typeFromScan(address, controller: host.controller, logger: common.logger)
            }
            let manager = host.connections
            do {
                let connection = try await manager.connect(
                    to: address, type: type, timeout: .milliseconds(Int(timeout * 1000)))
                let rssi = try? await manager.readRSSI(connection.handle)
                let current = manager.connections[connection.handle] ?? connection
                let reason = try await manager.disconnect(connection.handle)
                return Self.describe(current, type: type, rssi: rssi) + ["Disconnected:        \(reason)"]
            } catch let error as ConnectionError {
                throw CLIError("connect \(address)/\(type): \(error)")
            }
        }
        for line in lines { print(line) }
    }

    /// The address type the peripheral advertises with, from a scan of up to two seconds;
    /// public when it is not seen.
    @BluetoothActor
    static func typeFromScan(_ address: BluetoothAddress, controller: HCIController, logger: HCILogger) async throws
        -> AddressType
    {
        let scanner = Scanner(controller: controller, logger: logger)
        let found = Expectation<AddressType>()
        try await scanner.start(ScanOptions(active: false)) { discovery in
            if discovery.address == address { found.fulfill(discovery.addressType) }
        }
        let giveUp = Task { @BluetoothActor in
            try? await Task.sleep(for: .seconds(2))
            found.fulfill(.public)
        }
        let type = await found.value()
        giveUp.cancel()
        try await scanner.stop()
        return type
    }

    static func describe(_ connection: LEConnection, type: AddressType, rssi: Int8?) -> [String] {
        func phy(_ value: UInt8) -> String { [1: "1M", 2: "2M", 3: "Coded"][value] ?? "unknown (\(value))" }
        return [
            "Connected to:        \(connection.peerAddress)/\(type)",
            "Handle:              \(hex(connection.handle, digits: 4))",
            "Role:                \(connection.role == 0 ? "central" : "peripheral")",
            "Interval:            \(Double(connection.parameters.interval) * 1.25) ms",
            "Latency:             \(connection.parameters.latency)",
            "Supervision timeout: \(Int(connection.parameters.supervisionTimeout) * 10) ms",
            "PHY:                 TX \(phy(connection.txPHY)), RX \(phy(connection.rxPHY))",
            "Data length:         TX \(connection.maxTxOctets) bytes, RX \(connection.maxRxOctets) bytes",
            "RSSI:                \(rssi.map { $0 == 127 ? "unavailable" : "\($0) dBm" } ?? "unavailable")",
        ]
    }
}
