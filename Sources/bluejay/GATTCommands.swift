import ArgumentParser
import ATT
import GATT
import HCI
import TraceDecoding

/// `bluejay gatt ADDRESS`: the peer's whole attribute tree.
struct Gatt: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Discover a peripheral's whole GATT database and read every readable value.",
        discussion: """
            Prints services, included services, characteristics (handles, properties) and descriptors, \
            with each readable value in hex and, when printable, as text. With --json: {"address", "mtu", \
            "services": [{"uuid", "name", "start_handle", "end_handle", "includes": [{"handle", "uuid", \
            "start_handle", "end_handle"}], "characteristics": [{"uuid", "name", "declaration_handle", \
            "value_handle", "properties": [...], "value": hex|null, "text": string|null, "error": string|null, \
            "descriptors": [{"uuid", "name", "handle"}]}]}]}. Handles are numbers.
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
                        // A refusal (e.g. insufficientEncryption) is part of the picture; a dead link is not.
                        guard case .att(.errorResponse) = error else { throw error }
                        value = .failure(error)
                    }
                }
                characteristics.append(CharacteristicNode(characteristic: characteristic, descriptors: database.descriptors[characteristic.valueHandle] ?? [],
                                                          value: value))
            }
            tree.append(ServiceNode(service: service, includes: database.includes[service.handle] ?? [], characteristics: characteristics))
        }
        return tree
    }

    static func lines(_ tree: [ServiceNode]) -> [String] {
        var lines: [String] = []
        for node in tree {
            lines.append("Service \(node.service)")
            for include in node.includes {
                lines.append("  Include \(hex(include.declarationHandle, digits: 4)) → \(include.service)")
            }
            for item in node.characteristics {
                let characteristic = item.characteristic
                lines.append("  Characteristic \(characteristic.uuid.nameAndValue)  handle \(hex(characteristic.declarationHandle, digits: 4)), value \(hex(characteristic.valueHandle, digits: 4)) [\(characteristic.properties)]")
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
        let bytes = value.count > limit ? value[..<limit].hexString(separator: " ") + " … (\(value.count) bytes)" : value.hexString(separator: " ")
        return printable(value).map { "\(bytes)  \"\($0)\"" } ?? bytes
    }

    static func json(_ tree: [ServiceNode], address: String, mtu: Int) -> JSONValue {
        func name(_ uuid: BluetoothUUID) -> JSONValue { uuid.assignedName.map(JSONValue.string) ?? .null }
        let services: [JSONValue] = tree.map { node in
            .object([
                "uuid": .string(node.service.uuid.description), "name": name(node.service.uuid),
                "start_handle": .number(Int(node.service.handle)), "end_handle": .number(Int(node.service.endGroupHandle)),
                "includes": .array(node.includes.map { include in
                    .object(["handle": .number(Int(include.declarationHandle)), "uuid": .string(include.service.uuid.description),
                             "start_handle": .number(Int(include.service.handle)), "end_handle": .number(Int(include.service.endGroupHandle))])
                }),
                "characteristics": .array(node.characteristics.map { item in
                    var value = JSONValue.null, text = JSONValue.null, error = JSONValue.null
                    switch item.value {
                    case let .success(bytes)?:
                        value = .string(bytes.hexString())
                        text = printable(bytes).map(JSONValue.string) ?? .null
                    case let .failure(problem)?: error = .string(problem.description)
                    case nil: break
                    }
                    return .object([
                        "uuid": .string(item.characteristic.uuid.description), "name": name(item.characteristic.uuid),
                        "declaration_handle": .number(Int(item.characteristic.declarationHandle)),
                        "value_handle": .number(Int(item.characteristic.valueHandle)),
                        "properties": .array(item.characteristic.properties.names.map(JSONValue.string)),
                        "value": value, "text": text, "error": error,
                        "descriptors": .array(item.descriptors.map { descriptor in
                            .object(["uuid": .string(descriptor.uuid.description), "name": name(descriptor.uuid),
                                     "handle": .number(Int(descriptor.handle))])
                        }),
                    ])
                }),
            ])
        }
        return .object(["address": .string(address), "mtu": .number(mtu), "services": .array(services)])
    }
}

/// The SERVICE CHARACTERISTIC pair the value commands take.
struct CharacteristicOptions: ParsableArguments {
    @Argument(help: "The service: 16-bit (180D) or 128-bit UUID.")
    var service: String

    @Argument(help: "The characteristic: 16-bit (2A37) or 128-bit UUID.")
    var characteristic: String

    func validate() throws {
        _ = try parseUUID(service, "SERVICE")
        _ = try parseUUID(characteristic, "CHARACTERISTIC")
    }

    var uuids: (service: BluetoothUUID, characteristic: BluetoothUUID) { (BluetoothUUID(service)!, BluetoothUUID(characteristic)!) }
}

/// `bluejay read ADDRESS SERVICE CHARACTERISTIC`.
struct Read: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Read a characteristic's value (long values in full).",
        discussion: "Finds the service and characteristic by UUID (discovering only those), then reads.")

    @OptionGroup var common: CommonOptions
    @OptionGroup var peripheral: PeripheralOptions
    @OptionGroup var target: CharacteristicOptions

    @Flag(name: .long, help: "Print the value as hex only.")
    var hex = false

    @Flag(name: .long, help: "Print the value as UTF-8 text.")
    var utf8 = false

    func validate() throws {
        guard !(hex && utf8) else { throw ValidationError("--hex and --utf8 exclude each other") }
    }

    func run() async throws {
        let (service, characteristic) = target.uuids
        let value = try await peripheral.withClient(common) { client, _, _ in
            let found = try await client.characteristic(characteristic, in: service)
            return try await client.readLong(found.valueHandle)
        }
        if hex {
            print(value.hexString())
        } else if utf8 {
            print(String(decoding: value, as: UTF8.self))
        } else {
            print(Gatt.describe(value))
        }
    }
}

/// `bluejay write ADDRESS SERVICE CHARACTERISTIC HEXBYTES`.
struct Write: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a characteristic's value.",
        discussion: "A value longer than ATT_MTU - 3 is written with Prepare Write + Execute Write.")

    @OptionGroup var common: CommonOptions
    @OptionGroup var peripheral: PeripheralOptions
    @OptionGroup var target: CharacteristicOptions

    @Argument(help: "The value in hex (0102ff, 01:02:ff).")
    var value: String

    @Flag(name: .long, help: "Write Command: no response, nothing confirms it arrived.")
    var withoutResponse = false

    @Flag(name: .long, help: "Reliable write: prepared, checked against the server's echo, then executed.")
    var reliable = false

    func validate() throws {
        guard let bytes = parseHexBytes(value) else { throw ValidationError("'\(value)' is not hex bytes (e.g. 0102ff)") }
        guard bytes.count <= 512 || !withoutResponse else { throw ValidationError("a Write Command carries at most 512 bytes") }
        guard !(withoutResponse && reliable) else { throw ValidationError("--without-response and --reliable exclude each other") }
    }

    func run() async throws {
        let (service, characteristic) = target.uuids
        let bytes = parseHexBytes(value)!
        let withoutResponse = withoutResponse, reliable = reliable
        let how = try await peripheral.withClient(common) { client, _, _ in
            let found = try await client.characteristic(characteristic, in: service)
            if withoutResponse {
                try client.writeWithoutResponse(found.valueHandle, bytes)
                return "Write Command"
            } else if reliable {
                try await client.reliableWrite([HandleValue(handle: found.valueHandle, value: bytes)])
                return "reliable write"
            } else if bytes.count > client.maximumWriteLength {
                try await client.writeLong(found.valueHandle, bytes)
                return "long write"
            } else {
                try await client.write(found.valueHandle, bytes)
                return "Write Request"
            }
        }
        print("Wrote \(bytes.count) bytes to \(characteristic) (\(how)).")
    }
}

/// `bluejay listen ADDRESS SERVICE CHARACTERISTIC`.
struct Listen: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Subscribe to a characteristic and print each notification or indication.",
        discussion: "One line per value: 'notification|indication HANDLE HEX'. Notifications are used when the characteristic offers both.")

    @OptionGroup var common: CommonOptions
    @OptionGroup var peripheral: PeripheralOptions
    @OptionGroup var target: CharacteristicOptions

    @Option(name: .long, help: "Stop after this many values.")
    var count: Int?

    @Option(name: .long, help: "Stop after this many seconds.")
    var duration: Double?

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        if let duration, duration <= 0 || duration > 86_400 { throw ValidationError("--duration must be between 0 and 86400 seconds") }
    }

    func run() async throws {
        let (service, characteristic) = target.uuids
        let limit = count, duration = duration
        let received = try await peripheral.withClient(common) { client, manager, connection in
            let found = try await client.characteristic(characteristic, in: service)
            let mode: ClientConfiguration = found.properties.contains(.notify) ? .notify : .indicate
            let kind = mode == .notify ? "notification" : "indication"
            let done = Expectation<Result<Int, GATTError>>()
            var seen = 0
            client.addValueListener(found.valueHandle) { value in
                seen += 1
                print("\(kind) \(HCI.hex(found.valueHandle, digits: 4)) \(value.hexString(separator: " "))")
                if let limit, seen >= limit { done.fulfill(.success(seen)) }
            }
            manager.onDisconnection = { link, reason in
                if link.handle == connection.handle { done.fulfill(.failure(.att(.disconnected(reason)))) }
            }
            try await client.setNotifications(mode, for: found)
            let timer = Task { @BluetoothActor in
                guard let duration else { return }
                try? await Task.sleep(for: .milliseconds(Int(duration * 1000)))
                done.fulfill(.success(seen))
            }
            defer { timer.cancel() }
            let count = try await done.value().get()
            try? await client.setNotifications(.none, for: found)
            return count
        }
        printToStandardError("\(received) values received")
    }
}
