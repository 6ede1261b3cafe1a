import ArgumentParser
import ATT
import Bluejay
import BluetoothCore
import CBluetooth
import Dispatch
import DiscoveryCache
import GAP
import GATT
import HCI
import Host
import L2CAP
import SMP

#if canImport(Glibc)
    import Glibc
#endif

/// The peripheral a GATT command talks to, and how to reach it.
struct PeripheralOptions: ParsableArguments {
    @Argument(
        help: "The peripheral: AA:BB:CC:DD:EE:FF[/random|/public] (default type: as seen in a short scan, else public)."
    )
    var address: String

    @Option(name: .long, help: "Give up connecting (and cancel the attempt) after this many seconds.")
    var timeout: Double = 10

    @Option(name: .long, help: "The ATT_MTU to ask for (23…517).")
    var mtu: Int = Int(ATTBearer.maximumMTU)

    @Option(
        name: .long,
        help:
            "The longest value a read follows, in octets (at least 512; values past 512 break the specification but some peripherals serve them)."
    )
    var maxValue: Int = 65536

    @Flag(
        name: .long,
        help: "Neither use nor update the GATT discovery cache (in $BLUEJAY_STORE, else $XDG_STATE_HOME/bluejay).")
    var noCache = false

    @Flag(
        name: .long,
        help:
            "Never pair to retry a request refused for want of security (the ATT error is reported by name). A stored bond still encrypts."
    )
    var noPair = false

    @Option(
        name: .long, help: "Our IO capability when pairing: display, display-yesno, keyboard, none, keyboard-display.")
    var io: String = IOCapability.keyboardDisplay.description

    @Flag(name: .long, help: "Refuse LE legacy pairing: only LE Secure Connections.")
    var scOnly = false

    #if DEBUG
        /// Debug builds only (recording and replaying pairings): a release binary has no way to
        /// make pairing predictable.
        @Option(
            name: .long,
            help: ArgumentHelp(
                "Test only: pair with keys and nonces from this seed, so a recorded pairing replays byte for byte. Not secret.",
                visibility: .hidden))
        var smpTestSeed: UInt64?
    #endif

    /// The pairing policy these options ask for.
    var policy: PairingPolicy {
        PairingPolicy(
            ioCapability: IOCapability(io) ?? .keyboardDisplay, secureConnectionsOnly: scOnly, allowPairing: !noPair)
    }

    func validate() throws {
        guard Connect.parse(address) != nil else {
            throw ValidationError(
                "'\(address)' is not an address: expected AA:BB:CC:DD:EE:FF, optionally with /random or /public")
        }
        guard timeout > 0, timeout <= 3600 else {
            throw ValidationError("--timeout must be between 0 and 3600 seconds")
        }
        guard (23...517).contains(mtu) else { throw ValidationError("--mtu must be between 23 and 517") }
        guard maxValue >= 512 else {
            throw ValidationError("--max-value must be at least 512 (the specification's longest value)")
        }
        guard IOCapability(io) != nil else {
            throw ValidationError(
                "--io '\(io)' is not an IO capability: one of \(IOCapability.allCases.map(\.description).joined(separator: ", "))"
            )
        }
    }

    /// Connects, exchanges MTUs, runs `body` with a GATT client on the link, and disconnects
    /// whatever happens. Protocol errors become one readable line.
    @BluetoothActor
    func withClient<T: Sendable>(
        _ common: CommonOptions, discovery: Bool = true,
        _ body: @BluetoothActor (GATTClient, ConnectionManager, LEConnection) async throws -> T
    ) async throws -> T {
        try await withSecuredClient(common, discovery: discovery) { client, manager, connection, _ in
            try await body(client, manager, connection)
        }
    }

    /// As ``withClient(_:discovery:_:)``, with the link's Security Manager: a bonded peer's
    /// link is encrypted first, and a request refused for want of security pairs (unless
    /// `--no-pair`) and is retried once.
    @BluetoothActor
    func withSecuredClient<T: Sendable>(
        _ common: CommonOptions, discovery: Bool = true,
        _ body: @BluetoothActor (GATTClient, ConnectionManager, LEConnection, SecurityManager) async throws -> T
    ) async throws -> T {
        try await withPeripheralHost(common, discovery: discovery) { host, type in
            try await connectSecured(host, type: type, common: common, discovery: discovery, body)
        }
    }

    /// The host, started once, set up for this peripheral (MTU, pairing policy), and the
    /// peripheral's address type (given, else from a short scan): for one connection, or
    /// several one after another (``connectSecured(_:type:common:discovery:_:)``).
    @BluetoothActor
    func withPeripheralHost<T: Sendable>(
        _ common: CommonOptions, discovery: Bool,
        _ body: @BluetoothActor (BluetoothHost, AddressType) async throws -> T
    ) async throws -> T {
        let (address, givenType) = Connect.parse(address)!
        let mtu = UInt16(mtu)
        // By handle, exactly the procedure asked goes out: no hash read, no cache.
        let useCache = !noCache && discovery
        return try await common.withHost(cacheEnabled: useCache) { host in
            let type: AddressType
            if let givenType {
                type = givenType
            } else {
                type = try await Connect.typeFromScan(address, controller: host.controller, logger: common.logger)
            }
            host.bearers.preferredMTU = mtu
            host.security.policy = policy
            host.security.delegate = TerminalPairing()
            #if DEBUG
                if let seed = smpTestSeed { host.security.entropy = .seeded(seed) }
            #endif
            return try await body(host, type)
        }
    }

