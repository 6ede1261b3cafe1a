import BluetoothCore
import HCI

/// A local attribute table the peer may query: a small GATT server answering discovery,
/// reads and writes (Core Vol 3, Part F, 3.4).
///
/// Answers Find Information, Find By Type Value, Read By Type, Read, Read Blob, Read
/// Multiple, Read Multiple Variable, Read By Group Type (primary and secondary services),
/// Write Request, Write Command, and Prepare and Execute Write (a queue per client, bounded
/// by ``maximumPreparedOctets``, kept by the caller: ``Client``), each handed over decoded
/// (``ATTRequest``). Values and write decisions an app's handlers own come in through
/// ``answer(to:connection:mtu:outside:client:)``: the rules stay here, whoever holds the
/// value. A Signed Write Command is ignored (the table holds no signing key). Permissions that
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
    public var onWrite:
        ((_ connection: ConnectionHandle, _ handle: AttributeHandle, _ value: [UInt8]) -> ATTErrorCode?)?
    /// The value connection `connection` reads at a handle when it is not the stored one
    /// (a CCCD holds each client's own); nil reads the stored value.
    public var onRead: ((_ connection: ConnectionHandle, _ handle: AttributeHandle) -> [UInt8]?)?
    /// Called after a write is stored (Write Request, Write Command, Execute Write), with the
    /// connection, the handle, the value and whether the client waits for a response.
    public var onWritten:
        ((_ connection: ConnectionHandle, _ handle: AttributeHandle, _ value: [UInt8], _ withResponse: Bool) -> Void)?
    /// How secure each link is, for the permissions that need encryption or
    /// authentication; without it every link counts as unencrypted.
    public var linkSecurity: ((ConnectionHandle) -> LinkSecurity)?
    /// Whether the request being answered now, from `connection`, was authorized for the
    /// attribute at `handle` (whose permissions ask for authorization); nil refuses every
    /// such request. The answer is synchronous: a server that asks an app does so before
    /// it hands the request to this table (`GATTServer`).
    public var isAuthorized: ((_ connection: ConnectionHandle, _ handle: AttributeHandle) -> Bool)?
    /// Asked at Execute Write with the handles of the client's queue, in order: a refusal
    /// refuses the whole queue (a higher layer's rule, such as GATT's on reliable writes);
    /// nil lets the table write it.
    public var onExecuteWrite: ((_ connection: ConnectionHandle, _ handles: [AttributeHandle]) -> AttributeRefusal?)?
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
        precondition(
            index == attributes.endIndex || attributes[index].handle != attribute.handle,
            "handle \(hex(attribute.handle, digits: 4)) is already used")
        attributes.insert(attribute, at: index)
    }

    /// Adds an attribute; traps if `handle` is 0x0000 or already used.
    public func add(
        handle: AttributeHandle, type: BluetoothUUID, value: [UInt8], permissions: AttributePermissions = .read
    ) {
        add(Attribute(handle: handle, type: type, value: value, permissions: permissions))
    }

    /// Removes every attribute in `start...end` (a service taken out of the database); the
    /// clients' queued parts for them are their keepers' to drop (``Client/forget(_:)``).
    public func remove(from start: AttributeHandle, to end: AttributeHandle) {
        attributes.removeAll { (start...end).contains($0.handle) }
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

    /// Answers one request or command PDU (opcode first) received on connection `connection`
    /// from `client`, where `mtu` is the bearer's ATT_MTU now (at least 23 is assumed);
    /// returns the response PDU (an Error Response when it fails, Invalid PDU when it is
    /// malformed), or nil for a command, an empty PDU, or a PDU that is not a request. Every
    /// value comes from the table. For a reader that holds bytes, not a decoded request
    /// (the fuzz targets, a test); the bearer decodes once and calls
    /// the `respond(to:connection:mtu:client:)` taking an ``ATTRequest``.
    public func respond(to pdu: ArraySlice<UInt8>, connection: ConnectionHandle, mtu: Int, client: inout Client)
        -> [UInt8]?
    {
        do throws(ATTRequestRefusal) {
            return respond(to: try ATTRequest(decoding: pdu), connection: connection, mtu: mtu, client: &client)
        } catch {
            return error.response?.encoded()
        }
    }

    /// Answers one decoded request or command from `client` on connection `connection`,
    /// where `mtu` is the bearer's ATT_MTU now: the response PDU (an Error Response when it
    /// fails), or nil for a command. Every value comes from the table.
    public func respond(to request: ATTRequest, connection: ConnectionHandle, mtu: Int, client: inout Client)
        -> [UInt8]?
    {
        guard
            case let .response(response) = answer(
                to: request, connection: connection, mtu: mtu, outside: .none, client: &client)
        else {
            preconditionFailure("a table with nothing outside needs nothing from outside")
        }
        return response
    }

    /// Answers one request or command as the `respond(to:connection:mtu:client:)` taking an
    /// ``ATTRequest`` does, except that the values and write decisions `outside` names come from there:
    /// when the answer needs one it has not been given, it says which (``TableAnswer``),
    /// and nothing has changed.
    public func answer(
        to request: ATTRequest, connection: ConnectionHandle, mtu: Int,
        outside: OutsideAnswers, client: inout Client
    ) -> TableAnswer {
        do throws(Stop) {
            return .response(
                try answer(request, connection: connection, mtu: max(mtu, 23), outside: outside, client: &client))
        } catch {
            switch error {
            // A command gets no answer, refused or not (3.3).
            case let .refused(refusal):
                return .response(
                    request.isCommand
                        ? nil
                        : ErrorResponse(requestOpcode: request.opcode, handle: refusal.handle, error: refusal.code)
                            .encoded())
            case let .needsRead(handle, offset): return .needsRead(handle, offset: offset)
            case let .needsWriteDecision(handle, value, withResponse):
                return .needsWriteDecision(handle, value: value, withResponse: withResponse)
            }
        }
    }

    // MARK: - Requests

    typealias Refusal = AttributeRefusal

    /// Why the table stops answering a request: a refusal (an Error Response), or something
    /// it needs from outside first.
    enum Stop: Error {
        case refused(AttributeRefusal)
        case needsRead(AttributeHandle, offset: Int)
        case needsWriteDecision(AttributeHandle, value: [UInt8], withResponse: Bool)

        /// A refusal of `handle` with `code`.
        static func refusal(_ handle: AttributeHandle, _ code: ATTErrorCode) -> Stop {
            .refused(Refusal(handle: handle, code: code))
        }
    }

    /// The response to a request (nil for a command), or why there is none yet.
    private func answer(
        _ request: ATTRequest, connection: ConnectionHandle, mtu: Int,
        outside: OutsideAnswers, client: inout Client
    ) throws(Stop) -> [UInt8]? {
        switch request {
        case let .findInformation(request):
            return try findInformation(request, mtu: mtu).encoded()
        case let .findByTypeValue(request):
            return try findByTypeValue(request, mtu: mtu, connection: connection).encoded()
        case let .readByType(request):
            return try readByType(request, mtu: mtu, connection: connection, outside: outside).encoded()
        case let .readByGroupType(request):
            return try readByGroupType(request, mtu: mtu).encoded()
        case let .read(request):
            let value = try readableValue(at: request.handle, offset: 0, connection: connection, outside: outside)
            return ReadResponse(value: value.prefix(mtu - 1)).encoded()
        case let .readBlob(request):
            let value = try readableValue(
                at: request.handle, offset: Int(request.offset), connection: connection, outside: outside)
            // 3.4.4.5: an offset past the value's end is Invalid Offset; at the end, an empty part.
            guard Int(request.offset) <= value.count else { throw .refusal(request.handle, .invalidOffset) }
            return ReadBlobResponse(value: value[Int(request.offset)...].prefix(mtu - 1)).encoded()
        case let .readMultiple(request):
            var values: [UInt8] = []
            for handle in request.handles {
                values += try readableValue(at: handle, offset: 0, connection: connection, outside: outside)
            }
            return ReadMultipleResponse(values: values.prefix(mtu - 1)).encoded()
        case let .readMultipleVariable(request):
            return try readMultipleVariable(request, mtu: mtu, connection: connection, outside: outside).encoded()
        case let .prepareWrite(request):
            // The response echoes the part (3.4.6.2): a request longer than ATT_MTU (opcode,
            // handle, offset, part) could not be answered within it, and was never a valid
            // PDU on this bearer.
            guard 5 + request.value.count <= mtu else { throw .refusal(request.handle, .invalidPDU) }
            try prepare(request, connection: connection, queue: &client.prepared)
            return PrepareWriteResponse(handle: request.handle, offset: request.offset, value: request.value).encoded()
        case let .executeWrite(request):
            try executeWrite(request, connection: connection, outside: outside, queue: &client.prepared)
            return ExecuteWriteResponse().encoded()
        case let .write(request):
            try write(
                handle: request.handle, value: Array(request.value), needs: .write, connection: connection,
                outside: outside)
            return WriteResponse().encoded()
        case let .writeCommand(command):
            try write(
                handle: command.handle, value: Array(command.value), needs: .writeWithoutResponse,
                connection: connection, outside: outside)
            return nil
        case .signedWriteCommand:
            // The table holds no CSRK to check a signature with (3.4.5.4): ignored, as a
            // command it cannot act on.
            return nil
        }
    }

    /// The indices of the attributes in `start...end`, after checking the range (3.4.3.1:
    /// a starting handle of 0x0000 or past the ending handle is Invalid Handle).
    private func indices(from start: AttributeHandle, to end: AttributeHandle) throws(Stop) -> Range<Int> {
        guard start != 0, start <= end else { throw .refusal(start, .invalidHandle) }
        let lower = firstIndex(atOrAfter: start)
        let upper = end == .last ? attributes.endIndex : firstIndex(atOrAfter: end + 1)
        return lower..<upper
    }

    /// Find Information (3.4.3.1): handles and types in the range, all of one UUID size
    /// (the first one's), as many as fit in the MTU.
    private func findInformation(_ request: FindInformationRequest, mtu: Int) throws(Stop) -> FindInformationResponse {
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
        guard !entries.isEmpty else { throw .refusal(request.startingHandle, .attributeNotFound) }
        return FindInformationResponse(entries: entries)
    }

    /// Find By Type Value (3.4.3.3): the readable attributes of the type holding the value;
    /// a service's range runs to its group end, any other attribute's is its own handle.
    /// GATT uses it on service declarations, whose values are the table's own; a value kept
    /// per link (a CCCD) is compared as this link reads it.
    private func findByTypeValue(
        _ request: FindByTypeValueRequest, mtu: Int,
        connection: ConnectionHandle
    ) throws(Stop) -> FindByTypeValueResponse {
        let type = BluetoothUUID(request.attributeType)
        var entries: [FindByTypeValueResponse.Entry] = []
        for index in try indices(from: request.startingHandle, to: request.endingHandle) {
            let attribute = attributes[index]
            guard attribute.type == type, attribute.permissions.contains(.read),
                (onRead?(connection, attribute.handle) ?? attribute.value)[...] == request.attributeValue
            else { continue }
            guard 1 + 4 * (entries.count + 1) <= mtu else { break }
            let end = Self.isServiceDeclaration(attribute.type) ? groupEnd(of: index) : attribute.handle
            entries.append(.init(foundHandle: attribute.handle, groupEndHandle: end))
        }
        guard !entries.isEmpty else { throw .refusal(request.startingHandle, .attributeNotFound) }
        return FindByTypeValueResponse(entries: entries)
    }

    /// Read By Type (3.4.4.1): the attributes of the type, values cut to ATT_MTU - 4 or 253
    /// bytes, as long as they stay readable, keep the first one's length and fit the MTU. A
    /// refusal (the table's or a handler's) of the first is the answer; of a later one, the
    /// list ends before it.
    private func readByType(
        _ request: ReadByTypeRequest, mtu: Int, connection: ConnectionHandle,
        outside: OutsideAnswers
    ) throws(Stop) -> ReadByTypeResponse {
        let limit = min(mtu - 4, 253)
        var entries: [ReadByTypeResponse.Entry] = []
        var size = 2
        for attribute in attributes[try indices(from: request.startingHandle, to: request.endingHandle)]
        where attribute.type == request.attributeType {
            let whole: [UInt8]
            do throws(Stop) {
                if let refusal = readRefusal(attribute, connection: connection) { throw Stop.refused(refusal) }
                whole = try currentValue(attribute, offset: 0, connection: connection, outside: outside)
            } catch {
                guard case .refused = error, !entries.isEmpty else { throw error }
                break
            }
            let value = whole.prefix(limit)
            if let first = entries.first, first.value.count != value.count { break }
            guard size + 2 + value.count <= mtu else { break }
            entries.append(.init(handle: attribute.handle, value: value))
            size += 2 + value.count
        }
        guard !entries.isEmpty else { throw .refusal(request.startingHandle, .attributeNotFound) }
        return ReadByTypeResponse(entries: entries)
    }

    /// Read By Group Type (3.4.4.9): the service declarations of the type with their group
    /// ends, values cut to ATT_MTU - 6 or 251 bytes, under the same rules as Read By Type.
    private func readByGroupType(_ request: ReadByGroupTypeRequest, mtu: Int) throws(Stop) -> ReadByGroupTypeResponse {
        let range = try indices(from: request.startingHandle, to: request.endingHandle)
        guard Self.isServiceDeclaration(request.groupType) else {
            throw .refusal(request.startingHandle, .unsupportedGroupType)
        }
        let limit = min(mtu - 6, 251)
        var entries: [ReadByGroupTypeResponse.Entry] = []
        var size = 2
        for index in range where attributes[index].type == request.groupType {
            let attribute = attributes[index]
            guard attribute.permissions.contains(.read) else {
                if entries.isEmpty { throw .refusal(attribute.handle, .readNotPermitted) }
                break
            }
            let value = attribute.value.prefix(limit)
            if let first = entries.first, first.value.count != value.count { break }
            guard size + 4 + value.count <= mtu else { break }
            entries.append(.init(handle: attribute.handle, endGroupHandle: groupEnd(of: index), value: value))
            size += 4 + value.count
        }
        guard !entries.isEmpty else { throw .refusal(request.startingHandle, .attributeNotFound) }
        return ReadByGroupTypeResponse(entries: entries)
    }

    /// Read Multiple Variable (3.4.4.11): each value with its whole length, in the request's
    /// order; any attribute that cannot be read refuses the request with its handle. The list
    /// ends at ATT_MTU - 1 octets (3.4.4.12), so the last value may be cut; a tuple whose
    /// length field would not fit is left out.
    private func readMultipleVariable(
        _ request: ReadMultipleVariableRequest, mtu: Int, connection: ConnectionHandle,
        outside: OutsideAnswers
    ) throws(Stop) -> ReadMultipleVariableResponse {
        var values: [[UInt8]] = []
        for handle in request.handles {
            values.append(try readableValue(at: handle, offset: 0, connection: connection, outside: outside))
        }
        var entries: [ReadMultipleVariableResponse.Entry] = []
        var room = mtu - 1
        for value in values where room >= 2 {
            let part = value.prefix(room - 2)
            entries.append(.init(length: UInt16(value.count), value: part))
            room -= 2 + part.count
        }
        return ReadMultipleVariableResponse(entries: entries)
    }

    /// The value `connection` reads at `handle` (from `offset`, for a handler that wants to
    /// know): Invalid Handle if there is no attribute, else ``readRefusal(_:connection:)``'s
    /// refusal, if any, else ``currentValue(_:offset:connection:outside:)``.
    private func readableValue(
        at handle: AttributeHandle, offset: Int, connection: ConnectionHandle,
        outside: OutsideAnswers
    ) throws(Stop) -> [UInt8] {
        guard let attribute = attribute(at: handle) else { throw .refusal(handle, .invalidHandle) }
        if let refusal = readRefusal(attribute, connection: connection) { throw .refused(refusal) }
        return try currentValue(attribute, offset: offset, connection: connection, outside: outside)
    }

    /// The one place a read takes an attribute's value: its handler's answer when one gives
    /// it (asked for first, if not yet), else ``onRead``'s value for the link, else the
    /// stored one.
    func currentValue(
        _ attribute: Attribute, offset: Int, connection: ConnectionHandle,
        outside: OutsideAnswers
    ) throws(Stop) -> [UInt8] {
        guard outside.readHandled.contains(attribute.handle) else {
            return onRead?(connection, attribute.handle) ?? attribute.value
        }
        switch outside.reads[attribute.handle] {
        case nil: throw .needsRead(attribute.handle, offset: offset)
        case let .failure(code)?: throw .refusal(attribute.handle, code)
        case let .success(value)?: return value
        }
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
