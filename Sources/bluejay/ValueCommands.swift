import ArgumentParser
import ATT
import BluetoothCore
import GAP
import GATT
import HCI
import SMP
import TraceDecoding

/// What a value command works on: a characteristic by SERVICE CHARACTERISTIC UUIDs (found
/// by lazy discovery), or an attribute by `--handle` (nothing discovered).
struct AttributeTarget: ParsableArguments {
    @Option(name: .long, help: "The attribute handle (decimal or 0x-hex); nothing is discovered.")
    var handle: String?

    /// The characteristic's value handle: by `--handle`, or by its UUIDs through discovery.
    @BluetoothActor
    func valueHandle(_ client: GATTClient, service: BluetoothUUID?, characteristic: BluetoothUUID?) async throws -> (
        AttributeHandle, Characteristic?
    ) {
        if let handle = try handleOption(handle, "--handle") { return (handle, nil) }
        guard let service, let characteristic else { throw CLIError("give SERVICE CHARACTERISTIC or --handle") }
        let found = try await client.characteristic(characteristic, in: service)
        return (found.valueHandle, found)
    }
}

/// Splits positional arguments into SERVICE CHARACTERISTIC (UUIDs) and the rest.
func characteristicUUIDs(_ arguments: [String]) throws -> (BluetoothUUID, BluetoothUUID)? {
    guard arguments.count >= 2 else { return nil }
    return (try parseUUID(arguments[0], "SERVICE"), try parseUUID(arguments[1], "CHARACTERISTIC"))
}

/// Hex plus text when printable, or as asked.
func format(_ value: [UInt8], hexOnly: Bool, utf8: Bool) -> String {
    if hexOnly { return value.hexString() }
    if utf8 { return String(decoding: value, as: UTF8.self) }
    return Gatt.describe(value)
}

