import ATT
import BluetoothCore
import GATT

/// Remembers each peer's discovered GATT database across connections and proves it is
/// still valid before using it (Core Vol 3, Part G, 2.5.2: attribute caching).
///
/// On connecting, ``prepare(_:identity:bonded:bondedLink:)`` reads the peer's Database Hash
/// (one Read By Type). A cached entry is used only when its hash matches; a peer without a
/// hash is trusted only when bonded, since the specification promises Service Changed only
/// to bonded clients. Otherwise the entry is dropped and the client discovers afresh; what
/// it discovers is saved with the hash by ``save(_:)``. A Service Changed indication drops
/// the affected range from the file at once.
///
/// Bonded reconnection: an entry saved on a link encrypted with the peer's bond while
/// subscribed to Service Changed (``CacheEntry/serviceChangedBonded``) is trusted without
/// the hash read when the new link is encrypted with the same bond: such a server keeps the
/// subscription and indicates Service Changed on reconnection when its database changed
/// (Core 6.0 Vol 3 Part G §2.5.2). ``preload(_:identity:)`` adopts it before encryption
/// starts, so that indication is applied whenever it arrives. Robust caching: when the peer has Client Supported
/// Features, the robust-caching bit is written on a connection that discovers, and a
/// `databaseOutOfSync` error re-validates and retries once (``retryingOutOfSync(_:_:)``).
@BluetoothActor
public final class DiscoveryCache {
    /// How a connection's database was obtained.
    public enum Outcome: Equatable, Sendable {
        /// The cache is disabled.
        case disabled
        /// Nothing cached for this peer.
        case miss
        /// The cached database was validated and adopted: no discovery needed.
        case hit
        /// An entry existed but did not match (or could not be trusted); it was dropped.
        case stale
        /// The cached database was adopted without reading the hash: the link is encrypted
        /// with the peer's bond and the peer keeps our Service Changed subscription.
        case trusted
    }

    /// Where the entries live (`<store>/gatt-cache`).
    public let directory: StoreDirectory
    /// Whether the cache is used at all (the CLI's `--no-cache` turns it off).
    public var isEnabled: Bool
    private let logger: HCILogger
    /// The Database Hash read at the start of each connection, by client.
    private var hashes: [ObjectIdentifier: [UInt8]?] = [:]
    private var identities: [ObjectIdentifier: (identity: String, bonded: Bool)] = [:]
    /// Clients on a link encrypted with the peer's bond (their Service Changed subscription
    /// is saved as one the peer keeps).
    private var bondedLinks: Set<ObjectIdentifier> = []
    /// Clients given a subscribed entry by ``preload(_:identity:)``, with that entry.
    private var preloaded: [ObjectIdentifier: CacheEntry] = [:]

    /// A cache in `store`'s `gatt-cache` directory.
    public init(store: StoreDirectory = .standard, enabled: Bool = true, logger: HCILogger = .standardError) {
        directory = store.subdirectory("gatt-cache")
        isEnabled = enabled
        self.logger = logger.layer("cache")
    }

    /// The file name of a peer's entry: the identity with `:` and `/` made file-safe.
    public nonisolated static func fileName(for identity: String) -> String {
        identity.map { $0 == ":" ? "" : $0 == "/" ? "-" : String($0) }.joined() + ".json"
    }

    /// The identity string of a peer address: `F0:0D:B1:E7:00:01/random`.
    public nonisolated static func identity(_ address: BluetoothAddress, _ type: AddressType) -> String {
        "\(address)/\(type == .random || type == .randomIdentity ? "random" : "public")"
    }

    // MARK: Entries

    /// The entry for `identity`, or nil (also when the file is unreadable: it is then
    /// reported and treated as absent).
    public func entry(for identity: String) -> CacheEntry? {
        do {
            guard let bytes = try directory.read(Self.fileName(for: identity)) else { return nil }
            return try CacheEntry(decoding: bytes)
        } catch {
            logger.log(.warning, "GATT cache entry for \(identity) ignored: \(error)")
            return nil
        }
    }

    /// Every readable entry.
    public func entries() throws(StoreError) -> [CacheEntry] {
        try directory.fileNames().filter { $0.hasSuffix(".json") }.compactMap { name in
            guard let bytes = try? directory.read(name) else { return nil }
            return try? CacheEntry(decoding: bytes)
        }
    }

