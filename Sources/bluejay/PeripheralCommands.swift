import ArgumentParser
import Bluejay
import BluetoothCore
import Dispatch
import FoundationEssentials
import GAP
import GATT
import HCI

#if canImport(Glibc)
    import Glibc
#endif

/// `bluejay advertise`: be a peripheral that only advertises (and takes connections to the
/// stack's own GAP/GATT services).
struct Advertise: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "advertise",
        abstract: "Advertise as a peripheral until interrupted (or for --duration seconds).",
        discussion: """
            The advertisement carries the flags, the --service UUIDs and the name, shared out between \
            the advertising data and the scan response (a name that fits neither is shortened); \
            --data appends raw AD structures. Prints one line when advertising starts (the command set \
            the controller got: legacy or extended) and one per central that connects or leaves; \
            advertising resumes after a central leaves. With --address static, private or a static random \
            address, a line "advertising address ADDRESS (KIND random)" follows, and again for each new \
            private address.
            """)

    @OptionGroup var common: CommonOptions

    @OptionGroup var addresses: AddressOptions

    @Option(name: .long, help: "The local name to advertise (and the GAP Device Name).")
    var name: String

    @Option(name: .long, help: "A service UUID to advertise (repeatable; 180D or a 128-bit UUID).")
    var service: [String] = []

    @Option(name: .long, help: "More AD structures, as hex bytes (length, type, data, …).")
    var data: String?

    @Option(name: .long, help: "connectable (default), scannable or nonconnectable.")
    var kind: String = AdvertisingKind.connectable.rawValue

    @Option(name: .long, help: "The advertising interval in milliseconds (20–10240).")
    var interval: Double = 100

    @Option(name: .long, help: "Stop after this many seconds (default: until Ctrl-C).")
    var duration: Double?

    func validate() throws {
        for text in service where BluetoothUUID(text) == nil {
            throw ValidationError("--service '\(text)' is not a UUID")
        }
        if let data {
            guard let bytes = parseHexBytes(data) else { throw ValidationError("--data '\(data)' is not hex bytes") }
            if let problem = AdvertisingData(parsing: bytes).problem { throw ValidationError("--data: \(problem)") }
        }
        guard AdvertisingKind(rawValue: kind) != nil else {
            throw ValidationError("--kind is connectable, scannable or nonconnectable")
        }
        guard interval >= 20, interval <= 10_240 else { throw ValidationError("--interval must be 20–10240 ms") }
        if let duration, duration <= 0 { throw ValidationError("--duration must be positive") }
    }

    /// The advertisement the options describe.
    var advertisement: Advertisement {
        Advertisement(
            localName: name, serviceUUIDs: service.compactMap(BluetoothUUID.init),
            otherStructures: data.flatMap(parseHexBytes).map { AdvertisingData(parsing: $0).structures } ?? [])
    }

    /// The parameters the options describe.
    var parameters: AdvertisingParameters {
        let units = UInt32((interval / 0.625).rounded())
        return AdvertisingParameters(
            kind: AdvertisingKind(rawValue: kind) ?? .connectable, intervalMin: units, intervalMax: units)
    }

    func run() async throws {
        let transport = try common.transportText()
        let advertisement = advertisement, parameters = parameters, name = name, duration = duration,
            addresses = addresses
        let logger = common.logger, capture = common.capture
        try await PeripheralSession.run(
            transport: transport, name: name, capture: capture, logger: logger, duration: duration,
            addresses: addresses
        ) { manager in
            var chosen = parameters
            chosen.ownAddress = addresses.ownAddress(for: manager)
            try await manager.startAdvertising(advertisement, parameters: chosen)
        }
    }
}

