import BluetoothCore
import HCI

/// A local attribute table the peer may query: a small GATT server answering discovery,
/// reads and writes (Core Vol 3, Part F, 3.4).
///
/// Answers Find Information, Find By Type Value, Read By Type, Read, Read Blob, Read
/// Multiple, Read By Group Type (primary and secondary services), Write Request, Write
/// Command, and Prepare and Execute Write (a queue per client, bounded by
/// ``maximumPreparedOctets``). Every other request, Exchange MTU included (the bearer owns
/// it), gets Request Not Supported; unknown commands and PDUs that are not requests
/// (responses, notifications, indications, confirmations) get no answer. Permissions that
/// need encryption or authentication are checked against ``linkSecurity``, those that
/// need authorization against ``isAuthorized`` (without it, always Insufficient
/// Authorization).
///
/// Not tied to the stack's actor: a local server lives there (``ATTServer``), and the
/// virtual peripherals of the `mock:` transport keep theirs on their controller's own
/// thread. It is not `Sendable`; one context owns it.
public final class AttributeServer {
    /// Called before a write is applied, with the connection, the handle and the new value;
    /// return an error code to refuse it (the value stays as it was), nil to accept it.
    public var onWrite: ((_ connection: ConnectionHandle, _ handle: AttributeHandle, _ value: [UInt8]) -> ATTErrorCode?)?
    /// The value connection `connection` reads at a handle when it is not the stored one
    /// (a CCCD holds each client's own); nil reads the stored value.
    public var onRead: ((_ connection: ConnectionHandle, _ handle: AttributeHandle) -> [UInt8]?)?
    /// How secure each link is, for the permissions that need encryption or
    /// authentication; without it every link counts as unencrypted.
    public var linkSecurity: ((ConnectionHandle) -> LinkSecurity)?
    /// Whether the request being answered now, from `connection`, was authorized for the
    /// attribute at `handle` (whose permissions ask for authorization); nil refuses every
    /// such request. The answer is synchronous: a server that asks an app does so before
    /// it hands the request to this table (`GATTServer`).
    public var isAuthorized: ((_ connection: ConnectionHandle, _ handle: AttributeHandle) -> Bool)?
    /// The most value octets one client may hold queued with Prepare Write Requests; past
    /// it, Prepare Queue Full. A client cannot grow our memory beyond this.
    public var maximumPreparedOctets = 8192

    /// One part of a queued write.
    public struct PreparedWrite: Sendable, Equatable {
        /// The attribute.
        public var handle: AttributeHandle
        /// Where the part goes.
        public var offset: Int
        /// The part.
        public var value: [UInt8]
    }

    /// Each client's prepare queue.
    private var prepared: [ConnectionHandle: [PreparedWrite]] = [:]

    /// The attributes, sorted by handle.
    public private(set) var attributes: [Attribute] = []

    /// The longest value an attribute may hold (3.2.9).
    public nonisolated static let maximumValueLength = 512

    /// A server holding `attributes` (in any order).
    public init(attributes: [Attribute] = []) {
        for attribute in attributes { add(attribute) }
    }

    /// Adds an attribute; traps if its handle is 0x0000 or already used.
    public func add(_ attribute: Attribute) {
        precondition(attribute.handle != 0, "handle 0x0000 is reserved")
        let index = firstIndex(atOrAfter: attribute.handle)
        precondition(index == attributes.endIndex || attributes[index].handle != attribute.handle,
                     "handle \(hex(attribute.handle, digits: 4)) is already used")
        attributes.insert(attribute, at: index)
    }

    /// Adds an attribute; traps if `handle` is 0x0000 or already used.
    public func add(handle: AttributeHandle, type: BluetoothUUID, value: [UInt8], permissions: AttributePermissions = .read) {
        add(Attribute(handle: handle, type: type, value: value, permissions: permissions))
    }

    /// The attribute at `handle`, if there is one.
    public func attribute(at handle: AttributeHandle) -> Attribute? {
        index(of: handle).map { attributes[$0] }
    }

    /// The value of the attribute at `handle`, if there is one.
    public func value(of handle: AttributeHandle) -> [UInt8]? {
        attribute(at: handle)?.value
    }

    /// Replaces the value of the attribute at `handle`; traps if there is none.
    public func setValue(_ value: [UInt8], of handle: AttributeHandle) {
        guard let index = index(of: handle) else { preconditionFailure("no attribute at \(hex(handle, digits: 4))") }
        attributes[index].value = value
    }

