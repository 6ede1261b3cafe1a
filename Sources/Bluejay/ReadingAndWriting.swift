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
        request(.read, about: characteristicIdentifier, completion: completion) { client throws(GATTError) in
            try await client.readValue(characteristicIdentifier)
        } outcome: { bytes in
            do { return .success(try R(bluetoothBytes: bytes[...])) } catch { return .failure(error) }
        }
    }

    /// Writes `value` to a characteristic, with or without a response.
    public func write<S: BluejaySendable>(
        to characteristicIdentifier: CharacteristicIdentifier, value: S, type: WriteType = .withResponse,
        completion: @escaping @MainActor (WriteResult) -> Void
    ) {
        let bytes = [UInt8](value.toBluetoothData())
        request(.write, about: characteristicIdentifier, completion: completion) { client throws(GATTError) in
            try await client.write(bytes, to: characteristicIdentifier, type: type)
        } outcome: { _ in
            .success
        }
    }

    /// One request about `characteristic` to the connected peripheral's GATT client, through
    /// the queue: the answer claims the operation and reaches `completion` as `outcome` makes
    /// it (on the main actor, where the app's decoding runs); a failure ends the operation with
    /// its cause, and a cancellation reaches `completion` as cancelled.
    private func request<Answer: Sendable, Outcome: RequestOutcome>(
        _ kind: OperationKind, about characteristic: CharacteristicIdentifier,
        completion: @escaping @MainActor (Outcome) -> Void,
        _ body: @escaping @Sendable (GATTClient) async throws(GATTError) -> Answer,
        outcome: @escaping @MainActor @Sendable (Answer) -> Outcome
    ) {
        queue.add(
            QueuedOperation(
                kind,
                body: { [weak self] operation in
                    guard let self, let (host, link) = await self.connected(operation) else { return }
                    switch await Self.onClient(host, link.handle, body) {
                    case let .success(answer): if operation.claim() { self.post { completion(outcome(answer)) } }
                    case let .failure(error): operation.fail(Self.cause(.from(error, characteristic), on: host))
                    }
                },
                onFailure: failing { error in
                    completion(BluejayError.isCancellation(error) ? .cancelled : .failure(error))
                }))
    }
}

/// What a read or a write reports: cancelled, or failed with why (``ReadResult``,
/// ``WriteResult``).
protocol RequestOutcome {
    /// Cancelled.
    static var cancelled: Self { get }
    /// Failed, with why.
    static func failure(_ error: any Error) -> Self
}

extension ReadResult: RequestOutcome {}
extension WriteResult: RequestOutcome {}