/// `bluejay read`.
struct Read: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "read",
        abstract: "Read a value: by SERVICE CHARACTERISTIC, by --handle, by --uuid, or several by --handles.",
        discussion: """
            bluejay read ADDRESS SERVICE CHARACTERISTIC      finds the characteristic by UUID, reads it whole (Read + Read Blob)
            bluejay read ADDRESS --handle H [--long] [--offset N]   Read (or one Read Blob at --offset); --long: Read + Read Blob to the end
            bluejay read ADDRESS --uuid UUID [--start H --end H]    Read Using Characteristic UUID (Read By Type)
            bluejay read ADDRESS --handles H1,H2,… [--variable]     Read Multiple (Variable Length)
            bluejay read ADDRESS ... --each-line      stays up: for each line on standard input, connects, reads, \
            prints the value and disconnects, then says "disconnected" on standard error (the controller is started \
            once, as an app that stays up reconnects); ends with the input.
            With --json: {"handle", "value", "text"}, or {"values": [{"handle", "value"}]} for --uuid, \
            or {"handles", "value"} / {"handles", "values"} for --handles.
            """)

    @OptionGroup var common: CommonOptions
    @OptionGroup var peripheral: PeripheralOptions

    @Argument(help: "SERVICE CHARACTERISTIC: 16-bit (180D) or 128-bit UUIDs.")
    var characteristic: [String] = []

    @OptionGroup var target: AttributeTarget

    @Flag(name: .long, help: "With --handle: Read, then Read Blob until the value ends.")
    var long = false

    @Option(name: .long, help: "With --handle: start at this offset (Read Blob).")
    var offset: UInt16 = 0

    @Option(name: .long, help: "Read Using Characteristic UUID: every attribute of this type in --start…--end.")
    var uuid: String?

    @Option(name: .long, help: "First handle for --uuid (default 0x0001).")
    var start: String?

    @Option(name: .long, help: "Last handle for --uuid (default 0xFFFF).")
    var end: String?

    @Option(name: .long, help: "Read Multiple: comma-separated handles (the specification asks for two or more).")
    var handles: String?

    @Flag(name: .long, help: "With --handles: Read Multiple Variable Length.")
    var variable = false

    @Flag(name: .long, help: "Print the value as hex only.")
    var hex = false

    @Flag(name: .long, help: "Print the value as UTF-8 text.")
    var utf8 = false

    @Flag(name: .long, help: "Print JSON.")
    var json = false

    @Flag(name: .long, help: "Stay up: connect, read and disconnect once for each line of standard input.")
    var eachLine = false

    func validate() throws {
        let modes = [
            characteristic.isEmpty ? 0 : 1, target.handle == nil ? 0 : 1, uuid == nil ? 0 : 1, handles == nil ? 0 : 1,
        ].reduce(0, +)
        guard modes == 1 else {
            throw ValidationError("give exactly one of: SERVICE CHARACTERISTIC, --handle, --uuid, --handles")
        }
        guard characteristic.isEmpty || characteristic.count == 2 else {
            throw ValidationError("give both SERVICE and CHARACTERISTIC")
        }
        _ = try characteristicUUIDs(characteristic)
        _ = try handleOption(target.handle, "--handle")
        if let uuid { _ = try parseUUID(uuid, "--uuid") }
        // Any range goes out as given (start 0x0000 or after --end too): the server answers.
        _ = (try handleOption(start, "--start"), try handleOption(end, "--end"))
        if (start != nil || end != nil) && uuid == nil { throw ValidationError("--start and --end go with --uuid") }
        if (long || offset > 0) && target.handle == nil {
            throw ValidationError("--long and --offset go with --handle")
        }
        if variable && handles == nil { throw ValidationError("--variable goes with --handles") }
        if let handles {
            let parsed = handles.split(separator: ",").map { parseHandle(String($0).trimmingSpaces) }
            // The specification asks for two or more; one still goes out, and the server answers.
            guard !parsed.isEmpty, parsed.allSatisfy({ $0 != nil }) else {
                throw ValidationError("--handles wants comma-separated handles (decimal or 0x-hex), got '\(handles)'")
            }
        }
        guard !(hex && utf8) else { throw ValidationError("--hex and --utf8 exclude each other") }
    }

    func run() async throws {
        let uuids = try characteristicUUIDs(characteristic)
        let handle = try handleOption(target.handle, "--handle")
        let uuid = try uuid.map { try parseUUID($0, "--uuid") }
        let first = try handleOption(start, "--start") ?? 1, last = try handleOption(end, "--end") ?? 0xFFFF
        let list = handles?.split(separator: ",").compactMap { parseHandle(String($0).trimmingSpaces) }
        let long = long, offset = offset, variable = variable, json = json, hexOnly = hex, utf8 = utf8
        let target = target
        let read:
            @BluetoothActor (GATTClient, ConnectionManager, LEConnection, SecurityManager) async throws -> [String] = {
                client, _, _, _ in
                if let list {
                    if variable {
                        let values = try await client.readMultipleVariable(list)
                        if json {
                            return [
                                JSONValue.object([
                                    "handles": .array(list.map { .number(Int($0.rawValue)) }),
                                    "values": .array(values.map { .string($0.hexString()) }),
                                ]).compact
                            ]
                        }
                        return zip(list, values).map {
                            "\(BluetoothCore.hex($0, digits: 4)): \(format($1, hexOnly: hexOnly, utf8: utf8))"
                        }
                    }
                    let value = try await client.readMultiple(list)
                    if json {
                        return [
                            JSONValue.object([
                                "handles": .array(list.map { .number(Int($0.rawValue)) }),
                                "value": .string(value.hexString()),
                            ]).compact
                        ]
                    }
                    return [format(value, hexOnly: hexOnly, utf8: utf8)]
                }
                if let uuid {
                    let values = try await client.read(uuid: uuid, from: first, to: last)
                    if json {
                        return [
                            JSONValue.object([
                                "values": .array(
                                    values.map {
                                        .object([
                                            "handle": .number(Int($0.handle.rawValue)),
                                            "value": .string($0.value.hexString()),
                                        ])
                                    })
                            ]).compact
                        ]
                    }
                    return values.map {
                        "\(BluetoothCore.hex($0.handle, digits: 4)): \(format($0.value, hexOnly: hexOnly, utf8: utf8))"
                    }
                }
                let value: [UInt8]
                let valueHandle: AttributeHandle
                if let handle {
                    valueHandle = handle
                    if long {
                        value = try await client.readLong(handle, offset: offset)
                    } else if offset > 0 {
                        value = try await client.readBlob(handle, offset: offset)
                    } else {
                        value = try await client.read(handle)
                    }
                } else {
                    (valueHandle, _) = try await target.valueHandle(client, service: uuids?.0, characteristic: uuids?.1)
                    value = try await client.readLong(valueHandle)
                }
                if json {
                    return [
                        JSONValue.object([
                            "handle": .number(Int(valueHandle.rawValue)), "value": .string(value.hexString()),
                            "text": printable(value).map(JSONValue.string) ?? .null,
                        ]).compact
                    ]
                }
                return [format(value, hexOnly: hexOnly, utf8: utf8)]
            }
        let (peripheral, common) = (peripheral, common)
        // Out as soon as read: the link's end (and for one read, the cache's save and the
        // controller's close) follow, and a script waits for the value, not for them. A closure,
        // not a local function: Swift 6.0 takes a local function as not Sendable.
        let readAndPrint:
            @BluetoothActor (GATTClient, ConnectionManager, LEConnection, SecurityManager) async throws -> Void =
                { client, manager, link, security in
                    for line in try await read(client, manager, link, security) { print(line) }
                    flushStandardOutput()
                }
        guard eachLine else {
            try await peripheral.withSecuredClient(common, discovery: uuids != nil, readAndPrint)
            return
        }
        try await peripheral.withPeripheralHost(common, discovery: uuids != nil) { host, type in
            while await standardInputLine() != nil {
                try await peripheral.connectSecured(
                    host, type: type, common: common, discovery: uuids != nil, readAndPrint)
                // The link is down: what a script waits for before it asks again.
                printToStandardError("disconnected")
            }
        }
    }
}

