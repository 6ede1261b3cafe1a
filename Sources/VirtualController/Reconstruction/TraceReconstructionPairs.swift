import ATT
import BluetoothCore
import GATT
import HCI
import L2CAP
import TraceDecoding

/// A recorded request and its response, paired: what each tells of the peer's database.
extension ReconstructionWalk {
    mutating func answered(
        _ request: PendingRequest, with pdu: ArraySlice<UInt8>, opcode: ATTOpcode, on link: ConnectionHandle
    ) {
        if opcode == .errorResponse {
            guard let error = try? ErrorResponse.decodeCountingExtraOctets(pdu).pdu,
                error.requestOpcode == request.opcode
            else { return }
            failed(request, error, on: link)
            return
        }
        guard opcode.rawValue == request.opcode.rawValue + 1 else { return }
        switch request.opcode {
        case .exchangeMTURequest:
            guard let response = try? ExchangeMTUResponse.decodeCountingExtraOctets(pdu).pdu else { return }
            let peer = peer(of: link)
            peers[peer].peripheral.mtu = Int(response.serverRxMTU)
        case .readByGroupTypeRequest:
            guard let request = try? ReadByGroupTypeRequest.decodeCountingExtraOctets(request.pdu).pdu,
                let response = try? ReadByGroupTypeResponse.decodeCountingExtraOctets(pdu).pdu
            else { return }
            let peer = peer(of: link)
            for entry in response.entries {
                update(peer, entry.handle) { attribute in
                    attribute.type = request.groupType
                    attribute.value = Array(entry.value)
                    attribute.groupEndHandle = entry.endGroupHandle
                }
            }
        case .findByTypeValueRequest:
            guard let request = try? FindByTypeValueRequest.decodeCountingExtraOctets(request.pdu).pdu,
                let response = try? FindByTypeValueResponse.decodeCountingExtraOctets(pdu).pdu
            else { return }
            let peer = peer(of: link)
            let type = BluetoothUUID(request.attributeType)
            let grouping = request.attributeType == 0x2800 || request.attributeType == 0x2801
            for entry in response.entries {
                update(peer, entry.foundHandle) { attribute in
                    attribute.type = type
                    attribute.value = Array(request.attributeValue)
                    if grouping { attribute.groupEndHandle = entry.groupEndHandle }
                }
            }
        case .readByTypeRequest:
            guard let request = try? ReadByTypeRequest.decodeCountingExtraOctets(request.pdu).pdu,
                let response = try? ReadByTypeResponse.decodeCountingExtraOctets(pdu).pdu
            else { return }
            let peer = peer(of: link)
            for entry in response.entries {
                let value = Array(entry.value)
                if request.attributeType == .characteristic {
                    update(peer, entry.handle) { attribute in
                        attribute.type = request.attributeType
                        attribute.value = value
                    }
                    guard let declaration = CharacteristicDeclaration(value: value) else { continue }
                    update(peer, declaration.valueHandle) { $0.type = declaration.uuid }
                } else {
                    update(peer, entry.handle) { attribute in
                        attribute.type = request.attributeType
                        attribute.value = Self.longer(attribute.value, value)
                    }
                    self[link: link]?.blobs[entry.handle] = value
                }
            }
        case .findInformationRequest:
            guard let response = try? FindInformationResponse.decodeCountingExtraOctets(pdu).pdu else { return }
            let peer = peer(of: link)
            for entry in response.entries {
                update(peer, entry.handle) { attribute in
                    if attribute.type == nil { attribute.type = entry.type }
                }
            }
        case .readRequest:
            guard let request = try? ReadRequest.decodeCountingExtraOctets(request.pdu).pdu,
                let response = try? ReadResponse.decodeCountingExtraOctets(pdu).pdu
            else { return }
            let peer = peer(of: link)
            let value = Array(response.value)
            update(peer, request.handle) { $0.value = value }
            observed(value, of: request.handle, peer: peer, continuing: false)
            self[link: link]?.blobs[request.handle] = value
            succeeded(ATTOpcode.readRequest, request.handle, peer: peer, link: link)
        case .readBlobRequest:
            guard let request = try? ReadBlobRequest.decodeCountingExtraOctets(request.pdu).pdu,
                let response = try? ReadBlobResponse.decodeCountingExtraOctets(pdu).pdu
            else { return }
            let peer = peer(of: link)
            let offset = Int(request.offset)
            let base =
                offset == 0
                ? [] : (self[link: link]?.blobs[request.handle] ?? peers[peer].attributes[request.handle]?.value ?? [])
            guard base.count >= offset else {
                // A gap before the offset: the start of the value is not in the recording.
                succeeded(ATTOpcode.readBlobRequest, request.handle, peer: peer, link: link)
                return
            }
            let value = Array(base[..<offset]) + response.value
            self[link: link]?.blobs[request.handle] = value
            update(peer, request.handle) { $0.value = value }
            observed(value, of: request.handle, peer: peer, continuing: offset > 0)
            succeeded(ATTOpcode.readBlobRequest, request.handle, peer: peer, link: link)
        case .readMultipleRequest:
            // The values come concatenated without lengths: only a request for one handle
            // (which the specification does not ask for, but a client may send) splits for
            // sure; read here without the two-handle minimum of the strict decoder.
            let handles = request.pdu.dropFirst()
            guard handles.count == 2, let response = try? ReadMultipleResponse.decodeCountingExtraOctets(pdu).pdu else {
                return
            }
            let handle = AttributeHandle(
                rawValue: UInt16(handles[handles.startIndex]) | UInt16(handles[handles.startIndex + 1]) << 8)
            let peer = peer(of: link)
            update(peer, handle) { $0.value = Array(response.values) }
        case .readMultipleVariableRequest:
            guard let request = try? ReadMultipleVariableRequest.decodeCountingExtraOctets(request.pdu).pdu,
                let response = try? ReadMultipleVariableResponse.decodeCountingExtraOctets(pdu).pdu
            else { return }
            let peer = peer(of: link)
            for (handle, entry) in zip(request.handles, response.entries) {
                let value = Array(entry.value)
                update(peer, handle) { attribute in
                    attribute.value = entry.isTruncated ? Self.longer(attribute.value, value) : value
                }
            }
        case .writeRequest:
            guard let request = try? WriteRequest.decodeCountingExtraOctets(request.pdu).pdu,
                (try? WriteResponse.decodeCountingExtraOctets(pdu)) != nil
            else { return }
            let peer = peer(of: link)
            write(Array(request.value), to: request.handle, peer: peer, link: link)
            succeeded(ATTOpcode.writeRequest, request.handle, peer: peer, link: link)
        case .prepareWriteRequest:
            guard let request = try? PrepareWriteRequest.decodeCountingExtraOctets(request.pdu).pdu,
                (try? PrepareWriteResponse.decodeCountingExtraOctets(pdu)) != nil
            else { return }
            self[link: link]?.prepared.append(
                PreparedPart(handle: request.handle, offset: Int(request.offset), value: Array(request.value)))
            let peer = peer(of: link)
            succeeded(ATTOpcode.prepareWriteRequest, request.handle, peer: peer, link: link)
        case .executeWriteRequest:
            guard let request = try? ExecuteWriteRequest.decodeCountingExtraOctets(request.pdu).pdu,
                (try? ExecuteWriteResponse.decodeCountingExtraOctets(pdu)) != nil
            else { return }
            let parts = self[link: link]?.prepared ?? []
            self[link: link]?.prepared = []
            guard request.flags == .write, !parts.isEmpty else { return }
            let peer = peer(of: link)
            for (handle, value) in Self.assemble(parts) {
                write(value, to: handle, peer: peer, link: link)
            }
        default:
            break
        }
    }

