import ArgumentParser
import HCI
import TraceDecoding

/// `bluejay scan`: find advertising peripherals.
struct Scan: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Scan for advertising peripherals.",
        discussion: """
            Prints one row per peripheral (address, type, RSSI, name, services, manufacturer data), \
            or with --json one object per discovery: address, address_type, rssi, tx_power, connectable, \
            name, services, solicited_services, manufacturer_data [{company_id, data}], service_data \
            {uuid: hex}, appearance, flags, scan_response, other [{type, data}], problem.
            """)

    @OptionGroup var common: CommonOptions

    @Option(name: .long, help: "How long to scan, in seconds.")
    var duration: Double = 5

    @Flag(name: .long, help: "Report every advertisement, not one discovery per peripheral.")
    var duplicates = false

    @Flag(name: .long, help: "Passive scan: no scan requests, so no scan responses.")
    var passive = false

    @Option(name: .long, help: "Only peripherals advertising this service UUID (repeatable; 180D or a 128-bit UUID).")
    var service: [String] = []

    @Flag(name: .long, help: "One JSON object per line for each discovery.")
    var json = false

    func validate() throws {
        guard duration > 0, duration <= 86_400 else { throw ValidationError("--duration must be between 0 and 86400 seconds") }
        for text in service where BluetoothUUID(text) == nil {
            throw ValidationError("--service '\(text)' is not a UUID (e.g. 180D or 0000180D-0000-1000-8000-00805F9B34FB)")
        }
    }

    func run() async throws {
        let options = ScanOptions(active: !passive, allowDuplicates: duplicates, services: service.compactMap(BluetoothUUID.init))
        let json = json
        let duration = duration
        if !json { print(Self.header) }
        try await common.withController { controller, _ in
            let scanner = Scanner(controller: controller, logger: common.logger)
            do {
                try await scanner.start(options) { discovery in
                    print(json ? Self.json(discovery) : Self.row(discovery))
                }
                try await Task.sleep(for: .seconds(duration))
                try await scanner.stop()
            } catch let error as HCIError {
                throw CLIError("scan: \(error)")
            }
        }
    }

    static let header = pad("ADDRESS", 18) + pad("TYPE", 8) + pad("RSSI", 6) + pad("NAME", 20) + pad("SERVICES", 30) + "MANUFACTURER"

    static func row(_ discovery: Discovery) -> String {
        let data = discovery.advertisement
        let manufacturer = data.manufacturerData.map { "\(hex($0.companyIdentifier, digits: 4)):\($0.data.hexString())" }
        return pad(discovery.address.description, 18) + pad(discovery.addressType.description, 8)
            + pad(discovery.rssi.map(String.init) ?? "-", 6) + pad(data.localName ?? "-", 20)
            + pad(data.serviceUUIDs.map(\.description).joined(separator: ","), 30) + manufacturer.joined(separator: ",")
    }

    static func json(_ discovery: Discovery) -> String {
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
        return "{" + fields.joined(separator: ", ") + "}"
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }
}
