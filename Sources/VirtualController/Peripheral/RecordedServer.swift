import ATT
import BluetoothCore
import GATT
import HCI

/// The ATT server of a virtual peripheral: the recorded database served as it was seen,
/// the recorded refusals, and the recorded reactions to writes.
///
/// Discovery, reads and writes of the attributes the recording discovered go to an
/// ``AttributeServer`` over them (service groups end where the real server said they did).
/// Around it: attributes seen only in use (never discovered) answer reads and writes by
/// handle but stay out of discovery; a value the recording never showed is read as
/// Attribute Not Found (an honest gap, not an invented value); a handle the peer refused
/// for want of security is refused the same way until the link is encrypted; other
/// lasting refusals (Read Not Permitted, Insufficient Authorization, …) are repeated.
/// Each client's CCCDs and prepare queue are its own. A write the recording shows a
/// reaction to gives that reaction back, through ``respond(to:link:mtu:)``'s `pushes`.
final class RecordedServer {
    /// What the server keeps per connection.
    struct Link {
        /// Each CCCD's value for this client (absent: 0x0000, nothing enabled).
        var cccd: [AttributeHandle: UInt16] = [:]
        /// Whether the link is encrypted.
        var encrypted = false
        /// Prepare Write Requests queued for an Execute Write Request.
        var prepared: [(handle: AttributeHandle, offset: Int, value: [UInt8])] = []
    }

    private let table: AttributeServer
    /// Attributes seen only in use: their last value, if any.
    private var undiscovered: [AttributeHandle: [UInt8]?]
    /// Discovered attributes whose value the recording never showed.
    private var unknownValues: Set<AttributeHandle>
    /// Handles refused on an unencrypted link for want of security, with the code given.
    private let securityRefusals: [AttributeHandle: ATTErrorCode]
    /// Lasting refusals by request opcode and handle.
    private let refusals: [RefusalKey: ATTErrorCode]
    /// CCCD handle of each characteristic value handle, and back.
    private let cccdOfValue: [AttributeHandle: AttributeHandle]
    private let valueOfCCCD: [AttributeHandle: AttributeHandle]
    private let reactions: [RecordedReaction]
    /// The reactions by what set them off, in recorded order (indices into ``reactions``).
    private let reactionsByKey: [ReactionKey: [Int]]
    /// The CCCDs the recording shows the host writing: what they guard goes only to a
    /// client that enabled it. A peer the recording shows notifying with no CCCD write
    /// (the subscription came before the capture, or it notifies regardless) does so here too.
    private let guardingCCCDs: Set<AttributeHandle>
    /// Which recorded reaction a repeated stimulus replays next.
    private var cursors: [ReactionKey: Int] = [:]

    private struct RefusalKey: Hashable {
        var opcode: UInt8
        var handle: AttributeHandle
    }

    private enum ReactionKey: Hashable {
        case exact(AttributeHandle, [UInt8])
        case handle(AttributeHandle)
        case subscription(AttributeHandle)
    }

    /// Errors that say something lasting about a handle, whatever the value or offset.
    private static let lastingErrors: Set<ATTErrorCode> = [
        .invalidHandle, .readNotPermitted, .writeNotPermitted,
        .requestNotSupported, .insufficientAuthorization,
    ]
    private static let securityErrors: Set<ATTErrorCode> = [
        .insufficientAuthentication, .insufficientEncryption,
        .encryptionKeySizeTooShort,
    ]