/// `bluejay serve DB.json`: a GATT server from a JSON file, advertised.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve a GATT database from a JSON file, advertising it, until interrupted.",
        discussion: """
            DB.json: {"name": "Thermometer", "appearance": 0, "advertise": ["181A"], "services": [{"uuid": "181A", \
            "primary": true, "characteristics": [{"uuid": "2A6E", "properties": ["read", "notify"], "value": "0000" \
            (hex) or "text": "…", "permissions": ["readEncrypted", …] (default: from the properties), \
            "notify": {"every": 1.0, "values": ["0001", "0002"]}, "flood": true, "descriptors": [{"uuid": "2901", "text": "…"}]}]}]}. \
            "advertise" lists the service UUIDs advertised (default: the primary services'). A characteristic with \
            "notify" sends its values in turn on that timer to every subscribed central (indications when it \
            indicates). A characteristic with "flood": true notifies back to back while a central is subscribed, as fast \
            as the link takes the values (each a 4-octet little-endian counter, then the characteristic's value), and \
            prints how many it sent when the central stops. Lines "UUID HEX" on standard input set a value and send it to the subscribers. Prints one \
            line per central that connects, leaves, subscribes or writes. \
            Any database can be described: "handle" on a service, include, characteristic or descriptor, \
            "value_handle", a service's "end_handle", "includes": ["180F" or {"uuid", "service_handle", "handle"}], \
            "extended_properties": ["reliableWrite", "writableAuxiliaries"], a descriptor's "permissions", and \
            "cccd": false to declare the CCCD yourself (a 0x2902 descriptor) or have none. A file that declares GAP \
            (1800) or GATT (1801) replaces ours; ours otherwise go where the file leaves room (docs/Peripheral.md).

            --from-trace FILE serves instead the peripheral a btsnoop recording shows, as `mock:FILE` \
            reconstructs it (its database at the recorded handles, its recorded values, refusals and \
            reactions to writes, its advertising data), over the real controller; --peer ADDRESS picks \
            one of several (default: the one with the largest recorded GATT database; a tie, or several \
            peers none of which shows a database, is refused with the candidates listed).

            --address (public, static, private or a static random address) and --renew are as for \
            `bluejay advertise`; not with --from-trace, which advertises from the recorded address.
            """)

    @OptionGroup var common: CommonOptions

    @OptionGroup var addresses: AddressOptions

    @Argument(help: "The database, as JSON (see the discussion).")
    var database: String?

    @Option(
        name: .customLong("from-trace"),
        help: "Serve the peripheral this btsnoop recording shows instead of a JSON database.")
    var fromTrace: String?

    @Option(
        name: .long,
        help: "With --from-trace: the recorded peripheral's address (default: the largest recorded database).")
    var peer: String?

    func validate() throws {
        guard (database == nil) != (fromTrace == nil) else {
            throw ValidationError("give a database file or --from-trace FILE (one of them)")
        }
        if peer != nil, fromTrace == nil { throw ValidationError("--peer goes with --from-trace") }
        if addresses.address != nil, fromTrace != nil {
            throw ValidationError("--address does not go with --from-trace (the recorded address is used)")
        }
    }

    @Option(name: .long, help: "Stop after this many seconds (default: until Ctrl-C).")
    var duration: Double?

    func run() async throws {
        if let fromTrace {
            return try await Self.serve(trace: fromTrace, peer: peer, common: common, duration: duration)
        }
        guard let database else { return }
        let file = try DatabaseFile.load(database)
        let transport = try common.transportText()
        let logger = common.logger, capture = common.capture, duration = duration, addresses = addresses
        try await PeripheralSession.run(
            transport: transport, name: file.name ?? "Bluejay", capture: capture, logger: logger,
            duration: duration, addresses: addresses
        ) { manager in
            try manager.add(services: file.services.map { MutableService($0.definition) })
            for characteristic in file.services.flatMap(\.characteristics) {
                let uuid = characteristic.definition.uuid
                if let timer = characteristic.notify {
                    Task { @BluetoothActor in
                        var index = 0
                        while !Task.isCancelled {
                            try? await Task.sleep(for: timer.every)
                            try? await manager.updateValue(timer.values[index % timer.values.count], for: uuid)
                            index += 1
                        }
                    }
                }
                if characteristic.flood { Flooder(manager: manager, uuid: uuid).run() }
            }
            PeripheralSession.readValueLines(into: manager)
            try await manager.startAdvertising(
                Advertisement(
                    localName: file.name ?? "Bluejay", serviceUUIDs: file.advertise,
                    appearance: file.appearance),
                parameters: AdvertisingParameters(ownAddress: addresses.ownAddress(for: manager)))
        }
    }
}

