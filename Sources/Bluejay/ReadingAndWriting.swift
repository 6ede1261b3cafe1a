import BluetoothCore
import FoundationEssentials
import GATT
import HCI

/// Reads and writes of the connected peripheral's characteristics, each through the queue.
extension Bluejay {
    // MARK: Reading and writing

    /// Reads a characteristic (discovering it on first use) and decodes it as `R`.
    public func read<R: Receivable>(from characteristicIdentifier: CharacteristicIdentifier, completion: @escaping @MainActor (ReadResult<R>) -> Void) {
        queue.add(QueuedOperation(.read, body: { [weak self] operation in
            guard let self, let (host, link) = await self.connected(operation) else { return }
            let result = await Task { @BluetoothActor () -> Result<[UInt8], BluejayError> in
                await Self.onClient(host, link.handle) { client throws(GATTError) in try await client.readValue(characteristicIdentifier) }.mapError { BluejayError.from($0, characteristicIdentifier) }
            }.value
            switch result {
            case let .success(bytes):
                do {
                    let value = try R(bluetoothBytes: bytes[...])
                    if operation.claim() { completion(.success(value)) }
                } catch {
                    if operation.claim() { completion(.failure(error)) }
                }
            case let .failure(error): operation.fail(error)
            }
        }, onFailure: { error in
            if case .cancelled = error { completion(.cancelled) } else { completion(.failure(error)) }
        }))
    }

    /// Writes `value` to a characteristic, with or without a response.
    public func write<S: BluejaySendable>(to characteristicIdentifier: CharacteristicIdentifier, value: S, type: WriteType = .withResponse,
                                          completion: @escaping @MainActor (WriteResult) -> Void) {
        let bytes = [UInt8](value.toBluetoothData())
        queue.add(QueuedOperation(.write, body: { [weak self] operation in
            guard let self, let (host, link) = await self.connected(operation) else { return }
            let result = await Task { @BluetoothActor () -> Result<Void, BluejayError> in
                await Self.onClient(host, link.handle) { client throws(GATTError) in try await client.write(bytes, to: characteristicIdentifier, type: type) }.mapError { BluejayError.from($0, characteristicIdentifier) }
            }.value
            switch result {
            case .success: if operation.claim() { completion(.success) }
            case let .failure(error): operation.fail(error)
            }
        }, onFailure: { error in
            if case .cancelled = error { completion(.cancelled) } else { completion(.failure(error)) }
        }))
    }
}
