import ATT
import BluetoothCore
import HCI

/// Why a service could not be added.
public enum GATTServerError: Error, Equatable, Sendable, CustomStringConvertible {
    /// An included service is not in the database.
    case includedServiceNotFound(BluetoothUUID)
    /// A value is longer than 512 octets.
    case valueTooLong(BluetoothUUID, Int)
    /// The database has no handles left.
    case outOfHandles

    /// Readable.
    public var description: String {
        switch self {
        case let .includedServiceNotFound(uuid): "included service \(uuid) is not in the database"
        case let .valueTooLong(uuid, length): "the value of \(uuid) is \(length) octets; at most 512"
        case .outOfHandles: "the database has no handles left"
        }
    }
}

/// A read a client asked for, as an app's handler sees it.
public struct GATTReadRequest: Sendable, Equatable {
    /// The client's link.
    public var connection: ConnectionHandle
    /// The characteristic value's handle.
    public var handle: AttributeHandle
    /// The characteristic's UUID.
    public var uuid: BluetoothUUID
    /// Where the client reads from (Read Blob); 0 for a Read.
    public var offset: Int

    /// A read of `handle` from `offset`.
    public init(connection: ConnectionHandle, handle: AttributeHandle, uuid: BluetoothUUID, offset: Int) {
        self.connection = connection
        self.handle = handle
        self.uuid = uuid
        self.offset = offset
    }
}

/// A write a client made, as an app's handler sees it.
public struct GATTWriteRequest: Sendable, Equatable {
    /// The client's link.
    public var connection: ConnectionHandle
    /// The characteristic value's handle.
    public var handle: AttributeHandle
    /// The characteristic's UUID.
    public var uuid: BluetoothUUID
    /// The whole new value (a long or reliable write's parts put together).
    public var value: [UInt8]
    /// Whether the client waits for a response (Write Request, Execute Write) or not
    /// (Write Command).
    public var withResponse: Bool

    /// A write of `value` to `handle`.
    public init(connection: ConnectionHandle, handle: AttributeHandle, uuid: BluetoothUUID, value: [UInt8], withResponse: Bool) {
        self.connection = connection
        self.handle = handle
        self.uuid = uuid
        self.value = value
        self.withResponse = withResponse
    }
}

/// A client's subscription to one characteristic, from its CCCD.
public struct GATTSubscription: Sendable, Equatable {
    /// The client's link.
    public var connection: ConnectionHandle
    /// The characteristic value's handle.
    public var handle: AttributeHandle
    /// The characteristic's UUID.
    public var uuid: BluetoothUUID
    /// Notifications on.
    public var notifications: Bool
    /// Indications on.
    public var indications: Bool

    /// The subscription of `connection` to `handle`.
    public init(connection: ConnectionHandle, handle: AttributeHandle, uuid: BluetoothUUID, notifications: Bool, indications: Bool) {
        self.connection = connection
        self.handle = handle
        self.uuid = uuid
        self.notifications = notifications
        self.indications = indications
    }
}

/// The GATT server of a peripheral (Core Vol 3, Part G, and the ATT server of Part F): the
/// GAP and GATT services of ``LocalGATTServer`` followed by the app's services, whose
/// reads and writes may go to async handlers; each client's CCCDs; notifications and
/// indications to subscribed clients; the Database Hash kept right and Service Changed
/// indicated when services are added.
///
/// Requests are answered in order per link: while a handler runs, the link's later PDUs
/// wait (at most ``maximumWaitingPDUs``; a client that sends past that, breaking the one
/// request at a time rule, loses them). The attribute table and everything the handlers do
/// not decide is the `AttributeServer`'s (``attributes``).
@BluetoothActor
public final class GATTServer: ATTServer {
    /// An app's read handler: the value to serve (whole; the server cuts it at the offset
    /// and MTU), or the error code to refuse with.
    public typealias ReadHandler = @BluetoothActor (GATTReadRequest) async -> Result<[UInt8], ATTErrorCode>
    /// An app's write handler: nil accepts the value (it is stored), an error code refuses
    /// it (the client gets it, if it waits for a response).
    public typealias WriteHandler = @BluetoothActor (GATTWriteRequest) async -> ATTErrorCode?

