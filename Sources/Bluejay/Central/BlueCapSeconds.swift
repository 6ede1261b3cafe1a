import BluetoothCore
import FoundationEssentials

// BlueCap's timeouts and delays are seconds (`TimeInterval`), `TimeInterval.infinity` for
// none. Each call that takes a `Duration` here takes BlueCap's seconds too, under the same
// name: `connectionTimeout: 10.0`, `timeout: 5`, `withDelay: 1.5`. The seconds have no
// default, so a call that gives none picks the `Duration` form, whose default is BlueCap's.

extension Central {
    /// ``startScanning(forServiceUUIDs:capacity:timeout:allowDuplicates:)-(_,_,Duration?,_)`` with a timeout in
    /// seconds (`.infinity`: none).
    public func startScanning(
        forServiceUUIDs uuids: [BluetoothUUID]? = nil, capacity: Int = .max, timeout: TimeInterval,
        allowDuplicates: Bool = false
    ) -> AsyncThrowingStream<ScanDiscovery, any Error> {
        startScanning(
            forServiceUUIDs: uuids, capacity: capacity, timeout: Duration(seconds: timeout),
            allowDuplicates: allowDuplicates)
    }
}

extension Peripheral {
    /// ``reconnect(withDelay:)-(Duration)`` after `delay` seconds (BlueCap's `reconnect(withDelay: Double)`).
    public func reconnect(withDelay delay: Double) async throws(BluejayError) {
        try await reconnect(withDelay: Duration(seconds: delay) ?? .zero)
    }

    /// ``discoverServices(_:timeout:)-(_,Duration?)`` with a timeout in seconds.
    public func discoverServices(_ uuids: [BluetoothUUID]?, timeout: TimeInterval) async throws(BluejayError)
        -> [ServiceIdentifier]
    {
        try await discoverServices(uuids, timeout: Duration(seconds: timeout))
    }

    /// ``discoverAllServices(timeout:)-(Duration?)`` with a timeout in seconds.
    public func discoverAllServices(timeout: TimeInterval) async throws(BluejayError) -> [ServiceIdentifier] {
        try await discoverServices(nil, timeout: Duration(seconds: timeout))
    }

    /// ``discoverCharacteristics(_:of:timeout:)-(_,_,Duration?)`` with a timeout in seconds.
    public func discoverCharacteristics(
        _ uuids: [BluetoothUUID]?, of service: ServiceIdentifier,
        timeout: TimeInterval
    ) async throws(BluejayError) -> [CharacteristicIdentifier] {
        try await discoverCharacteristics(uuids, of: service, timeout: Duration(seconds: timeout))
    }

    /// ``discoverAllCharacteristics(of:timeout:)-(_,Duration?)`` with a timeout in seconds.
    public func discoverAllCharacteristics(of service: ServiceIdentifier, timeout: TimeInterval)
        async throws(BluejayError) -> [CharacteristicIdentifier]
    {
        try await discoverCharacteristics(nil, of: service, timeout: Duration(seconds: timeout))
    }

    /// ``read(from:timeout:)-(_,Duration?)`` with a timeout in seconds.
    public func read(from characteristic: CharacteristicIdentifier, timeout: TimeInterval) async throws(BluejayError)
        -> [UInt8]
    {
        try await read(from: characteristic, timeout: Duration(seconds: timeout))
    }

    /// ``write(to:bytes:type:timeout:)-(_,_,_,Duration?)`` with a timeout in seconds.
    public func write(
        to characteristic: CharacteristicIdentifier, bytes: [UInt8], type: WriteType = .withResponse,
        timeout: TimeInterval
    ) async throws(BluejayError) {
        try await write(to: characteristic, bytes: bytes, type: type, timeout: Duration(seconds: timeout))
    }

    /// ``startPollingRSSI(period:capacity:)-(Duration,_)`` every `period` seconds (BlueCap's
    /// `startPollingRSSI(period: Double, capacity:)`).
    public func startPollingRSSI(period: Double, capacity: Int = .max) -> AsyncStream<Int> {
        startPollingRSSI(period: Duration(seconds: period) ?? .seconds(10), capacity: capacity)
    }
}
