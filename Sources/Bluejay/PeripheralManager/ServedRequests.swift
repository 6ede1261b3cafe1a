import ATT
import BluetoothCore
import FoundationEssentials

/// A central connected to the ``PeripheralManager``: BlueCap's `CBCentralInjectable`.
public struct ConnectedCentral: Sendable, Hashable {
    /// Its link.
    public let handle: ConnectionHandle
    /// Where Core Bluetooth gives a `UUID` per central, one derived from its address, the
    /// same in every run (as `PeripheralIdentifier.uuid`); nil-address links give a zero UUID.
    public let identifier: UUID
    /// The longest value one notification carries to it: its ATT_MTU less 3.
    public let maximumUpdateValueLength: Int

    /// A central on link `handle`.
    public init(handle: ConnectionHandle, identifier: UUID, maximumUpdateValueLength: Int) {
        (self.handle, self.identifier, self.maximumUpdateValueLength) = (handle, identifier, maximumUpdateValueLength)
    }
}

/// A write a central asked of a ``MutableCharacteristic`` whose app responds to writes
/// (``MutableCharacteristic/startRespondingToWriteRequests(capacity:)``): BlueCap's
/// `CBATTRequestInjectable`. Answer it with ``MutableCharacteristic/respondToRequest(_:withResult:)``.
public struct CharacteristicWriteRequest: Sendable {
    /// Where the value goes: always 0, since prepared writes reach the app whole, once
    /// executed.
    public let offset: Int
    /// The value written (never nil here; optional as Core Bluetooth's).
    public let value: Data?
    /// Whether the central waits for the answer (a Write Request); false for a Write
    /// Command, whose answer goes nowhere.
    public let withResponse: Bool
    /// The characteristic written.
    public let characteristic: MutableCharacteristic
    /// Which request of the characteristic this is.
    let id: Int
}

/// Why a ``MutableCharacteristic`` cannot do what was asked: BlueCap's errors.
public enum MutableCharacteristicError: Error, Equatable, Sendable, CustomStringConvertible {
    /// It is not in a ``PeripheralManager``'s database (``PeripheralManager/add(_:)``).
    case unconfigured
    /// It does not notify or indicate.
    case notifyNotSupported

    /// Readable.
    public var description: String {
        switch self {
        case .unconfigured: "the characteristic is not added to a PeripheralManager"
        case .notifyNotSupported: "the characteristic neither notifies nor indicates"
        }
    }
}

extension ATTErrorCode {
    /// Core Bluetooth's `CBATTError.success`, as an answer to a write: the write is
    /// accepted. (ATT has no error code 0x00; it is never sent.)
    public static let success = ATTErrorCode(rawValue: 0x00)
}

extension AttributePermissions {
    /// Core Bluetooth's `.readable`: `read`.
    public static let readable = AttributePermissions.read
    /// Core Bluetooth's `.writeable`: `write` and `writeWithoutResponse`.
    public static let writeable: AttributePermissions = [.write, .writeWithoutResponse]
    /// Core Bluetooth's `.readEncryptionRequired`: `read` on an encrypted link.
    public static let readEncryptionRequired: AttributePermissions = [.read, .readEncrypted]
    /// Core Bluetooth's `.writeEncryptionRequired`: writes on an encrypted link.
    public static let writeEncryptionRequired: AttributePermissions = [.write, .writeWithoutResponse, .writeEncrypted]
}
