import ATT
import BluetoothCore
import HCI

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
    /// An app's authorizer: true serves the request, false refuses it with Insufficient
    /// Authorization (Core Vol 3, Part F, 3.2.5 and 3.4.1.1).
    public typealias Authorizer = @BluetoothActor (GATTAuthorizationRequest) async -> Bool

    /// Our GAP/GATT services (at handles 0x0001–0x000D unless the app's database moved them).
    public let base: LocalGATTServer
    /// The whole attribute table.
    public var attributes: AttributeServer { base.attributes }
    /// The services added, in order.
    public internal(set) var services: [ServedService] = []
    /// Called when a client turns notifications or indications on or off.
    public var onSubscriptionChanged: ((GATTSubscription) -> Void)?
    /// Called after a write is applied (every write, handled or not).
    public var onValueWritten: ((GATTWriteRequest) -> Void)?
    /// Asked before a read or write of an attribute that needs authorization is served
    /// (Read, Read Blob, Write, Write Command, Prepare Write; a client's later PDUs wait
    /// meanwhile); nil refuses them all. Read By Type and Read Multiple reaching such an
    /// attribute get Insufficient Authorization without asking: a client reads it by handle.
    public var authorizer: Authorizer?
    /// How many PDUs of one link may wait while a handler runs.
    public var maximumWaitingPDUs = 16
    /// PDUs dropped because a link sent too many while a handler ran.
    public private(set) var droppedPDUs = 0

    /// What the server knows of each characteristic value with a CCCD.
    struct Subscribable {
        let uuid: BluetoothUUID
        let properties: CharacteristicProperties
        let cccd: AttributeHandle
    }

    var readHandlers: [AttributeHandle: ReadHandler] = [:]
    var writeHandlers: [AttributeHandle: WriteHandler] = [:]
    /// The attributes the handlers own, as the table is told of them (nothing asked yet).
    var handled = OutsideAnswers.none
    /// UUID of every characteristic value handle.
    var valueUUIDs: [AttributeHandle: BluetoothUUID] = [:]
    /// Characteristic values with a CCCD, by value handle; and the value handle of each CCCD.
    var subscribable: [AttributeHandle: Subscribable] = [:]
    var valueOfCCCD: [AttributeHandle: AttributeHandle] = [:]
    /// What the server keeps for the client on one link: kept on the link's bearer
    /// (``ATTBearer/serverState``), so it ends with the link.
    final class LinkClient {
        /// The table's state for it (its prepare queue).
        var table = AttributeServer.Client()
        /// Its CCCD values, by CCCD handle (absent: 0x0000).
        var cccds: [AttributeHandle: UInt16] = [:]
        /// While a handler runs for it: its requests waiting, in order.
        var waiting: [ATTRequest]?
        /// The bonded client it is (the bond's identity), once bound.
        var bonded: String?
    }

    /// The bearers whose clients reached this server, each one's ``LinkClient`` on it.
    private(set) var served: [ATTBearer] = []
    /// The one request the app authorized, while the table answers it.
    private var granted: (connection: ConnectionHandle, handle: AttributeHandle)?

    /// What the server keeps of a bonded client between its links (Part G, 3.3.3.3: a
    /// CCCD's value persists across connections for bonded devices; 7.1: Service Changed
    /// is indicated to a bonded client that was away when the database changed).
    struct BondedClient {
        /// Its CCCD values, by CCCD handle.
        var cccds: [AttributeHandle: UInt16] = [:]
        /// The handles that changed while it was away.
        var changed: (start: AttributeHandle, end: AttributeHandle)?
    }

    /// Called with what to store of a bonded client each time it changes (its CCCDs, the
    /// database it saw), and with nil when the client is forgotten: the app layer keeps it
    /// with the bond, so that it outlives the process (``BondedClientRecord``).
    public var onBondedClientChanged: ((_ client: String, _ record: BondedClientRecord?) -> Void)?

    /// Bonded clients by their identity (the bond's identity address).
    var bondedClients: [String: BondedClient] = [:]

    /// A server with GAP Device Name `deviceName` and Appearance `appearance`.
    public convenience init(deviceName: String = "Bluejay", appearance: UInt16 = 0) {
        self.init(base: LocalGATTServer(deviceName: deviceName, appearance: appearance))
    }

    /// A server over `base`'s table (the stack's own GAP/GATT services).
    public init(base: LocalGATTServer) {
        self.base = base
        registerServiceChanged()
        let table = base.attributes
        let previous = table.onWrite
        // Weak: the table belongs to `base`, which its owner may keep after this server.
        table.onWrite = { [weak self] connection, handle, value in
            if let self, let valueHandle = valueOfCCCD[handle] {
                return writeCCCD(value, of: valueHandle, connection: connection)
            }
            return previous?(connection, handle, value)
        }
        table.onExecuteWrite = { [weak self] _, handles in self?.reliableWriteRefusal(handles) }
        table.isAuthorized = { [weak self] connection, handle in
            guard let granted = self?.granted else { return false }
            return granted.connection == connection && granted.handle == handle
        }
        table.onWritten = { [weak self] connection, handle, value, withResponse in
            // The app hears of characteristic values, not of descriptors (CCCDs have their own).
            guard let self, let uuid = valueUUIDs[handle] else { return }
            onValueWritten?(
                GATTWriteRequest(
                    connection: connection, handle: handle, uuid: uuid, value: value, withResponse: withResponse))
        }
        let previousRead = table.onRead
        table.onRead = { [weak self] connection, handle in
            guard let self, valueOfCCCD[handle] != nil else { return previousRead?(connection, handle) }
            let bits = client(of: connection)?.client.cccds[handle] ?? 0
            return [UInt8(truncatingIfNeeded: bits), UInt8(bits >> 8)]
        }
    }

    /// How secure each link is, for permissions that need encryption or authentication.
    public var linkSecurity: ((ConnectionHandle) -> LinkSecurity)? {
        get { attributes.linkSecurity }
        set { attributes.linkSecurity = newValue }
    }

    // MARK: - Clients

    /// The client on `bearer`'s link, made the first time it reaches this server.
    func client(on bearer: ATTBearer) -> LinkClient {
        if let client = bearer.serverState as? LinkClient { return client }
        let client = LinkClient()
        bearer.serverState = client
        served.removeAll { !$0.isOpen || $0 === bearer }
        served.append(bearer)
        return client
    }

    /// The client on link `connection` and its bearer, if it reached this server.
    func client(of connection: ConnectionHandle) -> (bearer: ATTBearer, client: LinkClient)? {
        for bearer in served where bearer.isOpen && bearer.connection == connection {
            if let client = bearer.serverState as? LinkClient { return (bearer, client) }
        }
        return nil
    }

    /// Every client on an open link, with its bearer, in the order they came.
    var clients: [(bearer: ATTBearer, client: LinkClient)] {
        served.compactMap { bearer in bearer.isOpen ? (bearer.serverState as? LinkClient).map { (bearer, $0) } : nil }
    }

    // MARK: - The database

    /// Tells every client subscribed to Service Changed that `start...end` changed; bonded
    /// clients away now are told when they come back.
    func indicateServiceChanged(from start: AttributeHandle, to end: AttributeHandle) {
        let value = start.bytes + end.bytes
        // An app's own GATT service (the file's) has its own Service Changed: not ours to indicate.
        guard let serviceChanged = base.serviceChangedValueHandle else { return }
        for connection in subscribers(of: serviceChanged).filter(\.indications).map(\.connection) {
            guard let bearer = client(of: connection)?.bearer else { continue }
            Task { @BluetoothActor in try? await bearer.indicate(handle: serviceChanged, value: value[...]) }
        }
        let present = Set(clients.compactMap(\.client.bonded))
        for (client, var memory) in bondedClients where !present.contains(client) {
            let changed = memory.changed.map { (min($0.start, start), max($0.end, end)) } ?? (start, end)
            memory.changed = changed
            bondedClients[client] = memory
        }
    }

    /// Serves the value at `handle` from `handler` from now on (nil: the stored value).
    public func setReadHandler(for handle: AttributeHandle, _ handler: ReadHandler?) {
        readHandlers[handle] = handler
        handled.readHandled = Set(readHandlers.keys)
    }

    /// Lets `handler` accept or refuse every write to the value at `handle` from now on
    /// (nil: every permitted write is accepted).
    public func setWriteHandler(for handle: AttributeHandle, _ handler: WriteHandler?) {
        writeHandlers[handle] = handler
        handled.writeHandled = Set(writeHandlers.keys)
    }

    /// The stored value at `handle`.
    public func value(of handle: AttributeHandle) -> [UInt8]? { attributes.value(of: handle) }

    /// Replaces the stored value at `handle` (no notification: see ``notify(_:value:to:)``).
    public func setValue(_ value: [UInt8], of handle: AttributeHandle) { attributes.setValue(value, of: handle) }

    // MARK: - ATTServer

    /// Answers a request from `bearer`'s client: at once from the table, or later, when the
    /// request goes to an app's handler.
    public func respond(to request: ATTRequest, on bearer: ATTBearer) -> [UInt8]? {
        let client = client(on: bearer)
        if let waiting = client.waiting {
            guard waiting.count < maximumWaitingPDUs else {
                droppedPDUs += 1
                bearer.logger.log(
                    .warning,
                    "handle \(hex(bearer.connection, digits: 4)): a PDU arrived while \(maximumWaitingPDUs) waited for a handler; dropped"
                )
                return nil
            }
            client.waiting?.append(request)
            return nil
        }
        return answer(request, on: bearer)
    }

    /// `bearer`'s link ended: its client (CCCDs, prepare queue, waiting requests) went with it.
    public func bearerClosed(_ bearer: ATTBearer) { served.removeAll { $0 === bearer } }

    /// Forgets the client on link `connection` now (its CCCDs, prepare queue and waiting
    /// PDUs), as when its link ends.
    public func linkEnded(_ connection: ConnectionHandle) {
        for bearer in served where bearer.connection == connection { bearer.serverState = nil }
        served.removeAll { $0.connection == connection }
    }

    /// The answer now, or nil when the app's authorizer or a handler will give it (then the
    /// link's PDUs wait).
    private func answer(_ request: ATTRequest, on bearer: ATTBearer) -> [UInt8]? {
        guard let asked = authorizationRequest(request, connection: bearer.connection) else {
            switch plan(request, on: bearer, answers: OutsideAnswers.none, granted: nil) {
            case let .now(answer): return answer
            case let .later(work):
                defer_(on: bearer, work)
                return nil
            }
        }
        defer_(on: bearer) { [weak self] in
            guard let self else { return nil }
            guard let authorizer, await authorizer(asked) else {
                // A command gets no answer, refused or not.
                guard !request.isCommand else { return nil }
                return ErrorResponse(
                    requestOpcode: request.opcode, handle: asked.handle, error: .insufficientAuthorization
                ).encoded()
            }
            return await plan(request, on: bearer, answers: OutsideAnswers.none, granted: asked).result()
        }
        return nil
    }

    /// What to ask the app before `request` is served: a read or write naming one attribute
    /// that needs authorization for it, and that the client may otherwise have (permitted,
    /// its link secure enough); nil when nothing is to be asked (the table refuses the rest).
    private func authorizationRequest(_ request: ATTRequest, connection: ConnectionHandle)
        -> GATTAuthorizationRequest?
    {
        let access: GATTAuthorizationRequest.Access, handle: AttributeHandle
        var offset = 0, value: [UInt8] = []
        switch request {
        case let .read(read): (access, handle) = (.read, read.handle)
        case let .readBlob(read): (access, handle, offset) = (.read, read.handle, Int(read.offset))
        case let .write(write): (access, handle, value) = (.write, write.handle, Array(write.value))
        case let .writeCommand(command): (access, handle, value) = (.write, command.handle, Array(command.value))
        case let .prepareWrite(part):
            (access, handle, offset, value) = (.write, part.handle, Int(part.offset), Array(part.value))
        default:
            return nil
        }
        guard let attribute = attributes.attribute(at: handle),
            attribute.permissions.contains(access == .read ? .readAuthorized : .writeAuthorized)
        else { return nil }
        // Only what the table would serve once authorized is worth asking about.
        granted = (connection, handle)
        defer { granted = nil }
        let refusal =
            access == .read
            ? attributes.readRefusal(attribute, connection: connection)
            : attributes.writeRefusal(
                handle: handle, length: 0,
                needs: request.opcode == .writeCommand ? .writeWithoutResponse : .write,
                connection: connection)
        guard refusal == nil else { return nil }
        return GATTAuthorizationRequest(
            connection: connection, handle: handle, uuid: attribute.type, access: access, offset: offset, value: value)
    }

    /// How a PDU is answered: now (from the table, or refused), or later by async work.
    private enum Plan {
        /// This answer (nil: none).
        case now([UInt8]?)
        /// The answer `work` gives; the link's later PDUs wait for it.
        case later(@BluetoothActor () async -> [UInt8]?)

        /// The answer, once the work is done.
        func result() async -> [UInt8]? {
            switch self {
            case let .now(answer): answer
            case let .later(work): await work()
            }
        }
    }

    /// How `request` from `bearer`'s client is answered: the table answers, with `granted`'s
    /// authorization; when it needs a handler's value or decision, the handler is asked and
    /// the table asked again with its answer (``OutsideAnswers``). Every read and write of
    /// every request takes this one path.
    /// `answers` holds what the handlers answered for this request so far; which attributes
    /// they own is taken anew each time, so a handler the app removed meanwhile is not asked.
    private func plan(
        _ request: ATTRequest, on bearer: ATTBearer, answers: OutsideAnswers,
        granted grant: GATTAuthorizationRequest?
    ) -> Plan {
        let connection = bearer.connection
        var outside = handled
        outside.reads = answers.reads
        outside.writes = answers.writes
        granted = grant.map { ($0.connection, $0.handle) }
        let link = client(on: bearer)
        let answer = attributes.answer(
            to: request, connection: connection, mtu: bearer.mtu, outside: outside, client: &link.table)
        granted = nil
        switch answer {
        case let .response(response):
            return .now(response)
        case let .needsRead(handle, offset):
            guard let handler = readHandlers[handle] else {
                preconditionFailure("no read handler at \(hex(handle, digits: 4))")
            }
            let read = GATTReadRequest(
                connection: connection, handle: handle, uuid: valueUUIDs[handle] ?? uuid(at: handle),
                offset: offset)
            return .later { [weak self] in
                let result = await handler(read)
                guard let self else { return nil }
                // Kept as the stored value too: what notifications and the app read last.
                if case let .success(value) = result { attributes.setValue(value, of: handle) }
                var outside = outside
                outside.reads[handle] = result
                return await plan(request, on: bearer, answers: outside, granted: grant).result()
            }
        case let .needsWriteDecision(handle, value, withResponse):
            guard let handler = writeHandlers[handle] else {
                preconditionFailure("no write handler at \(hex(handle, digits: 4))")
            }
            let write = GATTWriteRequest(
                connection: connection, handle: handle, uuid: valueUUIDs[handle] ?? uuid(at: handle),
                value: value, withResponse: withResponse)
            return .later { [weak self] in
                let code = await handler(write)
                guard let self else { return nil }
                var outside = outside
                outside.writes[handle] = code.map(OutsideAnswers.WriteDecision.refused) ?? .accepted
                return await plan(request, on: bearer, answers: outside, granted: grant).result()
            }
        }
    }

    /// The type of the attribute at `handle`.
    func uuid(at handle: AttributeHandle) -> BluetoothUUID {
        attributes.attribute(at: handle)?.type ?? BluetoothUUID(UInt16(0))
    }

    /// Runs `work` for `bearer`'s link, holding its later PDUs until it is done; sends what
    /// it returns, then answers the PDUs that waited, in order.
    private func defer_(on bearer: ATTBearer, _ work: @escaping @BluetoothActor () async -> [UInt8]?) {
        client(on: bearer).waiting = []
        Task { @BluetoothActor [weak self] in
            let response = await work()
            if let response { bearer.sendResponse(response) }
            self?.drain(bearer)
        }
    }

    /// Answers the PDUs that waited on `bearer`'s link until one goes to a handler again.
    private func drain(_ bearer: ATTBearer) {
        // A link that ended meanwhile took its client and its waiting requests with it.
        guard let client = bearer.serverState as? LinkClient else { return }
        while var queue = client.waiting {
            guard !queue.isEmpty else {
                client.waiting = nil
                return
            }
            let next = queue.removeFirst()
            client.waiting = nil
            let answer = answer(next, on: bearer)
            if let answer { bearer.sendResponse(answer) }
            // A handler took it: the rest waits behind it.
            if client.waiting != nil {
                client.waiting? += queue
                return
            }
            client.waiting = queue
        }
    }
}

extension AttributeHandle {
    /// The handle as ATT carries it, least significant octet first.
    var bytes: [UInt8] { [UInt8(truncatingIfNeeded: rawValue), UInt8(rawValue >> 8)] }
}
