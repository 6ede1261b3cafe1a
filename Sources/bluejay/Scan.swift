import ArgumentParser
import BluetoothCore
import GAP
import HCI
import SMP
import TraceDecoding

#if canImport(Glibc)
    import Glibc
#endif

/// `bluejay scan`: find advertising peripherals.
struct Scan: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Scan for advertising peripherals.",
        discussion: """
            Prints one row per peripheral (address, type, RSSI, name, services, manufacturer data), \
            or with --json one object per discovery: address, address_type, rssi, tx_power, connectable, \
            name, services, solicited_services, manufacturer_data [{company_id, data}], service_data \
            {uuid: hex}, appearance, flags, scan_response, other [{type, data}], problem, bonded \
            (the identity address of a bonded peer this address is, resolved with its IRK, or null). \
            On a terminal (and without --json) the table is redrawn in place and kept current: \
            every advertisement is reported to it, so a row's RSSI and name follow the peripheral. \
            When standard output is not a terminal, one row is printed per discovery.
            """)

    @OptionGroup var common: CommonOptions

    @Option(name: .long, help: "How long to scan, in seconds.")
    var duration: Double = 5

    @Option(
        name: .long,
        help:
            "Stop after this many discoveries, before --duration ends (a scan bounded by what it finds, not by time: e.g. to replay it)."
    )
    var count: Int?

    @Flag(name: .long, help: "Report every advertisement, not one discovery per peripheral.")
    var duplicates = false

    @Flag(name: .long, help: "Passive scan: no scan requests, so no scan responses.")
    var passive = false

    @Option(name: .long, help: "Only peripherals advertising this service UUID (repeatable; 180D or a 128-bit UUID).")
    var service: [String] = []

    @Flag(name: .long, help: "One JSON object per line for each discovery.")
    var json = false

    func validate() throws {
        guard duration > 0, duration <= 86_400 else {
            throw ValidationError("--duration must be between 0 and 86400 seconds")
        }
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        for text in service where BluetoothUUID(text) == nil {
            throw ValidationError(
                "--service '\(text)' is not a UUID (e.g. 180D or 0000180D-0000-1000-8000-00805F9B34FB)")
        }
    }

    func run() async throws {
        let json = json
        let live = !json && isatty(STDOUT_FILENO) == 1
        // The live table collapses repeats into rows, so it wants every advertisement.
        let options = ScanOptions(
            active: !passive, allowDuplicates: duplicates || live, services: service.compactMap(BluetoothUUID.init))
        let duration = duration, limit = count
        let width = live ? LiveTable<String>.terminalWidth() : nil
        // Bonded peers are recognised behind their rotating private addresses (IRK).
        let bonds = BondStore(store: .standard).all()
        let bonded = { (discovery: Discovery) in
            bonds.first { $0.matches(discovery.address, discovery.addressType) }.map {
                "\($0.address)/\($0.addressType)"
            }
        }
        if !json { print(LiveTable<String>.fit(Self.header, width: width)) }
        try await common.withController { controller, _ in
            let scanner = Scanner(controller: controller, logger: common.logger)
            var table = LiveTable<String>(width: width)
            var shown: [String: Discovery] = [:]
            let enough = Expectation<Void>()
            var seen = 0
            do {
                try await scanner.start(options) { discovery in
                    // Past --count, what is still on its way before the scan stops is not shown.
                    guard !enough.isFulfilled else { return }
                    seen += 1
                    if let limit, seen >= limit { enough.fulfill(()) }
                    guard live else {
                        print(
                            json
                                ? Self.json(discovery, bonded: bonded(discovery))
                                : Self.row(discovery, bonded: bonded(discovery)))
                        return
                    }
                    let key = "\(discovery.address)/\(discovery.addressType)"
                    let current = Self.merge(shown[key], discovery)
                    shown[key] = current
                    if let text = table.update(key, Self.row(current, bonded: bonded(current))) {
                        print(text, terminator: "")
                        flushStandardOutput()
                    }
                }
                let timer = Task { @BluetoothActor in
                    try? await Task.sleep(for: .seconds(duration))
                    enough.fulfill(())
                }
                await enough.value()
                timer.cancel()
                try await scanner.stop()
            } catch let error as HCIError {
                throw CLIError("scan: \(error)")
            }
        }
    }

    /// What the live table shows for a peripheral: the latest discovery, except that one
    /// without a scan response (it missed this time, or the scan is passive) keeps the
    /// name and services an earlier scan response brought, with the new RSSI.
    static func merge(_ previous: Discovery?, _ next: Discovery) -> Discovery {
        guard let previous, previous.hasScanResponse, !next.hasScanResponse else { return next }
        var merged = previous
        merged.rssi = next.rssi
        return merged
    }

    static let header =
        pad("ADDRESS", 18) + pad("TYPE", 8) + pad("RSSI", 6) + pad("NAME", 20) + pad("SERVICES", 30) + "MANUFACTURER"

    static func row(_ discovery: Discovery, bonded: String? = nil) -> String {
        let data = discovery.advertisement
        let manufacturer = data.manufacturerData.map {
            "\(hex($0.companyIdentifier, digits: 4)):\($0.data.hexString())"
        }
        // In two typed parts: Swift 6.0's type checker gave up on the whole sum.
        let columns: String =
            pad(discovery.address.description, 18) + pad(discovery.addressType.description, 8)
            + pad(discovery.rssi.map(String.init) ?? "-", 6) + pad(data.localName ?? "-", 20)
        let rest: String =
            pad(data.serviceUUIDs.map(\.description).joined(separator: ","), 30) + manufacturer.joined(separator: ",")
            + (bonded.map { "  bonded: \($0)" } ?? "")
        return columns + rest
    }

    static func json(_ discovery: Discovery, bonded: String? = nil) -> String {
        let data = discovery.advertisement
        func string(_ text: String) -> String { JSONValue.quote(text) }
        func hexString(_ bytes: [UInt8]) -> String { string(bytes.hexString()) }
        var fields = [
            "\"address\": \(string(discovery.address.description))",
            "\"address_type\": \(string(discovery.addressType.description))",
            "\"rssi\": \(discovery.rssi.map(String.init) ?? "null")",
            "\"tx_power\": \((data.txPowerLevel ?? discovery.txPower).map(String.init) ?? "null")",
            "\"connectable\": \(discovery.connectable)",
            "\"name\": \(data.localName.map(string) ?? "null")",
            "\"services\": [\(data.serviceUUIDs.map { string($0.description) }.joined(separator: ", "))]",
            "\"solicited_services\": [\(data.solicitedServiceUUIDs.map { string($0.description) }.joined(separator: ", "))]",
            "\"manufacturer_data\": [\(data.manufacturerData.map { "{\"company_id\": \($0.companyIdentifier), \"data\": \(hexString($0.data))}" }.joined(separator: ", "))]",
            "\"service_data\": {\(data.serviceData.sorted { $0.key.description < $1.key.description }.map { "\(string($0.key.description)): \(hexString($0.value))" }.joined(separator: ", "))}",
            "\"appearance\": \(data.appearance.map(String.init) ?? "null")",
            "\"flags\": \(data.flags.map(String.init) ?? "null")",
            "\"scan_response\": \(discovery.hasScanResponse)",
            "\"other\": [\(data.otherStructures.map { "{\"type\": \($0.type), \"data\": \(hexString($0.data))}" }.joined(separator: ", "))]",
        ]
        fields.append("\"problem\": \(data.problem.map { string($0.description) } ?? "null")")
        fields.append("\"bonded\": \(bonded.map(string) ?? "null")")
        return "{" + fields.joined(separator: ", ") + "}"
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }
}