    /// Answers one request or command PDU (opcode first) received on connection `connection`,
    /// where `mtu` is the bearer's ATT_MTU now (at least 23 is assumed); returns the response
    /// PDU (an Error Response when it fails), or nil for a command, an empty PDU, or a PDU
    /// that is not a request.
    public func respond(to pdu: ArraySlice<UInt8>, connection: ConnectionHandle, mtu: Int) -> [UInt8]? {
        guard let first = pdu.first else { return nil }
        let opcode = ATTOpcode(rawValue: first)
        if opcode.isCommand {
            if opcode == .writeCommand, let command = try? WriteCommand(decoding: pdu) {
                _ = write(handle: command.handle, value: Array(command.value), needs: .writeWithoutResponse,
                          connection: connection)
            }
            return nil
        }
        if Self.notRequests.contains(opcode) { return nil }
        do {
            return try answer(opcode, pdu, connection: connection, mtu: max(mtu, 23))
        } catch {
            return ErrorResponse(requestOpcode: opcode, handle: error.handle, error: error.code).encoded()
        }
    }

    /// Forgets what the server kept for a link that ended (its prepare queue).
    public func linkEnded(_ connection: ConnectionHandle) { prepared[connection] = nil }

    // MARK: - Requests

    private typealias Refusal = AttributeRefusal

    /// Opcodes the server receives but never answers: they are not requests.
    private static let notRequests: Set<ATTOpcode> = [
        .errorResponse, .exchangeMTUResponse, .findInformationResponse, .findByTypeValueResponse,
        .readByTypeResponse, .readResponse, .readBlobResponse, .readMultipleResponse, .readByGroupTypeResponse,
        .writeResponse, .prepareWriteResponse, .executeWriteResponse, .handleValueNotification,
        .handleValueIndication, .handleValueConfirmation, .readMultipleVariableResponse,
        .multipleHandleValueNotification,
    ]

    /// The response to a request, or the refusal to put in an Error Response.
    private func answer(_ opcode: ATTOpcode, _ pdu: ArraySlice<UInt8>, connection: ConnectionHandle,
                        mtu: Int) throws(Refusal) -> [UInt8] {
        switch opcode {
        case .findInformationRequest:
            return try findInformation(try decode(FindInformationRequest.self, pdu), mtu: mtu).encoded()
        case .findByTypeValueRequest:
            return try findByTypeValue(try decode(FindByTypeValueRequest.self, pdu), mtu: mtu).encoded()
        case .readByTypeRequest:
            return try readByType(try decode(ReadByTypeRequest.self, pdu), mtu: mtu, connection: connection).encoded()
        case .readByGroupTypeRequest:
            return try readByGroupType(try decode(ReadByGroupTypeRequest.self, pdu), mtu: mtu).encoded()
        case .readRequest:
            let request = try decode(ReadRequest.self, pdu)
            let value = try readableValue(at: request.handle, connection: connection)
            return ReadResponse(value: value.prefix(mtu - 1)).encoded()
        case .readBlobRequest:
            let request = try decode(ReadBlobRequest.self, pdu)
            let value = try readableValue(at: request.handle, connection: connection)
            return try Self.readBlobResponse(value, offset: request.offset, handle: request.handle, mtu: mtu).encoded()
        case .readMultipleRequest:
            let request = try decode(ReadMultipleRequest.self, pdu)
            var values: [UInt8] = []
            for handle in request.handles { values += try readableValue(at: handle, connection: connection) }
            return ReadMultipleResponse(values: values.prefix(mtu - 1)).encoded()
        case .prepareWriteRequest:
            let request = try decode(PrepareWriteRequest.self, pdu)
            // The response echoes the part (3.4.6.2): a request longer than ATT_MTU could
            // not be answered within it, and was never a valid PDU on this bearer.
            guard pdu.count <= mtu else { throw Refusal(handle: request.handle, code: .invalidPDU) }
            try prepare(request, connection: connection)
            return PrepareWriteResponse(handle: request.handle, offset: request.offset, value: request.value).encoded()
        case .executeWriteRequest:
            let request = try decode(ExecuteWriteRequest.self, pdu)
            let values = try takePreparedValues(flags: request.flags, connection: connection)
            for (handle, value) in values {
                if let code = onWrite?(connection, handle, value) { throw Refusal(handle: handle, code: code) }
            }
            for (handle, value) in values { setValue(value, of: handle) }
            return ExecuteWriteResponse().encoded()
        case .writeRequest:
            let request = try decode(WriteRequest.self, pdu)
            if let refusal = write(handle: request.handle, value: Array(request.value), needs: .write, connection: connection) {
                throw refusal
            }
            return WriteResponse().encoded()
        default:
            throw Refusal(handle: 0x0000, code: .requestNotSupported)
        }
    }