    /// Writes `entry` atomically.
    public func store(_ entry: CacheEntry) throws(StoreError) {
        try directory.writeAtomically(entry.encoded(), to: Self.fileName(for: entry.identity))
    }

    /// Removes the entry of `identity`; true when there was one.
    @discardableResult
    public func remove(_ identity: String) throws(StoreError) -> Bool {
        try directory.remove(Self.fileName(for: identity))
    }

    /// Removes every entry; returns how many.
    @discardableResult
    public func removeAll() throws(StoreError) -> Int {
        var count = 0
        for name in try directory.fileNames() where name.hasSuffix(".json") {
            if try directory.remove(name) { count += 1 }
        }
        return count
    }

    // MARK: A connection

    /// Before a bonded link is encrypted: when the entry of `identity` was saved subscribed
    /// to Service Changed on a bonded link, gives it to `client` provisionally and makes the
    /// client recognise Service Changed at its cached handle, so an indication the peer
    /// sends as soon as encryption starts invalidates what it covers. Returns whether it
    /// did; ``prepare(_:identity:bonded:bondedLink:)`` then keeps the entry (the link is
    /// encrypted with the bond) or takes it back and checks the hash.
    @discardableResult
    public func preload(_ client: GATTClient, identity: String) -> Bool {
        guard isEnabled, let entry = entry(for: identity), entry.serviceChangedBonded else { return false }
        let key = ObjectIdentifier(client)
        watchServiceChanged(client, identity: identity)
        client.adopt(entry.database)
        guard client.assumeServiceChangedSubscription() else {
            client.adopt(GATTDatabase())
            return false
        }
        preloaded[key] = entry
        return true
    }

    /// Validates the cached database of `identity` on a new connection and, when it holds,
    /// gives it to `client`; watches Service Changed to keep the file current. `bonded`: the
    /// peer is bonded. `bondedLink`: the link is encrypted with that bond's stored key (not
    /// merely encrypted after pairing afresh); then an entry saved subscribed to Service
    /// Changed on such a link is trusted without the hash read (``Outcome/trusted``).
    @discardableResult
    public func prepare(_ client: GATTClient, identity: String, bonded: Bool = false, bondedLink: Bool = false)
        async throws(GATTError) -> Outcome
    {
        guard isEnabled else { return .disabled }
        let key = ObjectIdentifier(client)
        identities[key] = (identity, bonded)
        if bondedLink { bondedLinks.insert(key) }
        watchServiceChanged(client, identity: identity)
        if bondedLink, let entry = preloaded[key] ?? entry(for: identity), entry.serviceChangedBonded {
            // Preloaded, the client may already have applied a Service Changed indication
            // sent on encryption: its database is the one to keep, not the entry's.
            if preloaded.removeValue(forKey: key) == nil {
                client.adopt(entry.database)
                if !client.assumeServiceChangedSubscription() { client.adopt(GATTDatabase()) }
            }
            if client.isSubscribedToServiceChanged {
                hashes[key] = .some(entry.databaseHash)
                return .trusted
            }
        } else if preloaded.removeValue(forKey: key) != nil {
            // Not the bonded link the entry needs: back to what the hash says.
            client.adopt(GATTDatabase())
            client.forgetAssumedServiceChangedSubscription()
        }
        let current = try await readDatabaseHash(client)
        hashes[key] = .some(current)
        guard let entry = entry(for: identity) else {
            try await enableRobustCaching(client)
            return .miss
        }
        let trusted =
            if let cached = entry.databaseHash { cached == current } else { current == nil && (bonded || entry.bonded) }
        guard trusted else {
            logger.log(.info, "\(identity): cached database no longer valid; discovering again")
            _ = try? remove(identity)
            try await enableRobustCaching(client)
            return .stale
        }
        client.adopt(entry.database)
        return .hit
    }

    /// Saves what `client` knows of its peer, with the hash read by
    /// ``prepare(_:identity:bonded:bondedLink:)`` (on a trusted reconnection, the cached
    /// one), and whether it is subscribed to Service Changed on a bonded link. Does nothing
    /// when disabled or when the client was not prepared.
    public func save(_ client: GATTClient) {
        let key = ObjectIdentifier(client)
        guard isEnabled, let (identity, bonded) = identities[key], let hash = hashes[key] else { return }
        guard !client.database.isEmpty else {
            // Everything was invalidated (a Service Changed over the whole database): the
            // file must not keep what the peer no longer has.
            _ = try? remove(identity)
            return
        }
        let subscribed = bondedLinks.contains(key) && client.isSubscribedToServiceChanged
        do {
            try store(
                CacheEntry(
                    identity: identity, databaseHash: hash, bonded: bonded, serviceChangedBonded: subscribed,
                    database: client.database))
        } catch {
            logger.log(.warning, "saving the GATT cache of \(identity): \(error)")
        }
    }