    /// The GAP/GATT services at handles 0x0001–0x000D.
    public let base: LocalGATTServer
    /// The whole attribute table.
    public var attributes: AttributeServer { base.attributes }
    /// The services added, in order.
    public private(set) var services: [ServedService] = []
    /// Called when a client turns notifications or indications on or off.
    public var onSubscriptionChanged: ((GATTSubscription) -> Void)?
    /// Called after a write is applied (every write, handled or not).
    public var onValueWritten: ((GATTWriteRequest) -> Void)?
    /// How many PDUs of one link may wait while a handler runs.
    public var maximumWaitingPDUs = 16
    /// PDUs dropped because a link sent too many while a handler ran.
    public private(set) var droppedPDUs = 0

    /// What the server knows of each characteristic value with a CCCD.
    private struct Subscribable {
        let uuid: BluetoothUUID
        let properties: CharacteristicProperties
        let cccd: AttributeHandle
    }

    private var readHandlers: [AttributeHandle: ReadHandler] = [:]
    private var writeHandlers: [AttributeHandle: WriteHandler] = [:]
    /// UUID of every characteristic value handle.
    private var valueUUIDs: [AttributeHandle: BluetoothUUID] = [:]
    /// Characteristic values with a CCCD, by value handle; and the value handle of each CCCD.
    private var subscribable: [AttributeHandle: Subscribable] = [:]
    private var valueOfCCCD: [AttributeHandle: AttributeHandle] = [:]
    /// Each client's CCCD values, by CCCD handle (absent: 0x0000).
    private var cccds: [ConnectionHandle: [AttributeHandle: UInt16]] = [:]
    /// The bearer of each link a client reached us on.
    private var bearers: [ConnectionHandle: ATTBearer] = [:]
    /// Links whose handler is running: their PDUs waiting, in order.
    private var waiting: [ConnectionHandle: [[UInt8]]] = [:]

    /// What the server keeps of a bonded client between its links (Part G, 3.3.3.3: a
    /// CCCD's value persists across connections for bonded devices; 7.1: Service Changed
    /// is indicated to a bonded client that was away when the database changed).
    private struct BondedClient {
        /// Its CCCD values, by CCCD handle.
        var cccds: [AttributeHandle: UInt16] = [:]
        /// The handles that changed while it was away.
        var changed: (start: AttributeHandle, end: AttributeHandle)?
    }

    /// Bonded clients by their identity (the bond's identity address).
    private var bondedClients: [String: BondedClient] = [:]
    /// The bonded client on each link that has one.
    private var clientOfLink: [ConnectionHandle: String] = [:]

    /// A server with GAP Device Name `deviceName` and Appearance `appearance`.
    public convenience init(deviceName: String = "Bluejay", appearance: UInt16 = 0) {
        self.init(base: LocalGATTServer(deviceName: deviceName, appearance: appearance))
    }

    /// A server over `base`'s table (the stack's own GAP/GATT services).
    public init(base: LocalGATTServer) {
        self.base = base
        // Service Changed's CCCD is per client too.
        subscribable[LocalGATTServer.serviceChangedHandle] = Subscribable(uuid: .serviceChanged, properties: .indicate,
                                                                          cccd: LocalGATTServer.serviceChangedCCCDHandle)
        valueOfCCCD[LocalGATTServer.serviceChangedCCCDHandle] = LocalGATTServer.serviceChangedHandle
        valueUUIDs[LocalGATTServer.serviceChangedHandle] = .serviceChanged
        let table = base.attributes
        let previous = table.onWrite
        table.onWrite = { [unowned self] connection, handle, value in
            if let valueHandle = valueOfCCCD[handle] { return writeCCCD(value, of: valueHandle, connection: connection) }
            return previous?(connection, handle, value)
        }
        table.onRead = { [unowned self] connection, handle in
            guard valueOfCCCD[handle] != nil else { return nil }
            let bits = cccds[connection]?[handle] ?? 0
            return [UInt8(truncatingIfNeeded: bits), UInt8(bits >> 8)]
        }
    }

    /// How secure each link is, for permissions that need encryption or authentication.
    public var linkSecurity: ((ConnectionHandle) -> LinkSecurity)? {
        get { attributes.linkSecurity }
        set { attributes.linkSecurity = newValue }
    }

    // MARK: - The database

