import ArgumentParser
import ATT
import BluetoothCore
import GATT
import HCI
import TraceDecoding

/// `bluejay gatt ADDRESS`: the peer's whole attribute tree.
struct Gatt: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gatt",
        abstract: "Discover a peripheral's whole GATT database and read every readable value.",
        discussion: """
            Prints services, included services, characteristics (handles, properties) and descriptors, \
            with each readable value in hex and, when printable, as text. A value the peer refuses (an ATT \
            error) or that runs past --max-value is printed in its place with the error, and the dump goes on; \
            the exit status is 0 once discovery completed, and non-zero only when the link, the ATT bearer or \
            discovery failed. With --json: {"address", "mtu", \
            "services": [{"uuid", "name", "start_handle", "end_handle", "primary": bool (false: a secondary service, reached through an include), "includes": [{"handle", "uuid", \
            "start_handle", "end_handle"}], "characteristics": [{"uuid", "name", "declaration_handle", \
            "value_handle", "properties": [...], "value": hex|null, "text": string|null, \
            "error": {"code": number|null, "name", "message"}|null, \
            "descriptors": [{"uuid", "name", "handle"}]}]}]}. Handles are numbers; an error's code is the ATT \
            error code when the peer answered with one (name e.g. insufficientEncryption), else null (name e.g. \
            valueLengthLimitExceeded).
            """)

    @OptionGroup var common: CommonOptions
    @OptionGroup var peripheral: PeripheralOptions

    @Flag(name: .long, help: "Print the tree as one JSON object.")
    var json = false

    /// One characteristic with what was found under it.
    struct CharacteristicNode: Sendable {
        var characteristic: Characteristic
        var descriptors: [Descriptor]
        var value: Result<[UInt8], GATTError>?
    }

    /// One service with what was found under it.
    struct ServiceNode: Sendable {
        var service: Service
        var includes: [IncludedService]
        var characteristics: [CharacteristicNode]
    }

    func run() async throws {
        let (tree, mtu) = try await peripheral.withClient(common) { client, _, _ in
            (try await Self.walk(client), client.bearer.mtu)
        }
        if json {
            print(Self.json(tree, address: peripheral.address, mtu: mtu).rendered(indent: 2))
        } else {
            for line in Self.lines(tree) { print(line) }
        }
    }

    /// Every service, include, characteristic and descriptor, and each readable value.
    @BluetoothActor
    static func walk(_ client: GATTClient) async throws(GATTError) -> [ServiceNode] {
        // Discovery is skipped for whatever the client already knows (a validated cache).
        let database = try await client.discoverAll()
        var tree: [ServiceNode] = []
        for service in database.services {
            var characteristics: [CharacteristicNode] = []
            for characteristic in database.characteristics[service.handle] ?? [] {
                var value: Result<[UInt8], GATTError>?
                if characteristic.properties.contains(.read) {
                    do { value = .success(try await client.readLong(characteristic.valueHandle)) } catch {
                        // A value the peer refuses (e.g. insufficientEncryption) or that runs past
                        // the limit is part of the picture; a dead link or bearer is not.
                        guard error.concernsOneValue else { throw error }
                        value = .failure(error)
                    }
                }
                characteristics.append(
                    CharacteristicNode(
                        characteristic: characteristic,
                        descriptors: database.descriptors[characteristic.valueHandle] ?? [],
                        value: value))
            }
            tree.append(
                ServiceNode(
                    service: service, includes: database.includes[service.handle] ?? [],
                    characteristics: characteristics))
        }
        return tree
    }

    static func lines(_ tree: [ServiceNode]) -> [String] {
        var lines: [String] = []
        for node in tree {
            lines.append(node.service.isPrimary ? "Service \(node.service)" : "Secondary Service \(node.service)")
            for include in node.includes {
                lines.append("  Include \(hex(include.declarationHandle, digits: 4)) → \(include.service)")
            }
            for item in node.characteristics {
                let characteristic = item.characteristic
                lines.append(
                    "  Characteristic \(characteristic.uuid.nameAndValue)  handle \(hex(characteristic.declarationHandle, digits: 4)), value \(hex(characteristic.valueHandle, digits: 4)) [\(characteristic.properties)]"
                )
                switch item.value {
                case let .success(value)?: lines.append("    Value: \(describe(value, limit: 32))")
                case let .failure(error)?: lines.append("    Value: unreadable: \(error)")
                case nil: break
                }
                for descriptor in item.descriptors { lines.append("    Descriptor \(descriptor)") }
            }
        }
        return lines
    }

    static func describe(_ value: [UInt8], limit: Int = .max) -> String {
        if value.isEmpty { return "(empty)" }
        // The tree shows the head of a long value; `bluejay read` and --json show all of it.
        let bytes =
            value.count > limit
            ? value[..<limit].hexString(separator: " ") + " … (\(value.count) bytes)" : value.hexString(separator: " ")
        return printable(value).map { "\(bytes)  \"\($0)\"" } ?? bytes
    }

    static func json(_ tree: [ServiceNode], address: String, mtu: Int) -> JSONValue {
        func name(_ uuid: BluetoothUUID) -> JSONValue { uuid.assignedName.map(JSONValue.string) ?? .null }
        let services: [JSONValue] = tree.map { node in
            .object([
                "uuid": .string(node.service.uuid.description), "name": name(node.service.uuid),
                "start_handle": .number(Int(node.service.handle.rawValue)),
                "end_handle": .number(Int(node.service.endGroupHandle.rawValue)),
                "primary": .bool(node.service.isPrimary),
                "includes": .array(
                    node.includes.map { include in
                        .object([
                            "handle": .number(Int(include.declarationHandle.rawValue)),
                            "uuid": .string(include.service.uuid.description),
                            "start_handle": .number(Int(include.service.handle.rawValue)),
                            "end_handle": .number(Int(include.service.endGroupHandle.rawValue)),
                        ])
                    }),
                "characteristics": .array(
                    node.characteristics.map { item in
                        var value = JSONValue.null, text = JSONValue.null, error = JSONValue.null
                        switch item.value {
                        case let .success(bytes)?:
                            value = .string(bytes.hexString())
                            text = printable(bytes).map(JSONValue.string) ?? .null
                        case let .failure(problem)?:
                            error = .object([
                                "code": problem.code.map { .number(Int($0.rawValue)) } ?? .null,
                                "name": .string(problem.name), "message": .string(problem.description),
                            ])
                        case nil: break
                        }
                        return .object([
                            "uuid": .string(item.characteristic.uuid.description),
                            "name": name(item.characteristic.uuid),
                            "declaration_handle": .number(Int(item.characteristic.declarationHandle.rawValue)),
                            "value_handle": .number(Int(item.characteristic.valueHandle.rawValue)),
                            "properties": .array(item.characteristic.properties.names.map(JSONValue.string)),
                            "value": value, "text": text, "error": error,
                            "descriptors": .array(
                                item.descriptors.map { descriptor in
                                    .object([
                                        "uuid": .string(descriptor.uuid.description), "name": name(descriptor.uuid),
                                        "handle": .number(Int(descriptor.handle.rawValue)),
                                    ])
                                }),
                        ])
                    }),
            ])
        }
        return .object(["address": .string(address), "mtu": .number(mtu), "services": .array(services)])
    }
}

extension GATTError {
    /// Whether the error ends one value's read only: the peer refused it (an ATT Error
    /// Response) or the value broke a limit or a rule of its own. A failed link or bearer
    /// ends everything.
    var concernsOneValue: Bool {
        switch self {
        case .att(.errorResponse), .valueLengthLimitExceeded, .invalidResponse: true
        default: false
        }
    }

}
