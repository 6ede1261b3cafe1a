import BluetoothCore
import FoundationEssentials
import HCI
import Storage

/// What pairing with bonding leaves behind for one peer: the keys to encrypt the next
/// link without pairing again, and to recognise the peer behind a private address.
///
/// Stored as JSON (format `bluejay-bond`, version 1) by ``BondStore``; keys are hex strings in
/// wire order (least significant octet first), as HCI and SMP carry them.
public struct Bond: Codable, Sendable, Equatable {
    /// Always `bluejay-bond`.
    public var format = "bluejay-bond"
    /// The file format's version.
    public var version = 1
    /// The peer's identity address (`F0:0D:B1:E7:00:01`): its Identity Address Information, or
    /// the address it connected with when it distributed none.
    public var address: String
    /// `public` or `random`.
    public var addressType: String
    /// The LTK the central encrypts with (the Secure Connections LTK, or the one the
    /// peripheral distributed in legacy pairing).
    public var longTermKey: String
    /// The EDIV identifying a legacy LTK (0 for Secure Connections).
    public var ediv: UInt16
    /// The Rand identifying a legacy LTK (zeros for Secure Connections), hex.
    public var random: String
    /// The negotiated key size in octets.
    public var keySize: Int
    /// Whether the keys came from LE Secure Connections.
    public var secureConnections: Bool
    /// Whether pairing had MITM protection (not Just Works).
    public var authenticated: Bool
    /// The peer's IRK, when it distributed one.
    public var identityResolvingKey: String?
    /// The peer's CSRK, when it distributed one.
    public var signatureKey: String?

    /// A bond as given.
    public init(address: BluetoothAddress, addressType: AddressType, longTermKey: [UInt8], ediv: UInt16 = 0, random: [UInt8] = [UInt8](repeating: 0, count: 8),
                keySize: Int = 16, secureConnections: Bool, authenticated: Bool, identityResolvingKey: [UInt8]? = nil, signatureKey: [UInt8]? = nil) {
        self.address = address.description
        self.addressType = addressType == .public || addressType == .publicIdentity ? "public" : "random"
        self.longTermKey = Self.hex(longTermKey)
        self.ediv = ediv
        self.random = Self.hex(random)
        self.keySize = keySize
        self.secureConnections = secureConnections
        self.authenticated = authenticated
        self.identityResolvingKey = identityResolvingKey.map(Self.hex)
        self.signatureKey = signatureKey.map(Self.hex)
    }

    /// The identity address.
    public var identityAddress: BluetoothAddress? { BluetoothAddress(address) }
    /// The identity address type.
    public var identityAddressType: AddressType { addressType == "public" ? .public : .random }
    /// The LTK in wire order.
    public var longTermKeyBytes: [UInt8]? { Self.bytes(longTermKey, count: 16) }
    /// The Rand in wire order.
    public var randomBytes: [UInt8]? { Self.bytes(random, count: 8) }
    /// The IRK in wire order.
    public var identityResolvingKeyBytes: [UInt8]? { identityResolvingKey.flatMap { Self.bytes($0, count: 16) } }

    /// Whether the file is one this version reads: the right format and well-formed keys.
    public var isUsable: Bool {
        format == "bluejay-bond" && version == 1 && identityAddress != nil && longTermKeyBytes != nil && randomBytes != nil
            && (identityResolvingKey == nil || identityResolvingKeyBytes != nil)
    }

    /// Whether `address` (as seen in a scan or a connection) is this peer: its identity
    /// address, or a resolvable private address its IRK resolves.
    public func matches(_ address: BluetoothAddress, _ type: AddressType) -> Bool {
        if address == identityAddress { return true }
        guard type == .random || type == .randomIdentity, let irk = identityResolvingKeyBytes else { return false }
        return ResolvablePrivateAddress.resolves(address, with: irk)
    }

    /// Lower-case hex of `bytes`, as given.
    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined() }

    /// `count` bytes from hex, or nil when malformed.
    static func bytes(_ hex: String, count: Int) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count == count * 2 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }
}

/// The bonds in the store directory's `bonds/` folder: one file per peer identity, written
/// atomically with mode 0600. Keys never reach a log line.
public struct BondStore: Sendable {
    /// The folder the bond files live in.
    public let directory: StoreDirectory

    /// The bonds under `store`'s `bonds/` folder.
    public init(store: StoreDirectory) { directory = store.subdirectory("bonds") }

    /// The file name of a peer's bond: its identity address without colons.
    static func fileName(_ address: String) -> String { address.filter { $0 != ":" } + ".json" }

    /// Stores `bond`, replacing any bond with the same identity address.
    public func save(_ bond: Bond) throws(StoreError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data: Data
        do { data = try encoder.encode(bond) } catch { preconditionFailure("a Bond always encodes: \(error)") }
        try directory.writeAtomically(Array(data), to: Self.fileName(bond.address))
    }

    /// Every readable bond (unreadable files are skipped; ``unreadable()`` names them).
    public func all() -> [Bond] {
        ((try? directory.fileNames()) ?? []).compactMap(load).sorted { $0.address < $1.address }
    }

    /// Files in the folder that are not usable bonds.
    public func unreadable() -> [String] {
        ((try? directory.fileNames()) ?? []).filter { $0.hasSuffix(".json") && load($0) == nil }
    }

    /// The bond of the peer at `address` (its identity address, or a private address its
    /// IRK resolves).
    public func bond(for address: BluetoothAddress, type: AddressType) -> Bond? {
        if let direct = load(Self.fileName(address.description)), direct.matches(address, type) { return direct }
        return all().first { $0.matches(address, type) }
    }

    /// Forgets the bond with this identity address; returns whether there was one.
    @discardableResult
    public func remove(_ address: BluetoothAddress) throws(StoreError) -> Bool {
        try directory.remove(Self.fileName(address.description))
    }

    private func load(_ name: String) -> Bond? {
        guard name.hasSuffix(".json"), let bytes = try? directory.read(name), let bond = try? JSONDecoder().decode(Bond.self, from: Data(bytes)), bond.isUsable
        else { return nil }
        return bond
    }
}

extension BondStore {
    /// Our own IRK (wire order), made once and kept in the store: the peer stores it with
    /// our identity address when we distribute IdKey.
    func localIdentityResolvingKey(using entropy: PairingEntropy = .system) -> [UInt8] {
        let name = "local-irk.key"
        if let stored = try? directory.read(name), let key = Bond.bytes(String(decoding: stored.prefix(32), as: UTF8.self), count: 16) {
            return key
        }
        let key = entropy.bytes(16)
        try? directory.writeAtomically(Array((Bond.hex(key) + "\n").utf8), to: name)
        return key
    }
}
