import BluetoothCore

/// Writes (Core Vol 3, Part F, 3.4.5 and 3.4.6): Write Request and Command, and the queued
/// writes of Prepare and Execute Write. Every write, whichever request carries it, goes the
/// same way: permissions first, then the handler's decision (for an attribute whose writes
/// one decides), then ``AttributeServer/onWrite``'s; then it is stored and
/// ``AttributeServer/onWritten`` is told.
extension AttributeServer {
    /// Writes `value` if ``writeRefusal(handle:length:needs:connection:)`` allows it and the
    /// decisions accept it.
    func write(
        handle: AttributeHandle, value: [UInt8], needs permission: AttributePermissions,
        connection: ConnectionHandle, outside: OutsideAnswers
    ) throws(Stop) {
        if let refusal = writeRefusal(handle: handle, length: value.count, needs: permission, connection: connection) {
            throw .refused(refusal)
        }
        let withResponse = permission != .writeWithoutResponse
        try decide([(handle, value)], connection: connection, outside: outside, withResponse: withResponse)
        apply([(handle, value)], connection: connection, withResponse: withResponse)
    }

    /// Queues a Prepare Write Request's part (3.4.6.1): the attribute must exist and allow
    /// writing on this link; the queue must have room.
    func prepare(_ request: PrepareWriteRequest, connection: ConnectionHandle, queue: inout [PreparedWrite])
        throws(Stop)
    {
        if let refusal = writeRefusal(handle: request.handle, length: 0, needs: .write, connection: connection) {
            throw .refused(refusal)
        }
        let queued = queue.reduce(0) { $0 + $1.value.count }
        guard queued + request.value.count <= maximumPreparedOctets else {
            throw .refusal(request.handle, .prepareQueueFull)
        }
        queue.append(PreparedWrite(handle: request.handle, offset: Int(request.offset), value: Array(request.value)))
    }

    /// Execute Write (3.4.6.3): cancels the client's `queue`, or writes it: each attribute's
    /// new value is its current value up to each part's offset, then the part. A queue
    /// ``AttributeServer/onExecuteWrite`` refuses is refused whole. A part past
    /// the value's end is Invalid Offset, a value past 512 octets Invalid Attribute Value
    /// Length; all are decided before any is written, and a refusal writes none. The queue
    /// is emptied either way, once the answer is final.
    func executeWrite(
        _ request: ExecuteWriteRequest, connection: ConnectionHandle, outside: OutsideAnswers,
        queue: inout [PreparedWrite]
    ) throws(Stop) {
        let parts = queue
        do throws(Stop) {
            guard request.flags == .write else {
                queue = []
                return
            }
            if let refusal = onExecuteWrite?(connection, parts.map(\.handle)) { throw .refused(refusal) }
            let values = try preparedValues(parts, connection: connection, outside: outside)
            try decide(values, connection: connection, outside: outside, withResponse: true)
            queue = []
            apply(values, connection: connection, withResponse: true)
        } catch {
            // Asking a handler is not an answer: the queue waits for it.
            if case .refused = error { queue = [] }
            throw error
        }
    }

    /// The new value of each attribute the queue writes, in order of first appearance.
    private func preparedValues(
        _ parts: [PreparedWrite], connection: ConnectionHandle,
        outside: OutsideAnswers
    ) throws(Stop) -> [(AttributeHandle, [UInt8])] {
        var order: [AttributeHandle] = []
        var values: [AttributeHandle: [UInt8]] = [:]
        for part in parts {
            var value: [UInt8]
            if let started = values[part.handle] {
                value = started
            } else if part.offset == 0 {
                value = []
            } else {
                guard let attribute = attribute(at: part.handle) else { throw .refusal(part.handle, .invalidHandle) }
                value = try currentValue(attribute, offset: 0, connection: connection, outside: outside)
            }
            if values[part.handle] == nil { order.append(part.handle) }
            guard part.offset <= value.count else { throw .refusal(part.handle, .invalidOffset) }
            // The part is the value from its offset on: a long write at offset 0 replaces the
            // whole value, its next parts continue it (GATT's Write Long Characteristic Values).
            value = Array(value.prefix(part.offset)) + part.value
            guard value.count <= Self.maximumValueLength else {
                throw .refusal(part.handle, .invalidAttributeValueLength)
            }
            values[part.handle] = value
        }
        return order.map { ($0, values[$0] ?? []) }
    }

    /// Checks that every write may go ahead: the handler's decision, for an attribute whose
    /// writes one decides (asked for, if not yet), then ``onWrite``'s.
    private func decide(
        _ writes: [(AttributeHandle, [UInt8])], connection: ConnectionHandle, outside: OutsideAnswers,
        withResponse: Bool
    ) throws(Stop) {
        for (handle, value) in writes where outside.writeHandled.contains(handle) {
            switch outside.writes[handle] {
            case nil: throw .needsWriteDecision(handle, value: value, withResponse: withResponse)
            case let .refused(code)?: throw .refusal(handle, code)
            case .accepted?: continue
            }
        }
        for (handle, value) in writes {
            if let code = onWrite?(connection, handle, value) { throw .refusal(handle, code) }
        }
    }

    /// Stores each value and tells ``onWritten``.
    private func apply(_ writes: [(AttributeHandle, [UInt8])], connection: ConnectionHandle, withResponse: Bool) {
        for (handle, value) in writes {
            setValue(value, of: handle)
            onWritten?(connection, handle, value, withResponse)
        }
    }
}