extension CommonOptions {
    /// The transport string as given (checked to parse), for APIs that open it themselves.
    func transportText() throws -> String {
        _ = try transportSpec()
        return transport ?? environment("BLUEJAY_TRANSPORT") ?? ""
    }
}

extension DatabaseFile {
    /// The file at `path`.
    static func load(_ path: String) throws -> DatabaseFile {
        let bytes: [UInt8]
        do { bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path))) } catch {
            throw CLIError("\(path): \(error)")
        }
        do { return try DatabaseFile(json: bytes) } catch { throw CLIError("\(path): \(error)") }
    }
}

/// What `advertise` and `serve` share: the manager, the event lines, Ctrl-C.
@BluetoothActor
enum PeripheralSession {
    /// Brings up a ``PeripheralManager``, runs `setUp`, prints its events until Ctrl-C or
    /// `duration` seconds, then closes it.
    static func run(
        transport: String, name: String, capture: String?, logger: HCILogger, duration: Double?,
        addresses: AddressOptions? = nil, _ setUp: @BluetoothActor (PeripheralManager) async throws -> Void
    ) async throws {
        let manager: PeripheralManager
        do {
            manager = try await PeripheralManager(transport: transport, name: name, capture: capture, logger: logger)
        } catch {
            throw CLIError(error.description)
        }
        defer { manager.close() }
        let events = manager.events()
        do { try await setUp(manager) } catch { throw CLIError("\(error)") }
        // Ctrl-C is caught before the lines a script waits for are printed: one sent on seeing
        // them would otherwise be lost, or find SIGINT's default and end the process.
        let (stops, stop) = AsyncStream<Void>.makeStream()
        let sources = catchStopSignals([SIGINT]) { stop.yield(()) }
        defer { for source in sources { source.cancel() } }
        print("advertising as \(name) (\(manager.advertiser.commands?.rawValue ?? "no") advertising commands)")
        addresses?.announce(manager)
        flushStandardOutput()
        if let duration {
            Task {
                try? await Task.sleep(for: .seconds(duration))
                stop.yield(())
            }
        }
        let printer = Task { @BluetoothActor in
            for await event in events {
                print(line(event))
                flushStandardOutput()
            }
        }
        defer { printer.cancel() }
        var iterator = stops.makeAsyncIterator()
        _ = await iterator.next()
    }

    /// One line per event.
    static func line(_ event: PeripheralManagerEvent) -> String {
        switch event {
        case let .connected(handle, address): "connected \(address) handle \(hex(handle, digits: 4))"
        case let .disconnected(handle, reason): "disconnected handle \(hex(handle, digits: 4)): \(reason)"
        case let .subscriptionChanged(subscription):
            "handle \(hex(subscription.connection, digits: 4)) \(subscription.uuid): notifications \(subscription.notifications ? "on" : "off"), indications \(subscription.indications ? "on" : "off")"
        case let .valueWritten(write):
            "handle \(hex(write.connection, digits: 4)) wrote \(write.uuid): \(write.value.hexString())"
        case let .paired(handle, method): "handle \(hex(handle, digits: 4)) paired (\(method))"
        }
    }

    /// Reads "UUID HEX" lines from standard input on a thread of its own; each sets that
    /// characteristic's value and sends it to its subscribers.
    static func readValueLines(into manager: PeripheralManager) {
        // A dispatch thread, not Foundation's Thread: full Foundation would triple the binary.
        DispatchQueue(label: "bluejay.serve.stdin").async {
            while let line = readLine() {
                let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
                guard parts.count == 2, let uuid = BluetoothUUID(parts[0]), let value = parseHexBytes(parts[1]) else {
                    printError("ignored: '\(line)' (want: UUID HEX)")
                    continue
                }
                Task { @BluetoothActor in
                    do { try await manager.updateValue(value, for: uuid) } catch {
                        printError("\(uuid): \(error)")
                    }
                }
            }
        }
    }
}
