import BluetoothCore
import Synchronization
import BluetoothCrypto
import FoundationEssentials
import HCI
import Storage

/// What pairing with bonding leaves behind for one peer: the keys to encrypt the next
/// link without pairing again, and to recognise the peer behind a private address.
///
/// Stored as JSON (format `bluejay-bond`, version 1) by ``BondStore``; keys are hex strings in
/// wire order (least significant octet first), as HCI and SMP carry them.
///
/// The keys (LTK, IRK, CSRK) are held in `SecretBytes`, as the hex text of the file: copies
/// of a bond share them, and they are zeroed when the last copy is gone. The `String` and
/// `[UInt8]` accessors (``longTermKey``, ``longTermKeyBytes``…) hand out copies nothing
/// zeroes; ``longTermKeySecret`` and its kind do not. A bond prints its keys as
/// `<redacted N octets>`.
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
    /// The LTK's hex text.
    var longTermKeyText: SecretBytes
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
    /// The IRK's hex text.
    var identityResolvingKeyText: SecretBytes?
    /// The CSRK's hex text.
    var signatureKeyText: SecretBytes?

    /// A bond as given.
    public init(
        address: BluetoothAddress, addressType: AddressType, longTermKey: [UInt8], ediv: UInt16 = 0,
        random: [UInt8] = [UInt8](repeating: 0, count: 8),
        keySize: Int = 16, secureConnections: Bool, authenticated: Bool, identityResolvingKey: [UInt8]? = nil,
        signatureKey: [UInt8]? = nil
    ) {
        self.init(
            address: address, addressType: addressType, longTermKey: SecretBytes(longTermKey), ediv: ediv,
            random: random, keySize: keySize,
            secureConnections: secureConnections, authenticated: authenticated,
            identityResolvingKey: identityResolvingKey.map { SecretBytes($0) },
            signatureKey: signatureKey.map { SecretBytes($0) })
    }

    /// A bond as given, the keys (wire order) held as they are given.
    public init(
        address: BluetoothAddress, addressType: AddressType, longTermKey: SecretBytes, ediv: UInt16 = 0,
        random: [UInt8] = [UInt8](repeating: 0, count: 8),
        keySize: Int = 16, secureConnections: Bool, authenticated: Bool, identityResolvingKey: SecretBytes? = nil,
        signatureKey: SecretBytes? = nil
    ) {
        self.address = address.description
        self.addressType = addressType == .public || addressType == .publicIdentity ? "public" : "random"
        longTermKeyText = Self.hexText(longTermKey)
        self.ediv = ediv
        self.random = Self.hex(random)
        self.keySize = keySize
        self.secureConnections = secureConnections
        self.authenticated = authenticated
        identityResolvingKeyText = identityResolvingKey.map(Self.hexText)
        signatureKeyText = signatureKey.map(Self.hexText)
    }

    /// The LTK the central encrypts with (the Secure Connections LTK, or the one the
    /// peripheral distributed in legacy pairing), hex: a copy nothing zeroes.
    public var longTermKey: String {
        get { longTermKeyText.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
        set { longTermKeyText = SecretBytes(newValue.utf8) }
    }
    /// The peer's IRK, when it distributed one, hex: a copy nothing zeroes.
    public var identityResolvingKey: String? {
        get { identityResolvingKeyText.map { $0.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } } }
        set { identityResolvingKeyText = newValue.map { SecretBytes($0.utf8) } }
    }
    /// The peer's CSRK, when it distributed one, hex: a copy nothing zeroes.
    public var signatureKey: String? {
        get { signatureKeyText.map { $0.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } } }
        set { signatureKeyText = newValue.map { SecretBytes($0.utf8) } }
    }

    /// The identity address.
    public var identityAddress: BluetoothAddress? { BluetoothAddress(address) }
    /// The identity address type.
    public var identityAddressType: AddressType { addressType == "public" ? .public : .random }
    /// The LTK in wire order, in an `Array` nothing zeroes (``longTermKeySecret`` is the same
    /// in `SecretBytes`).
    public var longTermKeyBytes: [UInt8]? { longTermKeySecret?.bytes }
    /// The LTK in wire order; nil when the file's is malformed.
    public var longTermKeySecret: SecretBytes? { Self.secret(longTermKeyText, count: 16) }
    /// The Rand in wire order.
    public var randomBytes: [UInt8]? { Self.bytes(random, count: 8) }
    /// The IRK in wire order, in an `Array` nothing zeroes.
    public var identityResolvingKeyBytes: [UInt8]? { identityResolvingKeySecret?.bytes }
    /// The IRK in wire order; nil when there is none or it is malformed.
    public var identityResolvingKeySecret: SecretBytes? {
        identityResolvingKeyText.flatMap { Self.secret($0, count: 16) }
    }
    /// The CSRK in wire order; nil when there is none or it is malformed.
    public var signatureKeySecret: SecretBytes? { signatureKeyText.flatMap { Self.secret($0, count: 16) } }

    /// Whether the file is one this version reads: the right format and well-formed keys.
    public var isUsable: Bool {
        format == "bluejay-bond" && version == 1 && identityAddress != nil && longTermKeySecret != nil
            && randomBytes != nil
            && (identityResolvingKeyText == nil || identityResolvingKeySecret != nil)
    }

    /// Whether `address` (as seen in a scan or a connection) is this peer: its identity
    /// address, or a resolvable private address its IRK resolves.
    public func matches(_ address: BluetoothAddress, _ type: AddressType) -> Bool {
        if address == identityAddress { return true }
        guard type == .random || type == .randomIdentity, let irk = identityResolvingKeySecret else { return false }
        return ResolvablePrivateAddress.resolves(address, with: irk)
    }

    // MARK: Codable, Equatable

    private enum CodingKeys: String, CodingKey {
        case format, version, address, addressType, longTermKey, ediv, random, keySize, secureConnections,
            authenticated, identityResolvingKey, signatureKey
    }

    /// Reads the fields as the file names them (the keys' hex strings pass through `String`s
    /// the decoder made, which nothing zeroes).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        format = try container.decode(String.self, forKey: .format)
        version = try container.decode(Int.self, forKey: .version)
        address = try container.decode(String.self, forKey: .address)
        addressType = try container.decode(String.self, forKey: .addressType)
        longTermKeyText = SecretBytes(try container.decode(String.self, forKey: .longTermKey).utf8)
        ediv = try container.decode(UInt16.self, forKey: .ediv)
        random = try container.decode(String.self, forKey: .random)
        keySize = try container.decode(Int.self, forKey: .keySize)
        secureConnections = try container.decode(Bool.self, forKey: .secureConnections)
        authenticated = try container.decode(Bool.self, forKey: .authenticated)
        identityResolvingKeyText = try container.decodeIfPresent(String.self, forKey: .identityResolvingKey).map {
            SecretBytes($0.utf8)
        }
        signatureKeyText = try container.decodeIfPresent(String.self, forKey: .signatureKey).map {
            SecretBytes($0.utf8)
        }
    }

    /// Writes the fields as the file names them (the keys as hex strings: copies the
    /// encoder keeps, which nothing zeroes).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(format, forKey: .format)
        try container.encode(version, forKey: .version)
        try container.encode(address, forKey: .address)
        try container.encode(addressType, forKey: .addressType)
        try container.encode(longTermKey, forKey: .longTermKey)
        try container.encode(ediv, forKey: .ediv)
        try container.encode(random, forKey: .random)
        try container.encode(keySize, forKey: .keySize)
        try container.encode(secureConnections, forKey: .secureConnections)
        try container.encode(authenticated, forKey: .authenticated)
        try container.encodeIfPresent(identityResolvingKey, forKey: .identityResolvingKey)
        try container.encodeIfPresent(signatureKey, forKey: .signatureKey)
    }

    /// Whether every field is the same; the keys compared in constant time.
    public static func == (lhs: Bond, rhs: Bond) -> Bool {
        lhs.format == rhs.format && lhs.version == rhs.version && lhs.address == rhs.address
            && lhs.addressType == rhs.addressType
            && lhs.longTermKeyText == rhs.longTermKeyText && lhs.ediv == rhs.ediv && lhs.random == rhs.random
            && lhs.keySize == rhs.keySize
            && lhs.secureConnections == rhs.secureConnections && lhs.authenticated == rhs.authenticated
            && lhs.identityResolvingKeyText == rhs.identityResolvingKeyText
            && lhs.signatureKeyText == rhs.signatureKeyText
    }

    // MARK: Hex

    /// Lower-case hex of `bytes`, as given.
    static func hex(_ bytes: [UInt8]) -> String { String(decoding: hexDigits(bytes), as: UTF8.self) }

    /// Lower-case hex of `secret`, as given, written straight into a secret.
    static func hexText(_ secret: SecretBytes) -> SecretBytes {
        SecretBytes(count: 2 * secret.count) { text in
            secret.withUnsafeBytes { octets in
                for (index, octet) in octets.enumerated() {
                    text[2 * index] = hexDigit(octet >> 4)
                    text[2 * index + 1] = hexDigit(octet & 0x0F)
                }
            }
        }
    }

    /// The ASCII lower-case hex digits of `bytes`.
    private static func hexDigits(_ bytes: [UInt8]) -> [UInt8] {
        bytes.flatMap { [hexDigit($0 >> 4), hexDigit($0 & 0x0F)] }
    }

    /// The ASCII lower-case hex digit of `nibble` (0...15).
    private static func hexDigit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? 0x30 + nibble : 0x57 + nibble }

    /// `count` bytes from hex, or nil when malformed.
    static func bytes(_ hex: String, count: Int) -> [UInt8]? {
        secret(SecretBytes(hex.utf8), count: count)?.bytes
    }

    /// `count` octets from the hex text `text` (either case), or nil unless it is 2·`count`
    /// hex digits.
    static func secret(_ text: SecretBytes, count: Int) -> SecretBytes? {
        guard text.count == 2 * count else { return nil }
        var wellFormed = true
        let octets = SecretBytes(count: count) { octets in
            text.withUnsafeBytes { digits in
                for index in 0..<count {
                    guard let high = nibble(digits[2 * index]), let low = nibble(digits[2 * index + 1]) else {
                        wellFormed = false
                        return
                    }
                    octets[index] = high << 4 | low
                }
            }
        }
        return wellFormed ? octets : nil
    }

    /// The value of an ASCII hex digit, or nil.
    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case 0x30...0x39: digit - 0x30
        case 0x41...0x46: digit - 0x41 + 10
        case 0x61...0x66: digit - 0x61 + 10
        default: nil
        }
    }
}

