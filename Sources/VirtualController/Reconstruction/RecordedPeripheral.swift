import ATT
import BluetoothCore
import HCI

/// What a btsnoop recording shows of one peer device the recording host talked to: enough to
/// stand in for it (``VirtualController``) and to say what is missing (`bluejay mock`).
///
/// Everything here was seen on the air, in the recording's own words: the GATT database
/// from the discovery responses the host received, values from reads, notifications,
/// indications and acknowledged writes, errors from Error Responses. Nothing is invented:
/// a handle no response named is absent, a value never seen is nil.
public struct RecordedPeripheral: Sendable, Equatable {
    /// The peer's address, from its connection event (or an advertising report); made up
    /// when the recording never shows it (``addressIsMadeUp``).
    public var address: BluetoothAddress
    /// The peer's address type, as the connection event gave it.
    public var addressType: AddressType
    /// Whether the recording never showed the address (its connection began before the
    /// capture): ``address`` is then a static random address derived from the recording and
    /// the connection handle, the same every time the file is read.
    public var addressIsMadeUp: Bool
    /// The connection handles the peer had in the recording, in order (one per connection).
    public var connectionHandles: [ConnectionHandle]
    /// The last advertising data the peer was seen sending (legacy or extended report),
    /// nil when the recording holds no advertising report from it.
    public var advertisingData: [UInt8]?
    /// The last scan response data seen from it.
    public var scanResponseData: [UInt8]?
    /// Its name: the Complete (or Shortened) Local Name it advertised, else the Device Name
    /// (0x2A00) value read from it.
    public var name: String?
    /// Every attribute the recording shows, sorted by handle, each handle once.
    public var attributes: [RecordedAttribute]
    /// The peer's receive MTU: the Server Rx MTU of its Exchange MTU Response (or the Client
    /// Rx MTU of its own request); nil when the recording shows no exchange.
    public var mtu: Int?
    /// Every Error Response the peer sent to the recording host's requests, in order.
    public var errors: [RecordedError]
    /// What the peer sent on its own after the host wrote to it, in order.
    public var reactions: [RecordedReaction]

    /// A peer with nothing recorded beyond its address.
    public init(
        address: BluetoothAddress, addressType: AddressType, addressIsMadeUp: Bool = false,
        connectionHandles: [ConnectionHandle] = [], advertisingData: [UInt8]? = nil, scanResponseData: [UInt8]? = nil,
        name: String? = nil, attributes: [RecordedAttribute] = [], mtu: Int? = nil, errors: [RecordedError] = [],
        reactions: [RecordedReaction] = []
    ) {
        self.address = address
        self.addressType = addressType
        self.addressIsMadeUp = addressIsMadeUp
        self.connectionHandles = connectionHandles
        self.advertisingData = advertisingData
        self.scanResponseData = scanResponseData
        self.name = name
        self.attributes = attributes
        self.mtu = mtu
        self.errors = errors
        self.reactions = reactions
    }

    /// The attribute at `handle`, if the recording shows one.
    public func attribute(at handle: AttributeHandle) -> RecordedAttribute? {
        attributes.first { $0.handle == handle }
    }
}

/// One attribute of a recorded peer's database.
public struct RecordedAttribute: Sendable, Equatable {
    /// Its handle.
    public var handle: AttributeHandle
    /// Its type; nil when the recording shows the handle only in use (read, written or
    /// notified) and never in a discovery response. Such attributes are served by handle
    /// but never discovered.
    public var type: BluetoothUUID?
    /// The last value seen; nil when the recording never shows it. Declarations (service,
    /// include, characteristic) carry their declared value.
    public var value: [UInt8]?
    /// The value a client found first: the first one the recording shows read or notified
    /// on a connection before any write to it there; nil when that is unknown (or the same
    /// as ``value``). The virtual peer starts from it, so an app that reads before it writes
    /// sees what it saw when recorded; writes then change it as they did.
    public var initialValue: [UInt8]?
    /// For a service declaration: the End Group Handle its discovery response gave.
    public var groupEndHandle: AttributeHandle?
    /// Whether the peer refused it on an unencrypted link for want of security
    /// (Insufficient Authentication, Insufficient Encryption, Encryption Key Size Too Short):
    /// served only once the link is encrypted.
    public var requiresEncryption: Bool

    /// An attribute.
    public init(
        handle: AttributeHandle, type: BluetoothUUID?, value: [UInt8]? = nil, initialValue: [UInt8]? = nil,
        groupEndHandle: AttributeHandle? = nil, requiresEncryption: Bool = false
    ) {
        (self.handle, self.type, self.value, self.initialValue, self.groupEndHandle, self.requiresEncryption) =
            (handle, type, value, initialValue, groupEndHandle, requiresEncryption)
    }
}

/// An Error Response the peer sent.
public struct RecordedError: Sendable, Equatable {
    /// The opcode of the request it answered.
    public var request: ATTOpcode
    /// The Attribute Handle In Error.
    public var handle: AttributeHandle
    /// The error code.
    public var code: ATTErrorCode
    /// Whether the link was encrypted when the peer answered.
    public var encrypted: Bool
    /// Whether a later request of the same kind on the same handle succeeded (the error
    /// then says nothing lasting: e.g. a read refused before pairing and answered after).
    public var overridden: Bool

    /// An error as recorded.
    public init(
        request: ATTOpcode, handle: AttributeHandle, code: ATTErrorCode, encrypted: Bool, overridden: Bool = false
    ) {
        (self.request, self.handle, self.code, self.encrypted, self.overridden) =
            (request, handle, code, encrypted, overridden)
    }
}

/// Notifications and indications the peer sent after one stimulus, in order.
public struct RecordedReaction: Sendable, Equatable {
    /// What came first.
    public enum Trigger: Sendable, Equatable {
        /// The host wrote `value` to `handle` (Write Request the peer acknowledged, Write
        /// Command, Signed Write Command, or a prepared write it executed).
        case write(handle: AttributeHandle, value: [UInt8])
        /// Nothing the recording shows: notifications of the value at `handle` before any
        /// write on the connection (e.g. the capture began after the subscription). Replayed
        /// when a client subscribes to `handle`.
        case subscription(handle: AttributeHandle)
    }

    /// The stimulus.
    public var trigger: Trigger
    /// What the peer sent until the next stimulus on the same connection (or its end).
    public var notifications: [RecordedNotification]

    /// A reaction.
    public init(trigger: Trigger, notifications: [RecordedNotification]) {
        (self.trigger, self.notifications) = (trigger, notifications)
    }
}

/// One Handle Value Notification or Indication the peer sent.
public struct RecordedNotification: Sendable, Equatable {
    /// The attribute handle.
    public var handle: AttributeHandle
    /// The value.
    public var value: [UInt8]
    /// An indication (the host confirmed it) rather than a notification.
    public var isIndication: Bool

    /// A notification or indication.
    public init(handle: AttributeHandle, value: [UInt8], isIndication: Bool) {
        (self.handle, self.value, self.isIndication) = (handle, value, isIndication)
    }
}
