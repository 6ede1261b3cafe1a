import BluetoothCore
import FoundationEssentials
import GATT
import HCI

/// Reads and writes of the connected peripheral's characteristics, each through the queue.
/// The request goes out from the stack's actor; only the completion waits for the main
/// actor (and the decoding into the app's type, which is the app's code).
extension Bluejay {
    // MARK: Reading and writing

    /// Reads a characteristic (discovering it on first use) and decodes it as `R`.
    public func read<R: Receivable>(
        from characteristicIdentifier: CharacteristicIdentifier,
        completion: @escaping @MainActor (ReadResult<R>) -> Void
    ) {
        queue.add(
            QueuedOperation(
                .read,
                body: { [weak self] operation in
                    guard let self, let (host, link) = await self.connected(operation) else { return }
                    let result = await Self.onClient(host, link.handle) { client throws(GATTError) in
                        try await client.readValue(characteristicIdentifier)
                    }
                    switch result {
                    case let .success(bytes):
                        if operation.claim() {
                            self.post {
                                do { completion(.success(try R(bluetoothBytes: bytes[...]))) } catch {
                                    completion(.failure(error))
                                }
                            }
                        }
                    case let .failure(error):
                        operation.fail(Self.cause(.from(error, characteristicIdentifier), on: host))
                    }
                },
                onFailure: failing { error in
                    if BluejayError.isCancellation(error) {
                        completion(.cancelled)
                    } else {
                        completion(.failure(error))
                    }
                }))
    }

    /// Writes `value` to a characteristic, with or without a response.
    public func write<S: BluejaySendable>(
        to characteristicIdentifier: CharacteristicIdentifier, value: S, type: WriteType = .withResponse,
        completion: @escaping @MainActor (WriteResult) -> Void
    ) {
        let bytes = [UInt8](value.toBluetoothData())
        queue.add(
            QueuedOperation(
                .write,
                body: { [weak self] operation in
                    guard let self, let (host, link) = await self.connected(operation) else { return }
                    let result = await Self.onClient(host, link.handle) { client throws(GATTError) in
                        try await client.write(bytes, to: characteristicIdentifier, type: type)
                    }
                    switch result {
                    case .success: if operation.claim() { self.post { completion(.success) } }
                    case let .failure(error):
                        operation.fail(Self.cause(.from(error, characteristicIdentifier), on: host))
                    }
                },
                onFailure: failing { error in
                    if BluejayError.isCancellation(error) {
                        completion(.cancelled)
                    } else {
                        completion(.failure(error))
                    }
                }))
    }
}