/// The bonds in the store directory's `bonds/` folder: one file per peer identity, written
/// atomically with mode 0600. Keys never reach a log line.
///
/// A bond file read once is kept (decoded) while the file stays the same (`FileStamp`, in Storage): a
/// bonded reconnection asks for the peer's bond several times before its link is encrypted,
/// and each time cost a read and a JSON decode. A file another process writes or removes is
/// read again, or found gone, at the next ask. Copies of one store share what they keep.
public struct BondStore: Sendable {
    /// The folder the bond files live in.
    public let directory: StoreDirectory
    /// The bonds read so far, by file name, with the stamp of the file they came from.
    private let kept = KeptBonds()

    /// The bonds under `store`'s `bonds/` folder.
    public init(store: StoreDirectory) { directory = store.subdirectory("bonds") }

    /// How many times a bond file was read and decoded (for the tests: a file unchanged is
    /// read once).
    package var fileReads: Int { kept.state.withLock { $0.reads } }

    /// The file name of a peer's bond: its identity address without colons. What else the
    /// store keeps of a bonded peer is named the same way, in a folder of its own.
    public static func fileName(_ address: String) -> String { address.filter { $0 != ":" } + ".json" }

    /// Stores `bond`, replacing any bond with the same identity address.
    public func save(_ bond: Bond) throws(StoreError) {
        try directory.writeJSON(bond, to: Self.fileName(bond.address))
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
        guard name.hasSuffix(".json"), let stamp = directory.stamp(of: name) else { return nil }
        if let entry = kept.state.withLock({ $0.entries[name] }), entry.stamp == stamp { return entry.bond }
        // Read and decoded outside the lock; a file changed meanwhile is kept under the older
        // stamp, so the next ask reads it again.
        let bond = directory.readJSON(Bond.self, from: name).flatMap { $0.isUsable ? $0 : nil }
        kept.state.withLock { state in
            state.reads += 1
            // Bounded: a folder of more bonds than this is read again as it is walked.
            if state.entries.count >= KeptBonds.limit { state.entries.removeAll() }
            state.entries[name] = (stamp, bond)
        }
        return bond
    }
}

