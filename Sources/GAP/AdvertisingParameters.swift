import BluetoothCore
import HCI

// What an app asks of the advertising set (Advertiser): the kind, our address, the
// parameters, what happens after a central connects, and the errors.

/// What a central may do with our advertising.
public enum AdvertisingKind: String, Sendable, Equatable, CaseIterable {
    /// Connectable and scannable undirected (ADV_IND): a central may connect or ask for the
    /// scan response.
    case connectable
    /// Scannable, not connectable (ADV_SCAN_IND).
    case scannable
    /// Neither: a broadcast (ADV_NONCONN_IND, a beacon).
    case nonConnectable
}

/// The address our advertising carries (Core 6.0 Vol 6, Part B, 1.3): Own_Address_Type
/// 0x00 for the public address, 0x01 for a random one the host sets (LE Set Random Address
/// for legacy advertising, LE Set Advertising Set Random Address for an extended set).
public enum OwnAddress: Sendable, Equatable {
    /// The controller's public address.
    case `public`
    /// A static random address (the two top bits 0b11), set on the controller first.
    case staticRandom(BluetoothAddress)
    /// A resolvable private address made by the host with our IRK (1.3.2.2), from
    /// ``Advertiser/privateAddressSource``, and a new one every `renewal`
    /// (TGAP(private_addr_int), Vol 3, Part C, Appendix A: 15 minutes by default).
    case resolvablePrivate(renewal: Duration = OwnAddress.privateAddressInterval)

    /// TGAP(private_addr_int): 15 minutes, the recommended life of a private address.
    public static let privateAddressInterval: Duration = .seconds(15 * 60)

    /// Own_Address_Type: 0x00 public, 0x01 random (host-generated private addresses are
    /// random addresses to the controller).
    var addressType: UInt8 {
        switch self {
        case .public: 0x00
        case .staticRandom, .resolvablePrivate: 0x01
        }
    }
}

/// How advertising runs: kind, interval, address, power and PHYs.
public struct AdvertisingParameters: Sendable, Equatable {
    /// Connectable, scannable or neither.
    public var kind: AdvertisingKind
    /// Shortest interval, units of 0.625 ms (at least 0x0020, 20 ms).
    public var intervalMin: UInt32
    /// Longest interval, units of 0.625 ms (legacy commands: at most 0x4000, 10.24 s).
    public var intervalMax: UInt32
    /// The address advertised.
    public var ownAddress: OwnAddress
    /// The TX power asked for in dBm, or nil for the controller's choice (extended
    /// advertising only; legacy commands have no such field).
    public var txPower: Int8?
    /// With extended advertising commands: send legacy PDUs (what every scanner hears; data
    /// and scan response at most 31 octets each). False sends extended PDUs, whose data may
    /// be longer but which only an extended scanner sees.
    public var legacyPDUs: Bool
    /// Primary PHY for extended PDUs: 0x01 LE 1M, 0x03 LE Coded.
    public var primaryPHY: UInt8
    /// Secondary PHY for extended PDUs: 0x01 LE 1M, 0x02 LE 2M, 0x03 LE Coded.
    public var secondaryPHY: UInt8

    /// Connectable advertising every 100 ms from the public address, legacy PDUs, LE 1M.
    public init(
        kind: AdvertisingKind = .connectable, intervalMin: UInt32 = 0xA0, intervalMax: UInt32 = 0xA0,
        ownAddress: OwnAddress = .public, txPower: Int8? = nil, legacyPDUs: Bool = true,
        primaryPHY: UInt8 = 0x01, secondaryPHY: UInt8 = 0x01
    ) {
        self.kind = kind
        self.intervalMin = intervalMin
        self.intervalMax = intervalMax
        self.ownAddress = ownAddress
        self.txPower = txPower
        self.legacyPDUs = legacyPDUs
        self.primaryPHY = primaryPHY
        self.secondaryPHY = secondaryPHY
    }
}

/// When advertising starts again by itself after a central connected (a connection stops
/// connectable advertising in the controller).
public enum AdvertisingResumption: String, Sendable, Equatable {
    /// Never: the app starts it again.
    case never
    /// When the link a central made from our advertising ends.
    case afterDisconnection
    /// At once, so that more centrals can connect (where the controller allows several
    /// links as peripheral); and again after a disconnection.
    case afterConnection
}

/// Why advertising could not start or change.
public enum AdvertisingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The data or scan response is longer than the PDU or the controller allows.
    case dataTooLong(what: String, length: Int, maximum: Int)
    /// The controller has neither legacy nor extended advertising commands, or lacks what
    /// the parameters ask for.
    case notSupported(String)
    /// The parameters break the specification's rules.
    case invalidParameters(String)
    /// Not advertising (update, or a stop with nothing to stop).
    case notAdvertising
    /// A command failed.
    case hci(HCIError)

    /// Readable, with codes by name.
    public var description: String {
        switch self {
        case let .dataTooLong(what, length, maximum): "\(what) is \(length) octets; at most \(maximum) fit"
        case let .notSupported(what): "not supported by the controller: \(what)"
        case let .invalidParameters(what): "invalid advertising parameters: \(what)"
        case .notAdvertising: "not advertising"
        case let .hci(error): error.description
        }
    }
}