    /// Adds `service` after the last attribute and returns where its characteristics
    /// landed. The Database Hash is computed again, and clients subscribed to Service
    /// Changed are told of the new range.
    @discardableResult
    public func add(_ service: MutableService) throws(GATTServerError) -> ServedService {
        for characteristic in service.characteristics {
            let longest = ([characteristic.value] + characteristic.descriptors.map(\.value)).map(\.count).max() ?? 0
            guard longest <= AttributeServer.maximumValueLength else { throw .valueTooLong(characteristic.uuid, longest) }
        }
        var includes: [Attribute] = []
        let start = Int(attributes.attributes.last?.handle.rawValue ?? 0) + 1
        let count = 1 + service.includedServices.count
            + service.characteristics.reduce(0) { $0 + 2 + ($1.hasCCCD ? 1 : 0) + $1.descriptors.count }
        guard start + count - 1 <= 0xFFFF else { throw .outOfHandles }
        var next = AttributeHandle(rawValue: UInt16(start))
        func take() -> AttributeHandle {
            defer { next = next + 1 }
            return next
        }
        let declaration = take()
        for uuid in service.includedServices {
            guard let included = services.first(where: { $0.service.uuid == uuid })?.service else { throw .includedServiceNotFound(uuid) }
            var value = included.handle.bytes + included.endGroupHandle.bytes
            // Only a 16-bit UUID goes in the declaration (Part G, 3.2).
            if included.uuid.shortValue != nil { value += included.uuid.attributeBytes }
            includes.append(Attribute(handle: take(), type: .include, value: value))
        }
        var table: [Attribute] = [Attribute(handle: declaration, type: service.isPrimary ? .primaryService : .secondaryService,
                                            value: service.uuid.attributeBytes)]
        table += includes
        var served: [ServedCharacteristic] = []
        for characteristic in service.characteristics {
            let declarationHandle = take(), valueHandle = take()
            table.append(Attribute(handle: declarationHandle, type: .characteristic,
                                   value: CharacteristicDeclaration(properties: characteristic.properties, valueHandle: valueHandle,
                                                                    uuid: characteristic.uuid).value))
            table.append(Attribute(handle: valueHandle, type: characteristic.uuid, value: characteristic.value,
                                   permissions: characteristic.permissions))
            valueUUIDs[valueHandle] = characteristic.uuid
            var cccd: AttributeHandle?
            if characteristic.hasCCCD {
                let handle = take()
                cccd = handle
                table.append(Attribute(handle: handle, type: .clientCharacteristicConfiguration, value: [0, 0], permissions: [.read, .write]))
                subscribable[valueHandle] = Subscribable(uuid: characteristic.uuid, properties: characteristic.properties, cccd: handle)
                valueOfCCCD[handle] = valueHandle
            }
            for descriptor in characteristic.descriptors {
                table.append(Attribute(handle: take(), type: descriptor.uuid, value: descriptor.value, permissions: descriptor.permissions))
            }
            served.append(ServedCharacteristic(uuid: characteristic.uuid, properties: characteristic.properties,
                                               valueHandle: valueHandle, cccdHandle: cccd))
        }
        for attribute in table { attributes.add(attribute) }
        let end = table.last?.handle ?? declaration
        let result = ServedService(service: Service(uuid: service.uuid, handle: declaration, endGroupHandle: end, isPrimary: service.isPrimary),
                                   characteristics: served)
        services.append(result)
        base.updateDatabaseHash()
        indicateServiceChanged(from: declaration, to: end)
        return result
    }

    /// Tells every client subscribed to Service Changed that `start...end` changed; bonded
    /// clients away now are told when they come back.
    private func indicateServiceChanged(from start: AttributeHandle, to end: AttributeHandle) {
        let value = start.bytes + end.bytes
        for connection in subscribers(of: LocalGATTServer.serviceChangedHandle).filter(\.indications).map(\.connection) {
            guard let bearer = bearers[connection] else { continue }
            Task { @BluetoothActor in try? await bearer.indicate(handle: LocalGATTServer.serviceChangedHandle, value: value[...]) }
        }
        let present = Set(clientOfLink.values)
        for (client, var memory) in bondedClients where !present.contains(client) {
            let changed = memory.changed.map { (min($0.start, start), max($0.end, end)) } ?? (start, end)
            memory.changed = changed
            bondedClients[client] = memory
        }
    }

    // MARK: - Bonded clients

    /// The client on `connection` is bonded as `client` (its identity address): its CCCD
    /// values, those written on this link so far and from now on, are kept for its next
    /// links.
    public func bind(_ connection: ConnectionHandle, toBondedClient client: String) {
        clientOfLink[connection] = client
        var memory = bondedClients[client] ?? BondedClient()
        for (cccd, bits) in cccds[connection] ?? [:] { memory.cccds[cccd] = bits }
        bondedClients[client] = memory
    }

