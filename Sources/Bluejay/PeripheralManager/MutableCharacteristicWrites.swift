import ATT
import BluetoothCore
import FoundationEssentials
import GATT

/// Writes the app answers, and the centrals subscribed: what the ``PeripheralManager``
/// tells a served ``MutableCharacteristic``.
extension MutableCharacteristic {
    /// The writes centrals make from now on, each with its central, for the app to answer
    /// with ``respondToRequest(_:withResult:)`` (BlueCap's
    /// `startRespondingToWriteRequests(capacity:)`). A write the app accepts becomes the
    /// value; one it refuses changes nothing. At most `capacity` wait for the app: one past
    /// that is refused with Insufficient Resources. A write not answered within 30 seconds
    /// (ATT's transaction timeout, after which the central gives up) is refused with
    /// Unlikely Error. While one stream runs, calling this again returns it.
    ///
    /// The stream throws ``MutableCharacteristicError/unconfigured`` when the characteristic
    /// is not served, and ends at ``stopRespondingToWriteRequests()`` or when the service is
    /// removed. While no stream runs, a permitted write is accepted and stored (BlueCap
    /// refuses it with Request Not Supported).
    public func startRespondingToWriteRequests(capacity: Int = .max)
        -> AsyncThrowingStream<(request: CharacteristicWriteRequest, central: ConnectedCentral), any Error>
    {
        typealias Writes = AsyncThrowingStream<
            (request: CharacteristicWriteRequest, central: ConnectedCentral), any Error
        >
        let (stream, continuation) = Writes.makeStream(
            bufferingPolicy: capacity == .max ? .unbounded : .bufferingOldest(max(1, capacity)))
        let taken = state.withLock { state -> Bool in
            guard state.binding != nil, state.writes == nil else { return false }
            state.writes = continuation
            return true
        }
        guard taken else {
            // Not served: BlueCap's error; already responding: one stream at a time.
            continuation.finish(throwing: MutableCharacteristicError.unconfigured)
            return stream
        }
        continuation.onTermination = { [weak self] _ in self?.stopRespondingToWriteRequests() }
        return stream
    }

    /// Stops handing writes to the app (BlueCap's `stopRespondingToWriteRequests()`): the
    /// stream ends, writes still unanswered are refused with Unlikely Error, and later
    /// writes are accepted as if no app responded.
    public func stopRespondingToWriteRequests() {
        let (writes, unanswered) = state.withLock { state in
            defer {
                state.writes = nil
                state.unanswered = [:]
            }
            return (state.writes, state.unanswered)
        }
        writes?.finish()
        for waiting in unanswered.values { waiting.resume(returning: .unlikelyError) }
    }

    /// Answers `request` (BlueCap's `respondToRequest(_:withResult:)`): `ATTErrorCode.success`
    /// accepts the value, any other code refuses the write with it. A request answered
    /// already, or one the central does not wait for, takes nothing from a second answer.
    public func respondToRequest(_ request: CharacteristicWriteRequest, withResult result: ATTErrorCode) {
        state.withLock { $0.unanswered.removeValue(forKey: request.id) }?.resume(returning: result)
    }

    /// A central's write, as the server's write handler asks it: nil accepts it. With the
    /// app responding, it waits for the app's answer.
    func received(_ write: GATTWriteRequest, from central: ConnectedCentral) async -> ATTErrorCode? {
        /// Where the write stands once offered to the app.
        enum Offered {
            case answered(ATTErrorCode)
            case waiting(id: Int)
        }
        let answer: ATTErrorCode = await withCheckedContinuation { continuation in
            let offered = state.withLock { state -> Offered in
                guard let writes = state.writes else { return .answered(.success) }
                state.nextRequest += 1
                let id = state.nextRequest
                let request = CharacteristicWriteRequest(
                    offset: 0, value: Data(write.value), withResponse: write.withResponse,
                    characteristic: self, id: id)
                if write.withResponse { state.unanswered[id] = continuation }
                guard case .enqueued = writes.yield((request: request, central: central)) else {
                    state.unanswered[id] = nil
                    return .answered(.insufficientResources)
                }
                return write.withResponse ? .waiting(id: id) : .answered(.success)
            }
            switch offered {
            case let .answered(code):
                continuation.resume(returning: code)
            case let .waiting(id):
                // Core Vol 3, Part F, 3.3.3: the central gives up on a request after 30 s.
                Task { [weak self] in
                    try? await Task.sleep(for: .seconds(30))
                    self?.state.withLock { $0.unanswered.removeValue(forKey: id) }?.resume(returning: .unlikelyError)
                }
            }
        }
        // Accepted, the server stores it, and the manager makes it the value here.
        return answer == .success ? nil : answer
    }

    /// `central` subscribed (`on`) or unsubscribed; the first central to subscribe gets
    /// what waited in ``pendingUpdates``.
    func subscription(of central: ConnectedCentral, on: Bool) {
        state.withLock { state in
            let first = state.subscribers.isEmpty
            state.subscribers.removeAll { $0.handle == central.handle }
            guard on else { return }
            let index =
                state.subscribers.firstIndex { $0.handle.rawValue > central.handle.rawValue }
                ?? state.subscribers.endIndex
            state.subscribers.insert(central, at: index)
            guard first, let binding = state.binding else { return }
            for update in state.pendingUpdates { binding.outbox.yield(update) }
            state.pendingUpdates = []
        }
    }

    /// Sets the value and queues it for the subscribed centrals, behind the updates queued
    /// before it; false when it is not served.
    func send(_ bytes: [UInt8]) -> Bool {
        state.withLock { state in
            guard let binding = state.binding else { return false }
            state.value = bytes
            binding.outbox.yield(bytes)
            return true
        }
    }

    /// The link `handle` ended: its central is no longer subscribed.
    func linkEnded(_ handle: ConnectionHandle) { state.withLock { $0.subscribers.removeAll { $0.handle == handle } } }

    /// Served by `manager` at `valueHandle` from now on; returns the updates to send, in order.
    func bind(to manager: PeripheralManager, valueHandle: AttributeHandle) -> AsyncStream<[UInt8]> {
        let (updates, outbox) = AsyncStream<[UInt8]>.makeStream()
        let previous = state.withLock { state in
            defer { state.binding = Binding(manager: manager, valueHandle: valueHandle, outbox: outbox) }
            return state.binding
        }
        previous?.outbox.finish()
        return updates
    }

    /// No longer served (its service was removed, or the manager closed).
    func unbind() {
        stopRespondingToWriteRequests()
        let binding = state.withLock { state in
            defer {
                state.binding = nil
                state.subscribers = []
            }
            return state.binding
        }
        binding?.outbox.finish()
    }

    /// Where it is served, if it is.
    var valueHandle: AttributeHandle? { state.withLock { $0.binding?.valueHandle } }
}