    /// Forgets `client` (after its link ended), saving what it knew first.
    public func finish(_ client: GATTClient) {
        save(client)
        let key = ObjectIdentifier(client)
        hashes[key] = nil
        identities[key] = nil
        bondedLinks.remove(key)
        preloaded[key] = nil
    }

    /// Saves the file whenever the peer indicates Service Changed to `client`.
    private func watchServiceChanged(_ client: GATTClient, identity: String) {
        // The client calls this closure of its own, so it is alive whenever the closure
        // runs: `unowned`, not `weak`, which would give the client a side table that slows
        // every retain of it on the notification path.
        client.onServiceChanged = { [weak self, unowned client] range in
            guard let self else { return }
            self.logger.log(
                .info,
                "\(identity): Service Changed \(hex(range.lowerBound, digits: 4))…\(hex(range.upperBound, digits: 4))")
            self.save(client)
        }
    }

    #if compiler(>=6.3)
        /// Runs `body`; when the server answers `databaseOutOfSync` (0x12), re-validates and
        /// runs it once more.
        public func retryingOutOfSync<T>(_ client: GATTClient, _ body: () async throws(GATTError) -> T)
            async throws(GATTError) -> T
        {
            do { return try await body() } catch {
                guard error.code == .databaseOutOfSync else { throw error }
                try await revalidate(client)
                return try await body()
            }
        }
    #else
        /// Runs `body`; when the server answers `databaseOutOfSync` (0x12), re-validates and
        /// runs it once more. (`T` is Sendable here: Swift 6.0 takes a call of `body`, an async
        /// closure whose type names no isolation, as leaving the actor, so its result crosses
        /// back. Swift 6.3 accepts any `T`; 6.1 and 6.2 were not tried, so they get this form.)
        public func retryingOutOfSync<T: Sendable>(_ client: GATTClient, _ body: () async throws(GATTError) -> T)
            async throws(GATTError) -> T
        {
            do { return try await body() } catch {
                guard error.code == .databaseOutOfSync else { throw error }
                try await revalidate(client)
                return try await body()
            }
        }
    #endif

    /// Reads the Database Hash again (after `databaseOutOfSync`); when it changed, what the
    /// client knew is dropped, with its file, so the next use rediscovers.
    public func revalidate(_ client: GATTClient) async throws(GATTError) {
        let key = ObjectIdentifier(client)
        let current = try await readDatabaseHash(client)
        guard hashes[key] != .some(current) else { return }
        client.adopt(GATTDatabase())
        hashes[key] = .some(current)
        if let identity = identities[key]?.identity { _ = try? remove(identity) }
    }

    /// The peer's Database Hash (Read By Type 0x2B2A over all handles), nil when it has none.
    private func readDatabaseHash(_ client: GATTClient) async throws(GATTError) -> [UInt8]? {
        do {
            return try await client.readFirst(uuid: .databaseHash)?.value
        } catch {
            // Servers without the characteristic may refuse rather than say "not found".
            if let code = error.code, [.attributeNotFound, .readNotPermitted, .requestNotSupported].contains(code) {
                return nil
            }
            throw error
        }
    }

    /// Sets the robust-caching bit of Client Supported Features when the peer offers it.
    private func enableRobustCaching(_ client: GATTClient) async throws(GATTError) {
        let features: Characteristic
        do {
            features = try await client.characteristic(
                .clientSupportedFeatures, in: .genericAttribute, includingSecondary: false)
        } catch {
            switch error {
            case .serviceNotFound, .characteristicNotFound: return
            default: throw error
            }
        }
        guard features.properties.contains(.write) else { return }
        do { try await client.write(features.valueHandle, [0x01]) } catch {
            // A refusal leaves caching without robust-caching errors; not a reason to fail.
            guard case .att(.errorResponse) = error else { throw error }
            logger.log(.info, "Client Supported Features write refused: \(error)")
        }
    }
}
