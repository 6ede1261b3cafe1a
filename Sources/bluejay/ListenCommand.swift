import ArgumentParser
import ATT
import BluetoothCore
import GATT
import HCI
import TraceDecoding

/// `bluejay listen`.
struct Listen: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "listen",
        abstract: "Subscribe to a characteristic and print each notification or indication.",
        discussion: """
            bluejay listen ADDRESS SERVICE CHARACTERISTIC     notifications when offered, else indications
            bluejay listen ADDRESS --handle H [--cccd H] [--indicate]   the CCCD given, or found after H (Find Information)
            bluejay listen ... --write 0x0029=0105             once subscribed, write to a control point that starts the values
            One line per value: 'notification|indication HANDLE HEX' (with --json: {"type", "handle", "value"}). \
            Indications are confirmed after each line is printed.
            """)

    @OptionGroup var common: CommonOptions
    @OptionGroup var peripheral: PeripheralOptions

    @Argument(help: "SERVICE CHARACTERISTIC: 16-bit (180D) or 128-bit UUIDs.")
    var characteristic: [String] = []

    @OptionGroup var target: AttributeTarget

    @Option(name: .long, help: "With --handle: the Client Characteristic Configuration descriptor's handle.")
    var cccd: String?

    @Flag(name: .long, help: "With --handle: ask for indications instead of notifications.")
    var indicate = false

    @Option(name: .long, help: "Stop after this many values.")
    var count: Int?

    @Option(
        name: .customLong("write"),
        help: ArgumentHelp(
            "Once subscribed, write HEXBYTES to HANDLE (Write Request), in the order given: for peripherals that start sending on a command.",
            valueName: "HANDLE=HEXBYTES"))
    var writes: [String] = []

    @Option(name: .long, help: "Stop after this many seconds.")
    var duration: Double?

    @Flag(name: .long, help: "One JSON object per value.")
    var json = false

    func validate() throws {
        guard characteristic.isEmpty != (target.handle == nil) else {
            throw ValidationError(
                characteristic.isEmpty
                    ? "give SERVICE CHARACTERISTIC or --handle H" : "give SERVICE CHARACTERISTIC or --handle, not both")
        }
        guard characteristic.isEmpty || characteristic.count == 2 else {
            throw ValidationError("give both SERVICE and CHARACTERISTIC")
        }
        _ = try characteristicUUIDs(characteristic)
        _ = try handleOption(target.handle, "--handle")
        _ = try handleOption(cccd, "--cccd")
        if (cccd != nil || indicate) && target.handle == nil {
            throw ValidationError("--cccd and --indicate go with --handle")
        }
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        if let duration, duration <= 0 || duration > 86_400 {
            throw ValidationError("--duration must be between 0 and 86400 seconds")
        }
        _ = try Self.parseWrites(writes)
    }

    /// `--write HANDLE=HEXBYTES` values, in order.
    static func parseWrites(_ texts: [String]) throws -> [(handle: AttributeHandle, value: [UInt8])] {
        try texts.map { text in
            let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, let handle = parseHandle(parts[0]), let value = parseHexBytes(parts[1]),
                !value.isEmpty
            else {
                throw ValidationError("--write '\(text)' is not HANDLE=HEXBYTES (e.g. 0x0029=0105)")
            }
            return (handle, value)
        }
    }

    func run() async throws {
        let uuids = try characteristicUUIDs(characteristic)
        let cccd = try handleOption(cccd, "--cccd")
        let target = target
        let limit = count, duration = duration, indicate = indicate, json = json
        let writes = try Self.parseWrites(writes)
        let received = try await peripheral.withClient(common, discovery: uuids != nil) { client, manager, connection in
            let (handle, found) = try await target.valueHandle(client, service: uuids?.0, characteristic: uuids?.1)
            let mode: ClientConfiguration
            let descriptor: AttributeHandle
            if let found {
                guard !found.properties.isDisjoint(with: [.notify, .indicate]) else {
                    throw GATTError.notPermitted(
                        "characteristic \(found.uuid.nameAndValue) neither notifies nor indicates")
                }
                mode = found.properties.contains(.notify) ? .notify : .indicate
                guard
                    let cccd = try await client.descriptors(of: found).first(where: {
                        $0.uuid == .clientCharacteristicConfiguration
                    })
                else {
                    throw GATTError.descriptorNotFound(.clientCharacteristicConfiguration, characteristic: found.uuid)
                }
                descriptor = cccd.handle
                // A long listen should learn when the peer's database changes under it.
                do { try await client.subscribeToServiceChanged() } catch {
                    common.logger.log(.info, "subscribing to Service Changed: \(error)")
                }
            } else {
                mode = indicate ? .indicate : .notify
                var found = cccd
                if found == nil { found = try await client.clientConfigurationDescriptor(after: handle) }
                guard let cccd = found else {
                    throw CLIError(
                        "no Client Characteristic Configuration descriptor follows \(BluetoothCore.hex(handle, digits: 4)); give it with --cccd"
                    )
                }
                descriptor = cccd
            }
            let done = Expectation<Result<Int, GATTError>>()
            let seen = Counter()
            let output = LineOutput()
            defer { output.flush() }
            let notificationPrefix = "notification \(BluetoothCore.hex(handle, digits: 4)) ",
                indicationPrefix = "indication \(BluetoothCore.hex(handle, digits: 4)) "
            client.onValue = { valueHandle, value, indication in
                guard valueHandle == handle else { return }
                if json {
                    let kind = indication ? "indication" : "notification"
                    output.append(
                        JSONValue.object([
                            "type": .string(kind), "handle": .number(Int(valueHandle.rawValue)),
                            "value": .string(value.hexString()),
                        ]).compact)
                } else {
                    output.appendHexLine(indication ? indicationPrefix : notificationPrefix, value)
                }
                // An indication is confirmed once its line is out.
                if indication { output.flush() }
                seen.value += 1
                if let limit, seen.value >= limit { done.fulfill(.success(seen.value)) }
            }
            manager.onDisconnection = { link, reason in
                if link.handle == connection.handle { done.fulfill(.failure(.att(.disconnected(reason)))) }
            }
            try await client.configure(descriptor, mode)
            for write in writes { try await client.write(write.handle, write.value) }
            let timer = Task { @BluetoothActor in
                guard let duration else { return }
                try? await Task.sleep(for: .milliseconds(Int(duration * 1000)))
                done.fulfill(.success(seen.value))
            }
            defer { timer.cancel() }
            let count = try await done.value().get()
            try? await client.configure(descriptor, .none)
            return count
        }
        printToStandardError("\(received) values received")
    }
}

/// A count shared between a callback and the code that waits on it (both on the stack's actor).
@BluetoothActor
final class Counter {
    var value = 0
}
