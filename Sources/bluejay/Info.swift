import ArgumentParser
import BluetoothCore
import HCI

/// `bluejay info`: bring the controller up and say what it is.
struct Info: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show the controller's version, manufacturer, address, LE features and buffers.")

    @OptionGroup var common: CommonOptions

    @Flag(name: .long, help: "Print JSON instead of text.")
    var json = false

    func run() async throws {
        let spec = try common.transportSpec()
        let lines = try await common.withController { _, info in
            json ? [Self.json(info, transport: spec.description)] : Self.text(info, transport: spec.description)
        }
        for line in lines { print(line) }
    }

    static func text(_ info: ControllerInfo, transport: String) -> [String] {
        var lines = [
            "Transport:          \(transport)",
            "Address:            \(info.address)",
            "HCI version:        \(info.coreVersion) (\(hex(info.version.hciVersion, digits: 2))), revision \(hex(info.version.hciSubversion, digits: 4))",
            "LMP/LL version:     \(ControllerInfo.coreVersionName(info.version.lmpVersion)) (\(hex(info.version.lmpVersion, digits: 2))), subversion \(hex(info.version.lmpSubversion, digits: 4))",
            "Manufacturer:       \(info.manufacturer) (\(hex(info.version.companyIdentifier, digits: 4)))",
            "ACL buffers:        \(info.aclBuffers)",
        ]
        if let iso = info.isoBuffers { lines.append("ISO buffers:        \(iso)") }
        if let length = info.maximumDataLength {
            lines.append(
                "Max data length:    TX \(length.supportedMaxTxOctets) bytes / \(length.supportedMaxTxTime) µs, RX \(length.supportedMaxRxOctets) bytes / \(length.supportedMaxRxTime) µs"
            )
        }
        lines.append("Supported commands: \(info.supportedCommands.count)")
        lines.append("LE features:        \(hex(info.leFeatures.rawValue, digits: 16))")
        lines += info.leFeatures.names.map { "  \($0)" }
        return lines
    }

    static func json(_ info: ControllerInfo, transport: String) -> String {
        func buffers(_ size: ControllerInfo.BufferSize) -> String {
            "{\"length\": \(size.length), \"count\": \(size.count), \"source\": \"\(size.source.name)\"}"
        }
        var fields = [
            "\"transport\": \"\(transport)\"",
            "\"address\": \"\(info.address)\"",
            "\"hci_version\": \(info.version.hciVersion)",
            "\"hci_revision\": \(info.version.hciSubversion)",
            "\"lmp_version\": \(info.version.lmpVersion)",
            "\"lmp_subversion\": \(info.version.lmpSubversion)",
            "\"core_version\": \"\(info.coreVersion)\"",
            "\"company_id\": \(info.version.companyIdentifier)",
            "\"manufacturer\": \"\(info.manufacturer)\"",
            "\"acl_buffers\": \(buffers(info.aclBuffers))",
            "\"supported_commands\": \(info.supportedCommands.count)",
            "\"le_features\": [\(info.leFeatures.names.map { "\"\($0)\"" }.joined(separator: ", "))]",
        ]
        if let iso = info.isoBuffers { fields.append("\"iso_buffers\": \(buffers(iso))") }
        if let length = info.maximumDataLength {
            fields.append(
                "\"max_data_length\": {\"tx_octets\": \(length.supportedMaxTxOctets), \"tx_time\": \(length.supportedMaxTxTime), \"rx_octets\": \(length.supportedMaxRxOctets), \"rx_time\": \(length.supportedMaxRxTime)}"
            )
        }
        return "{" + fields.joined(separator: ", ") + "}"
    }
}
