import Dispatch
import FoundationEssentials
import GATT
import HCI
import Synchronization

/// The peripheral as a background task sees it: every call blocks the task's thread until
/// the operation is done (never the stack, which runs on its own actor) and throws on
/// failure. Only for use inside ``Bluejay/run(backgroundTask:completionOnMainThread:)``;
/// calling it on the main actor would block the callbacks it waits for.
public final class SynchronizedPeripheral: Sendable {
    private let host: BluetoothHost
    private let handle: UInt16
    /// The connected peripheral.
    public let identifier: PeripheralIdentifier
    private let cancelled = Mutex(false)

    init(host: BluetoothHost, handle: UInt16, identifier: PeripheralIdentifier) {
        self.host = host
        self.handle = handle
        self.identifier = identifier
    }

    /// Makes every later call throw ``BluejayError/cancelled`` (the task was cancelled).
    func cancel() { cancelled.withLock { $0 = true } }

    /// Runs `body` on the stack's actor and blocks until it ends.
    private func perform<T: Sendable>(_ body: @escaping @Sendable @BluetoothActor (GATTClient) async throws(GATTError) -> T,
                                      _ characteristic: CharacteristicIdentifier?) throws -> T {
        if cancelled.withLock({ $0 }) { throw BluejayError.cancelled }
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<T, BluejayError>?>(nil)
        let host = host, handle = handle
        Task { @BluetoothActor in
            let result = await Bluejay.onClient(host, handle, body).mapError { BluejayError.from($0, characteristic) }
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try outcome.withLock { $0! }.get()
    }

    /// Reads and decodes a characteristic.
    public func read<R: Receivable>(from characteristicIdentifier: CharacteristicIdentifier) throws -> R {
        let bytes = try perform({ client throws(GATTError) in
            let characteristic = try await client.characteristic(characteristicIdentifier.uuid, in: characteristicIdentifier.service.uuid)
            return try await client.readLong(characteristic.valueHandle)
        }, characteristicIdentifier)
        return try R(bluetoothData: Data(bytes))
    }

    /// Writes a value to a characteristic.
    public func write<S: BluejaySendable>(to characteristicIdentifier: CharacteristicIdentifier, value: S, type: WriteType = .withResponse) throws {
        let bytes = [UInt8](value.toBluetoothData())
        try perform({ client throws(GATTError) in
            let characteristic = try await client.characteristic(characteristicIdentifier.uuid, in: characteristicIdentifier.service.uuid)
            switch type {
            case .withoutResponse: try client.writeWithoutResponse(characteristic.valueHandle, bytes)
            case .withResponse where bytes.count > client.maximumWriteLength: try await client.writeLong(characteristic.valueHandle, bytes)
            case .withResponse: try await client.write(characteristic.valueHandle, bytes)
            }
        }, characteristicIdentifier)
    }

    /// Turns notifications or indications of a characteristic off (the CCCD back to 0).
    public func endListen(to characteristicIdentifier: CharacteristicIdentifier) throws {
        try perform({ client throws(GATTError) in
            let characteristic = try await client.characteristic(characteristicIdentifier.uuid, in: characteristicIdentifier.service.uuid)
            try await client.setNotifications(.none, for: characteristic)
        }, characteristicIdentifier)
    }

    /// Subscribes and hands each value to `completion` until it answers `.done`, then
    /// unsubscribes. With a timeout, waiting longer than that for a value throws
    /// ``BluejayError/listenTimedOut``.
    public func listen<R: Receivable>(to characteristicIdentifier: CharacteristicIdentifier, timeout: Timeout = .none,
                                      completion: (R) -> ListenAction) throws {
        let inbox = Inbox()
        let token = try perform({ client throws(GATTError) in
            let characteristic = try await client.characteristic(characteristicIdentifier.uuid, in: characteristicIdentifier.service.uuid)
            let token = client.addValueListener(characteristic.valueHandle) { inbox.put($0) }
            do throws(GATTError) { try await client.setNotifications(characteristic.properties.contains(.notify) ? .notify : .indicate, for: characteristic) } catch {
                client.removeValueListener(token)
                throw error
            }
            return token
        }, characteristicIdentifier)
        defer {
            _ = try? perform({ client throws(GATTError) in
                client.removeValueListener(token)
                let characteristic = try await client.characteristic(characteristicIdentifier.uuid, in: characteristicIdentifier.service.uuid)
                try await client.setNotifications(.none, for: characteristic)
            }, characteristicIdentifier)
        }
        while true {
            guard let bytes = inbox.take(timeout: timeout) else { throw BluejayError.listenTimedOut }
            if cancelled.withLock({ $0 }) { throw BluejayError.cancelled }
            if case .done = completion(try R(bluetoothData: Data(bytes))) { return }
        }
    }
}

/// Values arriving from the stack for a blocked background task, in order.
final class Inbox: Sendable {
    private let values = Mutex<[[UInt8]]>([])
    private let available = DispatchSemaphore(value: 0)

    func put(_ value: [UInt8]) {
        values.withLock { $0.append(value) }
        available.signal()
    }

    /// The next value, or nil after `timeout` without one.
    func take(timeout: Timeout) -> [UInt8]? {
        switch timeout {
        case .none: available.wait()
        case let .seconds(seconds):
            guard available.wait(timeout: .now() + .milliseconds(Int(seconds * 1000))) == .success else { return nil }
        }
        return values.withLock { $0.removeFirst() }
    }
}