/// What a ``BondStore`` and its copies keep of the files they read.
private final class KeptBonds: Sendable {
    /// The most files kept at once.
    static let limit = 256
    struct State {
        /// Each file's last reading: its stamp then, and the usable bond it held (nil: none).
        var entries: [String: (stamp: FileStamp, bond: Bond?)] = [:]
        /// Files read and decoded so far.
        var reads = 0
    }
    let state = Mutex(State())
}

extension BondStore {
    /// Our own IRK (wire order), made once and kept in the store (mode 0600, like the
    /// bonds): the peer stores it with our identity address when we distribute IdKey. The
    /// arrays the file's octets pass through are wiped.
    func localIdentityResolvingKey(using entropy: PairingEntropy = .system) -> SecretBytes {
        localKey("local-irk.key", using: entropy)
    }

    /// Our own CSRK (wire order), made once and kept like the IRK: the peer stores it when
    /// we distribute SignKey, to check data we sign.
    func localSignatureKey(using entropy: PairingEntropy = .system) -> SecretBytes {
        localKey("local-csrk.key", using: entropy)
    }

    /// Our static random address, made once and kept in the file `local-static-address`
    /// (`AA:BB:CC:DD:EE:FF` and a newline): an identity address must not change while peers
    /// keep bonds with it (Core Vol 6, Part B, 1.3.2.1). A file that holds no valid static
    /// address is replaced.
    func localStaticRandomAddress() -> BluetoothAddress {
        let name = "local-static-address"
        if let stored = try? directory.read(name),
            let address = BluetoothAddress(String(decoding: stored.prefix(17), as: UTF8.self)),
            address.isValidStaticRandom
        {
            return address
        }
        let address = BluetoothAddress.makeStaticRandom()
        try? directory.writeAtomically(Array("\(address)\n".utf8), to: name)
        return address
    }

    /// A 16-octet key of ours in the file `name`, made from `entropy` the first time.
    private func localKey(_ name: String, using entropy: PairingEntropy) -> SecretBytes {
        if var stored = try? directory.read(name) {
            defer { SecretBytes.wipe(&stored) }
            if let key = Bond.secret(SecretBytes(stored.prefix(32)), count: 16) { return key }
        }
        var octets = entropy.bytes(16)
        let key = SecretBytes(octets)
        SecretBytes.wipe(&octets)
        Bond.hexText(key).withTemporaryCopy { text in
            var file = text + [0x0A]
            defer { SecretBytes.wipe(&file) }
            try? directory.writeAtomically(file, to: name)
        }
        return key
    }
}