    /// The bonded `client` is back on `bearer`'s link (encrypted with the bond): its CCCD
    /// values apply again (each change told as when it is written), and if the database
    /// changed while it was away and it has Service Changed indications on, it is told
    /// which handles. Returns the subscriptions restored.
    @discardableResult
    public func restoreBondedClient(_ client: String, on bearer: ATTBearer) -> [GATTSubscription] {
        let connection = bearer.connection
        bearers[connection] = bearer
        clientOfLink[connection] = client
        guard var memory = bondedClients[client] else {
            bondedClients[client] = BondedClient()
            return []
        }
        var restored: [GATTSubscription] = []
        for (cccd, bits) in memory.cccds.sorted(by: { $0.key < $1.key }) where bits != 0 {
            guard let valueHandle = valueOfCCCD[cccd], let entry = subscribable[valueHandle], cccds[connection]?[cccd] != bits else { continue }
            cccds[connection, default: [:]][cccd] = bits
            let subscription = GATTSubscription(connection: connection, handle: valueHandle, uuid: entry.uuid,
                                                notifications: bits & 1 != 0, indications: bits & 2 != 0)
            restored.append(subscription)
            onSubscriptionChanged?(subscription)
        }
        if let changed = memory.changed {
            memory.changed = nil
            if memory.cccds[LocalGATTServer.serviceChangedCCCDHandle].map({ $0 & 0x0002 != 0 }) == true {
                let value = changed.start.bytes + changed.end.bytes
                Task { @BluetoothActor in try? await bearer.indicate(handle: LocalGATTServer.serviceChangedHandle, value: value[...]) }
            }
        }
        bondedClients[client] = memory
        return restored
    }

    /// Forgets what was kept for `client` (its bond was removed).
    public func forgetBondedClient(_ client: String) { bondedClients[client] = nil }

    /// Serves the value at `handle` from `handler` from now on (nil: the stored value).
    public func setReadHandler(for handle: AttributeHandle, _ handler: ReadHandler?) { readHandlers[handle] = handler }

    /// Lets `handler` accept or refuse every write to the value at `handle` from now on
    /// (nil: every permitted write is accepted).
    public func setWriteHandler(for handle: AttributeHandle, _ handler: WriteHandler?) { writeHandlers[handle] = handler }

    /// The stored value at `handle`.
    public func value(of handle: AttributeHandle) -> [UInt8]? { attributes.value(of: handle) }

    /// Replaces the stored value at `handle` (no notification: see ``notify(_:value:to:)``).
    public func setValue(_ value: [UInt8], of handle: AttributeHandle) { attributes.setValue(value, of: handle) }

    // MARK: - Subscriptions, notifications, indications

    /// Each client's subscription to the value at `handle`, for clients that turned
    /// something on.
    public func subscribers(of handle: AttributeHandle) -> [GATTSubscription] {
        guard let entry = subscribable[handle] else { return [] }
        return cccds.compactMap { connection, values in
            let bits = values[entry.cccd] ?? 0
            guard bits != 0 else { return nil }
            return GATTSubscription(connection: connection, handle: handle, uuid: entry.uuid,
                                    notifications: bits & 0x0001 != 0, indications: bits & 0x0002 != 0)
        }.sorted { $0.connection < $1.connection }
    }

    /// Notifies `value` (cut to each link's ATT_MTU - 3) to every client with notifications
    /// on for `handle`, or to those of `connections`; returns the links it went to. A link
    /// whose send fails is skipped (it is going down).
    @discardableResult
    public func notify(_ handle: AttributeHandle, value: [UInt8], to connections: [ConnectionHandle]? = nil) -> [ConnectionHandle] {
        var sent: [ConnectionHandle] = []
        for subscription in subscribers(of: handle) where subscription.notifications {
            guard connections?.contains(subscription.connection) ?? true, let bearer = bearers[subscription.connection] else { continue }
            do {
                try bearer.notify(handle: handle, value: value[...])
                sent.append(subscription.connection)
            } catch {
                bearer.logger.log(.info, "notifying \(hex(handle, digits: 4)) on \(hex(subscription.connection, digits: 4)): \(error)")
            }
        }
        return sent
    }

    /// Indicates `value` to the client on `connection` and returns once it confirms; it
    /// must have indications on for `handle` (else `ATTError.protocolError`).
    public func indicate(_ handle: AttributeHandle, value: [UInt8], to connection: ConnectionHandle) async throws(ATTError) {
        guard subscribers(of: handle).contains(where: { $0.connection == connection && $0.indications }),
              let bearer = bearers[connection] else {
            throw .protocolError("the client on \(hex(connection, digits: 4)) has not turned indications on for \(hex(handle, digits: 4))")
        }
        try await bearer.indicate(handle: handle, value: value[...])
    }