    /// The Read Blob Response for `value` from `offset` (3.4.4.5): Invalid Offset past the end.
    public static func readBlobResponse(_ value: [UInt8], offset: UInt16, handle: AttributeHandle, mtu: Int) throws(AttributeRefusal) -> ReadBlobResponse {
        guard Int(offset) <= value.count else { throw AttributeRefusal(handle: handle, code: .invalidOffset) }
        return ReadBlobResponse(value: value[Int(offset)...].prefix(mtu - 1))
    }

    /// Queues a Prepare Write Request's part (3.4.6.1): the attribute must exist and allow
    /// writing on this link; the queue must have room.
    private func prepare(_ request: PrepareWriteRequest, connection: ConnectionHandle) throws(Refusal) {
        if let refusal = writeRefusal(handle: request.handle, length: 0, needs: .write, connection: connection) { throw refusal }
        let queued = prepared[connection, default: []].reduce(0) { $0 + $1.value.count }
        guard queued + request.value.count <= maximumPreparedOctets else { throw Refusal(handle: request.handle, code: .prepareQueueFull) }
        prepared[connection, default: []].append(PreparedWrite(handle: request.handle, offset: Int(request.offset), value: Array(request.value)))
    }

    /// Empties `connection`'s prepare queue; for an Execute Write Request that writes, the
    /// new value of each attribute in it, in order of first appearance: the stored value up
    /// to each part's offset, then the part. A part past the value's end is Invalid Offset,
    /// a value past 512 octets Invalid Attribute Value Length (3.4.6.3). Nothing is applied.
    public func takePreparedValues(flags: ExecuteWriteRequest.Flags, connection: ConnectionHandle) throws(AttributeRefusal) -> [(AttributeHandle, [UInt8])] {
        let parts = prepared.removeValue(forKey: connection) ?? []
        guard flags == .write else { return [] }
        var order: [AttributeHandle] = []
        var values: [AttributeHandle: [UInt8]] = [:]
        for part in parts {
            var value = values[part.handle] ?? {
                order.append(part.handle)
                return onRead?(connection, part.handle) ?? self.value(of: part.handle) ?? []
            }()
            guard part.offset <= value.count else { throw Refusal(handle: part.handle, code: .invalidOffset) }
            // The part is the value from its offset on: a long write at offset 0 replaces the
            // whole value, its next parts continue it (GATT's Write Long Characteristic Values).
            value = Array(value.prefix(part.offset)) + part.value
            guard value.count <= Self.maximumValueLength else { throw Refusal(handle: part.handle, code: .invalidAttributeValueLength) }
            values[part.handle] = value
        }
        return order.map { ($0, values[$0] ?? []) }
    }

    /// Decodes a request; a malformed one is Invalid PDU.
    private func decode<P: ATTPDU>(_ type: P.Type, _ pdu: ArraySlice<UInt8>) throws(Refusal) -> P {
        do {
            return try P(decoding: pdu)
        } catch {
            throw Refusal(handle: 0x0000, code: .invalidPDU)
        }
    }

    /// The indices of the attributes in `start...end`, after checking the range (3.4.3.1:
    /// a starting handle of 0x0000 or past the ending handle is Invalid Handle).
    private func indices(from start: AttributeHandle, to end: AttributeHandle) throws(Refusal) -> Range<Int> {
        guard start != 0, start <= end else { throw Refusal(handle: start, code: .invalidHandle) }
        let lower = firstIndex(atOrAfter: start)
        let upper = end == .last ? attributes.endIndex : firstIndex(atOrAfter: end + 1)
        return lower..<upper
    }

    /// Find Information (3.4.3.1): handles and types in the range, all of one UUID size
    /// (the first one's), as many as fit in the MTU.
    private func findInformation(_ request: FindInformationRequest, mtu: Int) throws(Refusal) -> FindInformationResponse {
        var entries: [FindInformationResponse.Entry] = []
        var size = 2
        for attribute in attributes[try indices(from: request.startingHandle, to: request.endingHandle)] {
            let short = attribute.type.shortValue != nil
            if let first = entries.first, (first.type.shortValue != nil) != short { break }
            let entrySize = short ? 4 : 18
            guard size + entrySize <= mtu else { break }
            entries.append(.init(handle: attribute.handle, type: attribute.type))
            size += entrySize
        }
        guard !entries.isEmpty else { throw Refusal(handle: request.startingHandle, code: .attributeNotFound) }
        return FindInformationResponse(entries: entries)
    }

