import Synchronization

/// The values of one ``Peripheral/values(of:capacity:)`` stream, in the order the peripheral sent
/// them: `for try await value in stream`. It ends normally when the listen is ended, with
/// the error that ended it otherwise (the link lost for good, the characteristic gone), and
/// when its consumer lets go of it or is cancelled, the subscription is taken off.
///
/// It is its own sequence rather than an `AsyncThrowingStream` because the consumer takes
/// each value on its own actor: a value already waiting costs no suspension and no hop to
/// another executor (an `AsyncThrowingStream(unfolding:)` runs its closure off the
/// consumer's actor, two hops per value).
public struct PeripheralValues: AsyncSequence, Sendable {
    /// One value: the characteristic's value as notified or indicated.
    public typealias Element = [UInt8]
    /// What ends the stream early.
    public typealias Failure = any Error

    private let consumer: ValueBuffer.Consumer

    init(_ consumer: ValueBuffer.Consumer) { self.consumer = consumer }

    /// The most values a stream holds for a consumer that does not keep up, unless
    /// ``Peripheral/values(of:capacity:)`` is given another: 4096 (about 1 MB of 244-byte
    /// values, as ``StartOptions/defaultListenBufferLimit`` for a listen).
    public static let defaultCapacity = 4096

    /// How many values were dropped so far because the stream already held its capacity:
    /// the oldest waiting value goes to make room for the newest, and is counted here.
    public var droppedCount: Int { consumer.buffer.dropped }

    /// The consumer's side: one iterator per stream, as its values are taken once.
    public struct AsyncIterator: AsyncIteratorProtocol {
        /// What ends the stream early.
        public typealias Failure = any Error
        private let consumer: ValueBuffer.Consumer

        init(_ consumer: ValueBuffer.Consumer) { self.consumer = consumer }

        /// The next value, on the caller's actor; nil once the stream has ended.
        public mutating func next() async throws -> [UInt8]? { try await consumer.buffer.next() }

        /// The next value, on `actor` (the caller's); nil once the stream has ended.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(any Error) -> [UInt8]? {
            try await consumer.buffer.next()
        }
    }

    /// The stream's iterator.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(consumer) }
}

/// The values of one ``Peripheral/values(of:capacity:)`` stream on their way from the stack to its
/// consumer, with the stream's end.
///
/// The stack appends each value to an array under a lock and wakes a waiting consumer only
/// for the first value of a burst; the consumer takes the rest of the burst at once, without
/// suspending, on its own actor (``PeripheralValues``). At most `capacity` values wait: past
/// it the oldest is dropped and counted, so a stalled consumer costs bounded memory.
final class ValueBuffer: Sendable {
    private struct State: ~Copyable {
        /// Values appended, not yet taken.
        var pending: [[UInt8]] = []
        /// The consumer's current batch (taken from `pending` whole) and its position.
        var batch: [[UInt8]] = []
        var position = 0
        /// How the stream ended, once it has.
        var end: Ending?
        /// A consumer waiting for a value.
        var waiter: CheckedContinuation<[UInt8]?, any Error>?
        /// Values dropped for want of room.
        var dropped = 0

        /// Values waiting for the consumer.
        var waiting: Int { pending.count + batch.count - position }

        /// Drops the oldest waiting value (one is waiting). Taken from the batch, so no value
        /// moves: a used-up batch first takes the pending values whole.
        mutating func dropOldest() {
            if position == batch.count {
                batch.removeAll(keepingCapacity: true)
                swap(&batch, &pending)
                position = 0
            }
            batch[position] = []
            position += 1
            dropped += 1
        }
    }

    /// How the stream ended.
    private enum Ending {
        case finished
        case failed(any Error)
    }

    /// What the consumer finds.
    private enum Taken {
        case value([UInt8])
        case ended(Ending)
        case wait
    }

    private let state = Mutex(State())
    /// The most values that wait.
    private let capacity: Int

    /// The consumer's hold on the buffer: the stream and its iterator alone keep it, and
    /// when the consumer lets go of them it runs the termination callback. (The subscriber
    /// holds the buffer itself, strongly: a weak reference, loaded for every value, made
    /// each value's retain and release take the slow path through a side table.)
    final class Consumer: Sendable {
        let buffer: ValueBuffer
        /// Called once when the consumer lets go of the stream: the subscriber leaves the peripheral.
        private let onTermination: @Sendable () -> Void