/// `bluejay write`.
struct Write: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "write",
        abstract: "Write a value: by SERVICE CHARACTERISTIC or by --handle.",
        discussion: """
            bluejay write ADDRESS SERVICE CHARACTERISTIC HEXBYTES   Write Request (Prepare/Execute when longer than ATT_MTU - 3)
            bluejay write ADDRESS --handle H HEXBYTES [--without-response | --signed | --long [--offset N] | --reliable]
            Write Request, Write Command, Signed Write Command, Prepare Write + Execute Write, or a reliable \
            write (each prepared part checked against the server's echo; on a mismatch the queue is cancelled).
            """)

    @OptionGroup var common: CommonOptions
    @OptionGroup var peripheral: PeripheralOptions

    @Argument(help: "SERVICE CHARACTERISTIC HEXBYTES, or HEXBYTES alone with --handle.")
    var arguments: [String] = []

    @OptionGroup var target: AttributeTarget

    @Flag(name: .long, help: "Write Command: no response, nothing confirms it arrived.")
    var withoutResponse = false

    @Flag(name: .long, help: "Signed Write Command (needs the bond's CSRK).")
    var signed = false

    @Flag(name: .long, help: "With --handle: Prepare Write + Execute Write.")
    var long = false

    @Option(name: .long, help: "With --long: the offset of the first byte.")
    var offset: UInt16 = 0

    @Flag(name: .long, help: "Reliable write: prepared, checked against the server's echo, then executed.")
    var reliable = false

    @Flag(name: .long, help: "Print JSON: {\"handle\", \"bytes\", \"procedure\"}.")
    var json = false

    var hexText: String? { arguments.last }

    func validate() throws {
        guard arguments.count == (target.handle == nil ? 3 : 1) else {
            throw ValidationError(
                target.handle == nil
                    ? "give SERVICE CHARACTERISTIC HEXBYTES (or --handle H HEXBYTES)"
                    : "with --handle, give only HEXBYTES")
        }
        _ = try characteristicUUIDs(arguments)
        _ = try handleOption(target.handle, "--handle")
        guard let text = hexText, parseHexBytes(text) != nil else {
            throw ValidationError("'\(hexText ?? "")' is not hex bytes (e.g. 0102ff)")
        }
        guard [withoutResponse, signed, long, reliable].filter({ $0 }).count <= 1 else {
            throw ValidationError("--without-response, --signed, --long and --reliable exclude each other")
        }
        if offset > 0 && !long { throw ValidationError("--offset goes with --long") }
        if long && target.handle == nil {
            throw ValidationError("--long goes with --handle (by UUID, long values are written long on their own)")
        }
    }

    func run() async throws {
        if signed {
            // Refused before connecting: nothing would be sent but the MTU exchange.
            throw CLIError(
                "a Signed Write Command needs the bond's CSRK, and pairing (the Security Manager) is not implemented yet"
            )
        }
        let uuids = try characteristicUUIDs(arguments)
        let bytes = parseHexBytes(hexText!)!
        let target = target
        let withoutResponse = withoutResponse, long = long, offset = offset, reliable = reliable
        let (handle, procedure) = try await peripheral.withClient(common, discovery: uuids != nil) { client, _, _ in
            let (handle, _) = try await target.valueHandle(client, service: uuids?.0, characteristic: uuids?.1)
            if withoutResponse {
                try client.writeWithoutResponse(handle, bytes)
                return (handle, "Write Command")
            } else if reliable {
                try await client.reliableWrite([HandleValue(handle: handle, value: bytes)])
                return (handle, "reliable write")
            } else if long || (uuids != nil && bytes.count > client.maximumWriteLength) {
                try await client.writeLong(handle, bytes, offset: offset)
                return (handle, "long write")
            } else {
                try await client.write(handle, bytes)
                return (handle, "Write Request")
            }
        }
        if json {
            print(
                JSONValue.object([
                    "handle": .number(Int(handle.rawValue)), "bytes": .number(bytes.count),
                    "procedure": .string(procedure),
                ]).compact)
        } else {
            print("Wrote \(bytes.count) bytes to \(BluetoothCore.hex(handle, digits: 4)) (\(procedure)).")
        }
    }
}

extension String {
    var trimmingSpaces: String { String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()) }
}
