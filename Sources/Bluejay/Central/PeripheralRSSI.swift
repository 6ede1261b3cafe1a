import BluetoothCore
import HCI

/// The link's RSSI, read once or polled (BlueCap's `readRSSI()` and
/// `startPollingRSSI(period:capacity:)`).
extension Peripheral {
    /// Reads the link's RSSI in dBm.
    public func readRSSI() async throws(BluejayError) -> Int {
        do {
            return try await queue.run(.readRSSI) { [weak self] () async throws -> Int in
                guard let self, let handle = self.handle else { throw BluejayError.notConnected }
                do { return Int(try await self.host.connections.readRSSI(handle)) } catch let error as ConnectionError {
                    throw BluejayError.connection(error)
                }
            }
        } catch let error as BluejayError { throw error } catch { throw .cancelled }
    }

    /// Reads the RSSI every `period` while connected and yields it; ends with
    /// ``stopPollingRSSI()`` (or a new poll). At most `capacity` readings wait for a
    /// consumer that does not keep up, the newest kept (BlueCap's
    /// `startPollingRSSI(period:capacity:)`).
    public func startPollingRSSI(period: Duration = .seconds(10), capacity: Int = .max) -> AsyncStream<Int> {
        stopPollingRSSI()
        let (stream, continuation) = AsyncStream<Int>.makeStream(
            bufferingPolicy: capacity == .max ? .unbounded : .bufferingNewest(max(1, capacity)))
        rssiPolling = Task { [weak self] in
            while !Task.isCancelled {
                guard let self else { break }
                if self.state == .connected, let rssi = try? await self.readRSSI() { continuation.yield(rssi) }
                do { try await Task.sleep(for: period) } catch { break }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in Task { @BluetoothActor [weak self] in self?.stopPollingRSSI() } }
        return stream
    }

    /// ``startPollingRSSI(period:capacity:)-(Duration,_)`` by its earlier name.
    @available(*, deprecated, renamed: "startPollingRSSI(period:capacity:)")
    public func startPollingRSSI(every period: Duration) -> AsyncStream<Int> { startPollingRSSI(period: period) }

    /// Stops the RSSI poll.
    public func stopPollingRSSI() {
        rssiPolling?.cancel()
        rssiPolling = nil
    }
}