        init(_ buffer: ValueBuffer, onTermination: @escaping @Sendable () -> Void) {
            (self.buffer, self.onTermination) = (buffer, onTermination)
        }

        deinit { onTermination() }
    }

    init(capacity: Int = .max) { self.capacity = max(1, capacity) }

    /// Values dropped so far for want of room.
    var dropped: Int { state.withLock { $0.dropped } }

    /// The stream the consumer reads; `onTermination` runs when the consumer drops it.
    func stream(onTermination: @escaping @Sendable () -> Void) -> PeripheralValues {
        PeripheralValues(Consumer(self, onTermination: onTermination))
    }

    /// A value from the stack, in order.
    func yield(_ value: [UInt8]) {
        let waiter = state.withLock { state -> CheckedContinuation<[UInt8]?, any Error>? in
            guard state.end == nil else { return nil }
            guard let waiter = state.waiter else {
                if state.waiting >= capacity { state.dropOldest() }
                state.pending.append(value)
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: value)
    }

    /// The stream ends after the values already in it: normally (`error` nil) or with `error`.
    func finish(throwing error: (any Error)?) {
        let waiter = state.withLock { state -> CheckedContinuation<[UInt8]?, any Error>? in
            guard state.end == nil else { return nil }
            state.end = error.map { .failed($0) } ?? .finished
            defer { state.waiter = nil }
            return state.waiter
        }
        if let error { waiter?.resume(throwing: error) } else { waiter?.resume(returning: nil) }
    }

    /// The next value, waiting for one if none is there; nil once the stream has ended.
    /// It runs on the consumer's actor, which comes as an isolated parameter (its
    /// `#isolation` fills it in), so a value already there is taken without a hop. One form
    /// for every compiler, where Swift 6.2 could mark the function to run on its caller (SE-0461).
    func next(isolation actor: isolated (any Actor)? = #isolation) async throws -> [UInt8]? {
        try await next(on: actor)
    }

    /// ``next()``'s steps, on `actor` (the consumer's).
    private func next(on actor: isolated (any Actor)?) async throws -> [UInt8]? {
        switch take() {
        case let .value(value): return value
        case .ended(.finished): return nil
        case let .ended(.failed(error)): throw error
        case .wait: break
        }
        // A cancelled consumer's stream ends, as an AsyncThrowingStream's does. The operation
        // names `actor`, and so runs on it: a closure takes an isolated parameter's isolation
        // only when it captures the parameter (SE-0420). Without it the closure was
        // nonisolated, and every value the consumer waited for hopped to the global pool and
        // back (a pool thread woken twice, and the loop once, per value in the gateway).
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation(isolation: actor) { wait($0) }
        } onCancel: {
            finish(throwing: nil)
        }
    }

    /// A value or the end already there, else `.wait`.
    private func take() -> Taken { state.withLock { Self.take(&$0) } }

    /// The oldest value waiting in `state`, or its end, else `.wait`.
    private static func take(_ state: inout State) -> Taken {
        if state.position == state.batch.count, !state.pending.isEmpty {
            // The whole burst at once: the values after the first need no waiting.
            state.batch.removeAll(keepingCapacity: true)
            swap(&state.batch, &state.pending)
            state.position = 0
        }
        if state.position < state.batch.count {
            // Moved out, not copied: a consumed value is not kept alive by the batch
            // until the next burst replaces it.
            var value: [UInt8] = []
            swap(&value, &state.batch[state.position])
            state.position += 1
            return .value(value)
        }
        return state.end.map { .ended($0) } ?? .wait
    }

    /// Resumes `continuation` at once with a value or the end that came in since ``take()``,
    /// or leaves it for ``yield(_:)`` and ``finish(throwing:)``.
    private func wait(_ continuation: CheckedContinuation<[UInt8]?, any Error>) {
        let ready = state.withLock { state -> Taken in
            // A value or the end may have come in between (a drop may have moved the
            // pending values into the batch: the oldest is taken, wherever it waits).
            let taken = Self.take(&state)
            if case .wait = taken { state.waiter = continuation }
            return taken
        }
        switch ready {
        case let .value(value): continuation.resume(returning: value)
        case .ended(.finished): continuation.resume(returning: nil)
        case let .ended(.failed(error)): continuation.resume(throwing: error)
        case .wait: break
        }
    }
}