    /// The server for `peripheral`'s recorded database.
    init(_ peripheral: RecordedPeripheral) {
        let attributes = peripheral.attributes.sorted { $0.handle < $1.handle }
        // What each characteristic declaration says of its value attribute.
        var properties: [AttributeHandle: CharacteristicProperties] = [:]
        for attribute in attributes where attribute.type == .characteristic {
            guard let declaration = attribute.value.flatMap(CharacteristicDeclaration.init(value:)) else { continue }
            properties[declaration.valueHandle] = declaration.properties
        }
        // A characteristic's descriptors run from after its value to the next declaration.
        var cccdOfValue: [AttributeHandle: AttributeHandle] = [:]
        var currentValue: AttributeHandle?
        for attribute in attributes {
            if let type = attribute.type, Self.declarationTypes.contains(type) {
                currentValue = nil
                if type == .characteristic {
                    currentValue = attribute.value.flatMap(CharacteristicDeclaration.init(value:))?.valueHandle
                }
            } else if attribute.type == .clientCharacteristicConfiguration, let value = currentValue,
                attribute.handle > value
            {
                cccdOfValue[value] = attribute.handle
            }
        }
        self.cccdOfValue = cccdOfValue
        valueOfCCCD = Dictionary(cccdOfValue.map { ($1, $0) }, uniquingKeysWith: { first, _ in first })

        let table = AttributeServer()
        var undiscovered: [AttributeHandle: [UInt8]?] = [:]
        var unknownValues: Set<AttributeHandle> = []
        for attribute in attributes where attribute.handle != 0 {
            let served = attribute.initialValue ?? attribute.value
            guard let type = attribute.type else {
                undiscovered[attribute.handle] = served
                continue
            }
            let permissions: AttributePermissions
            if Self.declarationTypes.contains(type) {
                permissions = .read
            } else if let declared = properties[attribute.handle] {
                var granted: AttributePermissions = []
                if declared.contains(.read) { granted.insert(.read) }
                if declared.contains(.write) { granted.insert(.write) }
                if declared.contains(.writeWithoutResponse) || declared.contains(.authenticatedSignedWrites) {
                    granted.insert(.writeWithoutResponse)
                }
                permissions = granted
            } else {
                // A descriptor (or a value whose declaration the recording missed): what a
                // client may do with it is not recorded, so nothing is refused.
                permissions = [.read, .write, .writeWithoutResponse]
            }
            if served == nil, type != .clientCharacteristicConfiguration { unknownValues.insert(attribute.handle) }
            table.add(
                Attribute(
                    handle: attribute.handle, type: type, value: served ?? [], permissions: permissions,
                    groupEndHandle: attribute.groupEndHandle))
        }
        self.table = table
        self.undiscovered = undiscovered
        self.unknownValues = unknownValues

        var securityRefusals: [AttributeHandle: ATTErrorCode] = [:]
        for attribute in attributes where attribute.requiresEncryption {
            securityRefusals[attribute.handle] = .insufficientAuthentication
        }
        var refusals: [RefusalKey: ATTErrorCode] = [:]
        for error in peripheral.errors where !error.overridden {
            if Self.securityErrors.contains(error.code), !error.encrypted, securityRefusals[error.handle] != nil {
                securityRefusals[error.handle] = error.code
            } else if Self.lastingErrors.contains(error.code)
                || (error.code.rawValue >= 0x80 && Self.readOpcodes.contains(error.request))
            {
                guard Self.byHandleOpcodes.contains(error.request) else { continue }
                refusals[RefusalKey(opcode: error.request.rawValue, handle: error.handle)] = error.code
            }
        }
        self.securityRefusals = securityRefusals
        self.refusals = refusals
        reactions = peripheral.reactions
        var reactionsByKey: [ReactionKey: [Int]] = [:]
        for (index, reaction) in peripheral.reactions.enumerated() {
            switch reaction.trigger {
            case let .write(handle, value):
                reactionsByKey[.exact(handle, value), default: []].append(index)
                reactionsByKey[.handle(handle), default: []].append(index)
            case let .subscription(handle):
                reactionsByKey[.subscription(handle), default: []].append(index)
            }
        }
        self.reactionsByKey = reactionsByKey
        let cccds = Set(cccdOfValue.values)
        guardingCCCDs = Set(
            peripheral.reactions.compactMap { reaction in
                if case let .write(handle, _) = reaction.trigger, cccds.contains(handle) { handle } else { nil }
            })
    }

    private static let declarationTypes: Set<BluetoothUUID> = [
        .primaryService, .secondaryService, .include, .characteristic,
    ]
    private static let readOpcodes: Set<ATTOpcode> = [.readRequest, .readBlobRequest]
    private static let byHandleOpcodes: Set<ATTOpcode> = [
        .readRequest, .readBlobRequest, .writeRequest, .writeCommand,
        .prepareWriteRequest, .signedWriteCommand,
    ]

    /// The table's answer to a request that needs nothing kept of the client (reads,
    /// finds, writes; the link keeps its own prepare queue, ``Link``).
    private func tableAnswer(_ request: ATTRequest, mtu: Int) -> [UInt8]? {
        var noQueue = AttributeServer.Client()
        return table.respond(to: request, connection: 0, mtu: mtu, client: &noQueue)
    }