    /// Prepared parts assembled per handle, in the order the handles were first prepared;
    /// a handle whose parts leave a gap is left out.
    static func assemble(_ parts: [PreparedPart]) -> [(AttributeHandle, [UInt8])] {
        var order: [AttributeHandle] = []
        var values: [AttributeHandle: [UInt8]] = [:]
        var broken: Set<AttributeHandle> = []
        for part in parts {
            if values[part.handle] == nil, !broken.contains(part.handle) { order.append(part.handle) }
            var value = values[part.handle] ?? []
            guard part.offset <= value.count, !broken.contains(part.handle) else {
                broken.insert(part.handle)
                values[part.handle] = nil
                continue
            }
            value = Array(value[..<part.offset]) + part.value
            values[part.handle] = value
        }
        return order.compactMap { handle in values[handle].map { (handle, $0) } }
    }

    /// The longer of a known value and a possibly truncated one: the known one when it
    /// starts with the new one (a server truncates long values in some responses).
    static func longer(_ known: [UInt8]?, _ new: [UInt8]) -> [UInt8] {
        guard let known, known.count > new.count, known.starts(with: new) else { return new }
        return known
    }

    mutating func failed(_ request: PendingRequest, _ error: ErrorResponse, on link: ConnectionHandle) {
        let peer = peer(of: link)
        let encrypted = self[link: link]?.encrypted ?? false
        peers[peer].peripheral.errors.append(
            RecordedError(
                request: error.requestOpcode, handle: error.handle, code: error.error,
                encrypted: encrypted))
        if request.opcode == .executeWriteRequest { self[link: link]?.prepared = [] }
        // An error about one attribute shows it exists, unless it says the handle is invalid.
        guard Self.singleHandleRequests.contains(error.requestOpcode), error.error != .invalidHandle else { return }
        update(peer, error.handle) { attribute in
            if !encrypted, Self.securityCodes.contains(error.error) { attribute.requiresEncryption = true }
        }
    }