    /// Find By Type Value (3.4.3.3): the readable attributes of the type holding the value;
    /// a service's range runs to its group end, any other attribute's is its own handle.
    private func findByTypeValue(_ request: FindByTypeValueRequest, mtu: Int) throws(Refusal) -> FindByTypeValueResponse {
        let type = BluetoothUUID(request.attributeType)
        var entries: [FindByTypeValueResponse.Entry] = []
        for index in try indices(from: request.startingHandle, to: request.endingHandle) {
            let attribute = attributes[index]
            guard attribute.type == type, attribute.permissions.contains(.read),
                  attribute.value[...] == request.attributeValue else { continue }
            guard 1 + 4 * (entries.count + 1) <= mtu else { break }
            let end = Self.isServiceDeclaration(attribute.type) ? groupEnd(of: index) : attribute.handle
            entries.append(.init(foundHandle: attribute.handle, groupEndHandle: end))
        }
        guard !entries.isEmpty else { throw Refusal(handle: request.startingHandle, code: .attributeNotFound) }
        return FindByTypeValueResponse(entries: entries)
    }

    /// Read By Type (3.4.4.1): the attributes of the type, values cut to ATT_MTU - 4 or 253
    /// bytes, as long as they stay readable, keep the first one's length and fit the MTU.
    private func readByType(_ request: ReadByTypeRequest, mtu: Int, connection: ConnectionHandle) throws(Refusal) -> ReadByTypeResponse {
        let limit = min(mtu - 4, 253)
        var entries: [ReadByTypeResponse.Entry] = []
        var size = 2
        for attribute in attributes[try indices(from: request.startingHandle, to: request.endingHandle)]
        where attribute.type == request.attributeType {
            if let refusal = readRefusal(attribute, connection: connection) {
                if entries.isEmpty { throw refusal }
                break
            }
            let value = (onRead?(connection, attribute.handle) ?? attribute.value).prefix(limit)
            if let first = entries.first, first.value.count != value.count { break }
            guard size + 2 + value.count <= mtu else { break }
            entries.append(.init(handle: attribute.handle, value: value))
            size += 2 + value.count
        }
        guard !entries.isEmpty else { throw Refusal(handle: request.startingHandle, code: .attributeNotFound) }
        return ReadByTypeResponse(entries: entries)
    }

    /// Read By Group Type (3.4.4.9): the service declarations of the type with their group
    /// ends, values cut to ATT_MTU - 6 or 251 bytes, under the same rules as Read By Type.
    private func readByGroupType(_ request: ReadByGroupTypeRequest, mtu: Int) throws(Refusal) -> ReadByGroupTypeResponse {
        let range = try indices(from: request.startingHandle, to: request.endingHandle)
        guard Self.isServiceDeclaration(request.groupType) else {
            throw Refusal(handle: request.startingHandle, code: .unsupportedGroupType)
        }
        let limit = min(mtu - 6, 251)
        var entries: [ReadByGroupTypeResponse.Entry] = []
        var size = 2
        for index in range where attributes[index].type == request.groupType {
            let attribute = attributes[index]
            guard attribute.permissions.contains(.read) else {
                if entries.isEmpty { throw Refusal(handle: attribute.handle, code: .readNotPermitted) }
                break
            }
            let value = attribute.value.prefix(limit)
            if let first = entries.first, first.value.count != value.count { break }
            guard size + 4 + value.count <= mtu else { break }
            entries.append(.init(handle: attribute.handle, endGroupHandle: groupEnd(of: index), value: value))
            size += 4 + value.count
        }
        guard !entries.isEmpty else { throw Refusal(handle: request.startingHandle, code: .attributeNotFound) }
        return ReadByGroupTypeResponse(entries: entries)
    }

    /// The value connection `connection` reads at `handle`: Invalid Handle if there is no
    /// attribute, else ``readRefusal(_:connection:)``'s refusal, if any.
    public func readableValue(at handle: AttributeHandle, connection: ConnectionHandle) throws(AttributeRefusal) -> [UInt8] {
        guard let attribute = attribute(at: handle) else { throw Refusal(handle: handle, code: .invalidHandle) }
        if let refusal = readRefusal(attribute, connection: connection) { throw refusal }
        return onRead?(connection, handle) ?? attribute.value
    }

    /// Why `connection` may not read `attribute`: Read Not Permitted, the security its
    /// link lacks (Core Vol 3, Part C, 10.3.1), or Insufficient Authorization; nil if it may.
    public func readRefusal(_ attribute: Attribute, connection: ConnectionHandle) -> AttributeRefusal? {
        guard attribute.permissions.contains(.read) else { return Refusal(handle: attribute.handle, code: .readNotPermitted) }
        if let refusal = securityRefusal(attribute, encrypted: .readEncrypted, authenticated: .readAuthenticated, connection: connection) {
            return refusal
        }
        return authorizationRefusal(attribute, needs: .readAuthorized, connection: connection)
    }

