import BluetoothCore
import GATT
import Synchronization

/// A service the app serves, by BlueCap's name: its UUID, whether it is primary, the
/// services it includes, and its ``MutableCharacteristic``s in order. Give it to
/// ``PeripheralManager/add(_:)``; what the manager serves is what it held then.
public final class MutableService: Sendable {
    /// The service's UUID.
    public let uuid: BluetoothUUID
    /// Primary (found by discovery) or secondary (only through an include).
    public let isPrimary: Bool
    /// Services in the database this one includes, by UUID.
    public let includedServices: [BluetoothUUID]
    /// Where it goes and what it includes, when a database file (or the app) says: the
    /// declaration's handle, the group's end, the Include declarations. Nil: after every
    /// service there, including ``includedServices``.
    public let layout: ServiceDefinition?
    /// A name for logs (BlueCap's profile name; "Unknown" unless given).
    public let name: String
    private let held: Mutex<[MutableCharacteristic]>

    /// A service of `uuid`.
    public init(
        uuid: BluetoothUUID, isPrimary: Bool = true, includedServices: [BluetoothUUID] = [],
        characteristics: [MutableCharacteristic] = [], name: String = "Unknown"
    ) {
        self.uuid = uuid
        self.isPrimary = isPrimary
        self.includedServices = includedServices
        self.name = name
        layout = nil
        held = Mutex([])
        self.characteristics = characteristics
    }

    /// A primary service of `uuid` given as text (`180D`, or the 128-bit form), as BlueCap's
    /// `MutableService(uuid:)` takes it; traps on text that is no UUID, as `CBUUID(string:)`.
    public convenience init(uuid: String) {
        guard let parsed = BluetoothUUID(uuid) else {
            preconditionFailure("MutableService(uuid:): '\(uuid)' is not a UUID")
        }
        self.init(uuid: parsed)
    }

    /// A service as `definition` lays it out (a database file's, `DatabaseFile`): at the
    /// handles it gives, if any.
    public init(_ definition: ServiceDefinition) {
        uuid = definition.uuid
        isPrimary = definition.isPrimary
        includedServices = definition.includedServices
        name = "Unknown"
        layout = definition
        held = Mutex([])
        characteristics = definition.characteristics.map(MutableCharacteristic.init)
    }

    /// Its characteristics, in handle order (BlueCap's `characteristics`): each belongs to
    /// this service from now on (``MutableCharacteristic/service``).
    public var characteristics: [MutableCharacteristic] {
        get { held.withLock { $0 } }
        set {
            held.withLock { $0 = newValue }
            for characteristic in newValue { characteristic.belong(to: self) }
        }
    }

    /// What the server lays out for it.
    var definition: ServiceDefinition {
        var definition = ServiceDefinition(
            uuid: uuid, isPrimary: isPrimary, includedServices: includedServices,
            characteristics: characteristics.map(\.definition))
        if let layout {
            (definition.includes, definition.handle, definition.endHandle) = (
                layout.includes, layout.handle, layout.endHandle
            )
        }
        return definition
    }
}
