import ATT
import BluetoothCore
import FoundationEssentials
import GATT
import Synchronization

/// A characteristic the app serves, by BlueCap's name: UUID, properties, permissions, its
/// value and descriptors. Once its service is added (``PeripheralManager/add(_:)``), the
/// value here is what centrals read: setting ``value`` changes it at once, ``update(withData:)``
/// also sends it to the subscribed centrals, and writes the centrals make land here (and
/// reach the app when it responds to them, ``startRespondingToWriteRequests(capacity:)``).
///
/// Every member may be used from any actor or thread, as BlueCap's from any queue.
public final class MutableCharacteristic: Sendable {
    /// The characteristic's UUID.
    public let uuid: BluetoothUUID
    /// What its declaration announces (read, write, notify, indicate, …).
    public let properties: CharacteristicProperties
    /// What a central may do with the value, and the link security it needs.
    public let permissions: AttributePermissions
    /// Descriptors after the value (the CCCD of a characteristic that notifies or
    /// indicates is the server's unless ``layout`` says otherwise; do not declare it).
    public let descriptors: [MutableDescriptor]
    /// Where it goes and what the server adds to it, when a database file (or the app)
    /// says: its handles, extended properties, and whether the server makes its CCCD. Nil:
    /// after the attribute before it, the server's CCCD.
    public let layout: CharacteristicDefinition?
    /// A name for logs (BlueCap's profile name; "Unknown" unless given).
    public let name: String
    /// The most updates kept for centrals not subscribed yet (``pendingUpdates``); past it
    /// the oldest go.
    public static let pendingUpdateLimit = 64

    /// Where it is served: its manager and value handle.
    struct Binding {
        weak var manager: PeripheralManager?
        let valueHandle: AttributeHandle
        /// Updates for the subscribed centrals, sent in order on the stack's actor.
        let outbox: AsyncStream<[UInt8]>.Continuation
    }

    /// What changes, behind one lock.
    struct State {
        var value: [UInt8]
        weak var service: MutableService?
        var binding: Binding?
        /// The centrals subscribed, in handle order (one per link: the server holds the CCCDs).
        var subscribers: [ConnectedCentral] = []
        var pendingUpdates: [[UInt8]] = []
        /// The app's stream of writes, while it responds to them.
        var writes:
            AsyncThrowingStream<(request: CharacteristicWriteRequest, central: ConnectedCentral), any Error>
                .Continuation?
        /// Writes delivered to the app and not answered yet, by request.
        var unanswered: [Int: CheckedContinuation<ATTErrorCode, Never>] = [:]
        var nextRequest = 0
    }
    let state: Mutex<State>

    /// A characteristic of `uuid` with `properties`; `permissions` nil derives them from the
    /// properties (read, write, write without response).
    public init(
        uuid: BluetoothUUID, properties: CharacteristicProperties, permissions: AttributePermissions? = nil,
        value: [UInt8] = [], descriptors: [MutableDescriptor] = [], name: String = "Unknown"
    ) {
        self.uuid = uuid
        self.properties = properties
        self.permissions = permissions ?? CharacteristicDefinition.permissions(for: properties)
        self.descriptors = descriptors
        self.name = name
        layout = nil
        state = Mutex(State(value: value))
    }

    /// A characteristic as `definition` lays it out: at the handles it gives, if any.
    public init(_ definition: CharacteristicDefinition) {
        uuid = definition.uuid
        properties = definition.properties
        permissions = definition.permissions
        descriptors = definition.descriptors
        name = "Unknown"
        layout = definition
        state = Mutex(State(value: definition.value))
    }

    /// BlueCap's `MutableCharacteristic(UUID:properties:permissions:value:)`: the UUID as
    /// text (traps on text that is no UUID, as `CBUUID(string:)`).
    public convenience init(
        UUID: String, properties: CharacteristicProperties, permissions: AttributePermissions, value: Data?
    ) {
        guard let uuid = BluetoothUUID(UUID) else {
            preconditionFailure("MutableCharacteristic(UUID:): '\(UUID)' is not a UUID")
        }
        self.init(uuid: uuid, properties: properties, permissions: permissions, value: value.map { [UInt8]($0) } ?? [])
    }

    /// BlueCap's `MutableCharacteristic(UUID:)`: read, write and notify, readable and
    /// writeable, no value.
    public convenience init(UUID: String) {
        self.init(UUID: UUID, properties: [.read, .write, .notify], permissions: [.readable, .writeable], value: nil)
    }

    /// The service it belongs to (set by ``MutableService/characteristics``).
    public var service: MutableService? { state.withLock { $0.service } }

    /// The value centrals read (BlueCap's `value`): setting it sends nothing (see
    /// ``update(withData:)``).
    public var value: Data? {
        get { Data(state.withLock { $0.value }) }
        set { state.withLock { $0.value = newValue.map { [UInt8]($0) } ?? [] } }
    }

    /// Whether a central is subscribed (BlueCap's `isUpdating`).
    public var isUpdating: Bool { state.withLock { !$0.subscribers.isEmpty } }

    /// The centrals subscribed, by link (BlueCap's `subscribers`).
    public var subscribers: [ConnectedCentral] {
        state.withLock { $0.subscribers }
    }

    /// Updates made while no central was subscribed, sent to the first that subscribes
    /// (BlueCap's `pendingUpdates`; at most ``pendingUpdateLimit``).
    public var pendingUpdates: [Data] { state.withLock { $0.pendingUpdates.map { Data($0) } } }

    /// Whether it notifies or indicates (BlueCap's `canNotify`).
    public var canNotify: Bool { !properties.isDisjoint(with: [.notify, .indicate]) }

    /// The earlier name of ``canNotify`` (it has a CCCD when it notifies or indicates).
    @available(*, deprecated, renamed: "canNotify")
    public var hasCCCD: Bool { canNotify }

    /// Whether its properties include `property` (BlueCap's `propertyEnabled(_:)`).
    public func propertyEnabled(_ property: CharacteristicProperties) -> Bool { properties.contains(property) }

    /// Whether its permissions include `permission` (BlueCap's `permissionEnabled(_:)`).
    public func permissionEnabled(_ permission: AttributePermissions) -> Bool { permissions.contains(permission) }

    /// Sets the value and sends it to every subscribed central, in the order of the calls: a
    /// notification, or an indication to centrals that chose indications. With no central
    /// subscribed, it waits in ``pendingUpdates`` for the first. BlueCap's `update(withData:)`.
    public func update(withData value: Data) throws(MutableCharacteristicError) {
        guard canNotify else { throw .notifyNotSupported }
        let bytes = [UInt8](value)
        try state.withLock { state throws(MutableCharacteristicError) in
            guard let binding = state.binding else { throw .unconfigured }
            state.value = bytes
            if state.subscribers.isEmpty {
                state.pendingUpdates.append(bytes)
                if state.pendingUpdates.count > Self.pendingUpdateLimit { state.pendingUpdates.removeFirst() }
            } else {
                binding.outbox.yield(bytes)
            }
        }
    }

    /// What the server lays out for it.
    var definition: CharacteristicDefinition {
        var definition =
            layout
            ?? CharacteristicDefinition(
                uuid: uuid, properties: properties, permissions: permissions, descriptors: descriptors)
        definition.value = state.withLock { $0.value }
        return definition
    }

    func belong(to service: MutableService) { state.withLock { $0.service = service } }
}