    /// Why `connection` may not write `length` octets to the attribute at `handle` with a
    /// request needing `permission`: Invalid Handle, Write Not Permitted, the security its
    /// link lacks, Insufficient Authorization, or a value past 512 octets; nil if it may.
    public func writeRefusal(handle: AttributeHandle, length: Int, needs permission: AttributePermissions,
                             connection: ConnectionHandle) -> AttributeRefusal? {
        guard let attribute = attribute(at: handle) else { return Refusal(handle: handle, code: .invalidHandle) }
        guard attribute.permissions.contains(permission) else { return Refusal(handle: handle, code: .writeNotPermitted) }
        if let refusal = securityRefusal(attribute, encrypted: .writeEncrypted, authenticated: .writeAuthenticated, connection: connection) {
            return refusal
        }
        if let refusal = authorizationRefusal(attribute, needs: .writeAuthorized, connection: connection) { return refusal }
        guard length <= Self.maximumValueLength else { return Refusal(handle: handle, code: .invalidAttributeValueLength) }
        return nil
    }

    /// Insufficient Authentication when the attribute needs an authenticated link (or any
    /// encryption, on a link without it), Insufficient Encryption when it needs encryption.
    private func securityRefusal(_ attribute: Attribute, encrypted: AttributePermissions, authenticated: AttributePermissions,
                                 connection: ConnectionHandle) -> AttributeRefusal? {
        guard !attribute.permissions.isDisjoint(with: [encrypted, authenticated]) else { return nil }
        let security = linkSecurity?(connection) ?? .none
        if attribute.permissions.contains(authenticated), security < .authenticated {
            return Refusal(handle: attribute.handle, code: .insufficientAuthentication)
        }
        if attribute.permissions.contains(encrypted), security < .encrypted {
            return Refusal(handle: attribute.handle, code: .insufficientEncryption)
        }
        return nil
    }

    /// Insufficient Authorization (Part F, 3.2.5) when the attribute needs `permission` and
    /// ``isAuthorized`` does not grant this request.
    private func authorizationRefusal(_ attribute: Attribute, needs permission: AttributePermissions,
                                      connection: ConnectionHandle) -> AttributeRefusal? {
        guard attribute.permissions.contains(permission), isAuthorized?(connection, attribute.handle) != true else { return nil }
        return Refusal(handle: attribute.handle, code: .insufficientAuthorization)
    }

    /// Applies a write if ``writeRefusal(handle:length:needs:connection:)`` allows it and
    /// ``onWrite`` accepts it; otherwise returns why not.
    private func write(handle: AttributeHandle, value: [UInt8], needs permission: AttributePermissions,
                       connection: ConnectionHandle) -> Refusal? {
        if let refusal = writeRefusal(handle: handle, length: value.count, needs: permission, connection: connection) { return refusal }
        if let code = onWrite?(connection, handle, value) { return Refusal(handle: handle, code: code) }
        setValue(value, of: handle)
        return nil
    }

    // MARK: - The table

    /// Whether `type` declares a service (0x2800 primary, 0x2801 secondary): the GATT
    /// grouping types.
    private static func isServiceDeclaration(_ type: BluetoothUUID) -> Bool {
        type == BluetoothUUID(UInt16(0x2800)) || type == BluetoothUUID(UInt16(0x2801))
    }

    /// The last handle of the group the service declaration at `index` opens: the one the
    /// attribute declares (``Attribute/groupEndHandle``), else the handle of the last
    /// attribute before the next service declaration, or of the last attribute.
    private func groupEnd(of index: Int) -> AttributeHandle {
        if let declared = attributes[index].groupEndHandle { return declared }
        var last = index
        while last + 1 < attributes.endIndex, !Self.isServiceDeclaration(attributes[last + 1].type) { last += 1 }
        return attributes[last].handle
    }

    /// The index of the first attribute whose handle is `handle` or more (binary search).
    private func firstIndex(atOrAfter handle: AttributeHandle) -> Int {
        var low = attributes.startIndex
        var high = attributes.endIndex
        while low < high {
            let middle = (low + high) / 2
            if attributes[middle].handle < handle { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The index of the attribute at `handle`.
    private func index(of handle: AttributeHandle) -> Int? {
        let index = firstIndex(atOrAfter: handle)
        return index < attributes.endIndex && attributes[index].handle == handle ? index : nil
    }
}

/// The stack's local server answers on the actor, through the bearer.
extension AttributeServer: ATTServer {}