    /// The codes that say a request needs a more secure link (Part F, 3.4.1.1).
    static let securityCodes: Set<ATTErrorCode> = [
        .insufficientAuthentication, .insufficientEncryption, .encryptionKeySizeTooShort,
    ]
    /// The requests on one attribute whose security errors mark it as needing encryption.
    static let singleHandleRequests: Set<ATTOpcode> = [
        .readRequest, .readBlobRequest, .writeRequest, .prepareWriteRequest,
    ]

    /// A request of kind `opcode` on `handle` succeeded (a request on one attribute: Read,
    /// Read Blob, Write, Prepare Write): earlier errors of the same kind on it are overridden.
    /// (Discovery requests name a range and end in Attribute Not Found by design; their
    /// errors are never overridden.) A success on an unencrypted link also contradicts those errors'
    /// security requirement; the attribute keeps it only if another kind of request still
    /// says so.
    mutating func succeeded(_ opcode: ATTOpcode, _ handle: AttributeHandle, peer: Int, link: ConnectionHandle) {
        let encrypted = self[link: link]?.encrypted ?? false
        var errors = peers[peer].peripheral.errors
        for index in errors.indices where errors[index].request == opcode && errors[index].handle == handle {
            errors[index].overridden = true
            if !encrypted { peers[peer].contradicted.insert(index) }
        }
        peers[peer].peripheral.errors = errors
        guard !encrypted, peers[peer].attributes[handle]?.requiresEncryption == true else { return }
        let stillRequired = errors.indices.contains { index in
            let error = errors[index]
            return error.handle == handle && !error.encrypted && Self.securityCodes.contains(error.code)
                && Self.singleHandleRequests.contains(error.request) && !peers[peer].contradicted.contains(index)
        }
        peers[peer].attributes[handle]?.requiresEncryption = stillRequired
    }

    /// The host wrote `value` to `handle` and the peer took it: the value, and a stimulus.
    mutating func write(_ value: [UInt8], to handle: AttributeHandle, peer: Int, link: ConnectionHandle) {
        peers[peer].initialSettled.insert(handle)
        update(peer, handle) { $0.value = value }
        self[link: link]?.blobs[handle] = nil
        peers[peer].peripheral.reactions.append(
            RecordedReaction(trigger: .write(handle: handle, value: value), notifications: []))
        let reaction = peers[peer].peripheral.reactions.count - 1
        self[link: link]?.currentReaction = reaction
    }

    mutating func notified(_ notification: RecordedNotification, link: ConnectionHandle) {
        let peer = peer(of: link)
        update(peer, notification.handle) { $0.value = notification.value }
        observed(notification.value, of: notification.handle, peer: peer, continuing: false)
        let reaction: Int
        if let current = self[link: link]?.currentReaction {
            reaction = current
        } else if let subscription = self[link: link]?.subscriptions[notification.handle] {
            reaction = subscription
        } else {
            peers[peer].peripheral.reactions.append(
                RecordedReaction(trigger: .subscription(handle: notification.handle), notifications: []))
            reaction = peers[peer].peripheral.reactions.count - 1
            self[link: link]?.subscriptions[notification.handle] = reaction
        }
        peers[peer].peripheral.reactions[reaction].notifications.append(notification)
    }

    /// A value of `handle` seen (read, or notified): the first a client found, until a write
    /// or a second sighting settles it; `continuing` is a Read Blob that goes on with the
    /// same read.
    mutating func observed(_ value: [UInt8], of handle: AttributeHandle, peer: Int, continuing: Bool) {
        guard !peers[peer].initialSettled.contains(handle) else { return }
        if peers[peer].attributes[handle]?.initialValue != nil, !continuing {
            peers[peer].initialSettled.insert(handle)
            return
        }
        update(peer, handle) { $0.initialValue = value }
    }

    /// Changes the attribute at `handle`, creating it (type unknown) if new.
    mutating func update(_ peer: Int, _ handle: AttributeHandle, _ change: (inout RecordedAttribute) -> Void) {
        change(&peers[peer].attributes[handle, default: RecordedAttribute(handle: handle, type: nil)])
    }
}