    /// Answers one request or command from the client on `link`, where `mtu` is the
    /// bearer's ATT_MTU: the response (nil for a command) and the notifications and
    /// indications the recording shows the peer sending next.
    func respond(to request: ATTRequest, link: inout Link, mtu: Int) -> (
        response: [UInt8]?, pushes: [RecordedNotification]
    ) {
        let opcode = request.opcode
        func refuse(_ handle: AttributeHandle, _ code: ATTErrorCode) -> (
            response: [UInt8]?, pushes: [RecordedNotification]
        ) {
            (opcode.isCommand ? nil : ErrorResponse(requestOpcode: opcode, handle: handle, error: code).encoded(), [])
        }
        switch request {
        case .read, .readBlob:
            let (handle, offset) =
                switch request {
                case let .readBlob(blob): (blob.handle, Int(blob.offset))
                case let .read(read): (read.handle, 0)
                default: preconditionFailure("a read")
                }
            if let code = refusal(opcode, handle, link) { return refuse(handle, code) }
            let value: [UInt8]
            if valueOfCCCD[handle] != nil || (table.attribute(at: handle)?.type == .clientCharacteristicConfiguration) {
                let bits = link.cccd[handle] ?? 0
                value = [UInt8(truncatingIfNeeded: bits), UInt8(bits >> 8)]
            } else if let known = undiscovered[handle] {
                guard let known else { return refuse(handle, .attributeNotFound) }
                value = known
            } else if unknownValues.contains(handle) {
                return refuse(handle, .attributeNotFound)
            } else {
                return (tableAnswer(request, mtu: mtu), [])
            }
            guard offset <= value.count else { return refuse(handle, .invalidOffset) }
            let part = value[offset...].prefix(mtu - 1)
            return (
                opcode == .readRequest ? ReadResponse(value: part).encoded() : ReadBlobResponse(value: part).encoded(),
                []
            )
        case let .readMultiple(read):
            for handle in read.handles {
                if let code = refusal(.readRequest, handle, link) { return refuse(handle, code) }
                if unknownValues.contains(handle) || undiscovered[handle] != nil {
                    return refuse(handle, .attributeNotFound)
                }
            }
            return (tableAnswer(request, mtu: mtu), [])
        case .write, .writeCommand, .signedWriteCommand:
            let (handle, value) =
                switch request {
                case let .write(write): (write.handle, Array(write.value))
                case let .writeCommand(command): (command.handle, Array(command.value))
                // The virtual peer holds no CSRK: the signature is not checked.
                case let .signedWriteCommand(command): (command.handle, Array(command.value))
                default: preconditionFailure("a write")
                }
            if let code = refusal(opcode == .signedWriteCommand ? .writeCommand : opcode, handle, link) {
                return refuse(handle, code)
            }
            if let code = write(handle, value, link: &link, command: opcode != .writeRequest) {
                return refuse(handle, code)
            }
            return (opcode == .writeRequest ? WriteResponse().encoded() : nil, pushes(after: handle, value, link: link))
        case let .prepareWrite(part):
            if let code = refusal(opcode, part.handle, link) { return refuse(part.handle, code) }
            guard exists(part.handle) else { return refuse(part.handle, .invalidHandle) }
            link.prepared.append((part.handle, Int(part.offset), Array(part.value)))
            return (PrepareWriteResponse(handle: part.handle, offset: part.offset, value: part.value).encoded(), [])
        case let .executeWrite(execute):
            let queue = link.prepared
            link.prepared = []
            guard execute.flags == .write else { return (ExecuteWriteResponse().encoded(), []) }
            // Each handle's parts, laid over its current value in the order they came.
            var order: [AttributeHandle] = []
            var values: [AttributeHandle: [UInt8]] = [:]
            for part in queue {
                if values[part.handle] == nil {
                    order.append(part.handle)
                    values[part.handle] = currentValue(of: part.handle, link: link)
                }
                var value = values[part.handle]!
                guard part.offset <= value.count else { return refuse(part.handle, .invalidOffset) }
                value.replaceSubrange(part.offset..<min(value.count, part.offset + part.value.count), with: part.value)
                values[part.handle] = value
            }
            var pushes: [RecordedNotification] = []
            for handle in order {
                if let code = write(handle, values[handle]!, link: &link, command: false) {
                    return refuse(handle, code)
                }
                pushes += self.pushes(after: handle, values[handle]!, link: link)
            }
            return (ExecuteWriteResponse().encoded(), pushes)
        default:
            return (tableAnswer(request, mtu: mtu), [])
        }
    }

    /// Whether a Write Request to `handle` is answered (rather than refused as not
    /// permitted): its characteristic allows it, or nothing says it does not.
    func acceptsWriteRequest(_ handle: AttributeHandle) -> Bool {
        if undiscovered[handle] != nil || valueOfCCCD[handle] != nil { return true }
        return table.attribute(at: handle)?.permissions.contains(.write) ?? false
    }

