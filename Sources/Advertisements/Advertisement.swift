import BluetoothCore

/// What an advertisement says once its format is known: the format's name and the values,
/// named and scaled as docs/Gateway.md ("Advertisement formats") lists them.
public struct DecodedAdvertisement: Sendable, Equatable {
    /// `bthome-v2`, `bthome-v1`, `mibeacon`, `atc1441`, `pvvx`, `ruuvi-v3`, `ruuvi-v5`,
    /// `govee`, `switchbot`, `inkbird`, `qingping`, `ibeacon`, `eddystone-uid`,
    /// `eddystone-url` or `eddystone-tlm`.
    public var format: String
    /// The values by name (`temperature` in °C, `humidity` in %, …); vendor-specific ones
    /// under `extra`, an object.
    public var values: [String: AdvertisementValue]

    /// A decoded advertisement of `format`.
    public init(format: String, values: [String: AdvertisementValue]) { (self.format, self.values) = (format, values) }

    /// The vendor-specific values (`values["extra"]`), empty when there are none.
    public var extra: [String: AdvertisementValue] {
        if case let .object(members) = values["extra"] { return members }
        return [:]
    }
}

/// Why an advertisement could not be decoded. Every case reads as a sentence for a person
/// (`description`), as `bluejay adv decode` prints it.
public enum AdvertisementError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The bytes are not well-formed AD structures.
    case malformedStructures(String)
    /// No decoder knows this advertisement.
    case unknownFormat
    /// The format is known but this payload breaks it.
    case malformed(format: String, reason: String)
    /// The payload is encrypted and no key was given.
    case keyRequired(format: String)
    /// The key given is not 16 octets.
    case badKeyLength(format: String, length: Int)
    /// Decryption needs the advertiser's address and none was given.
    case addressRequired(format: String)
    /// The tag did not match: a wrong key, or data altered on the way.
    case authenticationFailed(format: String)
    /// The format is known but this variant of it is not decoded.
    case unsupported(format: String, reason: String)

    /// What went wrong, for a person.
    public var description: String {
        switch self {
        case let .malformedStructures(problem): "malformed advertising data: \(problem)"
        case .unknownFormat: "no known advertisement format"
        case let .malformed(format, reason): "\(format): \(reason)"
        case let .keyRequired(format): "\(format): the payload is encrypted; give the device's 16-byte key"
        case let .badKeyLength(format, length): "\(format): the key must be 16 bytes (32 hex digits), got \(length)"
        case let .addressRequired(format): "\(format): decryption needs the advertiser's address"
        case let .authenticationFailed(format):
            "\(format): decryption failed (the message integrity check does not match): wrong key, or the data was altered"
        case let .unsupported(format, reason): "\(format): \(reason)"
        }
    }
}

/// Decodes the advertisements of the sensors and beacons docs/Gateway.md lists. Each format
/// looks for its own marks (a service data UUID, a company identifier, a local name); the
/// first whose marks are present decides.
public enum AdvertisementDecoder {
    /// The formats, tried in this order: the service-data formats with an assigned UUID
    /// first, the ones recognised from manufacturer data and names last.
    enum Format: CaseIterable {
        case bthomeV2, bthomeV1, miBeacon, thermometerFirmware, qingping, eddystone, switchBot, ruuvi, iBeacon, govee,
            inkbird

        /// The format's decoder: nil when the advertisement is not of this format.
        func decode(_ input: AdvertisementInput) throws(AdvertisementError) -> DecodedAdvertisement? {
            switch self {
            case .bthomeV2: try BTHome.decodeV2(input)
            case .bthomeV1: try BTHome.decodeV1(input)
            case .miBeacon: try MiBeacon.decode(input)
            case .thermometerFirmware: try ThermometerFirmware.decode(input)
            case .qingping: try Qingping.decode(input)
            case .eddystone: try Eddystone.decode(input)
            case .switchBot: try SwitchBot.decode(input)
            case .ruuvi: try Ruuvi.decode(input)
            case .iBeacon: try IBeacon.decode(input)
            case .govee: try Govee.decode(input)
            case .inkbird: try Inkbird.decode(input)
            }
        }
    }

    /// Decodes `advertisement` (the advertising data, a scan response's structures after it).
    ///
    /// - Parameters:
    ///   - address: the advertiser's address: part of the nonce of the encrypted formats.
    ///   - key: the device's 16-byte key, for an encrypted payload.
    /// - Throws: ``AdvertisementError``: no known format, a malformed payload, a missing or
    ///   wrong key. When a format claims the advertisement and fails, its error is thrown
    ///   unless another format decodes it.
    public static func decode(
        _ advertisement: AdvertisingData, address: BluetoothAddress? = nil,
        key: [UInt8]? = nil
    ) throws(AdvertisementError) -> DecodedAdvertisement {
        let input = AdvertisementInput(data: advertisement, address: address, key: key)
        var firstError: AdvertisementError?
        for format in Format.allCases {
            do throws(AdvertisementError) {
                if let decoded = try format.decode(input) { return decoded }
            } catch {
                if firstError == nil { firstError = error }
            }
        }
        if let firstError { throw firstError }
        if let problem = advertisement.problem { throw .malformedStructures(problem.description) }
        throw .unknownFormat
    }

    /// Decodes advertising bytes as sent (AD structures: length, type, data).
    public static func decode(
        bytes: [UInt8], address: BluetoothAddress? = nil,
        key: [UInt8]? = nil
    ) throws(AdvertisementError) -> DecodedAdvertisement {
        try decode(AdvertisingData(parsing: bytes), address: address, key: key)
    }
}

/// What every decoder reads: the structures, the address and the key.
struct AdvertisementInput: Sendable {
    let data: AdvertisingData
    let address: BluetoothAddress?
    let key: [UInt8]?
    /// Service data by 16-bit UUID, in the order sent (the first of a UUID wins).
    let serviceData16: [(uuid: UInt16, data: [UInt8])]

    init(data: AdvertisingData, address: BluetoothAddress?, key: [UInt8]?) {
        self.data = data
        self.address = address
        self.key = key
        serviceData16 = data.structures.compactMap { structure in
            guard structure.type == ADType.serviceData16, structure.data.count >= 2 else { return nil }
            return (UInt16(structure.data[0]) | UInt16(structure.data[1]) << 8, Array(structure.data[2...]))
        }
    }

    /// The service data of 16-bit UUID `uuid`, without the UUID.
    func serviceData(_ uuid: UInt16) -> [UInt8]? {
        serviceData16.first { $0.uuid == uuid }?.data
    }

    /// The first manufacturer data of `company`, without the company identifier.
    func manufacturerData(_ company: UInt16) -> [UInt8]? {
        data.manufacturerData.first { $0.companyIdentifier == company }?.data
    }

    /// The 16-byte key for `format`: throws when there is none or it is not 16 bytes.
    func requireKey(_ format: String) throws(AdvertisementError) -> [UInt8] {
        guard let key else { throw .keyRequired(format: format) }
        guard key.count == 16 else { throw .badKeyLength(format: format, length: key.count) }
        return key
    }

    /// The address as people write it, most significant byte first (the order nonces use).
    func requireAddress(_ format: String) throws(AdvertisementError) -> [UInt8] {
        guard let address else { throw .addressRequired(format: format) }
        return address.bytes.reversed()
    }
}
