import ArgumentParser
import BluetoothCore
import GATT
import HCI
import TraceDecoding

/// `bluejay discover ADDRESS services|secondary|includes|characteristics|descriptors`: one discovery
/// procedure, exactly as asked.
struct Discover: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "discover",
        abstract: "Run one GATT discovery procedure.",
        discussion: """
            bluejay discover ADDRESS services [--uuid UUID]        Discover All Primary Services, or by UUID (Find By Type Value)
            bluejay discover ADDRESS secondary                      Every secondary service (Read By Group Type «Secondary Service»)
            bluejay discover ADDRESS includes --start H --end H     Find Included Services
            bluejay discover ADDRESS characteristics --start H --end H [--uuid UUID]
            bluejay discover ADDRESS descriptors --start H --end H  Discover All Characteristic Descriptors (Find Information)
            With --json, an array: services and secondary {"uuid", "name", "start_handle", "end_handle"}; includes {"handle", "uuid", \
            "start_handle", "end_handle"}; characteristics {"uuid", "name", "declaration_handle", "value_handle", \
            "properties"}; descriptors {"uuid", "name", "handle"}.
            """)

    enum What: String, ExpressibleByArgument, CaseIterable {
        case services, secondary, includes, characteristics, descriptors
    }

    @OptionGroup var common: CommonOptions
    @OptionGroup var peripheral: PeripheralOptions

    @Argument(help: "services, secondary, includes, characteristics or descriptors.")
    var what: What

    @Option(name: .long, help: "Only this UUID (services, characteristics).")
    var uuid: String?

    @Option(name: .long, help: "First handle of the range (includes, characteristics, descriptors).")
    var start: String?

    @Option(name: .long, help: "Last handle of the range.")
    var end: String?

    @Flag(name: .long, help: "Print a JSON array.")
    var json = false

    func validate() throws {
        if let uuid { _ = try parseUUID(uuid, "--uuid") }
        let first = try handleOption(start, "--start"), last = try handleOption(end, "--end")
        switch what {
        case .services, .secondary:
            guard start == nil, end == nil else { throw ValidationError("\(what.rawValue) take no --start/--end") }
            if uuid != nil && what == .secondary {
                throw ValidationError("--uuid goes with services or characteristics")
            }
        case .includes, .characteristics, .descriptors:
            // Any range goes out as given, even one a server must refuse (start 0x0000 or
            // after --end): the server's answer is reported, as conformance tests expect.
            guard first != nil, last != nil else { throw ValidationError("\(what.rawValue) need --start H --end H") }
            if uuid != nil && what != .characteristics {
                throw ValidationError("--uuid goes with services or characteristics")
            }
        }
    }

    func run() async throws {
        let what = what, json = json
        let uuid = try uuid.map { try parseUUID($0, "--uuid") }
        let first = try handleOption(start, "--start") ?? 1, last = try handleOption(end, "--end") ?? 0xFFFF
        // The procedures take a service for its handle range only.
        let group = Service(uuid: BluetoothUUID(UInt16(0)), handle: first, endGroupHandle: last)
        let (lines, items): ([String], [JSONValue]) = try await peripheral.withClient(common, discovery: false) {
            client, _, _ in
            func name(_ uuid: BluetoothUUID) -> JSONValue { uuid.assignedName.map(JSONValue.string) ?? .null }
            switch what {
            case .services, .secondary:
                let services =
                    if what == .secondary { try await client.discoverSecondaryServices() } else if let uuid {
                        try await client.discoverPrimaryServices(uuid: uuid)
                    } else { try await client.discoverPrimaryServices() }
                return (
                    services.map(\.description),
                    services.map {
                        .object([
                            "uuid": .string($0.uuid.description), "name": name($0.uuid),
                            "start_handle": .number(Int($0.handle.rawValue)),
                            "end_handle": .number(Int($0.endGroupHandle.rawValue)),
                        ])
                    }
                )
            case .includes:
                let includes = try await client.findIncludedServices(in: group)
                return (
                    includes.map { "\(BluetoothCore.hex($0.declarationHandle, digits: 4)) → \($0.service)" },
                    includes.map {
                        .object([
                            "handle": .number(Int($0.declarationHandle.rawValue)),
                            "uuid": .string($0.service.uuid.description),
                            "start_handle": .number(Int($0.service.handle.rawValue)),
                            "end_handle": .number(Int($0.service.endGroupHandle.rawValue)),
                        ])
                    }
                )
            case .characteristics:
                let characteristics = try await client.discoverCharacteristics(in: group, uuid: uuid)
                return (
                    characteristics.map { "\(BluetoothCore.hex($0.declarationHandle, digits: 4)) \($0)" },
                    characteristics.map {
                        .object([
                            "uuid": .string($0.uuid.description), "name": name($0.uuid),
                            "declaration_handle": .number(Int($0.declarationHandle.rawValue)),
                            "value_handle": .number(Int($0.valueHandle.rawValue)),
                            "properties": .array($0.properties.names.map(JSONValue.string)),
                        ])
                    }
                )
            case .descriptors:
                let descriptors = try await client.discoverDescriptors(from: first, to: last)
                return (
                    descriptors.map(\.description),
                    descriptors.map {
                        .object([
                            "uuid": .string($0.uuid.description), "name": name($0.uuid),
                            "handle": .number(Int($0.handle.rawValue)),
                        ])
                    }
                )
            }
        }
        if json {
            print(JSONValue.array(items).rendered(indent: 2))
        } else {
            for line in lines { print(line) }
        }
    }
}