    /// One connection over `host`: connects, sets the link up as the library does (bonded:
    /// encrypted first), runs `body` with a GATT client, and disconnects whatever happens.
    @BluetoothActor
    func connectSecured<T: Sendable>(
        _ host: BluetoothHost, type: AddressType, common: CommonOptions, discovery: Bool,
        _ body: @BluetoothActor (GATTClient, ConnectionManager, LEConnection, SecurityManager) async throws -> T
    ) async throws -> T {
        let (address, _) = Connect.parse(address)!
        let timeout = timeout
        let maxValue = maxValue
        let useCache = !noCache && discovery
        let logger = common.logger
        let (manager, bearers, security, cache) = (host.connections, host.bearers, host.security, host.cache)
        let connection: LEConnection
        do {
            connection = try await manager.connect(to: address, type: type, timeout: .milliseconds(Int(timeout * 1000)))
        } catch {
            throw CLIError("connect \(address)/\(type): \(error)")
        }
        do {
            let bearer = try bearers.bearer(for: connection.handle)
            let client = GATTClient(bearer: bearer)
            client.maximumValueLength = maxValue
            defer { cache.finish(client) }
            // The library's own order (LinkSetUp); an MTU the server refuses is reported.
            let setUp = try await LinkSetUp.run(
                client, handle: connection.handle, identity: DiscoveryCache.identity(address, type),
                security: security, cache: cache, mtuRefusalFails: true)
            let bondedLink = setUp.bondedLink
            logger.log(.info, "GATT cache: \(setUp.outcome)")
            let result: T
            do { result = try await body(client, manager, connection, security) } catch let error as GATTError
                where error.code == .databaseOutOfSync
            {
                // Robust caching: the peer's database changed under us; check and retry once.
                try await cache.revalidate(client)
                result = try await body(client, manager, connection, security)
            }
            if useCache, bondedLink, !client.isSubscribedToServiceChanged {
                // After the value, so it costs this run nothing before it: a bonded peer
                // keeps this subscription and indicates changes on reconnection, so the
                // next bonded run trusts the cache without reading the Database Hash.
                do { try await client.subscribeToServiceChanged() } catch {
                    logger.log(.info, "subscribing to Service Changed: \(error)")
                }
            }
            _ = try? await manager.disconnect(connection.handle)
            return result
        } catch {
            if manager.connections[connection.handle] != nil { _ = try? await manager.disconnect(connection.handle) }
            if let error = error as? GATTError { throw CLIError(error.description) }
            if let error = error as? ATTError { throw CLIError(error.description) }
            if let error = error as? SMPError { throw CLIError(error.description) }
            throw error
        }
    }
}

/// An attribute handle: decimal (`38`) or hex (`0x0026`), 0x0000 to 0xFFFF. 0x0000 is no
/// valid handle, but sending it is how a server's refusal (Invalid Handle) is tested, so the
/// tool sends what it is told and reports the answer.
func parseHandle(_ text: String) -> AttributeHandle? {
    let value = text.lowercased().hasPrefix("0x") ? UInt16(text.dropFirst(2), radix: 16) : UInt16(text)
    return value.map(AttributeHandle.init(rawValue:))
}

/// A `--handle`-style option value, or a usage error naming the option.
func handleOption(_ text: String?, _ option: String) throws -> AttributeHandle? {
    guard let text else { return nil }
    guard let handle = parseHandle(text) else {
        throw ValidationError("\(option) '\(text)' is not an attribute handle (0…65535, decimal or 0x0000…0xFFFF)")
    }
    return handle
}

/// A 16-bit (`180D`) or 128-bit UUID argument.
func parseUUID(_ text: String, _ what: String) throws -> BluetoothUUID {
    guard let uuid = BluetoothUUID(text) else {
        throw ValidationError("\(what) '\(text)' is not a UUID (e.g. 180D or 0000180D-0000-1000-8000-00805F9B34FB)")
    }
    return uuid
}

/// The value as text when every byte is printable ASCII (a trailing NUL allowed), else nil.
func printable(_ value: [UInt8]) -> String? {
    var bytes = value[...]
    if bytes.last == 0 { bytes = bytes.dropLast() }
    guard !bytes.isEmpty, bytes.allSatisfy({ (0x20...0x7E).contains($0) }) else { return nil }
    return String(decoding: bytes, as: UTF8.self)
}

/// A line of standard input (nil at its end), read on a dispatch thread: the stack's actor
/// keeps running the links while the line is awaited.
func standardInputLine() async -> String? {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(returning: readLine()) }
    }
}

/// Pushes printed lines out now, so a reader on a pipe sees each value as it comes. Only
/// stdout: `fflush(nil)` would wait for stdin's lock, held by a thread blocked reading a
/// line (`serve`'s value lines), and stop the stack's actor until input came.
func flushStandardOutput() {
    bluejay_flush_stdout()
}