    /// Stores a CCCD write (two octets; only the bits the characteristic's properties allow)
    /// and tells the app.
    private func writeCCCD(_ value: [UInt8], of valueHandle: AttributeHandle, connection: ConnectionHandle) -> ATTErrorCode? {
        guard let entry = subscribable[valueHandle] else { return .unlikelyError }
        guard value.count == 2 else { return .invalidAttributeValueLength }
        let bits = UInt16(value[0]) | UInt16(value[1]) << 8
        var allowed: UInt16 = 0
        if entry.properties.contains(.notify) { allowed |= 0x0001 }
        if entry.properties.contains(.indicate) { allowed |= 0x0002 }
        guard bits & ~allowed == 0 else { return .cccdImproperlyConfigured }
        let old = cccds[connection]?[entry.cccd] ?? 0
        cccds[connection, default: [:]][entry.cccd] = bits
        if let client = clientOfLink[connection] { bondedClients[client]?.cccds[entry.cccd] = bits }
        if old != bits {
            onSubscriptionChanged?(GATTSubscription(connection: connection, handle: valueHandle, uuid: entry.uuid,
                                                    notifications: bits & 1 != 0, indications: bits & 2 != 0))
        }
        return nil
    }

    // MARK: - ATTServer

    /// Answers from the table (no handler involved).
    public func respond(to pdu: ArraySlice<UInt8>, connection: ConnectionHandle, mtu: Int) -> [UInt8]? {
        attributes.respond(to: pdu, connection: connection, mtu: mtu)
    }

    /// Answers a PDU from `bearer`'s client: at once from the table, or later, when the
    /// request goes to an app's handler.
    public func respond(to pdu: ArraySlice<UInt8>, on bearer: ATTBearer) -> [UInt8]? {
        let connection = bearer.connection
        bearers[connection] = bearer
        if waiting[connection] != nil {
            guard waiting[connection, default: []].count < maximumWaitingPDUs else {
                droppedPDUs += 1
                bearer.logger.log(.warning, "handle \(hex(connection, digits: 4)): a PDU arrived while \(maximumWaitingPDUs) waited for a handler; dropped")
                return nil
            }
            waiting[connection, default: []].append(Array(pdu))
            return nil
        }
        return answer(pdu, on: bearer)
    }

    /// Forgets a link that ended: its CCCDs, prepare queue and waiting PDUs.
    public func linkEnded(_ connection: ConnectionHandle) {
        cccds[connection] = nil
        clientOfLink[connection] = nil
        bearers[connection] = nil
        waiting[connection] = nil
        attributes.linkEnded(connection)
    }

