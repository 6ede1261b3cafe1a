import BluetoothCore
import Dispatch
import FoundationEssentials
import GATT
import HCI
import Synchronization

/// The peripheral as a background task sees it: every call blocks the task's thread until
/// the operation is done (never the stack, which runs on its own actor) and throws on
/// failure. Only for use inside ``Bluejay/run(userData:backgroundTask:completionOnMainThread:)`` and its siblings;
/// calling it on the main actor would hold every callback back until the peer answers.
public final class SynchronizedPeripheral: Sendable {
    private let host: BluetoothHost
    private let handle: ConnectionHandle
    /// The connected peripheral.
    public let identifier: PeripheralIdentifier
    /// Set when the task is cancelled or the link ends: every call then throws it.
    private let failure = Mutex<(any Error)?>(nil)
    /// Inboxes a blocked call waits on, woken when the task is cancelled.
    private let inboxes = Mutex<[Inbox]>([])

    /// Tells Bluejay a listen was ended here, so its callback is dropped too.
    private let listenEnded: @Sendable (CharacteristicIdentifier) -> Void

    init(
        host: BluetoothHost, handle: ConnectionHandle, identifier: PeripheralIdentifier,
        listenEnded: @escaping @Sendable (CharacteristicIdentifier) -> Void
    ) {
        (self.host, self.handle, self.identifier, self.listenEnded) = (host, handle, identifier, listenEnded)
    }

    /// Makes the blocked call and every later one throw `error` (the task was cancelled,
    /// or the link went down).
    func cancel(_ error: any Error) {
        failure.withLock { if $0 == nil { $0 = error } }
        for inbox in inboxes.withLock({ $0 }) { inbox.close() }
    }

    /// Runs `body` on the stack's actor and blocks until it ends.
    private func perform<T: Sendable>(
        _ body: @escaping @Sendable @BluetoothActor (GATTClient) async throws(GATTError) -> T,
        _ characteristic: CharacteristicIdentifier?, evenIfCancelled: Bool = false
    ) throws -> T {
        if !evenIfCancelled { try checkCancelled() }
        let host = host, handle = handle
        return try block {
            await Bluejay.onClient(host, handle, body).mapError { BluejayError.from($0, characteristic) }
        }.get()
    }

