import BluetoothCore
import Dispatch
import GATT
import HCI

/// What the app asks of a connected peripheral, one operation at a time in its queue:
/// discovery, reads and writes (each with an optional time limit), and background tasks.
extension Peripheral {
    /// Runs `body` on the link's GATT client once every earlier operation is done.
    func operation<T: Sendable>(
        _ kind: OperationKind, _ characteristic: CharacteristicIdentifier? = nil,
        _ body: @escaping @BluetoothActor (GATTClient) async throws(GATTError) -> T
    ) async throws(BluejayError) -> T {
        do {
            return try await queue.run(kind) { [weak self] () async throws -> T in
                guard let self, let handle = self.handle, self.state == .connected,
                    let client = self.host.existingClient(for: handle)
                else {
                    throw BluejayError.notConnected
                }
                do { return try await body(client) } catch let error as GATTError {
                    throw BluejayError.from(error, characteristic)
                }
            }
        } catch let error as BluejayError {
            throw error
        } catch {
            throw .cancelled
        }
    }

    /// Discovers every service and characteristic; returns the characteristics.
    public func discoverServices() async throws(BluejayError) -> [CharacteristicIdentifier] {
        try await operation(.discovery) { client throws(GATTError) in
            let database = try await client.discoverAll()
            return database.services.flatMap { service in
                (database.characteristics[service.handle] ?? []).map {
                    CharacteristicIdentifier(uuid: $0.uuid, service: ServiceIdentifier(uuid: service.uuid))
                }
            }
        }
    }

    /// The handle of `characteristic`'s value on this link (discovered on first use).
    public func valueHandle(of characteristic: CharacteristicIdentifier) async throws(BluejayError) -> AttributeHandle {
        try await operation(.discovery, characteristic) { client throws(GATTError) in
            try await client.characteristic(characteristic).valueHandle
        }
    }

    /// Reads the whole value of `characteristic`; with a `timeout`, throws
    /// `BluejayError.operationTimedOut(_:)` when it has not come by then (BlueCap's
    /// `readTimeout`).
    public func read(from characteristic: CharacteristicIdentifier, timeout: Duration? = nil) async throws(BluejayError)
        -> [UInt8]
    {
        try await within(timeout, "read of \(characteristic)") { () async throws(BluejayError) -> [UInt8] in
            try await self.operation(.read, characteristic) { client throws(GATTError) in
                try await client.readValue(characteristic)
            }
        }
    }

    /// Reads `characteristic` as `R`.
    public func read<R: Receivable>(
        from characteristic: CharacteristicIdentifier, as _: R.Type = R.self, timeout: Duration? = nil
    ) async throws -> R {
        try R(bluetoothBytes: try await read(from: characteristic, timeout: timeout)[...])
    }

    /// Writes `bytes` to `characteristic`: a Write Request (Prepare/Execute when longer than
    /// one carries), or a Write Command; with a `timeout`, as ``read(from:timeout:)-(_,Duration?)``
    /// (BlueCap's `writeTimeout`).
    public func write(
        to characteristic: CharacteristicIdentifier, bytes: [UInt8], type: WriteType = .withResponse,
        timeout: Duration? = nil
    ) async throws(BluejayError) {
        try await within(timeout, "write to \(characteristic)") { () async throws(BluejayError) in
            try await self.operation(.write, characteristic) { client throws(GATTError) in
                try await client.write(bytes, to: characteristic, type: type)
            }
        }
    }

    /// Writes `value` to `characteristic`.
    public func write<S: BluejaySendable>(
        to characteristic: CharacteristicIdentifier, value: S, type: WriteType = .withResponse,
        timeout: Duration? = nil
    ) async throws(BluejayError) {
        try await write(to: characteristic, bytes: Array(value.toBluetoothData()), type: type, timeout: timeout)
    }

    /// Runs `backgroundTask` on a thread of its own with a ``SynchronizedPeripheral`` (whose
    /// calls block that thread until done), in this peripheral's queue like any operation,
    /// and returns its result.
    public func run<Result: Sendable>(backgroundTask: @escaping @Sendable (SynchronizedPeripheral) throws -> Result)
        async throws -> Result
    {
        try await queue.run(.backgroundTask) { [weak self] in
            guard let self, let handle = self.handle, self.state == .connected else { throw BluejayError.notConnected }
            let synchronized = SynchronizedPeripheral(host: self.host, handle: handle, identifier: self.identifier) {
                _ in
            }
            let outcome: Swift.Result<Result, any Error> = await withCheckedContinuation { continuation in
                DispatchQueue(label: "bluejay.central.background-task").async {
                    continuation.resume(returning: Swift.Result { try backgroundTask(synchronized) })
                }
            }
            return try outcome.get()
        }
    }
}