    /// The answer now, or nil when a handler will give it (then the link's PDUs wait).
    private func answer(_ pdu: ArraySlice<UInt8>, on bearer: ATTBearer) -> [UInt8]? {
        let connection = bearer.connection
        guard let first = pdu.first else { return nil }
        let opcode = ATTOpcode(rawValue: first)
        switch opcode {
        case .readRequest, .readBlobRequest:
            let handle: AttributeHandle, offset: UInt16
            if opcode == .readRequest, let request = try? ReadRequest(decoding: pdu) {
                (handle, offset) = (request.handle, 0)
            } else if opcode == .readBlobRequest, let request = try? ReadBlobRequest(decoding: pdu) {
                (handle, offset) = (request.handle, request.offset)
            } else {
                break
            }
            guard let handler = readHandlers[handle], let uuid = valueUUIDs[handle] else { break }
            if let attribute = attributes.attribute(at: handle), let refusal = attributes.readRefusal(attribute, connection: connection) {
                return ErrorResponse(requestOpcode: opcode, handle: refusal.handle, error: refusal.code).encoded()
            }
            let request = GATTReadRequest(connection: connection, handle: handle, uuid: uuid, offset: Int(offset))
            defer_(on: bearer) { [attributes] in
                switch await handler(request) {
                case let .failure(code):
                    return ErrorResponse(requestOpcode: opcode, handle: handle, error: code).encoded()
                case let .success(value):
                    attributes.setValue(value, of: handle)
                    if opcode == .readRequest { return ReadResponse(value: value.prefix(bearer.mtu - 1)).encoded() }
                    do throws(AttributeRefusal) {
                        return try AttributeServer.readBlobResponse(value, offset: offset, handle: handle, mtu: bearer.mtu).encoded()
                    } catch {
                        return ErrorResponse(requestOpcode: opcode, handle: error.handle, error: error.code).encoded()
                    }
                }
            }
            return nil
        case .writeRequest, .writeCommand:
            let withResponse = opcode == .writeRequest
            let handle: AttributeHandle, value: [UInt8]
            if withResponse, let request = try? WriteRequest(decoding: pdu) {
                (handle, value) = (request.handle, Array(request.value))
            } else if !withResponse, let command = try? WriteCommand(decoding: pdu) {
                (handle, value) = (command.handle, Array(command.value))
            } else {
                break
            }
            guard let uuid = valueUUIDs[handle], valueOfCCCD[handle] == nil else { break }
            if let refusal = attributes.writeRefusal(handle: handle, length: value.count, needs: withResponse ? .write : .writeWithoutResponse,
                                                     connection: connection) {
                return withResponse ? ErrorResponse(requestOpcode: opcode, handle: refusal.handle, error: refusal.code).encoded() : nil
            }
            let request = GATTWriteRequest(connection: connection, handle: handle, uuid: uuid, value: value, withResponse: withResponse)
            guard let handler = writeHandlers[handle] else {
                attributes.setValue(value, of: handle)
                onValueWritten?(request)
                return withResponse ? WriteResponse().encoded() : nil
            }
            defer_(on: bearer) { [weak self] in
                if let code = await handler(request) {
                    return withResponse ? ErrorResponse(requestOpcode: opcode, handle: handle, error: code).encoded() : nil
                }
                self?.attributes.setValue(value, of: handle)
                self?.onValueWritten?(request)
                return withResponse ? WriteResponse().encoded() : nil
            }
            return nil
        case .executeWriteRequest:
            guard let request = try? ExecuteWriteRequest(decoding: pdu) else { break }
            let values: [(AttributeHandle, [UInt8])]
            do { values = try attributes.takePreparedValues(flags: request.flags, connection: connection) } catch {
                return ErrorResponse(requestOpcode: opcode, handle: error.handle, error: error.code).encoded()
            }
            defer_(on: bearer) { [weak self] in
                guard let self else { return nil }
                var requests: [GATTWriteRequest] = []
                for (handle, value) in values {
                    if let code = base.attributes.onWrite?(connection, handle, value) {
                        return ErrorResponse(requestOpcode: opcode, handle: handle, error: code).encoded()
                    }
                    let write = GATTWriteRequest(connection: connection, handle: handle, uuid: valueUUIDs[handle] ?? BluetoothUUID(UInt16(0)),
                                                 value: value, withResponse: true)
                    if let handler = writeHandlers[handle], let code = await handler(write) {
                        return ErrorResponse(requestOpcode: opcode, handle: handle, error: code).encoded()
                    }
                    requests.append(write)
                }
                for write in requests {
                    attributes.setValue(write.value, of: write.handle)
                    if valueUUIDs[write.handle] != nil { onValueWritten?(write) }
                }
                return ExecuteWriteResponse().encoded()
            }
            return nil
        default:
            break
        }
        let answer = attributes.respond(to: pdu, connection: connection, mtu: bearer.mtu)
        return answer
    }

    /// Runs `work` for `bearer`'s link, holding its later PDUs until it is done; sends what
    /// it returns, then answers the PDUs that waited, in order.
    private func defer_(on bearer: ATTBearer, _ work: @escaping @BluetoothActor () async -> [UInt8]?) {
        let connection = bearer.connection
        waiting[connection] = []
        Task { @BluetoothActor [weak self] in
            let response = await work()
            if let response { bearer.sendResponse(response) }
            self?.drain(bearer)
        }
    }

    /// Answers the PDUs that waited on `bearer`'s link until one goes to a handler again.
    private func drain(_ bearer: ATTBearer) {
        let connection = bearer.connection
        while var queue = waiting[connection] {
            guard !queue.isEmpty else {
                waiting[connection] = nil
                return
            }
            let next = queue.removeFirst()
            waiting[connection] = nil
            let answer = answer(next[...], on: bearer)
            if let answer { bearer.sendResponse(answer) }
            // A handler took it: the rest waits behind it.
            if waiting[connection] != nil {
                waiting[connection, default: []] += queue
                return
            }
            waiting[connection] = queue
        }
    }
}

extension AttributeHandle {
    /// The handle as ATT carries it, least significant octet first.
    var bytes: [UInt8] { [UInt8(truncatingIfNeeded: rawValue), UInt8(rawValue >> 8)] }
}
