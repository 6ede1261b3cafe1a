import BluetoothCore
import FoundationEssentials
import HCI

/// A service by UUID, as Bluejay names it: `ServiceIdentifier(uuid: "180D")`.
public struct ServiceIdentifier: Hashable, Sendable, CustomStringConvertible {
    /// The service's UUID.
    public let uuid: BluetoothUUID

    /// A service by its UUID text (`180D` or a 128-bit UUID). An invalid UUID is a
    /// programming error and traps, as a malformed `CBUUID` string does on iOS.
    public init(uuid: String) {
        guard let parsed = BluetoothUUID(uuid) else { preconditionFailure("'\(uuid)' is not a Bluetooth UUID") }
        self.uuid = parsed
    }

    /// A service by UUID value.
    public init(uuid: BluetoothUUID) { self.uuid = uuid }

    /// `180D Heart Rate`.
    public var description: String { uuid.nameAndValue }
}

/// A characteristic by UUID inside its service.
public struct CharacteristicIdentifier: Hashable, Sendable, CustomStringConvertible {
    /// The characteristic's UUID.
    public let uuid: BluetoothUUID
    /// The service it belongs to.
    public let service: ServiceIdentifier

    /// A characteristic by its UUID text inside `service`; an invalid UUID traps.
    public init(uuid: String, service: ServiceIdentifier) {
        guard let parsed = BluetoothUUID(uuid) else { preconditionFailure("'\(uuid)' is not a Bluetooth UUID") }
        self.uuid = parsed
        self.service = service
    }

    /// A characteristic by UUID value inside `service`.
    public init(uuid: BluetoothUUID, service: ServiceIdentifier) { (self.uuid, self.service) = (uuid, service) }

    /// `2A37 Heart Rate Measurement in 180D Heart Rate`.
    public var description: String { "\(uuid.nameAndValue) in \(service)" }
}

/// A peripheral: its Bluetooth address and address type (iOS gave a UUID instead; here the
/// address is the identity), with the name it advertised when known.
public struct PeripheralIdentifier: Hashable, Sendable, CustomStringConvertible {
    /// The device address.
    public let address: BluetoothAddress
    /// Public or random.
    public let addressType: AddressType
    /// The advertised name, when seen; not part of the identity.
    public let name: String

    /// A peripheral at `address`.
    public init(address: BluetoothAddress, addressType: AddressType, name: String? = nil) {
        self.address = address
        self.addressType = addressType
        self.name = name ?? address.description
    }

    /// Two identifiers name the same peripheral when address and type match.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.address == rhs.address && lhs.addressType == rhs.addressType
    }

    /// Hashes address and type.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(address)
        hasher.combine(addressType)
    }

    /// `F0:0D:B1:E7:00:01/random`.
    public var description: String { "\(address)/\(addressType)" }

    /// A `UUID` for this peripheral, where iOS code keeps Core Bluetooth's: Core Bluetooth
    /// makes one up per device and phone, Linux has none, so this one is derived from the
    /// address and its type and is the same in every run. The address is readable in it:
    /// `00000000-0000-8000-80TT-AABBCCDDEEFF` (a version 8 UUID; `TT` is 00 for a public
    /// address, 01 for a random one; the last twelve digits are the address).
    public var uuid: UUID {
        let octets = Array(address.bytes.reversed())
        return UUID(
            uuid: (
                0, 0, 0, 0, 0, 0, 0x80, 0, 0x80, addressType == .random ? 1 : 0,
                octets[0], octets[1], octets[2], octets[3], octets[4], octets[5]
            ))
    }

    /// The same as ``uuid``: what iOS code reads from a `CBPeripheral` or a connection
    /// result (`peripheral.identifier`).
    public var identifier: UUID { uuid }
}

extension PeripheralIdentifier {
    /// Why a text is not a peripheral: the text, and what is wrong with it.
    public struct ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        /// The text as given.
        public let text: String
        /// What is wrong with it.
        public let reason: String

        /// `'C0:FF:EE/random' is not a peripheral: …`.
        public var description: String { "'\(text)' is not a peripheral: \(reason)" }
    }

    /// A peripheral from the text a user has: `C0:FF:EE:00:00:01/random`, `…/public`, or the
    /// address alone for a public one (most significant octet first, as `description`
    /// prints it, so the two round-trip; hex digits and the type in either case). Anything else throws a ``ParseError`` saying what
    /// is wrong.
    public init(_ text: String, name: String? = nil) throws(ParseError) {
        do throws(BluetoothAddress.TypedTextError) {
            let (address, type) = try BluetoothAddress.parse(typed: text)
            self.init(address: address, addressType: type ?? .public, name: name)
        } catch {
            throw ParseError(text: text, reason: error.description)
        }
    }
}