    /// Why a by-handle request on `handle` is refused on this link, if it is.
    private func refusal(_ opcode: ATTOpcode, _ handle: AttributeHandle, _ link: Link) -> ATTErrorCode? {
        if !link.encrypted, let code = securityRefusals[handle] { return code }
        if let code = refusals[RefusalKey(opcode: opcode.rawValue, handle: handle)] { return code }
        if opcode == .readBlobRequest {
            return refusals[RefusalKey(opcode: ATTOpcode.readRequest.rawValue, handle: handle)]
        }
        return nil
    }

    /// What a read of `handle` would give this client now (empty when nothing is known).
    private func currentValue(of handle: AttributeHandle, link: Link) -> [UInt8] {
        if valueOfCCCD[handle] != nil || table.attribute(at: handle)?.type == .clientCharacteristicConfiguration {
            let bits = link.cccd[handle] ?? 0
            return [UInt8(truncatingIfNeeded: bits), UInt8(bits >> 8)]
        }
        if let known = undiscovered[handle] { return known ?? [] }
        return table.value(of: handle) ?? []
    }

    private func exists(_ handle: AttributeHandle) -> Bool {
        table.attribute(at: handle) != nil || undiscovered[handle] != nil
    }

    /// Applies a write; returns the refusal, if any.
    private func write(_ handle: AttributeHandle, _ value: [UInt8], link: inout Link, command: Bool) -> ATTErrorCode? {
        if valueOfCCCD[handle] != nil || table.attribute(at: handle)?.type == .clientCharacteristicConfiguration {
            guard value.count == 2 else { return .invalidAttributeValueLength }
            link.cccd[handle] = UInt16(value[0]) | UInt16(value[1]) << 8
            return nil
        }
        if undiscovered[handle] != nil {
            undiscovered[handle] = .some(value)
            return nil
        }
        guard table.attribute(at: handle) != nil else { return .invalidHandle }
        let request: ATTRequest =
            command
            ? .writeCommand(WriteCommand(handle: handle, value: value[...]))
            : .write(WriteRequest(handle: handle, value: value[...]))
        let answer = tableAnswer(request, mtu: 65535)
        if command {
            // A command gets no answer; whether it took is read back from the table.
            guard table.value(of: handle) == value else { return .writeNotPermitted }
        } else if let answer, answer.first == ATTOpcode.errorResponse.rawValue,
            let error = try? ErrorResponse(decoding: answer[...])
        {
            return error.error
        }
        unknownValues.remove(handle)
        return nil
    }

    /// What the recording shows the peer sending after `value` was written to `handle`,
    /// kept to what this client has enabled: the next recorded reaction to the same write
    /// (same handle and value, else same handle; each replayed in turn, then from the
    /// first again), and, for a CCCD turned on, what the peer sent unprompted of its
    /// characteristic's value.
    private func pushes(after handle: AttributeHandle, _ value: [UInt8], link: Link) -> [RecordedNotification] {
        var chosen: [RecordedNotification] = []
        let exact = ReactionKey.exact(handle, value)
        if let index = next(reactionsByKey[exact] != nil ? exact : .handle(handle)) {
            chosen += reactions[index].notifications
        }
        if let valueHandle = valueOfCCCD[handle], value.contains(where: { $0 != 0 }),
            let index = next(.subscription(valueHandle))
        {
            chosen += reactions[index].notifications
        }
        return chosen.compactMap { enabled($0, link: link) }
    }

    /// The reaction to replay for `key` this time: each recorded one in turn, then from the
    /// first again.
    private func next(_ key: ReactionKey) -> Int? {
        guard let candidates = reactionsByKey[key], !candidates.isEmpty else { return nil }
        let turn = cursors[key, default: 0]
        cursors[key] = turn + 1
        return candidates[turn % candidates.count]
    }

    /// The notification as this client may receive it: as recorded when its CCCD bit is
    /// set, as the other kind when only that one is, not at all when neither is. A value
    /// with no known CCCD, or one the recording never shows written, goes as recorded.
    private func enabled(_ notification: RecordedNotification, link: Link) -> RecordedNotification? {
        guard let cccd = cccdOfValue[notification.handle], guardingCCCDs.contains(cccd) else { return notification }
        let bits = link.cccd[cccd] ?? 0
        var sent = notification
        let wanted: UInt16 = notification.isIndication ? 0x0002 : 0x0001
        if bits & wanted != 0 { return sent }
        guard bits & 0x0003 != 0 else { return nil }
        sent.isIndication.toggle()
        return sent
    }
}