    /// Runs `body` on the stack's actor and blocks the calling thread until it returns.
    private func block<T: Sendable>(_ body: @escaping @Sendable @BluetoothActor () async -> Result<T, BluejayError>)
        -> Result<T, BluejayError>
    {
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<T, BluejayError>?>(nil)
        Task { @BluetoothActor in
            let result = await body()
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return outcome.withLock { $0! }
    }

    /// Discovers these services (every primary service when nil) and their characteristics;
    /// returns the characteristics found, in handle order. Reads and writes discover on their
    /// own; this is for a task that wants to know what the peripheral offers first.
    public func discover(_ serviceIdentifiers: [ServiceIdentifier]? = nil) throws -> [CharacteristicIdentifier] {
        try perform(
            { client throws(GATTError) in
                var services: [Service] = []
                if let serviceIdentifiers {
                    for identifier in serviceIdentifiers { services.append(try await client.service(identifier.uuid)) }
                } else {
                    services = try await client.discoverPrimaryServices()
                }
                var found: [CharacteristicIdentifier] = []
                for service in services {
                    for characteristic in try await client.characteristics(of: service) {
                        found.append(
                            CharacteristicIdentifier(
                                uuid: characteristic.uuid, service: ServiceIdentifier(uuid: service.uuid)))
                    }
                }
                return found
            }, nil)
    }

    /// Reads the link's RSSI (HCI Read RSSI), in dBm.
    public func readRSSI() throws -> Int {
        try checkCancelled()
        let host = host, handle = handle
        return Int(
            try block { () -> Result<Int8, BluejayError> in
                do throws(ConnectionError) { return .success(try await host.connections.readRSSI(handle)) } catch {
                    return .failure(.connection(error))
                }
            }.get())
    }

    /// Reads and decodes a characteristic.
    public func read<R: Receivable>(from characteristicIdentifier: CharacteristicIdentifier) throws -> R {
        let bytes = try perform(
            { client throws(GATTError) in try await client.readValue(characteristicIdentifier) },
            characteristicIdentifier)
        return try R(bluetoothBytes: bytes[...])
    }

    /// Writes a value to a characteristic.
    public func write<S: BluejaySendable>(
        to characteristicIdentifier: CharacteristicIdentifier, value: S, type: WriteType = .withResponse
    ) throws {
        let bytes = [UInt8](value.toBluetoothData())
        try perform(
            { client throws(GATTError) in try await client.write(bytes, to: characteristicIdentifier, type: type) },
            characteristicIdentifier)
    }

    /// Turns notifications or indications of a characteristic off (the CCCD back to 0).
    public func endListen(to characteristicIdentifier: CharacteristicIdentifier) throws {
        try perform(
            { client throws(GATTError) in try await client.unsubscribe(characteristicIdentifier, token: nil) },
            characteristicIdentifier)
        listenEnded(characteristicIdentifier)
    }

    /// Subscribes and hands each value to `completion` until it answers `.done`, then
    /// unsubscribes. With a timeout, waiting longer than that for a value throws
    /// `BluejayError.listenTimedOut`.
    public func listen<R: Receivable>(
        to characteristicIdentifier: CharacteristicIdentifier, timeout: Timeout = .none,
        completion: (R) -> ListenAction
    ) throws {
        try whileSubscribed(to: characteristicIdentifier) { inbox in
            try deliver(inbox, timeout: timeout, completion)
        }
    }

    /// Subscribes to `listenTo`, writes `value` to `writeTo`, then hands each value to
    /// `completion` until it answers `.done` (a request answered by notifications).
    /// `timeoutInSeconds` 0 waits for ever.
    public func writeAndListen<S: BluejaySendable, R: Receivable>(
        writeTo charToWriteTo: CharacteristicIdentifier, value: S, type: WriteType = .withResponse,
        listenTo charToListenTo: CharacteristicIdentifier, timeoutInSeconds: Int = 0,
        completion: (R) -> ListenAction
    ) throws {
        try whileSubscribed(to: charToListenTo) { inbox in
            try write(to: charToWriteTo, value: value, type: type)
            try deliver(inbox, timeout: timeoutInSeconds > 0 ? .seconds(Double(timeoutInSeconds)) : .none, completion)
        }
    }

    /// Like ``writeAndListen(writeTo:value:type:listenTo:timeoutInSeconds:completion:)``, but
    /// gathers notifications until `expectedLength` bytes have come, however the peripheral
    /// splits them, before decoding; more bytes than expected throw
    /// `BluejayError.tooMuchData(expected:actual:)`.
    public func writeAndAssemble<S: BluejaySendable, R: Receivable>(
        writeTo charToWriteTo: CharacteristicIdentifier, value: S,
        listenTo charToListenTo: CharacteristicIdentifier, expectedLength: Int,
        timeoutInSeconds: Int = 0, completion: (R) -> ListenAction
    ) throws {
        let timeout: Timeout = timeoutInSeconds > 0 ? .seconds(Double(timeoutInSeconds)) : .none
        try whileSubscribed(to: charToListenTo) { inbox in
            try write(to: charToWriteTo, value: value)
            var assembled: [UInt8] = []
            while true {
                assembled += try next(inbox, timeout)
                guard assembled.count >= expectedLength else { continue }
                guard assembled.count == expectedLength else {
                    throw BluejayError.tooMuchData(expected: expectedLength, actual: assembled.count)
                }
                if case .done = completion(try R(bluetoothBytes: assembled[...])) { return }
                assembled = []
            }
        }
    }

    /// Subscribes and throws away whatever arrives until nothing has come for `idleWindow`
    /// seconds, then unsubscribes and calls `completion`.
    public func flushListen(
        to characteristicIdentifier: CharacteristicIdentifier, idleWindow: Int = 3, completion: () -> Void
    ) throws {
        try whileSubscribed(to: characteristicIdentifier) { inbox in
            while inbox.take(timeout: .seconds(Double(max(idleWindow, 0)))) != nil { try checkCancelled() }
            try checkCancelled()
        }
        completion()
    }

    private func checkCancelled() throws {
        if let error = failure.withLock({ $0 }) { throw error }
    }

    /// The next value, or the error that ended the task, or `BluejayError.listenTimedOut`.
    private func next(_ inbox: Inbox, _ timeout: Timeout) throws -> [UInt8] {
        let value = inbox.take(timeout: timeout)
        try checkCancelled()
        guard let value else { throw BluejayError.listenTimedOut }
        return value
    }

    /// Decoded values to `completion` until `.done`; a wait longer than `timeout` throws.
    private func deliver<R: Receivable>(_ inbox: Inbox, timeout: Timeout, _ completion: (R) -> ListenAction) throws {
        while true {
            let bytes = try next(inbox, timeout)
            if case .done = completion(try R(bluetoothBytes: bytes[...])) { return }
        }
    }

    /// Runs `body` with the values of `characteristicIdentifier` arriving in an inbox: the
    /// CCCD is written before and turned off after, whatever `body` does.
    private func whileSubscribed(to characteristicIdentifier: CharacteristicIdentifier, _ body: (Inbox) throws -> Void)
        throws
    {
        let inbox = Inbox()
        inboxes.withLock { $0.append(inbox) }
        defer { inboxes.withLock { $0.removeAll { $0 === inbox } } }
        try checkCancelled()
        let token = try perform(
            { client throws(GATTError) in
                try await client.subscribe(characteristicIdentifier) { inbox.put(Array($0)) }.1
            }, characteristicIdentifier)
        defer {
            // Undone even when the task was cancelled: leave no subscription behind.
            _ = try? perform(
                { client throws(GATTError) in try await client.unsubscribe(characteristicIdentifier, token: token) },
                characteristicIdentifier,
                evenIfCancelled: true)
        }
        try body(inbox)
    }
}

/// Values arriving from the stack for a blocked background task, in order.
final class Inbox: Sendable {
    private let values = Mutex<(queued: [[UInt8]], closed: Bool)>(([], false))
    private let available = DispatchSemaphore(value: 0)

    func put(_ value: [UInt8]) {
        values.withLock { $0.queued.append(value) }
        available.signal()
    }

    /// Wakes the waiter for good: ``take(timeout:)`` returns nil from now on.
    func close() {
        values.withLock { $0.closed = true }
        available.signal()
    }

    /// The next value; nil after `timeout` without one, or once closed.
    func take(timeout: Timeout) -> [UInt8]? {
        switch timeout {
        case .none: available.wait()
        case let .seconds(seconds):
            guard available.wait(timeout: .now() + .milliseconds(Int(seconds * 1000))) == .success else { return nil }
        }
        return values.withLock { state in
            if state.closed {
                available.signal()  // keep later takes from blocking
                return nil
            }
            return state.queued.isEmpty ? nil : state.queued.removeFirst()
        }
    }
}
